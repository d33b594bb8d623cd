//! Replay answers pinned to exact numbers on both platforms.
//!
//! The synthetic incidents of `tests/sim` (shared with `tests/replay.rs`), replayed through the
//! client models, with every count of the report pinned to the exact number the native build
//! gives. The same checks run in a real browser: `tests/wasm_replay.rs` includes this file as a
//! module and calls the `check_*` functions from `wasm_bindgen_test`s, so the native build and
//! the WASM build are held to one answer. Where a change to the replay engine or a model changes a
//! number on purpose, update it here once: both platforms follow.

use std::collections::BTreeMap;

use slotscope_core::float;
use slotscope_core::replay::{mix64, ReplayReport, Workload};
use slotscope_core::Timestamp;

// The builders of tests/sim, by path so that this file also works as a module of wasm_replay.rs.
#[path = "sim/mod.rs"]
mod sim;
use sim::{at, commands_from, incident1, incident2, run, workload_of};

const NEW_NODE: &str = sim::B;

fn workload(secs: u64, command: &str) -> Workload {
    workload_of(secs, 100, command)
}

fn map<V: Copy>(entries: &[(&str, V)]) -> BTreeMap<String, V> {
    entries.iter().map(|&(k, v)| (k.to_owned(), v)).collect()
}

/// The figures of a report that are pinned.
#[derive(Debug, PartialEq)]
struct Figures {
    wedged: bool,
    wedged_since: Option<Timestamp>,
    commands: u64,
    skipped_while_waiting: u64,
    succeeded: u64,
    failed: u64,
    moved: u64,
    ask: u64,
    moved_share: BTreeMap<String, f64>,
    errors: BTreeMap<String, u64>,
    full_reinits: u64,
    cluster_slots_calls: u64,
    new_connections: u64,
    startup_nodes: usize,
    /// Commands served by the node B (incident 1's new node, incident 2's second shard).
    new_node_ok: u64,
    timeline_seconds: usize,
}

fn figures(r: &ReplayReport) -> Figures {
    Figures {
        wedged: r.wedged,
        wedged_since: r.wedged_since,
        commands: r.commands,
        skipped_while_waiting: r.skipped_while_waiting,
        succeeded: r.succeeded,
        failed: r.failed,
        moved: r.moved,
        ask: r.ask,
        moved_share: r.moved_share.clone(),
        errors: r.errors.clone(),
        full_reinits: r.full_reinits,
        cluster_slots_calls: r.cluster_slots_calls,
        new_connections: r.new_connections,
        startup_nodes: r.startup_nodes,
        new_node_ok: r.nodes.get(NEW_NODE).map_or(0, |n| n.ok),
        timeline_seconds: r.timeline.len(),
    }
}

/// The generated workloads are the same on both platforms: count, keys and slots, folded.
pub(crate) fn check_workloads() {
    let fold = |w: &Workload| {
        let keys = w
            .commands
            .iter()
            .fold(0u64, |h, c| mix64(h ^ u64::from(c.key) ^ (c.t.0 << 20)));
        let slots = w
            .key_slots
            .iter()
            .fold(0u64, |h, s| mix64(h ^ u64::from(s.get())));
        (w.commands.len(), keys, slots)
    };
    assert_eq!(
        fold(&workload(60, "zadd")),
        (6000, 0xe494_505a_08b2_f79f, 0xc47b_b18b_9ff1_9ff2)
    );
}

/// Incident 1, redis-py 5.0.0: wedged for good by the timeout at 10 s, never reaches B.
pub(crate) fn check_incident1_redis_py_5() {
    let (cluster, w) = (incident1(), workload(60, "zadd"));
    let r = run(&cluster, &w, "redis-py@5.0.0", &[]);
    let after = commands_from(&w, at(10));
    assert_eq!(after, 5000);
    assert_eq!(r.wedged_since, Some(at(10)));
    assert_eq!(r.nodes[NEW_NODE].calls, 0);
    assert!(r.timeline[30].wedged && !r.timeline[9].wedged);
    assert_eq!(
        figures(&r),
        Figures {
            wedged: true,
            wedged_since: Some(at(10)),
            commands: 6000,
            skipped_while_waiting: 0,
            succeeded: 1000,
            failed: 5000,
            moved: 0,
            ask: 0,
            moved_share: map(&[("zadd", 0.0)]),
            errors: map(&[("RedisClusterException", 5000)]),
            full_reinits: 1,
            cluster_slots_calls: 1,
            // The startup node's connection, and a new one once the initialisation's
            // set_nodes() replaced that node.
            new_connections: 2,
            startup_nodes: 0,
            new_node_ok: 0,
            timeline_seconds: 60,
        }
    );
}

/// Incident 1, redis-py 8.0.0: fails during the stall only, then sends about half to B.
pub(crate) fn check_incident1_redis_py_8() {
    let (cluster, w) = (incident1(), workload(60, "zadd"));
    let r = run(&cluster, &w, "redis-py@8.0.0", &[]);
    let share = float::from_u64(r.nodes[NEW_NODE].ok) / float::from_u64(commands_from(&w, at(22)));
    assert!((0.4..0.6).contains(&share), "share to the new node {share}");
    assert_eq!(r.timeline[30].errors, 0);
    assert_eq!(
        figures(&r),
        Figures {
            wedged: false,
            wedged_since: None,
            commands: 6000,
            skipped_while_waiting: 0,
            succeeded: 5800,
            failed: 200,
            // One MOVED more since the default node is modelled (keyless.rs): a command that
            // starts while the client has none (before its first initialisation, after a
            // failed one) goes to a random primary.
            moved: 7,
            ask: 52,
            moved_share: map(&[("zadd", 0.001_194_743_130_227_001_1)]),
            errors: map(&[("RedisClusterException", 200)]),
            full_reinits: 3,
            cluster_slots_calls: 203,
            new_connections: 9,
            startup_nodes: 2,
            new_node_ok: 2001,
            timeline_seconds: 60,
        }
    );
}

/// Incident 1, redis-py 8.0.0 waiting out each timeout (`socket_timeout` 0.5 s).
pub(crate) fn check_incident1_redis_py_8_socket_timeout() {
    let (cluster, w) = (incident1(), workload(60, "zadd"));
    let r = run(&cluster, &w, "redis-py@8.0.0", &[("socket_timeout", "0.5")]);
    assert_eq!(
        figures(&r),
        Figures {
            wedged: false,
            wedged_since: None,
            commands: 5803,
            skipped_while_waiting: 197,
            succeeded: 5800,
            failed: 3,
            // One MOVED more since the default node is modelled (keyless.rs): a command that
            // starts while the client has none (before its first initialisation, after a
            // failed one) goes to a random primary.
            moved: 7,
            ask: 52,
            moved_share: map(&[("zadd", 0.001_194_743_130_227_001_1)]),
            errors: map(&[("RedisClusterException", 3)]),
            full_reinits: 3,
            cluster_slots_calls: 6,
            new_connections: 9,
            startup_nodes: 2,
            new_node_ok: 2001,
            timeline_seconds: 60,
        }
    );
}

/// Incident 1, the ideal client: initialises once, recovers, sends about half to B.
pub(crate) fn check_incident1_ideal() {
    let (cluster, w) = (incident1(), workload(60, "zadd"));
    let r = run(&cluster, &w, "ideal", &[]);
    assert_eq!(
        figures(&r),
        Figures {
            wedged: false,
            wedged_since: None,
            commands: 6000,
            skipped_while_waiting: 0,
            succeeded: 5800,
            failed: 200,
            moved: 1503,
            ask: 52,
            moved_share: map(&[("zadd", 0.204_350_781_781_101_3)]),
            errors: map(&[("TimeoutError", 200)]),
            full_reinits: 1,
            cluster_slots_calls: 1,
            new_connections: 3,
            startup_nodes: 1,
            new_node_ok: 2001,
            timeline_seconds: 60,
        }
    );
}

/// Incident 2, redis-py 8.0.0 with every slot remapped to A: sustained MOVED, a rebuild every
/// fifth.
pub(crate) fn check_incident2_address_remap() {
    let (cluster, w) = (incident2(), workload(60, "zrevrange"));
    let r = run(
        &cluster,
        &w,
        "redis-py@8.0.0",
        &[("address_remap", "10.0.0.1:6379")],
    );
    assert!(r.timeline.iter().all(|s| s.moved > 0));
    assert_eq!(
        figures(&r),
        Figures {
            wedged: false,
            wedged_since: None,
            commands: 6000,
            skipped_while_waiting: 0,
            succeeded: 6000,
            failed: 0,
            moved: 3847,
            ask: 0,
            moved_share: map(&[("zrevrange", 0.390_677_363_664_060_14)]),
            errors: map(&[]),
            full_reinits: 770,
            cluster_slots_calls: 770,
            new_connections: 3079,
            startup_nodes: 1,
            new_node_ok: 3079,
            timeline_seconds: 60,
        }
    );
}

/// Incident 2, redis-py 8.0.0 without remap: no MOVED after the first initialisation.
pub(crate) fn check_incident2_plain() {
    let (cluster, w) = (incident2(), workload(60, "zrevrange"));
    let r = run(&cluster, &w, "redis-py@8.0.0", &[]);
    assert_eq!(
        figures(&r),
        Figures {
            wedged: false,
            wedged_since: None,
            commands: 6000,
            skipped_while_waiting: 0,
            succeeded: 6000,
            failed: 0,
            moved: 0,
            ask: 0,
            moved_share: map(&[("zrevrange", 0.0)]),
            errors: map(&[]),
            full_reinits: 1,
            cluster_slots_calls: 1,
            new_connections: 3,
            startup_nodes: 2,
            new_node_ok: 3079,
            timeline_seconds: 60,
        }
    );
}

#[test]
fn workloads() {
    check_workloads();
}

#[test]
fn incident1_redis_py_5_wedges_at_10_s() {
    check_incident1_redis_py_5();
}

#[test]
fn incident1_redis_py_8_recovers() {
    check_incident1_redis_py_8();
}

#[test]
fn incident1_redis_py_8_socket_timeout() {
    check_incident1_redis_py_8_socket_timeout();
}

#[test]
fn incident1_ideal() {
    check_incident1_ideal();
}

#[test]
fn incident2_address_remap() {
    check_incident2_address_remap();
}

#[test]
fn incident2_plain() {
    check_incident2_plain();
}
