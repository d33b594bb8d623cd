//! Connections someone else closed (`CLIENT KILL`, as a recording's `INFO commandstats` shows
//! it): what they cost a redis-py client with commands in flight, and Lettuce.

use slotscope_core::replay::{
    model, replay, ModelOptions, ReplayReport, SimCluster, SimClusterBuilder, Timing, Workload,
};

mod sim;
use sim::*;

/// Incident 2 (A and B half the slots each), and with `kill` the clients' connections of A
/// closed at 10 s.
fn halves(kill: bool) -> SimCluster {
    let mut builder = SimClusterBuilder::new();
    builder.layout(
        at(0),
        &[(range(0, 8191), addr(A)), (range(8192, 16383), addr(B))],
        &[],
    );
    if kill {
        builder.kill(&addr(A), at(10));
    }
    builder.build()
}

/// 20 s of 400 ZADD/s, at most 16 in flight, 200 µs round trips and 2 ms service: a few
/// commands in flight at every moment.
fn busy() -> Workload {
    workload_of(20, 400, "zadd")
        .with_in_flight(16)
        .with_timing(Timing {
            rtt_us: 200,
            service_us: Vec::new(),
            default_us: 2_000,
        })
}

fn run_on(cluster: &SimCluster, name: &str) -> ReplayReport {
    let mut client = model(name, ModelOptions::new(addr(A))).unwrap();
    replay(cluster, &busy(), client.as_mut())
}

#[test]
fn a_kill_of_a_node_s_connections_costs_redis_py_a_reinitialisation_and_reconnects() {
    for name in ["redis-py@5.0.0", "redis-py@8.1.0"] {
        let calm = run_on(&halves(false), name);
        let killed = run_on(&halves(true), name);
        // The first command on a killed connection raises ConnectionError: 5.0.0 closes the
        // client, 8.1.0 marks the node's connections for reconnect; both initialise once more
        // and retry, so nothing fails (the application skips what falls due meanwhile).
        assert_eq!(killed.failed, 0, "{name}: {:?}", killed.errors);
        assert!(killed.succeeded > calm.succeeded * 99 / 100, "{name}");
        assert_eq!(
            killed.cluster_slots_calls,
            calm.cluster_slots_calls + 1,
            "{name}"
        );
        // Every connection to A is opened again (5.0.0: every connection of the client).
        let pool = calm.new_connections / 2;
        assert!(
            killed.new_connections >= calm.new_connections + pool.max(1),
            "{name}: {} new connections killed, {} calm",
            killed.new_connections,
            calm.new_connections
        );
    }
}

#[test]
fn a_kill_before_the_client_connected_costs_nothing() {
    // The kill at 10 s of a workload that starts at 12 s: the client's connections are opened
    // after it.
    let mut builder = SimClusterBuilder::new();
    builder.layout(
        at(0),
        &[(range(0, 8191), addr(A)), (range(8192, 16383), addr(B))],
        &[],
    );
    builder.kill(&addr(A), at(10));
    let cluster = builder.build();
    let mut w = busy();
    for c in &mut w.commands {
        c.t.0 += 12_000;
    }
    for name in ["redis-py@5.0.0", "redis-py@8.1.0"] {
        let mut client = model(name, ModelOptions::new(addr(A))).unwrap();
        let after = replay(&cluster, &w, client.as_mut());
        let mut client = model(name, ModelOptions::new(addr(A))).unwrap();
        let calm = replay(&halves(false), &w, client.as_mut());
        assert_eq!(
            after.cluster_slots_calls, calm.cluster_slots_calls,
            "{name}"
        );
        assert_eq!(after.new_connections, calm.new_connections, "{name}");
    }
}

#[test]
fn lettuce_s_watchdog_reopens_a_killed_connection_and_nothing_else_happens() {
    let w = workload_of(20, 200, "zadd");
    let calm = run(&halves(false), &w, "lettuce@6.3.2", &[]);
    let killed = run(&halves(true), &w, "lettuce@6.3.2", &[]);
    assert_eq!(killed.new_connections, calm.new_connections + 1);
    assert_eq!(killed.cluster_slots_calls, calm.cluster_slots_calls);
    assert_eq!((killed.failed, calm.failed), (0, 0));
}
