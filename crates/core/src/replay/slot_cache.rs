//! A client's slot cache: the slot table a client model loads from `CLUSTER SLOTS` answers and
//! patches on `MOVED`.
//!
//! In a redirect storm (an address translation that sends every slot to one node) a client
//! reloads the same answer after every few redirects, and rewriting 16,384 slots each time was
//! most of the replay's work. The cache keeps the last answer it loaded and the slots patched
//! since: loading the same answer again only sets those slots back, with the same table as a
//! rewrite would leave.

use crate::slot::{Slot, SlotRange, SLOT_COUNT};
use crate::timeline::{NodeIdx, SlotTable};

/// How a load treats the slots the answer does not list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unlisted {
    /// They lose their owner (the table is rebuilt from the answer).
    Cleared,
    /// They keep the owner they had (the answer is written over the table).
    Kept,
}

/// The slot table of a client, loaded from answers and patched (see the module doc).
#[derive(Clone, Debug, Default)]
pub(crate) struct SlotCache {
    table: SlotTable,
    /// The answer last loaded (owners by the client's numbers, a later range winning), and how.
    loaded: Option<(Vec<(SlotRange, NodeIdx)>, Unlisted)>,
    /// The slots set since that load (at most [`SLOT_COUNT`]; beyond, `loaded` is dropped).
    patched: Vec<Slot>,
}

impl SlotCache {
    /// The owner of `slot`.
    #[inline]
    pub(crate) fn get(&self, slot: Slot) -> Option<NodeIdx> {
        self.table.get(slot)
    }

    /// The table.
    pub(crate) fn table(&self) -> &SlotTable {
        &self.table
    }

    /// Sets the owner of `slot` (a `MOVED` patch).
    pub(crate) fn set(&mut self, slot: Slot, owner: Option<NodeIdx>) {
        if self.patched.len() < usize::from(SLOT_COUNT) {
            self.patched.push(slot);
        } else {
            // More patches than slots: the next load rewrites the table.
            self.loaded = None;
        }
        self.table.set(slot, owner);
    }

    /// Loads `owners`, the slots it does not list `unlisted`: the table a rewrite from the
    /// answer leaves, set back slot by slot when the answer is the last one loaded.
    pub(crate) fn load(&mut self, owners: Vec<(SlotRange, NodeIdx)>, unlisted: Unlisted) {
        match &self.loaded {
            Some((last, how)) if *last == owners && *how == unlisted => {
                for &slot in &self.patched {
                    let owner = owners
                        .iter()
                        .rev()
                        .find(|(r, _)| r.contains(slot))
                        .map(|&(_, n)| n);
                    match (owner, unlisted) {
                        (Some(n), _) => self.table.set(slot, Some(n)),
                        (None, Unlisted::Cleared) => self.table.set(slot, None),
                        (None, Unlisted::Kept) => {}
                    }
                }
            }
            _ => {
                if unlisted == Unlisted::Cleared {
                    self.table.clear();
                }
                for &(r, n) in &owners {
                    self.table.fill(r, Some(n));
                }
                self.loaded = Some((owners, unlisted));
            }
        }
        self.patched.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(a: u16, b: u16) -> SlotRange {
        SlotRange::try_from((a, b)).expect("range")
    }

    fn n(i: usize) -> NodeIdx {
        NodeIdx::new(i).expect("node")
    }

    fn slot(s: u16) -> Slot {
        Slot::new(s).expect("slot")
    }

    /// The table a rewrite would leave: what the cache must equal after every load.
    fn rewritten(
        before: &SlotTable,
        owners: &[(SlotRange, NodeIdx)],
        unlisted: Unlisted,
    ) -> SlotTable {
        let mut t = before.clone();
        if unlisted == Unlisted::Cleared {
            t.clear();
        }
        for &(r, n) in owners {
            t.fill(r, Some(n));
        }
        t
    }

    #[test]
    fn a_load_of_the_same_answer_leaves_the_table_a_rewrite_leaves() {
        let answers = [
            vec![(range(0, 8191), n(0)), (range(8192, 16383), n(1))],
            vec![(range(0, 99), n(2)), (range(50, 8191), n(0))],
            vec![(range(0, 16383), n(0))],
        ];
        for unlisted in [Unlisted::Cleared, Unlisted::Kept] {
            let mut cache = SlotCache::default();
            let mut x = 7_u32;
            for round in 0..60 {
                // Patches, some outside every range of the answer, some twice.
                for _ in 0..(round % 7) {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    let s = u16::try_from((x >> 8) % 16_384).expect("slot");
                    let owner =
                        (!x.is_multiple_of(5)).then(|| n(usize::try_from(x % 3).expect("small")));
                    cache.set(slot(s), owner);
                    cache.set(slot(120), Some(n(4)));
                }
                let owners = answers[(round / 4) % answers.len()].clone();
                let want = rewritten(cache.table(), &owners, unlisted);
                cache.load(owners, unlisted);
                assert_eq!(cache.table(), &want, "round {round}, {unlisted:?}");
            }
        }
    }

    #[test]
    fn more_patches_than_slots_rewrite_the_table() {
        let owners = vec![(range(0, 16383), n(0))];
        let mut cache = SlotCache::default();
        cache.load(owners.clone(), Unlisted::Cleared);
        for i in 0..=usize::from(SLOT_COUNT) {
            let s = u16::try_from(i % usize::from(SLOT_COUNT)).expect("slot");
            cache.set(slot(s), Some(n(1)));
        }
        cache.load(owners.clone(), Unlisted::Cleared);
        assert_eq!(cache.table(), &SlotTable::from_ranges(&owners));
    }
}
