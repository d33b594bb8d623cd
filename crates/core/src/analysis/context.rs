//! What the detectors share: the finished summary, metrics and census, the windows before and
//! after the topology changes, the owner of every slot at the end and the shard traffic.

use std::collections::BTreeMap;

use crate::census::Census;
use crate::metrics::{count_f64, Metrics};
use crate::node::{NodeAddr, NodeId};
use crate::slot::SLOT_COUNT;
use crate::summary::Summary;
use crate::time::{TimeSpan, Timestamp};
use crate::topology::TopologyView;

use super::ShardTraffic;

/// Who owns each slot at the end of a recording.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct SlotOwners {
    /// Owner of every slot, indexed by slot (`None`: no owner).
    pub(super) owners: Vec<Option<NodeId>>,
    /// Slots on which the latest views disagree.
    pub(super) disputed: usize,
}

/// The owner of every slot at the end of the recording, from each node's latest topology view,
/// and how many slots those views disagree about.
///
/// Every view votes for the owner it names for each slot, or for none; the most votes win, an
/// owner winning a tie against none (and the greatest id a tie between owners). Without views the
/// result still has one entry per slot, all `None`, and no disputes.
pub(super) fn slot_owners(views: &BTreeMap<NodeAddr, TopologyView>) -> SlotOwners {
    let mut votes: Vec<BTreeMap<Option<NodeId>, usize>> =
        vec![BTreeMap::new(); usize::from(SLOT_COUNT)];
    for v in views.values() {
        for (slot, owner) in v.slot_owners().into_iter().enumerate() {
            *votes[slot].entry(owner).or_default() += 1;
        }
    }
    let disputed = votes.iter().filter(|v| v.len() > 1).count();
    let owners = votes
        .into_iter()
        .map(|v| {
            v.into_iter()
                .max_by_key(|(o, n)| (*n, o.is_some()))
                .and_then(|(o, _)| o)
        })
        .collect();
    SlotOwners { owners, disputed }
}

/// The address of every node id: the first address a view gives it, replaced by the address the
/// collector polled the node at when it did.
pub(super) fn node_addresses(
    views: &BTreeMap<NodeAddr, TopologyView>,
    metrics: &Metrics,
) -> BTreeMap<NodeId, NodeAddr> {
    let mut ids = BTreeMap::new();
    for v in views.values() {
        for n in v.nodes() {
            if let Some(a) = &n.addr {
                ids.entry(n.id.clone()).or_insert_with(|| a.clone());
            }
        }
    }
    for n in &metrics.nodes {
        if let Some(id) = &n.id {
            ids.insert(id.clone(), n.addr.clone());
        }
    }
    ids
}

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
    /// Owner of every slot at the end.
    pub(super) owners: &'a SlotOwners,
    /// Address of every node id seen.
    pub(super) ids: &'a BTreeMap<NodeId, NodeAddr>,
}

impl<'a> Context<'a> {
    /// The context over these parts: works out the recording's span and the windows before the
    /// first and after the last slot move.
    pub(super) fn new(
        summary: &'a Summary,
        metrics: &'a Metrics,
        census: &'a Census,
        owners: &'a SlotOwners,
        ids: &'a BTreeMap<NodeId, NodeAddr>,
        traffic: &'a [ShardTraffic],
        interval_ms: u64,
    ) -> Context<'a> {
        let span = summary
            .span
            .unwrap_or_else(|| TimeSpan::new(summary.header.started, summary.header.started));
        let span = TimeSpan::new(span.start, Timestamp(span.end.0 + 1));
        let (before, after) = match (
            summary.slot_moves.iter().map(|m| m.span.start).min(),
            summary.slot_moves.iter().map(|m| m.span.end).max(),
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
            ids,
        }
    }

    /// The poll interval in milliseconds, as a float.
    pub(super) fn interval(&self) -> f64 {
        count_f64(self.interval_ms)
    }

    /// How many slots the node with this id owns at the end (none without an id).
    pub(super) fn slots_of(&self, id: Option<&NodeId>) -> usize {
        id.map_or(0, |id| {
            self.owners
                .owners
                .iter()
                .filter(|o| o.as_ref() == Some(id))
                .count()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{addr, view, A, B};

    fn views(list: &[(u16, TopologyView)]) -> BTreeMap<NodeAddr, TopologyView> {
        list.iter()
            .map(|(port, v)| (addr(*port), v.clone()))
            .collect()
    }

    #[test]
    fn agreeing_views_give_every_slot_its_owner_and_no_disputes() {
        let o = slot_owners(&views(&[
            (7000, view(A, "0-8191", "8192-16383")),
            (7001, view(B, "0-8191", "8192-16383")),
        ]));
        assert_eq!(o.owners.len(), usize::from(SLOT_COUNT));
        assert_eq!(o.disputed, 0);
        assert_eq!(o.owners[0], NodeId::new(A));
        assert_eq!(o.owners[8191], NodeId::new(A));
        assert_eq!(o.owners[8192], NodeId::new(B));
        assert_eq!(o.owners[16383], NodeId::new(B));
    }

    #[test]
    fn the_majority_wins_and_disagreement_is_counted() {
        // Two views say B took 8192–16383, a third still says A owns everything.
        let o = slot_owners(&views(&[
            (7000, view(A, "0-8191", "8192-16383")),
            (7001, view(B, "0-8191", "8192-16383")),
            (7002, view(A, "0-16383", "")),
        ]));
        assert_eq!(o.disputed, 8192);
        assert_eq!(o.owners[10_000], NodeId::new(B));
    }

    #[test]
    fn an_owner_wins_a_tie_against_none() {
        let o = slot_owners(&views(&[
            (7000, view(A, "0-100", "")),
            (7001, view(B, "", "")),
        ]));
        assert_eq!(o.owners[50], NodeId::new(A));
        assert_eq!(o.owners[200], None);
        assert_eq!(o.disputed, 101);
    }

    #[test]
    fn without_views_no_slot_has_an_owner() {
        let o = slot_owners(&BTreeMap::new());
        assert_eq!(o.owners.len(), usize::from(SLOT_COUNT));
        assert!(o.owners.iter().all(Option::is_none));
        assert_eq!(o.disputed, 0);
    }

    #[test]
    fn every_node_a_view_names_gets_its_address() {
        let ids = node_addresses(
            &views(&[(7000, view(A, "0-16383", ""))]),
            &Metrics::default(),
        );
        assert_eq!(ids.len(), 2);
        assert_eq!(ids[&NodeId::new(A).unwrap()], addr(7000));
        assert_eq!(ids[&NodeId::new(B).unwrap()], addr(7001));
    }
}
