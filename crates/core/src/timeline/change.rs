//! Owner changes and migrations as the nodes reported them, grouped into moves: "8192 slots went
//! from A to B between 12 s and 18 s".

use std::collections::{BTreeMap, BTreeSet};

use super::first_seen::{FirstSeen, Run};
use super::node_table::NodeIdx;
use crate::slot::{Slot, SlotRange};
use crate::time::{TimeSpan, Timestamp};

/// Gap after which two changes between the same pair of nodes are reported as separate moves.
pub const MOVE_GAP_MS: u64 = 30_000;

/// Slots whose owner changed from one node to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerMove {
    /// Previous owner (`None`: the slots had none, an assignment such as the cluster's creation).
    pub from: Option<NodeIdx>,
    /// New owner (`None`: the slots lost their owner).
    pub to: Option<NodeIdx>,
    /// The slots, as ranges.
    pub ranges: Vec<SlotRange>,
    /// Number of slots.
    pub slots: usize,
    /// First and last time a node reported one of these changes (end exclusive: last + 1 ms).
    pub span: TimeSpan,
}

impl OwnerMove {
    /// Whether the slots had no owner before: an assignment (the cluster's creation, or slots
    /// that were lost and are served again), not a move between nodes.
    pub fn is_assignment(&self) -> bool {
        self.from.is_none()
    }
}

/// Slots reported MIGRATING from one node to another (or IMPORTING on the other side).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrationSpan {
    /// Source node.
    pub from: NodeIdx,
    /// Destination node.
    pub to: NodeIdx,
    /// Slots seen in migration, as ranges.
    pub ranges: Vec<SlotRange>,
    /// Number of slots.
    pub slots: usize,
    /// First and last time a node reported one of them in migration (end exclusive).
    pub span: TimeSpan,
}

/// The owners before and after a change.
type OwnerPair = (Option<NodeIdx>, Option<NodeIdx>);

/// The first time each (slot, owner before, owner after) change was reported by any node (per
/// pair of owners, as runs of slots), and the first and last time each (source, target, slot)
/// migration was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ChangeLog {
    changes: BTreeMap<OwnerPair, FirstSeen>,
    migrations: BTreeMap<(NodeIdx, NodeIdx, u16), (Timestamp, Timestamp)>,
}

impl ChangeLog {
    /// Notes that a node saw `slots` go from `from` to `to` at `t`.
    pub(super) fn change(
        &mut self,
        range: SlotRange,
        from: Option<NodeIdx>,
        to: Option<NodeIdx>,
        t: Timestamp,
    ) {
        self.changes.entry((from, to)).or_default().see(range, t);
    }

    /// Notes that a node reported `slot` migrating from `from` to `to` at `t`.
    pub(super) fn migration(&mut self, from: NodeIdx, to: NodeIdx, slot: Slot, t: Timestamp) {
        self.migrations
            .entry((from, to, slot.get()))
            .and_modify(|(_, last)| *last = t)
            .or_insert((t, t));
    }

    /// The changes grouped per (from, to) pair, split where consecutive changes of a pair are
    /// more than [`MOVE_GAP_MS`] apart; in time order (ties: by first slot).
    pub(super) fn moves(&self) -> Vec<OwnerMove> {
        let mut moves = Vec::new();
        for (&(from, to), seen) in &self.changes {
            let mut changes: Vec<Run> = seen.runs().to_vec();
            changes.sort_unstable_by_key(|r| (r.t, r.start));
            let mut group: Vec<Run> = Vec::new();
            for c in changes {
                if let Some(last) = group.last() {
                    if c.t.millis_since(last.t) > MOVE_GAP_MS {
                        moves.push(owner_move(from, to, &mut group));
                        group.clear();
                    }
                }
                group.push(c);
            }
            if !group.is_empty() {
                moves.push(owner_move(from, to, &mut group));
            }
        }
        moves.sort_by_key(|m| {
            (
                m.span.start,
                m.span.end,
                m.ranges.first().map(|r| r.start()),
            )
        });
        moves
    }

    /// The migrations grouped per (source, target) pair, in time order (ties: by first slot).
    pub(super) fn migrations(&self) -> Vec<MigrationSpan> {
        let mut by_pair: BTreeMap<(NodeIdx, NodeIdx), (BTreeSet<u16>, Timestamp, Timestamp)> =
            BTreeMap::new();
        for (&(from, to, slot), &(first, last)) in &self.migrations {
            let e = by_pair
                .entry((from, to))
                .or_insert((BTreeSet::new(), first, last));
            e.0.insert(slot);
            e.1 = e.1.min(first);
            e.2 = e.2.max(last);
        }
        let mut out: Vec<MigrationSpan> = by_pair
            .into_iter()
            .map(|((from, to), (slots, first, last))| {
                let ranges = SlotRange::coalesce(slots.into_iter().filter_map(Slot::new));
                MigrationSpan {
                    from,
                    to,
                    slots: ranges.iter().map(|r| r.len()).sum(),
                    ranges,
                    span: TimeSpan::new(first, Timestamp(last.0 + 1)),
                }
            })
            .collect();
        out.sort_by_key(|m| (m.span.start, m.ranges.first().map(|r| r.start())));
        out
    }
}

/// The move of one group of runs, in time order (sorted by slot here).
fn owner_move(from: Option<NodeIdx>, to: Option<NodeIdx>, group: &mut [Run]) -> OwnerMove {
    let first = group.first().map_or(Timestamp(0), |g| g.t);
    let last = group.last().map_or(first, |g| g.t);
    group.sort_unstable_by_key(|r| r.start);
    let mut ranges: Vec<SlotRange> = Vec::with_capacity(group.len());
    for r in group.iter().filter_map(|r| r.range()) {
        match ranges.last_mut() {
            Some(l) if l.end().get() + 1 == r.start().get() => {
                *l = SlotRange::new(l.start(), r.end()).unwrap_or(*l)
            }
            _ => ranges.push(r),
        }
    }
    OwnerMove {
        from,
        to,
        slots: ranges.iter().map(|r| r.len()).sum(),
        ranges,
        span: TimeSpan::new(first, Timestamp(last.0 + 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: usize) -> Option<NodeIdx> {
        NodeIdx::new(i)
    }

    fn range(a: u16, b: u16) -> SlotRange {
        SlotRange::try_from((a, b)).expect("valid range")
    }

    #[test]
    fn changes_of_one_pair_far_apart_are_two_moves() {
        let mut log = ChangeLog::default();
        log.change(range(0, 9), n(0), n(1), Timestamp(1_000));
        log.change(range(10, 19), n(0), n(1), Timestamp(2_000));
        log.change(
            range(20, 29),
            n(0),
            n(1),
            Timestamp(2_000 + MOVE_GAP_MS + 1),
        );
        // A second report of a change already seen keeps its first time.
        log.change(range(0, 9), n(0), n(1), Timestamp(5_000));
        let moves = log.moves();
        assert_eq!(moves.len(), 2);
        assert_eq!(moves[0].ranges, vec![range(0, 19)]);
        assert_eq!(moves[0].slots, 20);
        assert_eq!(
            moves[0].span,
            TimeSpan::new(Timestamp(1_000), Timestamp(2_001))
        );
        assert_eq!(moves[1].ranges, vec![range(20, 29)]);
        assert!(!moves[0].is_assignment());
    }

    #[test]
    fn simultaneous_assignments_come_in_slot_order() {
        let mut log = ChangeLog::default();
        log.change(range(8192, 16383), None, n(0), Timestamp(10));
        log.change(range(0, 8191), None, n(1), Timestamp(10));
        let moves = log.moves();
        assert_eq!(moves[0].to, n(1));
        assert_eq!(moves[1].to, n(0));
        assert!(moves.iter().all(OwnerMove::is_assignment));
    }

    #[test]
    fn migrations_span_first_to_last_report() {
        let mut log = ChangeLog::default();
        let (a, b) = (
            NodeIdx::new(0).expect("index"),
            NodeIdx::new(1).expect("index"),
        );
        for (t, s) in [(100, 5), (200, 6), (300, 5)] {
            log.migration(a, b, Slot::new(s).expect("slot"), Timestamp(t));
        }
        let m = log.migrations();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].ranges, vec![range(5, 6)]);
        assert_eq!(m[0].span, TimeSpan::new(Timestamp(100), Timestamp(301)));
    }
}
