//! Replay of synthetic incidents through the redis-rs async cluster model.

use slotscope_core::float;
use slotscope_core::replay::{
    model, FaultKind, FaultWindow, ModelOptions, ReplayReport, SimCluster, SimClusterBuilder,
    Workload,
};
use slotscope_core::TimeSpan;

mod sim;
use sim::*;

const MODEL: &str = "redis-rs@1.8.1";

#[test]
fn one_moved_after_the_migration_triggers_one_full_rebuild() {
    // Every MOVED rebuilds the slot map from one CLUSTER SLOTS answer; the first MOVED after the
    // ownership change (22 s) is the only one.
    let (cluster, w) = (incident1_with(FaultKind::Timeout), workload(60));
    let r = run_model(&cluster, &w, &[]);
    assert_eq!(r.moved, 1);
    assert_eq!(r.cluster_slots_calls, 2, "initial + one rebuild");
    assert_eq!(r.full_reinits, 2);
    assert!(r.ask > 0, "ASK is followed during the migration");
    assert_eq!(r.timeline[23].moved + r.timeline[30].moved, 0);
}

#[test]
fn recovers_from_incident1_and_sends_half_to_the_new_node() {
    let (cluster, w) = (incident1_with(FaultKind::Timeout), workload(60));
    let r = run_model(&cluster, &w, &[]);
    assert!(!r.wedged);
    assert_eq!(r.startup_nodes, 1, "initial_nodes are kept as given");
    assert_eq!(r.timeline[30].errors, 0);
    let share =
        float::from_u64(r.nodes["10.0.0.2:6379"].ok) / float::from_u64(commands_from(&w, at(22)));
    assert!((0.4..0.6).contains(&share), "share to the new node {share}");
}

#[test]
fn a_timeout_fails_only_that_command_without_refresh_or_reconnect() {
    // RetryMethod::RetryImmediately and the overall timeout equal to the response timeout: one
    // attempt per command, no CLUSTER SLOTS, the connection is kept.
    let (cluster, w) = (incident1_with(FaultKind::Timeout), workload(20));
    let r = run_model(&cluster, &w, &[]);
    let stalled = commands_from(&w, at(10)) - commands_from(&w, at(12));
    assert_eq!(r.failed, stalled);
    assert_eq!(r.errors["Io (timed out)"], stalled);
    assert_eq!(r.cluster_slots_calls, 1);
    assert_eq!(r.new_connections, 1);
}

#[test]
fn response_timeout_makes_the_client_wait_and_skip_the_stall() {
    let (cluster, w) = (incident1_with(FaultKind::Timeout), workload(20));
    let r = run_model(&cluster, &w, &[("response_timeout", "500")]);
    assert!(r.failed <= 5, "{}", r.failed);
    assert!(r.skipped_while_waiting >= 150);
    // Without an overall timeout each timeout is retried on the same node, 500 ms later each
    // time: the stall's first command outlives the 2 s stall and succeeds.
    let retried = run_model(
        &cluster,
        &w,
        &[
            ("response_timeout", "500"),
            ("overall_response_timeout", "none"),
        ],
    );
    assert!(r.failed >= 3, "{}", r.failed);
    assert_eq!(retried.failed, 0);
    assert_eq!(retried.nodes["10.0.0.1:6379"].failed, 4);
}

#[test]
fn refused_connections_on_the_only_node_reconnect_from_initial_nodes() {
    // Connection dropped → Reconnect; no other connection → ClusterConnectionNotFound →
    // ReconnectFromInitialConnections, each a CLUSTER SLOTS to the seed; recovered after 12 s.
    let (cluster, w) = (incident1_with(FaultKind::ConnectionError), workload(30));
    let r = run_model(&cluster, &w, &[]);
    assert!(!r.wedged);
    assert!(
        r.errors.contains_key("ClusterConnectionNotFound")
            || r.errors.contains_key("Io (connection refused)")
    );
    assert!(r.cluster_slots_calls > 10, "{}", r.cluster_slots_calls);
    assert_eq!(r.timeline[15].errors, 0);
    assert!(r.new_connections > 1);
}

#[test]
fn a_dead_nodes_slots_cost_a_moved_and_two_rebuilds_and_time_out_at_the_overall_bound() {
    // B refuses from 10 s to 30 s. A command for B's slots: the connection is dropped (or B is
    // already under repair), the slot route falls back to A, which answers MOVED (a rebuild), the
    // redirect cannot connect (NotFound: a second rebuild, then a sleep of 1.28 s), and the
    // overall timeout (the response timeout, 500 ms) ends it first with Io (timed out).
    let cluster = incident2_with_fault(B, 10, 30, FaultKind::ConnectionError);
    let w = workload(40);
    let r = run_model(&cluster, &w, &[("socket_timeout", "0.5")]);
    assert!(!r.wedged);
    assert!(r.failed > 10, "{}", r.failed);
    assert_eq!(
        r.errors.get("Io (timed out)"),
        Some(&r.failed),
        "{:?}",
        r.errors
    );
    let inside = |f: fn(&slotscope_core::replay::Second) -> u64| -> u64 {
        r.timeline[11..29].iter().map(f).sum()
    };
    let (moved, failed, rebuilds) = (
        inside(|s| s.moved),
        inside(|s| s.errors),
        inside(|s| s.full_reinits),
    );
    assert!(failed > 0);
    assert_eq!(moved, failed, "one MOVED per failed command");
    assert_eq!(rebuilds, 2 * failed, "two rebuilds per failed command");
    // No connection to B is counted while it refuses: a connect that fails makes none.
    assert_eq!(inside(|s| s.new_connections), 0);
    // Once B answers again its reconnect loop (or a rebuild) connects it: one more connection.
    assert_eq!(r.new_connections, 3, "A, B, B again");
    assert_eq!(r.timeline[32].errors, 0);
}

#[test]
fn a_rebuild_that_checks_a_silent_node_holds_every_request_until_its_checks_end() {
    // A is silent from 10 s to 13 s; at 11 s B's last 384 slots move to A, so a command for
    // them meets B's MOVED and starts a rebuild. The rebuild asks A first (500 ms, no answer),
    // then B, and checks every node of the answer: A's held connection does not answer its PING
    // (response_timeout 500 ms) and a new one not its handshake (connection_timeout 500 ms), so
    // the rebuild lasts some 1.5 s, and no request is polled meanwhile (the connection is in
    // `Recover`): B's healthy half fails too, at its 500 ms overall timeout.
    let mut builder = incident2_builder();
    builder.fault(FaultWindow {
        node: addr(A),
        span: TimeSpan::new(at(10), at(13)),
        kind: FaultKind::Timeout,
    });
    b_gives_its_last_slots_to_a_at_11(&mut builder);
    let cluster = builder.build();
    let w = workload_of(20, 200, "zadd").with_in_flight(16);
    let set = [("response_timeout", "500"), ("connection_timeout", "500")];
    let r = run_model(&cluster, &w, &set);
    let issued = |s: usize| r.timeline[s].ok + r.timeline[s].errors;
    assert_eq!(r.timeline[9].errors, 0);
    // Second 10: A's half fails (its timeouts), B's half is served.
    let half = issued(10) / 2;
    assert!(
        r.timeline[10].errors.abs_diff(half) < half / 4,
        "{:?}",
        r.timeline[10]
    );
    // Second 11: the rebuild from 11 s holds B's half as well.
    assert!(
        r.timeline[11].errors * 4 > issued(11) * 3,
        "{} of {} failed in second 11",
        r.timeline[11].errors,
        issued(11)
    );
    // One rebuild per hold, not one per MOVED: at most one a second during the stall.
    assert!(
        r.cluster_slots_calls <= 1 + 2 * 3 + 1,
        "{}",
        r.cluster_slots_calls
    );
    // The same cluster with A answering: the rebuild is quick and B's half is served.
    let mut quick = incident2_builder();
    b_gives_its_last_slots_to_a_at_11(&mut quick);
    let q = run_model(&quick.build(), &w, &set);
    assert_eq!(q.failed, 0);
}

/// At 11 s B's last 384 slots (16000-16383) move to A.
fn b_gives_its_last_slots_to_a_at_11(builder: &mut SimClusterBuilder) {
    builder.layout(
        at(11),
        &[
            (range(0, 8191), addr(A)),
            (range(8192, 15999), addr(B)),
            (range(16000, 16383), addr(A)),
        ],
        &[],
    );
}

#[test]
fn without_an_overall_timeout_the_retry_sleeps_are_waited_out() {
    // overall_response_timeout=none: the NotFound path sleeps 1.28 s per retry and goes on,
    // so a command for B's slots outlives B's 2 s of refusals and succeeds.
    let cluster = incident2_with_fault(B, 10, 12, FaultKind::ConnectionError);
    let w = workload(20);
    let bounded = run_model(&cluster, &w, &[("socket_timeout", "0.5")]);
    let unbounded = run_model(
        &cluster,
        &w,
        &[
            ("socket_timeout", "0.5"),
            ("overall_response_timeout", "none"),
        ],
    );
    assert!(bounded.failed > 0);
    assert_eq!(unbounded.failed, 0, "{:?}", unbounded.errors);
    assert!(unbounded.skipped_while_waiting > bounded.skipped_while_waiting);
}

#[test]
fn options_are_checked_by_their_redis_rs_names() {
    let mut o = ModelOptions::new(addr("10.0.0.1:6379"));
    o.set("retries", "3").unwrap();
    o.set("max_retry_wait", "2000").unwrap();
    assert!(model(MODEL, o.clone()).is_ok());
    o.set("min_retry_wait", "3000").unwrap();
    assert!(model(MODEL, o).is_err(), "min above max");
    let mut o = ModelOptions::new(addr("10.0.0.1:6379"));
    o.set("MaxRedirects", "3").unwrap();
    assert!(model(MODEL, o).is_err(), "a go-redis option");
    let mut o = ModelOptions::new(addr("10.0.0.1:6379"));
    o.set("reinitialize_steps", "2").unwrap();
    assert!(model(MODEL, o).is_err(), "a redis-py option");
    let mut o = ModelOptions::new(addr("10.0.0.1:6379"));
    o.set("response_timeout", "100").unwrap();
    o.set("socket_timeout", "0.1").unwrap();
    assert!(model(MODEL, o).is_err(), "the same setting twice");
}

/// Replays `w` on `cluster` through MODEL with the options `set`.
fn run_model(cluster: &SimCluster, w: &Workload, set: &[(&str, &str)]) -> ReplayReport {
    run(cluster, w, MODEL, set)
}
