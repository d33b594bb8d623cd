//! A group's landing once the slot layout has settled: the intervals of each node that end with no
//! layout change in them or in the [`settle_ms`] before, where a client routing by the owners is
//! no longer rejected and a remapped one still is (see [`remap_target`](super::remap_target)).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::float;
use crate::metrics::Metrics;
use crate::node::NodeAddr;
use crate::time::{TimeSpan, Timestamp};

/// The share of its attempts a node that takes every attempt of a group must reject to be its
/// remap target: a remap to a node owning a share f of the slots rejects 1 − f of first
/// attempts, at least a fifth unless the node owns four fifths of the slots (and its retries,
/// remapped too, are rejected again).
pub const ALL_ON_ONE_REJECTED: f64 = 0.2;

/// A group's attempts on one node over the node's *settled* intervals: those that end in the
/// window with no slot layout change (owners or migration flags) in them or in the
/// [`settle_ms`] before. A client routing by the slot owners is rejected there only until it has
/// followed the `MOVED` of each slot it still had stale; a remapped client is rejected on its
/// remap target again after every rebuild of its table, for as long as it runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Settled {
    /// Settled intervals in which the group made attempts on the node.
    pub intervals: u32,
    /// Of which the node rejected some of them.
    pub rejecting: u32,
    /// The group's attempts in those intervals.
    pub attempts: f64,
    /// Of which rejected.
    pub rejected: f64,
}

impl Settled {
    /// The node kept rejecting the group after the layout settled: in at least
    /// [`PERSISTENT_REJECTION`] of at least [`SETTLED_INTERVALS`] intervals, and at least
    /// [`ALL_ON_ONE_REJECTED`] of the attempts.
    pub fn keeps_rejecting(&self) -> bool {
        self.intervals >= SETTLED_INTERVALS
            && f64::from(self.rejecting) >= PERSISTENT_REJECTION * f64::from(self.intervals)
            && self.rejected >= ALL_ON_ONE_REJECTED * self.attempts
    }

    /// The node had enough settled intervals to judge ([`SETTLED_INTERVALS`]) and rejected the
    /// group in fewer than [`PERSISTENT_REJECTION`] of them: its rejections came with the
    /// layout changes, not from a remap.
    pub fn stopped_rejecting(&self) -> bool {
        self.intervals >= SETTLED_INTERVALS
            && f64::from(self.rejecting) < PERSISTENT_REJECTION * f64::from(self.intervals)
    }
}

/// How many settled intervals [`Settled::keeps_rejecting`] needs to judge: fewer are too short a
/// run to tell a persistent rejection from the last stale slots being followed.
pub const SETTLED_INTERVALS: u32 = 4;

/// The share of its settled intervals in which a node must reject a group's commands for
/// [`Settled::keeps_rejecting`]: most of them, not the few right after the layout settles.
pub const PERSISTENT_REJECTION: f64 = 0.75;

/// How long after a slot layout change a client routing by owner may still meet `MOVED` for it:
/// four poll intervals, at least two seconds. redis-py re-reads the whole table after five
/// `MOVED` (`reinitialize_steps`), go-redis and Jedis on the first, so a client that sends
/// commands keeps a stale table only for the next few of them.
pub fn settle_ms(poll_interval_ms: u64) -> u64 {
    (4 * poll_interval_ms).max(2000)
}

/// When the slot layout changed, as spans: a change first seen in the topology sample at `t`
/// happened after the topology sample before it (`topology_samples`, any node's), so its span
/// runs from that sample to `t` (from `t` itself when no sample came before).
pub fn layout_change_spans(changes: &[Timestamp], topology_samples: &[Timestamp]) -> Vec<TimeSpan> {
    let mut samples = topology_samples.to_vec();
    samples.sort_unstable();
    let mut out: Vec<TimeSpan> = changes
        .iter()
        .map(|&t| {
            let before = samples.partition_point(|s| *s < t);
            let from = before.checked_sub(1).map_or(t, |k| samples[k]);
            TimeSpan::new(from, t)
        })
        .collect();
    out.sort_by_key(|s| (s.start, s.end));
    out
}

/// The attempts of `cmds` (each with the share taken) on each node over its settled intervals
/// in `window` ([`Settled`]); `layout_changes` as [`layout_change_spans`] gives them, sorted.
pub(super) fn settled_landing(
    metrics: &Metrics,
    window: TimeSpan,
    cmds: &BTreeMap<&str, f64>,
    layout_changes: &[TimeSpan],
    poll_interval_ms: u64,
) -> BTreeMap<NodeAddr, Settled> {
    let settle = settle_ms(poll_interval_ms);
    // Spans ordered by start; a change overlapping an interval or the settle time before it.
    let unsettled = |span: TimeSpan| {
        let from = span.start.0.saturating_sub(settle);
        layout_changes
            .iter()
            .take_while(|c| c.start < span.end)
            .any(|c| c.end.0 >= from)
    };
    let mut out = BTreeMap::new();
    for node in &metrics.nodes {
        let mut s = Settled::default();
        for i in node.ending_in(window) {
            if unsettled(i.span) {
                continue;
            }
            let (mut attempts, mut rejected) = (0.0, 0.0);
            for (cmd, share) in cmds {
                if let Some(d) = i.commands.get(*cmd) {
                    attempts += share * float::from_u64(d.attempts());
                    rejected += share * float::from_u64(d.rejected);
                }
            }
            if attempts > 0.0 {
                s.intervals += 1;
                s.rejecting += u32::from(rejected > 0.0);
                s.attempts += attempts;
                s.rejected += rejected;
            }
        }
        out.insert(node.addr.clone(), s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_spans_back_to_the_topology_sample_before_it() {
        let t = |ms: u64| Timestamp(1_000_000 + ms);
        let samples = [t(0), t(5000), t(10_000), t(15_000)];
        let spans = layout_change_spans(&[t(15_000), t(5000)], &samples);
        assert_eq!(
            spans,
            [
                TimeSpan::new(t(0), t(5000)),
                TimeSpan::new(t(10_000), t(15_000))
            ]
        );
        // Seen in the first sample: nothing before it to bound it.
        assert_eq!(
            layout_change_spans(&[t(0)], &samples),
            [TimeSpan::new(t(0), t(0))]
        );
        assert_eq!(settle_ms(500), 2000);
        assert_eq!(settle_ms(1000), 4000);
    }

    #[test]
    fn persistence_needs_enough_intervals_most_of_them_rejecting() {
        let s = |intervals, rejecting, rejected| Settled {
            intervals,
            rejecting,
            attempts: 100.0,
            rejected,
        };
        assert!(s(8, 6, 20.0).keeps_rejecting());
        assert!(!s(8, 5, 20.0).keeps_rejecting() && s(8, 5, 20.0).stopped_rejecting());
        assert!(!s(8, 8, 19.0).keeps_rejecting(), "under a fifth rejected");
        assert!(!s(3, 3, 50.0).keeps_rejecting() && !s(3, 0, 0.0).stopped_rejecting());
    }
}
