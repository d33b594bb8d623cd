//! Replay of synthetic incidents through the go-redis v9 ClusterClient model.

use slotscope_core::float;
use slotscope_core::replay::{
    model, Failure, FaultKind, FaultWindow, ModelOptions, ReplayReport, SimCluster, Timing,
    Workload,
};
use slotscope_core::{TimeSpan, Timestamp};

mod sim;
use sim::*;

const MODEL: &str = "go-redis@9.8.0";

#[test]
fn moved_reloads_are_lazy_and_at_most_one_per_200_ms() {
    // 1000 commands/s: the table is not patched, so MOVED go on until a reload lands; a reload
    // started by an ASK just before 22 s holds the flag 200 ms, so at most ~200 ms of MOVED
    // (half the keys) and none a second later.
    let (cluster, w) = (
        incident1_with(FaultKind::Timeout),
        workload_of(30, 1000, "zadd"),
    );
    let r = run_model(&cluster, &w, &[("ReadTimeout", "100ms")]);
    assert!(r.moved >= 1);
    assert!(r.moved <= 120, "{} MOVED", r.moved);
    assert_eq!(r.timeline[23].moved, 0);
    assert!(!r.wedged);
}

#[test]
fn ask_during_the_migration_triggers_lazy_reloads_rate_limited_to_200_ms() {
    // ASK also calls LazyReload: during the 2 s migration at most ~one reload per 200 ms.
    let (cluster, w) = (
        incident1_with(FaultKind::Timeout),
        workload_of(30, 1000, "zadd"),
    );
    let r = run_model(&cluster, &w, &[("ReadTimeout", "100ms")]);
    let total: u64 = r.nodes.values().map(|n| n.cluster_slots).sum();
    assert_eq!(total, r.cluster_slots_calls);
    assert!(r.ask > 100);
    // 2 s of ASK (20-22 s): ≤ 11 reloads, one per 200 ms hold, and the one that ends it.
    let slots = |from: usize, to: usize| -> u64 {
        r.timeline[from..to]
            .iter()
            .map(|s| s.cluster_slots_calls)
            .sum()
    };
    assert!(
        slots(20, 23) <= 11,
        "{} during the migration",
        slots(20, 23)
    );
    assert!(slots(20, 23) >= 5);
    // The 2 s stall of the only node (10-12 s), the state stale since 10 s: each reload waits
    // its 100 ms ReadTimeout and fails, which clears the flag at once (no 200 ms sleep), so
    // at most one per 100 ms.
    assert!(slots(10, 13) <= 21, "{} during the stall", slots(10, 13));
    assert_eq!(slots(0, 1) + slots(10, 13) + slots(20, 23), total);
}

#[test]
fn recovers_from_incident1_and_sends_half_to_the_new_node() {
    let (cluster, w) = (
        incident1_with(FaultKind::Timeout),
        workload_of(60, 100, "zadd"),
    );
    let r = run_model(&cluster, &w, &[]);
    assert!(!r.wedged);
    assert!(r.startup_nodes >= 1);
    assert_eq!(r.timeline[30].errors, 0);
    let share =
        float::from_u64(r.nodes["10.0.0.2:6379"].ok) / float::from_u64(commands_from(&w, at(22)));
    assert!((0.4..0.6).contains(&share), "share to the new node {share}");
}

#[test]
fn a_silent_node_costs_read_timeouts_and_the_retry_after_the_stall_succeeds() {
    // shouldRetry(timeout) is true: up to MaxRedirects + 1 = 4 attempts on the same master, each
    // after waiting ReadTimeout (default 3 s). The stall lasts 2 s, so the first command's
    // retry, 3 s later and after a backoff of 8-24 ms (RetryBackoff(1, 8ms, 512ms)), is
    // answered; the wait skips everything scheduled meanwhile.
    let (cluster, w) = (
        incident1_with(FaultKind::Timeout),
        workload_of(20, 100, "zadd"),
    );
    let r = run_model(&cluster, &w, &[]);
    assert_eq!(r.failed, 0);
    assert_eq!(r.nodes["10.0.0.1:6379"].failed, 1);
    let three_s = commands_from(&w, at(10)) - commands_from(&w, at(13)) - 1;
    assert!(
        (three_s..=three_s + 3).contains(&r.skipped_while_waiting),
        "{} skipped",
        r.skipped_while_waiting
    );
    // Without a backoff, exactly the 3 s.
    let no_backoff = run_model(&cluster, &w, &[("MinRetryBackoff", "-1")]);
    assert_eq!(no_backoff.skipped_while_waiting, three_s);
    // With a 100 ms ReadTimeout a command waits at most 4 x 100 ms: those that meet the stall
    // early fail after 4 attempts, the last ones are answered once the node is back.
    let w1 = run_model(&cluster, &w, &[("ReadTimeout", "100ms")]);
    assert!(w1.failed >= 1);
    assert!(w1.nodes["10.0.0.1:6379"].failed >= 4 * w1.failed);
    assert!(w1.skipped_while_waiting > 0);
    // Without a read deadline (-1) or a backoff every attempt is tried at once: each command of
    // the stall fails.
    let open = run_model(
        &cluster,
        &w,
        &[("ReadTimeout", "-1"), ("MinRetryBackoff", "-1")],
    );
    assert_eq!(
        open.failed,
        commands_from(&w, at(10)) - commands_from(&w, at(12))
    );
    assert_eq!(open.errors["*net.OpError"], open.failed);
}

#[test]
fn a_retry_waits_for_its_turn_behind_the_commands_that_came_during_its_timeout() {
    // A is silent for 2.3 s from 10 s; 100 commands a second in flight, half of them to A;
    // PoolSize 2, ReadTimeout 500 ms (PoolTimeout 1.5 s). Live, a command's retry waits at the
    // back of the pool's queue (`waitTurn`, FIFO), behind every command that came during its
    // timeout: its attempts are spread over the queue's waits (each up to PoolTimeout) and none
    // has used its four before the node is back. A retry that took the turn its own timeout
    // gave back would try four times in 2 s and fail inside the stall.
    let mut builder = incident2_builder();
    builder.fault(FaultWindow {
        node: addr(A),
        span: TimeSpan::new(at(10), Timestamp(at(12).0 + 300)),
        kind: FaultKind::Timeout,
    });
    let cluster = builder.build();
    let w = workload_of(20, 100, "zadd").with_in_flight(200);
    let r = run_model(&cluster, &w, &[("ReadTimeout", "500ms"), ("PoolSize", "2")]);
    // The pool's two connections timed out, and their turns went on to the queue.
    assert!(
        r.nodes[A].failed >= 4,
        "{} attempts failed at A",
        r.nodes[A].failed
    );
    assert_eq!(r.failed, 0, "{:?}", &r.outcomes.failed[40..56]);
    assert_eq!(r.succeeded, r.commands);
}

#[test]
fn a_command_that_times_out_is_counted_when_it_ended_as_well_as_when_it_was_issued() {
    // A is silent from 10 s to 12 s. With a 400 ms ReadTimeout a command sent to it at 10.0 s
    // tries four times (1.6 s) and raises in second 11: `errors` counts it in second 10 (issued),
    // `ended_errors` in second 11, as an application's own outcome counts do.
    let (cluster, w) = (
        incident1_with(FaultKind::Timeout),
        workload_of(20, 100, "zadd"),
    );
    let r = run_model(&cluster, &w, &[("ReadTimeout", "400ms")]);
    let first = |f: fn(&slotscope_core::replay::Second) -> u64| {
        r.timeline.iter().position(|s| f(s) > 0).unwrap()
    };
    assert_eq!(first(|s| s.errors), 10);
    assert_eq!(first(|s| s.ended_errors), 11);
    let ended: u64 = r.timeline.iter().map(|s| s.ended_ok + s.ended_errors).sum();
    let issued: u64 = r.timeline.iter().map(|s| s.ok + s.errors).sum();
    assert_eq!(ended, issued, "every command ended within the timeline");
    assert_eq!(
        r.timeline.iter().map(|s| s.ended_errors).sum::<u64>(),
        r.failed
    );
    // The same by quarter second (`outcomes`, the applications' buckets): the first failure
    // ends 1.6 s after 10.0 s, in the quarter from 11.5 s; each second sums its four quarters.
    let o = &r.outcomes;
    assert_eq!(o.bucket_ms, 250);
    assert_eq!(o.ok.len(), 4 * r.timeline.len());
    assert_eq!(o.failed.iter().position(|&f| f > 0), Some(46));
    for (s, (ok, failed)) in r
        .timeline
        .iter()
        .zip(o.ok.chunks(4).zip(o.failed.chunks(4)))
    {
        assert_eq!(s.ended_ok, ok.iter().sum::<u64>());
        assert_eq!(s.ended_errors, failed.iter().sum::<u64>());
    }
}

#[test]
fn a_retry_after_a_refused_connection_sleeps_its_backoff_and_a_redirect_does_not() {
    // A refuses connections from 10 s to 12 s: each command's four attempts there sleep 8-24,
    // 8-40 and 8-72 ms between them (RetryBackoff), so a command holds its lane ≥ 24 ms and
    // commands due meanwhile are skipped; with the backoff off none are. The MOVED of the
    // migration (20-22 s) are followed at once either way.
    let (cluster, w) = (
        incident1_with(FaultKind::ConnectionError),
        workload_of(30, 1000, "zadd"),
    );
    let slept = run_model(&cluster, &w, &[]);
    let at_once = run_model(&cluster, &w, &[("MinRetryBackoff", "-1")]);
    assert_eq!(at_once.skipped_while_waiting, 0);
    let stall = commands_within(&w, at(10), at(12));
    assert!(
        slept.skipped_while_waiting > stall / 2,
        "{} skipped of {stall}",
        slept.skipped_while_waiting
    );
    assert!(slept.failed < at_once.failed / 10);
    assert_eq!(slept.moved, at_once.moved);
    // The node client's own retries (MaxRetries) sleep the same backoff.
    let per_node = [("MaxRedirects", "-1"), ("MaxRetries", "2")];
    let node_slept = run_model(&cluster, &w, &per_node);
    let node_at_once = run_model(
        &cluster,
        &w,
        &[per_node[0], per_node[1], ("MinRetryBackoff", "-1")],
    );
    assert_eq!(node_at_once.skipped_while_waiting, 0);
    assert!(node_slept.skipped_while_waiting > stall / 2);
}

#[test]
fn refused_connections_reopen_a_connection_and_keep_the_seeds() {
    let (cluster, w) = (
        incident1_with(FaultKind::ConnectionError),
        workload_of(30, 100, "zadd"),
    );
    let r = run_model(&cluster, &w, &[("MaxRedirects", "-1")]);
    assert!(!r.wedged);
    // A refused dial: a `*net.OpError` of the connection class (not a timeout).
    assert!(r.errors.contains_key("*net.OpError"), "{:?}", r.errors);
    assert!(r.failures.get(&Failure::Connection).is_some_and(|&n| n > 0));
    assert!(
        !r.failures.contains_key(&Failure::Timeout),
        "{:?}",
        r.failures
    );
    // Each failure drops the pooled connection (isBadConn) and the next command dials again,
    // but a refused dial opens nothing (no handshake, no OnConnect): one reopening after the
    // refusals, against the same cluster with a stall instead.
    let stalled = run_model(
        &incident1_with(FaultKind::Timeout),
        &w,
        &[("MaxRedirects", "-1")],
    );
    assert_eq!(r.new_connections, 3, "A, A again after the outage, then B");
    assert_eq!(r.new_connections, stalled.new_connections);
    assert_eq!(r.timeline[15].errors, 0);
}

#[test]
fn a_nodes_pool_grows_to_the_commands_it_serves_at_once() {
    // A and B own half the slots each. 2 ms exchanges at 2000 commands/s: ~4 in flight, so each
    // node's pool dials a connection for each command it serves at once (pool.Get finds none
    // idle). At 100/s, one at a time: one connection a node (the first load's on the seed is
    // idle again when the first command comes).
    let in_flight = |w: Workload, rtt_us| {
        w.with_in_flight(64).with_timing(Timing {
            rtt_us,
            service_us: Vec::new(),
            default_us: 0,
        })
    };
    let cluster = incident2();
    let busy = run_model(
        &cluster,
        &in_flight(workload_of(10, 2000, "zadd"), 2000),
        &[],
    );
    let calm = run_model(&cluster, &in_flight(workload_of(10, 100, "zadd"), 500), &[]);
    assert_eq!(calm.new_connections, 2, "one a node");
    assert!(
        busy.peak_in_flight.unwrap() >= 4,
        "{:?}",
        busy.peak_in_flight
    );
    assert!(
        (6..=20).contains(&busy.new_connections),
        "{} new connections at ~4 in flight",
        busy.new_connections
    );
    // Every connection made stays pooled: none is dropped without an error.
    assert_eq!(busy.held.open_connections, busy.new_connections);
}

#[test]
fn a_nodes_pool_stops_at_pool_size_and_commands_wait_for_a_free_connection() {
    // 20 ms exchanges at 2000 commands/s: ~40 in flight, ~20 a node. Without a limit each node's
    // pool grows to them; at PoolSize 10 (the default) it stops at 10 a node and the others wait
    // for a connection to come back (well within PoolTimeout), so nothing fails. At PoolSize 2
    // with a 1 ms PoolTimeout most commands get no connection: ErrPoolTimeout, retried like a
    // network error (MaxRedirects + 1 tries), then returned.
    let w = workload_of(5, 2000, "zadd")
        .with_in_flight(256)
        .with_timing(Timing {
            rtt_us: 20_000,
            service_us: Vec::new(),
            default_us: 0,
        });
    let cluster = incident2();
    let wide = run_model(&cluster, &w, &[("PoolSize", "1000")]);
    let capped = run_model(&cluster, &w, &[]);
    assert!(
        wide.new_connections >= 30,
        "{} new connections without a limit",
        wide.new_connections
    );
    assert!(
        (11..=20).contains(&capped.new_connections),
        "{} new connections at 10 a node",
        capped.new_connections
    );
    assert_eq!(capped.failed, 0);
    // The waits keep commands in flight longer.
    assert!(capped.peak_in_flight > wide.peak_in_flight);
    let starved = run_model(&cluster, &w, &[("PoolSize", "2"), ("PoolTimeout", "1ms")]);
    assert!(starved.new_connections <= 4, "{}", starved.new_connections);
    let timeouts = starved.errors["pool.ErrPoolTimeout"];
    assert!(
        timeouts > starved.succeeded,
        "{timeouts} pool timeouts, {} succeeded",
        starved.succeeded
    );
}

#[test]
fn options_are_checked_by_their_go_redis_names() {
    let mut o = ModelOptions::new(addr("10.0.0.1:6379"));
    o.set("MaxRedirects", "8").unwrap();
    o.set("MaxRetries", "2").unwrap();
    o.set("ReadTimeout", "500ms").unwrap();
    o.set("PoolSize", "40").unwrap();
    o.set("PoolTimeout", "2s").unwrap();
    o.set("MinRetryBackoff", "-1").unwrap();
    o.set("MaxRetryBackoff", "1s").unwrap();
    assert!(model(MODEL, o.clone()).is_ok());
    o.set("socket_timeout", "0.5").unwrap();
    assert!(model(MODEL, o).is_err(), "the same setting twice");
    let mut o = ModelOptions::new(addr("10.0.0.1:6379"));
    o.set("MaxRedirects", "many").unwrap();
    assert!(model(MODEL, o).is_err());
    for (k, v) in [("PoolSize", "0"), ("PoolTimeout", "-1s")] {
        let mut o = ModelOptions::new(addr("10.0.0.1:6379"));
        o.set(k, v).unwrap();
        assert!(model(MODEL, o).is_err(), "{k}={v}");
    }
    let mut o = ModelOptions::new(addr("10.0.0.1:6379"));
    o.set("retries", "3").unwrap();
    assert!(model(MODEL, o).is_err(), "a redis-rs option");
}

/// Replays `w` on `cluster` through MODEL with the options `set`.
fn run_model(cluster: &SimCluster, w: &Workload, set: &[(&str, &str)]) -> ReplayReport {
    run(cluster, w, MODEL, set)
}
