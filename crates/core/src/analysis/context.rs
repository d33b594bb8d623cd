//! What the detectors share: the finished summary, metrics and census, the windows before and
//! after the topology changes, the owner of every slot at the end and the shard traffic.

use crate::census::Census;
use crate::float;
use crate::metrics::Metrics;
use crate::node::{NodeAddr, NodeId};
use crate::summary::Summary;
use crate::time::{TimeSpan, Timestamp};
use crate::timeline::{ClusterTimeline, Consensus};

use super::shard_traffic::ShardTraffic;

/// What every derivation needs.
pub(super) struct Context<'a> {
    /// What the recording holds (slot moves above all).
    pub(super) summary: &'a Summary,
    /// Per-node metrics.
    pub(super) metrics: &'a Metrics,
    /// The client groups.
    pub(super) census: &'a Census,
    /// Per node traffic around the topology changes (empty until derived).
    pub(super) traffic: &'a [ShardTraffic],
    /// The poll interval, at least 1 ms.
    pub(super) interval_ms: u64,
    /// The recording's extent.
    pub(super) span: TimeSpan,
    /// Before the first topology change (the whole recording when there is none).
    pub(super) before: TimeSpan,
    /// After the last topology change, if there was one.
    pub(super) after: Option<TimeSpan>,
    /// Owner of every slot at the end, by the nodes' latest views, and their disagreements.
    pub(super) owners: &'a Consensus,
    /// The cluster over time: nodes, slot owners, migrations.
    pub(super) timeline: &'a ClusterTimeline,
}

impl<'a> Context<'a> {
    /// The address of the node with id `id`, if the recording has one.
    pub(super) fn node_addr(&self, id: &NodeId) -> Option<&'a NodeAddr> {
        self.summary
            .nodes
            .iter()
            .find(|n| n.id.as_ref() == Some(id))
            .map(|n| &n.addr)
    }

    /// A node's address, or its id's short form when the recording has no address for it.
    pub(super) fn node_name(&self, id: Option<&NodeId>) -> String {
        let Some(id) = id else {
            return "no node".to_owned();
        };
        self.node_addr(id)
            .map_or_else(|| id.short().to_owned(), NodeAddr::to_string)
    }

    /// The context over these parts: works out the recording's span and the windows before the
    /// first and after the last slot move.
    pub(super) fn new(
        summary: &'a Summary,
        metrics: &'a Metrics,
        census: &'a Census,
        owners: &'a Consensus,
        timeline: &'a ClusterTimeline,
        traffic: &'a [ShardTraffic],
        interval_ms: u64,
    ) -> Context<'a> {
        let span = summary
            .span
            .unwrap_or_else(|| TimeSpan::new(summary.header.started, summary.header.started));
        let span = TimeSpan::new(span.start, Timestamp(span.end.0 + 1));
        let (before, after) = match (
            summary.changes().map(|m| m.span.start).min(),
            summary.changes().map(|m| m.span.end).max(),
        ) {
            (Some(first), Some(last)) => (
                TimeSpan::new(span.start, first),
                Some(TimeSpan::new(last, span.end)),
            ),
            _ => (span, None),
        };
        Context {
            summary,
            metrics,
            census,
            traffic,
            interval_ms,
            span,
            before,
            after,
            owners,
            timeline,
        }
    }

    /// The poll interval in milliseconds, as a float.
    pub(super) fn interval(&self) -> f64 {
        float::from_u64(self.interval_ms)
    }

    /// How many slots the node with this id owns at the end (none without an id).
    pub(super) fn slots_of(&self, id: Option<&NodeId>) -> usize {
        id.and_then(|id| self.timeline.nodes().find_id(id))
            .map_or(0, |n| self.owners.owners.count(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{topology, view, A, B};
    use crate::recording::Line;
    use crate::slot::Slot;

    fn timeline(lines: &[Line]) -> ClusterTimeline {
        let mut tl = ClusterTimeline::new();
        for l in lines {
            tl.push(l);
        }
        tl
    }

    /// The id of the owner of slot `s` by the consensus.
    fn owner(tl: &ClusterTimeline, c: &Consensus, s: u16) -> Option<NodeId> {
        let n = c.owners.get(Slot::new(s).expect("slot"))?;
        tl.nodes().id(n).cloned()
    }

    #[test]
    fn agreeing_views_give_every_slot_its_owner_and_no_disputes() {
        let tl = timeline(&[
            topology(0, 7000, A, view(A, "0-8191", "8192-16383")),
            topology(0, 7001, B, view(B, "0-8191", "8192-16383")),
        ]);
        let c = tl.consensus();
        assert_eq!(c.disagreements, 0);
        assert_eq!(owner(&tl, &c, 0), NodeId::new(A));
        assert_eq!(owner(&tl, &c, 8191), NodeId::new(A));
        assert_eq!(owner(&tl, &c, 8192), NodeId::new(B));
        assert_eq!(owner(&tl, &c, 16383), NodeId::new(B));
    }

    #[test]
    fn only_the_latest_view_of_each_node_votes() {
        // A's first view is replaced by its second: both views agree at the end.
        let tl = timeline(&[
            topology(0, 7000, A, view(A, "0-16383", "")),
            topology(0, 7001, B, view(B, "0-8191", "8192-16383")),
            topology(1000, 7000, A, view(A, "0-8191", "8192-16383")),
        ]);
        let c = tl.consensus();
        assert_eq!(c.disagreements, 0);
        assert_eq!(owner(&tl, &c, 10_000), NodeId::new(B));
    }

    #[test]
    fn an_owner_wins_a_tie_against_none() {
        let tl = timeline(&[
            topology(0, 7000, A, view(A, "0-100", "")),
            topology(0, 7001, B, view(B, "", "")),
        ]);
        let c = tl.consensus();
        assert_eq!(owner(&tl, &c, 50), NodeId::new(A));
        assert_eq!(owner(&tl, &c, 200), None);
        assert_eq!(c.disagreements, 101);
    }

    #[test]
    fn without_views_no_slot_has_an_owner() {
        let c = ClusterTimeline::new().consensus();
        assert_eq!(c.owners.covered(), 0);
        assert_eq!(c.disagreements, 0);
    }
}
