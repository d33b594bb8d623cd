//! A failover in the story: the step of a replica that took over its master's slots (how, from
//! [`super::election`]), and what it cost each client group (how long the group's commands to
//! those slots went unserved, about how many, when they reached the new master) with the
//! refreshes and new connections meanwhile.

use crate::census::ClientGroup;
use crate::metrics::Interval;
use crate::moment::at;
use crate::node::NodeAddr;
use crate::signal::TOPOLOGY_COMMANDS;
use crate::summary::SlotMove;
use crate::time::{format_millis, TimeSpan, Timestamp};

use super::super::attribution::business_commands;
use super::super::context::Context;
use super::super::outage::Outage;
use super::election::election;
use super::step::{Step, StepKind};

/// How far back the rate of a group's commands on the old master is taken, milliseconds.
const RATE_WINDOW_MS: u64 = 5_000;
/// How long before a manual handover's first sighting its election is looked for, milliseconds
/// (the views that show it are polled every few seconds).
const HANDOVER_LEAD_MS: u64 = 10_000;

/// The step of a move that is a replica taking over its master's slots (a view listed the new
/// owner as the old one's replica before the move): a failover when the old master had stopped
/// answering by then, a manual failover when it still answered. `None`: a move between masters.
pub(super) fn promotion(ctx: &Context<'_>, m: &SlotMove, outages: &[Outage]) -> Option<Step> {
    let nodes = ctx.timeline.nodes();
    let (from_id, to_id) = (m.from.as_ref()?, m.to.as_ref()?);
    let (from_idx, to_idx) = (nodes.find_id(from_id)?, nodes.find_id(to_id)?);
    let listed = ctx.timeline.replica_of(to_idx, from_idx)?;
    if listed.start >= m.span.start {
        return None;
    }
    let start = ctx.span.start;
    let (old, new) = (ctx.node_name(Some(from_id)), ctx.node_name(Some(to_id)));
    let (old_addr, new_addr) = (ctx.node_addr(from_id), ctx.node_addr(to_id));
    // The old master's outage that was under way when the replica took over.
    let down = outages.iter().find(|o| {
        Some(&o.node) == old_addr
            && o.last_answer <= m.span.start
            && o.answered_again.is_none_or(|b| b > m.span.start)
    });
    // The election is read from the old master's last answer, or for a handover from a while
    // before the views showed it (they are polled less often than INFO).
    let from = match down {
        Some(o) => o.last_answer,
        None => Timestamp(m.span.start.0.saturating_sub(HANDOVER_LEAD_MS)),
    }
    .max(listed.start);
    let e = election(
        ctx,
        (from_idx, new_addr),
        (&old, &new),
        from,
        m.span,
        down.is_none(),
    );
    let (text, mut evidence) = match down {
        Some(o) => (
            format!(
                "replica {new} takes over the {} slots of master {old}, {} after {old} stopped \
                 answering ({})",
                m.slots,
                format_millis(m.span.start.millis_since(o.last_answer)),
                if e.without_election {
                    "a failover without an election: CLUSTER FAILOVER TAKEOVER"
                } else {
                    "a failover"
                }
            ),
            vec![format!(
                "{old}'s last INFO reply at {}",
                at(o.last_answer, start)
            )],
        ),
        None => (
            format!(
                "master {old} hands its {} slots to its replica {new}, still answering (a manual \
                 failover{})",
                m.slots,
                e.manual_mode.map(|m| format!(": {m}")).unwrap_or_default()
            ),
            Vec::new(),
        ),
    };
    evidence.extend(e.evidence);
    evidence.insert(
        0,
        format!(
            "the topology views listed {new} as {old}'s replica from {}, as their owner from {}",
            at(listed.start, start),
            at(m.span.start, start)
        ),
    );
    if let Some(back) = ctx.timeline.replica_of(from_idx, to_idx) {
        if back.end >= m.span.start {
            evidence.push(format!(
                "{old} is listed as {new}'s replica from {}",
                at(back.start.max(m.span.start), start)
            ));
        }
    }
    if let (Some(a), Some(b)) = (old_addr, new_addr) {
        let (lost_from, since) = match down {
            Some(o) => (o.last_answer, "the old master's last answer"),
            None => (m.span.start, "the handover"),
        };
        evidence.extend(costs(ctx, (a, b), (lost_from, since), m.span.start, &new));
    }
    let mut s = Step::seen(m.span.start, Some(m.span.end), StepKind::Promotion, text);
    s.evidence = evidence;
    Some(s)
}

/// Calls of `commands` in an interval.
fn calls<S: AsRef<str>>(i: &Interval, commands: &[S]) -> u64 {
    commands.iter().map(|c| i.command(c.as_ref()).calls).sum()
}

/// What the failover cost each client group that used the old master (`old`): from `lost_from`
/// (its last answer, or the handover) to the first poll of the new master (`new`) that shows the
/// group's commands served there, about how many of its commands went unserved at the rate they
/// had on the old master; then the refreshes and new connections every client made meanwhile.
fn costs(
    ctx: &Context<'_>,
    (old, new): (&NodeAddr, &NodeAddr),
    (lost_from, since): (Timestamp, &str),
    promoted: Timestamp,
    new_name: &str,
) -> Vec<String> {
    let (Some(a), Some(b)) = (ctx.metrics.node(old), ctx.metrics.node(new)) else {
        return Vec::new();
    };
    let start = ctx.span.start;
    let mut out = Vec::new();
    let mut last_reached = lost_from;
    // The servers count by command: groups that send the same commands share one line.
    let mut by_commands: Vec<(Vec<String>, Vec<&ClientGroup>)> = Vec::new();
    for g in &ctx.census.groups {
        let cmds = business_commands(g);
        if cmds.is_empty() {
            continue;
        }
        match by_commands.iter_mut().find(|(c, _)| *c == cmds) {
            Some((_, groups)) => groups.push(g),
            None => by_commands.push((cmds, vec![g])),
        }
    }
    // The old master's polls before the gap, the same for every group.
    let window = Timestamp(lost_from.0.saturating_sub(RATE_WINDOW_MS));
    let before: Vec<&Interval> = a
        .intervals
        .iter()
        .filter(|i| i.span.start >= window && i.span.end <= lost_from)
        .collect();
    let ms: u64 = before.iter().map(|i| i.span.millis()).sum();
    for (cmds, groups) in &by_commands {
        let cmds = cmds.as_slice();
        let labels: Vec<String> = groups.iter().map(|g| g.key.label()).collect();
        let served: u64 = before.iter().map(|i| calls(i, cmds)).sum();
        if served == 0 || ms == 0 {
            continue;
        }
        let rate = served as f64 * 1000.0 / ms as f64;
        let (label, its) = match labels.as_slice() {
            [one] => (one.clone(), "its"),
            many => (
                format!("{} (they share these commands)", many.join(" / ")),
                "their",
            ),
        };
        let what = cmds.join(", ");
        let reached = b
            .intervals
            .iter()
            .find(|i| i.span.end > promoted && calls(i, cmds) > 0)
            .map(|i| i.span.end);
        match reached {
            Some(r) => {
                last_reached = last_reached.max(r);
                let gap = r.millis_since(lost_from);
                let connections: u64 = groups
                    .iter()
                    .map(|g| g.new_in(TimeSpan::new(lost_from, r)))
                    .sum();
                out.push(format!(
                    "{label}: {its} {what} reached {new_name} by {} (the first poll that shows \
                     them there, to within {}), {} after {since}; about {:.0} of them to those \
                     slots went unserved meanwhile (at the {rate:.1}/s they had on the old master; \
                     the servers cannot tell failed from not sent); {its} new connections seen \
                     meanwhile: {connections} (CLIENT LIST, a lower bound)",
                    at(r, start),
                    format_millis(ctx.interval_ms),
                    format_millis(gap),
                    rate * gap as f64 / 1000.0
                ));
            }
            None => out.push(format!(
                "{label}: {its} {what} never reached {new_name} before the recording ends \
                 ({rate:.1}/s on the old master before)"
            )),
        }
    }
    if last_reached > lost_from {
        let (mut refreshes, mut connections) = (0u64, 0u64);
        for n in &ctx.metrics.nodes {
            // The polls that overlap the gap (a poll's counters cannot be split).
            for i in n
                .intervals
                .iter()
                .filter(|i| i.span.end > lost_from && i.span.start < last_reached)
            {
                refreshes += calls(i, TOPOLOGY_COMMANDS);
                connections += i.connections_received;
            }
        }
        out.push(format!(
            "meanwhile (the polls from {} to {}), every client together: {refreshes} topology \
             refreshes (CLUSTER SLOTS, NODES, SHARDS) and {connections} new connections on the \
             nodes that answered",
            at(lost_from, start),
            at(last_reached, start)
        ));
    }
    out
}
