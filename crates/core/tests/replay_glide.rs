//! Replay of synthetic incidents through the Valkey GLIDE 2.5.2 `GlideClusterClient` model.

use slotscope_core::replay::{
    model, Failure, FaultKind, ModelOptions, ReplayReport, SimCluster, SimClusterBuilder, Workload,
};

mod sim;
use sim::*;

const MODEL: &str = "glide@2.5.2";
const TIMEOUT: &str = "TimeoutError";
const CONNECTION: &str = "ConnectionError";
const REQUEST: &str = "RequestError";

fn sum(
    r: &ReplayReport,
    from: usize,
    to: usize,
    f: impl Fn(&slotscope_core::replay::Second) -> u64,
) -> u64 {
    r.timeline[from..to].iter().map(f).sum()
}

#[test]
fn a_moved_patches_one_slot_and_the_refresh_waits_15_to_30_s_after_the_last() {
    // Creation refreshes at 0 s. From 5 s every first command on one of B's new slots meets
    // MOVED: the slot is patched in place and the command retried on B; the refresh it asks is
    // throttled until 15 s at least after the last one (plus a jitter up to 15 s), so MOVED go
    // on, one per slot, until then; the first refresh that runs ends them.
    let (cluster, w) = (reshard_at(5), workload_of(40, 100, "zadd"));
    let r = run_model(&cluster, &w, &[]);
    assert_eq!(r.failed, 0);
    assert!(!r.wedged);
    let early = sum(&r, 5, 15, |s| s.moved);
    assert!(early > 50, "one MOVED per new slot met: {early}");
    assert_eq!(sum(&r, 0, 15, |s| s.full_reinits), 1, "only the creation's");
    assert_eq!(r.full_reinits, 2, "one refresh between 15 and 30 s");
    let refreshed = r.timeline.iter().rposition(|s| s.full_reinits > 0).unwrap();
    assert!((15..=30).contains(&refreshed), "refresh at {refreshed} s");
    assert_eq!(sum(&r, refreshed + 1, 40, |s| s.moved), 0);
    // The creation asks its one startup node; the refresh asks both nodes of its map.
    assert_eq!(r.cluster_slots_calls, 1 + 2);
    // Two connections per node: A's, then B's (its first command).
    assert_eq!(r.new_connections, 4);
}

#[test]
fn a_moved_to_a_replica_of_the_shard_promotes_it_for_the_whole_shard() {
    // B's half moves to its replica R at 5 s (a failover: B becomes R's replica), and the
    // answers list the replica beside its primary. GLIDE keeps the shard's replicas
    // (`ShardAddrs`), and the first MOVED naming R swaps R and B for the whole shard: one MOVED,
    // where a MOVED to a node it does not know as the shard's replica moves one slot, one MOVED
    // per slot met until the throttled refresh (15-30 s after the last).
    const R: &str = "10.0.0.3:6379";
    let failover = |listed: bool| {
        let mut b = SimClusterBuilder::new();
        let (low, high) = (range(0, 8191), range(8192, 16383));
        b.layout(at(0), &[(low, addr(A)), (high, addr(B))], &[]);
        b.layout(at(5), &[(low, addr(A)), (high, addr(R))], &[]);
        if listed {
            b.replicas(at(0), &[(addr(R), addr(B))]);
            b.replicas(at(5), &[(addr(B), addr(R))]);
        }
        b.build()
    };
    let w = workload_of(40, 100, "zadd");
    let promoted = run_model(&failover(true), &w, &[]);
    assert_eq!(promoted.failed, 0);
    assert_eq!(promoted.moved, 1, "one MOVED moves the whole shard");
    let one_by_one = run_model(&failover(false), &w, &[]);
    assert_eq!(one_by_one.failed, 0);
    assert!(one_by_one.moved > 50, "{} MOVED", one_by_one.moved);
}

#[test]
fn periodic_checks_ask_a_node_every_interval_and_refresh_only_on_a_change() {
    // A steady layout: each check asks max(log2(2), 1) = 1 node and finds the same view.
    let (steady, w) = (incident2(), workload_of(70, 20, "get"));
    let r = run_model(&steady, &w, &[]);
    assert_eq!(
        r.cluster_slots_calls,
        1 + 1,
        "the creation's and the 60 s check"
    );
    assert_eq!(r.full_reinits, 1);
    let every_10 = run_model(&steady, &w, &[("periodicChecks", "10")]);
    assert_eq!(every_10.cluster_slots_calls, 1 + 6);
    assert_eq!(every_10.full_reinits, 1);
    let off = run_model(&steady, &w, &[("periodicChecks", "disabled")]);
    assert_eq!(off.cluster_slots_calls, 1);
    // A change the commands never meet (a 1-key workload; B takes the half without its slot):
    // the check at 60 s sees another view and refreshes (60 s after the last run: not
    // throttled).
    let one_key = Workload::generate(&slotscope_core::replay::WorkloadSpec {
        start: at(0),
        duration_ms: 70_000,
        rate_per_sec: 20,
        keys: 1,
        key_prefix: "k".into(),
        command: "get".into(),
        seed: 1,
    })
    .unwrap();
    let key_slot = one_key.key_slots[0].get();
    let half = if key_slot < 8192 {
        (8192, 16383)
    } else {
        (0, 8191)
    };
    let rest = if key_slot < 8192 {
        (0, 8191)
    } else {
        (8192, 16383)
    };
    let mut builder = SimClusterBuilder::new();
    builder.layout(at(0), &[(range(0, 16383), addr(A))], &[]);
    builder.add_node(&addr(B));
    builder.layout(
        at(40),
        &[
            (range(rest.0, rest.1), addr(A)),
            (range(half.0, half.1), addr(B)),
        ],
        &[],
    );
    let changed = builder.build();
    let r = run_model(&changed, &one_key, &[]);
    assert_eq!(r.moved, 0);
    assert_eq!(r.full_reinits, 2, "the check's refresh");
    assert_eq!(r.timeline[60].full_reinits, 1);
    let off = run_model(&changed, &one_key, &[("periodicChecks", "disabled")]);
    assert_eq!(off.full_reinits, 1);
}

#[test]
fn a_silent_node_times_commands_out_at_the_request_timeout_and_keeps_its_connection() {
    let (cluster, w) = (
        incident2_with_fault(B, 10, 12, FaultKind::Timeout),
        workload_of(20, 100, "zadd"),
    );
    let r = run_model(&cluster, &w, &[]);
    assert!(r.failed > 0);
    assert_eq!(r.errors[TIMEOUT], r.failed, "{:?}", r.errors);
    assert_eq!(r.failures[&Failure::Timeout], r.failed);
    assert_eq!(r.timeline[13].errors, 0);
    assert!(!r.wedged);
    // A timeout breaks no connection: A's and B's, once.
    assert_eq!(r.new_connections, 4);
    // Each timeout costs requestTimeout (250 ms by default): a longer one skips more commands.
    let long = run_model(&cluster, &w, &[("requestTimeout", "1000")]);
    assert!(long.skipped_while_waiting > r.skipped_while_waiting);
    let alias = run_model(&cluster, &w, &[("socket_timeout", "1")]);
    assert_eq!(alias.skipped_while_waiting, long.skipped_while_waiting);
}

#[test]
fn a_refusing_node_is_left_at_once_and_its_slots_time_out_until_the_reconnect() {
    // B refuses from 10 s to 12 s. Its connections saw the end of the stream before the next
    // command was sent: the validation took B out of the map and its reconnect task failed its
    // first attempt, so nothing fails by a broken connection (no ConnectionError). B's slots go
    // to a random node, A, whose MOVED back to B finds no connection: a refresh is asked and the
    // retry waits 1280 ms, past the request timeout. B reconnects at its first attempt after
    // 12 s (the backoff: 200, 400, 800, 1600 ms, then every 3200 ms).
    let (cluster, w) = (b_refuses_for_two_seconds(), workload_of(20, 100, "zadd"));
    let r = run_model(&cluster, &w, &[]);
    assert!(r.failed > 10, "{:?}", r.errors);
    assert_eq!(r.errors.get(CONNECTION), None, "{:?}", r.errors);
    assert_eq!(r.errors[TIMEOUT], r.failed, "{:?}", r.errors);
    // The first failure is a request timeout after the fault, not the fault's moment.
    let first = r
        .timeline
        .iter()
        .position(|s| s.errors > 0)
        .expect("failures");
    assert_eq!(first, 10);
    assert!(r.nodes[A].moved >= 1, "A sends B's slots back");
    assert!(sum(&r, 10, 12, |s| s.ok) > 0, "A's half is served");
    assert_eq!(sum(&r, 15, 20, |s| s.errors), 0);
    assert!(!r.wedged);
    // B's two connections again after the reconnect.
    assert_eq!(r.new_connections, 6);
}

#[test]
fn an_address_resolver_onto_one_node_fails_the_other_half_after_four_circular_moved() {
    // Every address becomes A, the connections a MOVED's address gets included. A command for
    // B's half meets MOVED on A: the slot goes to B's address and the retry to B's connection,
    // which reaches A again, whose MOVED names the address it was sent to: circular, retried by
    // the slot (now B's address), the same again, until the 4th error fails the command with the
    // last MOVED, a RequestError. Nothing reaches B.
    let (cluster, w) = (incident2(), workload_of(10, 100, "zadd"));
    let r = run_model(&cluster, &w, &[("addressResolver", A)]);
    assert_other_half_fails(&r, REQUEST);
    assert_eq!(r.moved, 4 * r.failed);
    assert_eq!(r.nodes.get(B).map_or(0, |n| n.calls), 0);
    // A's two connections, then B's address's two (to A); a circular MOVED keeps them.
    assert_eq!(r.new_connections, 4);
    // No refresh within 15 s of the creation's.
    assert_eq!(r.full_reinits, 1);
    let alias = run_model(&cluster, &w, &[("address_remap", A)]);
    assert_eq!((alias.failed, alias.moved), (r.failed, r.moved));
    assert_eq!(run_model(&cluster, &w, &[]).failed, 0);
}

#[test]
fn a_client_whose_every_connection_is_refused_is_wedged_until_a_startup_node_answers() {
    // Every address resolves to A, and A refuses from 10 s on: every connection GLIDE holds
    // breaks, every reconnect fails, the reconnect to the initial nodes too: it holds no
    // connection and every command fails.
    let dead = incident2_with_fault(A, 10, 30, FaultKind::ConnectionError);
    let w = workload_of(20, 100, "zadd");
    let r = run_model(&dead, &w, &[("addressResolver", A)]);
    assert!(r.wedged);
    let since = r.wedged_since.expect("since when").0;
    assert!((at(10).0..at(11).0).contains(&since), "wedged at {since}");
    assert_eq!(sum(&r, 11, 20, |s| s.ok), 0);
    // Without the remap, B keeps its connections and its half.
    let half = run_model(&dead, &w, &[]);
    assert!(!half.wedged);
    assert!(sum(&half, 11, 20, |s| s.ok) > 0, "B's half served");
    // A back at 12 s: the reconnect to the initial nodes finds it.
    let back = run_model(
        &incident2_with_fault(A, 10, 12, FaultKind::ConnectionError),
        &w,
        &[("addressResolver", A)],
    );
    assert!(!back.wedged);
    assert!(sum(&back, 16, 20, |s| s.ok) > 0);
}

#[test]
fn options_and_releases_are_glide_s() {
    let mut o = ModelOptions::new(addr(A));
    o.set("periodicChecks", "30").unwrap();
    o.set("requestTimeout", "500").unwrap();
    o.set("connectionTimeout", "1000").unwrap();
    assert!(model(MODEL, o.clone()).is_ok());
    o.set("socket_timeout", "0.5").unwrap();
    assert!(model(MODEL, o).is_err(), "the same setting twice");
    let mut o = ModelOptions::new(addr(A));
    o.set("readFrom", "preferReplica").unwrap();
    let e = model(MODEL, o).err().unwrap().to_string();
    assert!(e.contains("only primary"), "{e}");
    let mut o = ModelOptions::new(addr(A));
    assert!(o.set("periodicChecks", "sometimes").is_err());
    assert!(o.set("addressResolver", "not an address").is_err());
    o.set("addressResolver", A).unwrap();
    o.set("address_remap", B).unwrap();
    assert!(model(MODEL, o).is_err(), "both remaps");
    let mut o = ModelOptions::new(addr(A));
    o.set("maxRedirections", "3").unwrap();
    assert!(model(MODEL, o).is_err(), "an ioredis option");
    assert!(model("glide@2.5.0", ModelOptions::new(addr(A))).is_ok());
    let e = model("glide@2.4.1", ModelOptions::new(addr(A)))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("2.5.x"), "the ranges are listed: {e}");
}

/// Replays `w` on `cluster` through MODEL with the options `set`.
fn run_model(cluster: &SimCluster, w: &Workload, set: &[(&str, &str)]) -> ReplayReport {
    run(cluster, w, MODEL, set)
}
