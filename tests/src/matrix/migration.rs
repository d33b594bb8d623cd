//! The case's migration: the last slots of node 2 moved to node 3 (an empty master that joined
//! before the recording), in two halves, with the harness's per-slot protocol
//! ([`Cluster::migrate_slots`]: `CLUSTER SETSLOT … IMPORTING/MIGRATING`, `MIGRATE`, `SETSLOT …
//! NODE`), as the incident 1 scenario does.

use slotscope_core::{Slot, SlotRange, SLOT_COUNT};

use crate::cluster::Cluster;

/// The master whose slots move.
pub const SOURCE: usize = 2;
/// The master they move to (added empty).
pub const TARGET: usize = 3;

/// The two halves of a migration of `count` slots: the last `count` slots of the 16384.
pub fn halves(count: u16) -> (SlotRange, SlotRange) {
    assert!(
        (2..=SLOT_COUNT / 3).contains(&count),
        "move 2..={} slots of node 2",
        SLOT_COUNT / 3
    );
    let first = SLOT_COUNT - count;
    let mid = first + count / 2;
    (range(first, mid - 1), range(mid, SLOT_COUNT - 1))
}

fn range(first: u16, last: u16) -> SlotRange {
    SlotRange::new(
        Slot::new(first).expect("a slot"),
        Slot::new(last).expect("a slot"),
    )
    .expect("first <= last")
}

/// Moves `part` from [`SOURCE`] to [`TARGET`].
///
/// # Panics
///
/// As [`Cluster::migrate_slots`].
pub fn migrate(cluster: &Cluster, part: SlotRange) {
    cluster.migrate_slots(part, SOURCE, TARGET);
}

/// Opens the first slot of `part` (`IMPORTING` on the target, `MIGRATING` on the source) without
/// moving it: the cluster is then mid-migration. [`migrate`] of `part` later takes it from there.
///
/// # Panics
///
/// If a node refuses.
pub fn open_first_slot(cluster: &Cluster, part: SlotRange) {
    let s = part.start().to_string();
    let (src, dst) = (cluster.node_id(SOURCE), cluster.node_id(TARGET));
    let mut t = cluster.client(TARGET);
    t.cmd_ok(&["CLUSTER", "SETSLOT", &s, "IMPORTING", src])
        .unwrap_or_else(|e| panic!("SETSLOT {s} IMPORTING on node {TARGET}: {e}"));
    let mut f = cluster.client(SOURCE);
    f.cmd_ok(&["CLUSTER", "SETSLOT", &s, "MIGRATING", dst])
        .unwrap_or_else(|e| panic!("SETSLOT {s} MIGRATING on node {SOURCE}: {e}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_cover_the_last_slots() {
        let (a, b) = halves(1000);
        assert_eq!(a.start().get(), 15384);
        assert_eq!(a.len() + b.len(), 1000);
        assert_eq!(b.end().get(), 16383);
        assert_eq!(a.end().get() + 1, b.start().get());
    }
}
