//! How a replica came to take over its master's slots, as far as the recording shows it: the
//! failure flags the other nodes' views put on the old master (`fail?`, then `fail`), and the
//! cluster bus messages `CLUSTER INFO` counted around the takeover ([`crate::bus`]): the new
//! master's vote requests and the votes it got (an election), its `MFSTART` to the old master (a
//! coordinated `CLUSTER FAILOVER`), and the `FAIL` broadcasts. These tell the manual failover's
//! variants apart: `MFSTART` is the coordinated one's, an election without it `FORCE`'s, neither
//! `TAKEOVER`'s.

use crate::bus::BusMessages;
use crate::moment::at;
use crate::node::NodeAddr;
use crate::time::{TimeSpan, Timestamp};
use crate::timeline::{FailFlag, NodeIdx};

use super::super::context::Context;

/// How long after the takeover's first sighting the views' flags are still read, milliseconds
/// (the views are polled less often than `INFO`).
const FLAGS_AFTER_MS: u64 = 10_000;
/// How long after it the bus messages are still read (one poll or two).
const BUS_AFTER_MS: u64 = 1_000;

/// The takeover's mode and its evidence.
pub(super) struct Election {
    /// The manual failover's variant, as `CLUSTER FAILOVER` spells it (`None`: not manual, or the
    /// bus messages were not counted).
    pub(super) manual_mode: Option<&'static str>,
    /// No election was held though the old master was down (a `TAKEOVER` by hand).
    pub(super) without_election: bool,
    /// Evidence lines.
    pub(super) evidence: Vec<String>,
}

/// The election of `new` (at `new_addr`) in place of `old`, read from `from` (the old master's
/// last answer, or a while before a manual handover) to just after `seen` (the takeover's first
/// and last sighting); `manual` when the old master still answered.
pub(super) fn election(
    ctx: &Context<'_>,
    (old, new_addr): (NodeIdx, Option<&NodeAddr>),
    (old_name, new_name): (&str, &str),
    from: Timestamp,
    seen: TimeSpan,
    manual: bool,
) -> Election {
    let start = ctx.span.start;
    let mut evidence = Vec::new();
    let flags_until = Timestamp(seen.end.0.saturating_add(FLAGS_AFTER_MS));
    for flag in [FailFlag::Suspected, FailFlag::Failed] {
        let within = TimeSpan::new(from, flags_until);
        if let Some(f) = ctx.timeline.flagged(old, flag, within) {
            evidence.push(format!(
                "{old_name} flagged `{}` ({}) in the views of {} node(s) from {}",
                flag.text(),
                match flag {
                    FailFlag::Suspected => "not heard from within cluster-node-timeout",
                    FailFlag::Failed => "a majority of masters agreed it failed",
                },
                f.reporters,
                at(f.span.start, start)
            ));
        }
    }
    let bus_until = Timestamp(seen.end.0.saturating_add(BUS_AFTER_MS));
    let overlaps = |s: TimeSpan| s.end > from && s.start < bus_until;
    let mut mine = BusMessages::default();
    if let Some(n) = new_addr.and_then(|a| ctx.metrics.node(a)) {
        for i in n.intervals.iter().filter(|i| overlaps(i.span)) {
            mine.add(&i.bus);
        }
    }
    let fail_senders = ctx
        .metrics
        .nodes
        .iter()
        .filter(|n| {
            n.intervals
                .iter()
                .any(|i| overlaps(i.span) && i.bus.fail_sent > 0)
        })
        .count();
    if fail_senders > 0 {
        evidence.push(format!(
            "{fail_senders} node(s) broadcast FAIL on the cluster bus meanwhile"
        ));
    }
    if mine.mfstart_sent > 0 {
        evidence.push(format!(
            "{new_name} asked {old_name} to pause its clients first (MFSTART on the cluster bus)"
        ));
    }
    if mine.auth_req_sent > 0 {
        evidence.push(format!(
            "{new_name} ran for election: {} vote request(s) sent, {} vote(s) received (CLUSTER \
             INFO's bus counters)",
            mine.auth_req_sent, mine.auth_ack_received
        ));
    } else if mine.counted {
        evidence.push(format!(
            "{new_name} held no election (no vote request on the cluster bus): it took a new \
             epoch alone"
        ));
    }
    let mode = if mine.mfstart_sent > 0 {
        "CLUSTER FAILOVER"
    } else if mine.auth_req_sent > 0 {
        "CLUSTER FAILOVER FORCE"
    } else {
        "CLUSTER FAILOVER TAKEOVER"
    };
    let manual_mode = (manual && mine.counted).then_some(mode);
    Election {
        manual_mode,
        without_election: !manual && mine.counted && mine.auth_req_sent == 0,
        evidence,
    }
}
