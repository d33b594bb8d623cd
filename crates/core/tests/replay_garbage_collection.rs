//! CPython's full garbage collections in the redis-py models (`gc_full_ms`, `gc_full_every`):
//! the pause one adds to an initialisation, and what a longer initialisation does to a reset
//! storm under `address_remap`.

mod sim;

use sim::*;
use slotscope_core::float;
use slotscope_core::replay::{model, replay, ReplayReport, SimCluster, Workload};

/// [`remapped_py5_options`] with `extra` on top.
fn run_5_0_0(cluster: &SimCluster, w: &Workload, extra: &[(&str, &str)]) -> ReplayReport {
    let mut opts = remapped_py5_options();
    for (k, v) in extra {
        opts.set(k, v).unwrap();
    }
    let mut client = model("redis-py@5.0.0", opts).unwrap();
    replay(cluster, w, client.as_mut())
}

#[test]
fn a_full_collection_every_nth_initialisation_holds_the_loop_its_time() {
    // Every answer collapses onto A (`address_remap`): B's half of the keys meets MOVED, every
    // fifth resets the client, and each reset costs an initialisation. One full collection of
    // 10 ms every second initialisation adds 10 ms of the client's work per two of them: the
    // report's `client_cpu_ms` grows by that, within the few initialisations the slower storm
    // does not reach.
    let cluster = incident2();
    let w = paced(8, 40);
    let off = run_5_0_0(&cluster, &w, &[("gc_full_every", "0")]);
    let on = run_5_0_0(
        &cluster,
        &w,
        &[("gc_full_ms", "10"), ("gc_full_every", "2")],
    );
    assert!(off.full_reinits > 30, "{off:?}");
    let per_init = |r: &ReplayReport| r.client_cpu_ms / float::from_u64(r.full_reinits);
    let added = per_init(&on) - per_init(&off);
    assert!(
        (4.0..6.0).contains(&added),
        "{added:.2} ms more per initialisation ({} and {} initialisations)",
        off.full_reinits,
        on.full_reinits
    );
}

#[test]
fn redis_py_5_remapped_storm_wedges_once_collections_lengthen_its_initialisations() {
    // The remapped 5.0.0 storm of docs/FIDELITY.md ("CPython's full collections"): 73/s, every
    // reset followed by an initialisation of ~34 ms (slot cache and `COMMAND` table) during which
    // two or three commands come due; they go out together once it ends, with the one that
    // called for it, and meet MOVED half the time. The reset that drains the startup nodes needs
    // the fifth MOVED to come while a command is still in flight on A; the counter starts each
    // burst at one, so a burst of three never gets there. A full collection of 10.4 ms every
    // 4.6 initialisations (as timed) makes some initialisations 45 ms long: bursts of four,
    // and in one of them the reset lands under a command on A, a `ConnectionError` that pops
    // A, the last startup node. Live, the case wedged after 14 and after 4 initialisations in
    // two runs; without the collections the model never did in 200.
    let cluster = incident2();
    let w = paced(11, 73);
    let off = run_5_0_0(&cluster, &w, &[("gc_full_every", "0")]);
    assert!(!off.wedged, "{off:?}");
    assert!(off.full_reinits > 100, "{off:?}");
    let on = run_5_0_0(
        &cluster,
        &w,
        &[("gc_full_ms", "10.4"), ("gc_full_every", "4.6")],
    );
    assert!(on.wedged, "{on:?}");
    assert!(on.full_reinits < off.full_reinits / 2, "{on:?}");
}
