//! Who owns each of the 16,384 slots: the one slot-table type of the cluster timeline, the
//! simulated cluster and every client model.

use std::fmt;

use super::node_table::NodeIdx;
use crate::slot::{Slot, SlotRange, SLOT_COUNT};

/// The owner of every slot, `None` for a slot no node serves.
///
/// Invariant: exactly [`SLOT_COUNT`] entries, one per slot, so indexing by a [`Slot`] never fails.
/// Node numbers are those of the [`NodeTable`](super::NodeTable) the table was built against.
#[derive(Clone, PartialEq, Eq)]
pub struct SlotTable {
    owners: Box<[Option<NodeIdx>]>,
}

impl Default for SlotTable {
    fn default() -> Self {
        SlotTable::new()
    }
}

/// Slots that changed owner between two tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnerChange {
    /// The slots (consecutive, one owner before and one after).
    pub range: SlotRange,
    /// The owner in the first table.
    pub from: Option<NodeIdx>,
    /// The owner in the second.
    pub to: Option<NodeIdx>,
}

impl SlotTable {
    /// A table in which no slot has an owner.
    pub fn new() -> SlotTable {
        SlotTable {
            owners: vec![None; usize::from(SLOT_COUNT)].into_boxed_slice(),
        }
    }

    /// A table with these owner ranges (slots not listed have none; a later range wins).
    pub fn from_ranges(ranges: &[(SlotRange, NodeIdx)]) -> SlotTable {
        let mut t = SlotTable::new();
        for &(r, n) in ranges {
            t.fill(r, Some(n));
        }
        t
    }

    /// The owner of `slot`.
    #[inline]
    pub fn get(&self, slot: Slot) -> Option<NodeIdx> {
        self.owners[usize::from(slot.get())]
    }

    /// Sets the owner of `slot`.
    #[inline]
    pub fn set(&mut self, slot: Slot, owner: Option<NodeIdx>) {
        self.owners[usize::from(slot.get())] = owner;
    }

    /// Sets the owner of every slot of `range`.
    pub fn fill(&mut self, range: SlotRange, owner: Option<NodeIdx>) {
        let (first, last) = (
            usize::from(range.start().get()),
            usize::from(range.end().get()),
        );
        self.owners[first..=last].fill(owner);
    }

    /// Gives every slot of `from` to `to` (a replica promoted for its whole shard).
    pub fn reassign(&mut self, from: NodeIdx, to: NodeIdx) {
        for o in self.owners.iter_mut() {
            if *o == Some(from) {
                *o = Some(to);
            }
        }
    }

    /// Makes every slot unowned.
    pub fn clear(&mut self) {
        self.owners.fill(None);
    }

    /// Every slot with its owner, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (Slot, Option<NodeIdx>)> + '_ {
        self.owners
            .iter()
            .enumerate()
            .filter_map(|(i, &o)| Some((Slot::new(u16::try_from(i).ok()?)?, o)))
    }

    /// The owners in slot order (index `i` is slot `i`'s).
    pub fn as_slice(&self) -> &[Option<NodeIdx>] {
        &self.owners
    }

    /// Owned slots as ascending ranges of one owner each (unowned slots left out).
    pub fn ranges(&self) -> Vec<(SlotRange, NodeIdx)> {
        runs(&self.owners)
            .filter_map(|(r, o)| Some((r, o?)))
            .collect()
    }

    /// How many slots have an owner.
    pub fn covered(&self) -> usize {
        self.owners.iter().filter(|o| o.is_some()).count()
    }

    /// Whether every slot has an owner.
    pub fn is_covered(&self) -> bool {
        self.owners.iter().all(Option::is_some)
    }

    /// How many slots `node` owns.
    pub fn count(&self, node: NodeIdx) -> usize {
        self.owners.iter().filter(|&&o| o == Some(node)).count()
    }

    /// The slots whose owner differs in `later`, as ranges of one (before, after) pair each.
    pub fn diff(&self, later: &SlotTable) -> Vec<OwnerChange> {
        let pairs: Vec<(Option<NodeIdx>, Option<NodeIdx>)> = self
            .owners
            .iter()
            .copied()
            .zip(later.owners.iter().copied())
            .collect();
        runs(&pairs)
            .filter(|(_, (from, to))| from != to)
            .map(|(range, (from, to))| OwnerChange { range, from, to })
            .collect()
    }
}

/// Maximal runs of equal values, as slot ranges.
fn runs<T: Copy + PartialEq>(values: &[T]) -> impl Iterator<Item = (SlotRange, T)> + '_ {
    let mut start = 0usize;
    (1..=values.len()).filter_map(move |i| {
        if i < values.len() && values[i] == values[start] {
            return None;
        }
        let run = (start, values[start]);
        start = i;
        let range = u16::try_from(run.0)
            .ok()
            .zip(u16::try_from(i - 1).ok())
            .and_then(|(a, b)| SlotRange::try_from((a, b)).ok())?;
        Some((range, run.1))
    })
}

impl fmt::Debug for SlotTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.ranges().iter().map(|(r, n)| (r.to_string(), *n)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: usize) -> NodeIdx {
        NodeIdx::new(i).expect("small index")
    }

    fn range(a: u16, b: u16) -> SlotRange {
        SlotRange::try_from((a, b)).expect("valid range")
    }

    fn slot(s: u16) -> Slot {
        Slot::new(s).expect("valid slot")
    }

    #[test]
    fn ranges_round_trip_and_skip_unowned_slots() {
        let owners = [(range(0, 99), n(0)), (range(200, 16383), n(1))];
        let t = SlotTable::from_ranges(&owners);
        assert_eq!(t.ranges(), owners);
        assert_eq!(t.get(slot(99)), Some(n(0)));
        assert_eq!(t.get(slot(150)), None);
        assert_eq!(t.covered(), 16384 - 100);
        assert!(!t.is_covered());
        assert_eq!(t.count(n(0)), 100);
    }

    #[test]
    fn an_empty_table_has_no_ranges() {
        let t = SlotTable::new();
        assert!(t.ranges().is_empty());
        assert_eq!(t.covered(), 0);
        assert_eq!(t.iter().count(), 16384);
    }

    #[test]
    fn set_fill_and_clear() {
        let mut t = SlotTable::from_ranges(&[(range(0, 16383), n(0))]);
        assert!(t.is_covered());
        t.set(slot(5), Some(n(2)));
        t.fill(range(10, 12), None);
        assert_eq!(
            t.ranges(),
            vec![
                (range(0, 4), n(0)),
                (range(5, 5), n(2)),
                (range(6, 9), n(0)),
                (range(13, 16383), n(0))
            ]
        );
        t.clear();
        assert_eq!(t, SlotTable::new());
    }

    #[test]
    fn diff_gives_each_changed_run_once() {
        let before = SlotTable::from_ranges(&[(range(0, 16383), n(0))]);
        let mut after = before.clone();
        after.fill(range(0, 8191), Some(n(1)));
        after.fill(range(16000, 16383), None);
        assert_eq!(
            before.diff(&after),
            vec![
                OwnerChange {
                    range: range(0, 8191),
                    from: Some(n(0)),
                    to: Some(n(1))
                },
                OwnerChange {
                    range: range(16000, 16383),
                    from: Some(n(0)),
                    to: None
                },
            ]
        );
        assert!(after.diff(&after).is_empty());
    }
}
