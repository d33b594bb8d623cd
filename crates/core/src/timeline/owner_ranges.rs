//! A node's view of the slot owners as ascending ranges, compared range by range: a topology
//! sample costs the timeline its ranges, not 16,384 slots.

use super::node_table::NodeIdx;
use super::slot_table::{OwnerChange, SlotTable};
use crate::slot::{Slot, SlotRange, SLOT_COUNT};

/// Owned slots as ascending, disjoint ranges of one owner each, neighbours of one owner joined
/// (what [`SlotTable::ranges`] gives): one table, one list.
pub(super) type OwnerRanges = Vec<(SlotRange, NodeIdx)>;

/// The owners that `assigned` gives, in order (a later range wins where two overlap), as
/// [`SlotTable::from_ranges`] then [`SlotTable::ranges`] would give them.
pub(super) fn canonical(mut assigned: Vec<(SlotRange, NodeIdx)>) -> OwnerRanges {
    // Not ascending and disjoint: out of order, or overlapping.
    let tangled = |v: &[(SlotRange, NodeIdx)]| {
        v.windows(2)
            .any(|w| w[1].0.start().get() <= w[0].0.end().get())
    };
    if tangled(&assigned) {
        let mut sorted = assigned.clone();
        sorted.sort_unstable_by_key(|(r, _)| r.start());
        if tangled(&sorted) {
            // Views that give a slot twice (a damaged reply): slot by slot, the later wins.
            return SlotTable::from_ranges(&assigned).ranges();
        }
        assigned = sorted;
    }
    let mut out: OwnerRanges = Vec::with_capacity(assigned.len());
    for (r, n) in assigned {
        match out.last_mut() {
            Some((l, o)) if *o == n && l.end().get() + 1 == r.start().get() => {
                *l = SlotRange::new(l.start(), r.end()).unwrap_or(*l);
            }
            _ => out.push((r, n)),
        }
    }
    out
}

/// The owner of `slot` by `ranges`.
pub(super) fn owner_at(ranges: &[(SlotRange, NodeIdx)], slot: Slot) -> Option<NodeIdx> {
    let i = ranges.partition_point(|(r, _)| r.end() < slot);
    ranges
        .get(i)
        .filter(|(r, _)| r.contains(slot))
        .map(|&(_, n)| n)
}

/// Slot 0 and every slot from which the owner by any of `views` may differ from the slot
/// before's, ascending: between two of them every view names one owner.
pub(super) fn starts<'a>(views: impl IntoIterator<Item = &'a [(SlotRange, NodeIdx)]>) -> Vec<u16> {
    let mut starts: Vec<u16> = views.into_iter().flat_map(edges).collect();
    starts.push(0);
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// Every slot from which the owner by `ranges` may differ from the slot before's: each range's
/// first slot and the slot after it (unordered, repeats possible; slot 0 not included).
fn edges(ranges: &[(SlotRange, NodeIdx)]) -> impl Iterator<Item = u16> + '_ {
    ranges.iter().flat_map(|(r, _)| {
        let after = r.end().get() + 1;
        [Some(r.start().get()), (after < SLOT_COUNT).then_some(after)]
            .into_iter()
            .flatten()
    })
}

/// The slots whose owner differs from `before` to `after`, as maximal ranges of one (before,
/// after) pair each: what [`SlotTable::diff`] gives of the two tables.
pub(super) fn diff(
    before: &[(SlotRange, NodeIdx)],
    after: &[(SlotRange, NodeIdx)],
) -> Vec<OwnerChange> {
    let starts = starts([before, after]);
    let mut out: Vec<OwnerChange> = Vec::new();
    // The run being built: its first slot, its pair.
    let mut run: Option<(u16, Option<NodeIdx>, Option<NodeIdx>)> = None;
    let mut close = |run: Option<(u16, Option<NodeIdx>, Option<NodeIdx>)>, end: u16| {
        if let Some((start, from, to)) = run.filter(|(_, from, to)| from != to) {
            if let Ok(range) = SlotRange::try_from((start, end)) {
                out.push(OwnerChange { range, from, to });
            }
        }
    };
    for &start in &starts {
        let Some(slot) = Slot::new(start) else {
            continue;
        };
        let pair = (owner_at(before, slot), owner_at(after, slot));
        match run {
            Some((_, from, to)) if (from, to) == pair => {}
            _ => {
                if start > 0 {
                    close(run, start - 1);
                }
                run = Some((start, pair.0, pair.1));
            }
        }
    }
    close(run, SLOT_COUNT - 1);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    fn n(i: usize) -> NodeIdx {
        NodeIdx::new(i).expect("small index")
    }

    /// Ranges over the whole slot space, most of them near each other so they overlap and touch.
    fn assigned() -> impl Strategy<Value = Vec<(SlotRange, NodeIdx)>> {
        let bound = prop_oneof![0u16..48, 16_330u16..SLOT_COUNT, 0u16..SLOT_COUNT];
        proptest::collection::vec((bound.clone(), bound, 0usize..3), 0..8).prop_map(|v| {
            v.into_iter()
                .filter_map(|(a, b, o)| {
                    let r = SlotRange::try_from((a.min(b), a.max(b))).ok()?;
                    Some((r, n(o)))
                })
                .collect()
        })
    }

    proptest! {
        /// The ranges, the owner of any slot and the changes between two views are the slot
        /// table's, overlapping ranges and all.
        #[test]
        fn ranges_agree_with_the_slot_table(a in assigned(), b in assigned(), probe in 0u16..SLOT_COUNT) {
            let (ta, tb) = (SlotTable::from_ranges(&a), SlotTable::from_ranges(&b));
            let (ra, rb) = (canonical(a), canonical(b));
            prop_assert_eq!(&ra, &ta.ranges());
            prop_assert_eq!(&rb, &tb.ranges());
            let slot = Slot::new(probe).expect("a slot");
            prop_assert_eq!(owner_at(&ra, slot), ta.get(slot));
            prop_assert_eq!(diff(&ra, &rb), ta.diff(&tb));
        }
    }

    #[test]
    fn a_later_range_wins_where_two_overlap() {
        let r = |a, b| SlotRange::try_from((a, b)).expect("valid range");
        let got = canonical(vec![
            (r(0, 99), n(0)),
            (r(50, 149), n(1)),
            (r(150, 199), n(1)),
        ]);
        assert_eq!(got, vec![(r(0, 49), n(0)), (r(50, 199), n(1))]);
    }
}
