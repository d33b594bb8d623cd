//! The replicas a `CLUSTER SLOTS` answer lists beside each slot range's owner, over time: the
//! size of the answer a client builds its slot cache from.
//!
//! redis-py 5.0.0 (4.4.0–7.1.1) walks every slot once for its owner and once more for each
//! replica listed with it, resolving the replica's address each time (5.0.0
//! `redis/asyncio/cluster.py` l. 1252-1273): its slot cache costs in proportion to the answer's
//! slot-node entries. Timed on this machine (2026-12-05): a 3-master cluster 8.7-8.8 ms, the same
//! with one replica of the master of 5461 slots 11.0-11.7 ms (16 384 and 21 845 entries);
//! redis-py 8.1.0 3.4-3.5 ms either way.
//!
//! A recording's replicas are the `(replica, primary)` pairs its topology views listed
//! ([`ClusterTimeline::replica_pairs`]), each from the first view that listed it (from the start
//! when the first views did) until the first view after the last one that did (to the end when
//! the last views did). A planned change's are given as sets from a moment on.

use crate::slot::SlotRange;
use crate::time::{TimeSpan, Timestamp};
use crate::timeline::{ClusterTimeline, NodeIdx};

/// Slot-node entries of an answer covering every slot once, without replicas.
pub const OWNER_ENTRIES: u64 = 16_384;

/// A `(replica, primary)` pair and when an answer lists it.
pub(super) type Listed = (NodeIdx, NodeIdx, TimeSpan);

/// The replicas given and seen while a cluster is built.
#[derive(Clone, Debug, Default)]
pub(super) struct ReplicaTrack {
    /// Sets given: from a moment on, these pairs (until the next set).
    sets: Vec<(Timestamp, Vec<(NodeIdx, NodeIdx)>)>,
    /// When each topology view was taken, in the order folded.
    views: Vec<Timestamp>,
}

impl ReplicaTrack {
    /// From `t` on (until the next set), the replicas are `pairs`.
    pub(super) fn set(&mut self, t: Timestamp, pairs: Vec<(NodeIdx, NodeIdx)>) {
        self.sets.push((t, pairs));
    }

    /// A topology view taken at `t`.
    pub(super) fn view(&mut self, t: Timestamp) {
        self.views.push(t);
    }

    /// Every pair with when it is listed: the sets given, and the pairs `timeline`'s views
    /// listed (see the module's notes).
    pub(super) fn listed(&self, timeline: &ClusterTimeline) -> Vec<Listed> {
        let mut views = self.views.clone();
        views.sort_unstable();
        let first = views.first().copied();
        let last = views.last().copied();
        let mut out: Vec<Listed> = timeline
            .replica_pairs()
            .map(|(r, p, span)| {
                let start = if first.is_none_or(|f| span.start <= f) {
                    Timestamp(0)
                } else {
                    span.start
                };
                let end = if last.is_none_or(|l| span.end >= l) {
                    Timestamp(u64::MAX)
                } else {
                    let i = views.partition_point(|&v| v <= span.end);
                    views.get(i).copied().unwrap_or(Timestamp(u64::MAX))
                };
                (r, p, TimeSpan::new(start, end))
            })
            .collect();
        let mut sets = self.sets.clone();
        sets.sort_by_key(|(t, _)| *t);
        for (i, (t, pairs)) in sets.iter().enumerate() {
            let until = sets.get(i + 1).map_or(Timestamp(u64::MAX), |(u, _)| *u);
            out.extend(pairs.iter().map(|&(r, p)| (r, p, TimeSpan::new(*t, until))));
        }
        out
    }
}

/// The slot-node entries of an answer of `ranges` at `t`: each range's slots once for its owner
/// and once for each replica `listed` for it then.
pub(super) fn answer_entries(
    ranges: &[(SlotRange, NodeIdx)],
    listed: &[Listed],
    t: Timestamp,
) -> u64 {
    ranges
        .iter()
        .map(|&(r, owner)| {
            let replicas = listed
                .iter()
                .filter(|&&(_, p, span)| p == owner && span.contains(t))
                .count();
            (r.len() as u64) * (1 + replicas as u64)
        })
        .sum()
}
