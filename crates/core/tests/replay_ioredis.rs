//! Replay of synthetic incidents through the ioredis 6.0.0 `Redis.Cluster` model.

use slotscope_core::float;
use slotscope_core::replay::{
    model, Failure, FaultKind, ModelOptions, ReplayReport, SimCluster, Workload,
};

mod sim;
use sim::*;

const MODEL: &str = "ioredis@6.0.0";
/// ioredis rejects with a plain `Error`: `Too many Cluster redirections. Last error: ...`,
/// `Connection is closed.`; the common class tells them apart.
const ERROR: &str = "Error";

#[test]
fn a_scale_out_s_moved_is_followed_patched_and_refreshed_once() {
    // B owns one slot until 20 s, then half of them: the first command for B's new slots meets
    // MOVED, is retried on B at once and starts a refresh, after which every slot is right.
    let (cluster, w) = (reshard(), workload_of(30, 100, "zadd"));
    let r = run_model(&cluster, &w, &[]);
    assert_eq!(r.failed, 0);
    assert!((1..=2).contains(&r.moved), "{} MOVED", r.moved);
    assert_eq!(r.timeline[21].moved, 0);
    // The first refresh of connect(), then the one the MOVED started.
    assert_eq!(r.full_reinits, 1 + r.moved);
    assert_eq!(r.cluster_slots_calls, r.full_reinits);
    let share = float::from_u64(r.nodes[B].ok) / float::from_u64(commands_from(&w, at(20)).max(1));
    assert!((0.4..0.6).contains(&share), "share to B {share}");
    assert!(!r.wedged);
    // No periodic refresh by default in 6.0.0; with slotsRefreshInterval, one every 5 s.
    let periodic = run_model(&cluster, &w, &[("slotsRefreshInterval", "5000")]);
    assert!(
        (6..=9).contains(&periodic.cluster_slots_calls),
        "{} CLUSTER SLOTS",
        periodic.cluster_slots_calls
    );
}

#[test]
fn a_refusing_node_costs_failover_delays_then_too_many_redirections() {
    // B refuses from 10 s to 12 s: its connection ends and leaves the pool, the command waits
    // retryDelayOnFailover (100 ms), a refresh puts B back, and the retry goes to a random master:
    // A answers MOVED to B, B refuses again, ... until 17 errors.
    let (cluster, w) = (b_refuses_for_two_seconds(), workload_of(20, 100, "zadd"));
    let r = run_model(&cluster, &w, &[]);
    assert!(r.failed >= 1);
    assert_eq!(r.errors[ERROR], r.failed, "{:?}", r.errors);
    assert_eq!(r.failures[&Failure::TooManyRedirects], r.failed);
    assert!(
        r.nodes[A].moved >= 1,
        "A sends the random retries back to B"
    );
    // Each closed connection waited 100 ms: the lane was busy, commands were skipped.
    assert!(r.skipped_while_waiting > 0);
    // Each closed connection started a refresh the command waited for.
    assert!(r.cluster_slots_calls > 1 + r.failed);
    assert_eq!(r.timeline[13].errors, 0);
    assert!(!r.wedged);
    // Without the failover delay the first refusal reaches the application.
    let at_once = run_model(&cluster, &w, &[("retryDelayOnFailover", "0")]);
    assert!(at_once.failed >= 1);
    assert_eq!(at_once.failures[&Failure::Connection], at_once.failed);
    assert_eq!(at_once.skipped_while_waiting, 0);
}

#[test]
fn nat_map_onto_one_address_makes_a_moved_storm_for_the_other_half() {
    // Every address maps to A: the slot table and the pool hold A only. B's half meets MOVED on
    // A, the patched slot names B (not in the pool), so the retry goes to a random master, A
    // again, whose connection is recreated each time: 17 MOVED, then the error.
    let (cluster, w) = (incident2(), workload_of(10, 100, "zadd"));
    let r = run_model(&cluster, &w, &[("natMap", A)]);
    let b_half = float::from_u64(r.failed) / float::from_u64(r.commands);
    assert!((0.4..0.6).contains(&b_half), "failed share {b_half}");
    assert_eq!(r.errors[ERROR], r.failed);
    assert_eq!(r.failures[&Failure::TooManyRedirects], r.failed);
    assert_eq!(r.moved, 17 * r.failed);
    // Every MOVED handled calls refreshSlotsCache (the 17th ends the command before its handler);
    // in the instant clock each refresh has ended before the next MOVED, so `isRefreshing` never
    // holds: 16 CLUSTER SLOTS per failed command, after connect()'s.
    assert_eq!(r.cluster_slots_calls, 1 + 16 * r.failed);
    assert_eq!(r.nodes.get(B).map_or(0, |n| n.calls), 0);
    assert!(r.new_connections >= 16 * r.failed, "{}", r.new_connections);
    assert_eq!(r.succeeded + r.failed, r.commands);
    assert!(r.held.top_node_slots > 16_000, "the table collapsed onto A");
    // `address_remap` is the same option.
    let alias = run_model(&cluster, &w, &[("address_remap", A)]);
    assert_eq!((alias.failed, alias.moved), (r.failed, r.moved));
    // Without a remap nothing fails.
    assert_eq!(run_model(&cluster, &w, &[]).failed, 0);
}

#[test]
fn max_redirections_bounds_the_errors_after_the_first() {
    let (cluster, w) = (incident2(), workload_of(5, 100, "zadd"));
    let none = run_model(&cluster, &w, &[("natMap", A), ("maxRedirections", "0")]);
    assert!(none.failed > 0);
    assert_eq!(none.moved, none.failed);
    assert_eq!(none.failures[&Failure::TooManyRedirects], none.failed);
    let two = run_model(&cluster, &w, &[("natMap", A), ("maxRedirections", "2")]);
    assert_eq!(two.failed, none.failed);
    assert_eq!(two.moved, 3 * two.failed);
}

#[test]
fn options_are_checked_by_their_ioredis_names() {
    let mut o = ModelOptions::new(addr(A));
    o.set("maxRedirections", "8").unwrap();
    o.set("retryDelayOnFailover", "50").unwrap();
    o.set("slotsRefreshTimeout", "500").unwrap();
    o.set("socketTimeout", "500").unwrap();
    assert!(model(MODEL, o.clone()).is_ok());
    o.set("socket_timeout", "0.5").unwrap();
    assert!(model(MODEL, o).is_err(), "the same setting twice");
    let mut o = ModelOptions::new(addr(A));
    o.set("scaleReads", "slave").unwrap();
    let e = model(MODEL, o).err().unwrap().to_string();
    assert!(e.contains("only master"), "{e}");
    let mut o = ModelOptions::new(addr(A));
    assert!(o.set("natMap", "not an address").is_err());
    o.set("MaxRedirects", "3").unwrap();
    assert!(model(MODEL, o).is_err(), "a go-redis option");
    assert!(model("ioredis@6.0.3", ModelOptions::new(addr(A))).is_ok());
}

#[test]
fn releases_5_4_to_6_1_resolve_to_the_model_and_others_are_refused_with_its_range() {
    for asked in [
        "ioredis@5.4.0",
        "ioredis@5.4.1",
        "ioredis@5.11.1",
        "ioredis@6.1.0",
    ] {
        assert!(model(asked, ModelOptions::new(addr(A))).is_ok(), "{asked}");
    }
    for asked in ["ioredis@5.3.2", "ioredis@4.28.5", "ioredis@6.2.0"] {
        let e = model(asked, ModelOptions::new(addr(A)))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("5.4.0–6.1.x"), "{asked}: {e}");
    }
}

#[test]
fn a_5_x_release_retries_a_nat_mapped_moved_on_the_connection_it_has() {
    // The storm of `nat_map_onto_one_address_makes_a_moved_storm_for_the_other_half`: 5.x
    // follows each MOVED on A's connection (`findOrCreate`), 6.0.0 recreates it each time. The
    // same commands fail the same way; only the connections differ.
    let (cluster, w) = (incident2(), workload_of(10, 100, "zadd"));
    let six = run(&cluster, &w, MODEL, &[("natMap", A)]);
    let five = run(&cluster, &w, "ioredis@5.4.1", &[("natMap", A)]);
    assert_eq!((five.failed, five.moved), (six.failed, six.moved));
    assert!(six.failed > 0);
    // Each refresh asks on a duplicate connection (`getInfoFromNode`), in both; beyond those
    // 5.x opens A's connection once, 6.0.0 once more for each MOVED handled (16 a command).
    assert_eq!(five.new_connections, five.cluster_slots_calls + 1);
    assert_eq!(five.cluster_slots_calls, six.cluster_slots_calls);
    assert_eq!(six.new_connections - five.new_connections, 16 * six.failed);
    // Without a remap the releases are the same.
    let plain = |m: &str| {
        let r = run(&cluster, &w, m, &[]);
        (
            r.succeeded,
            r.moved,
            r.new_connections,
            r.cluster_slots_calls,
        )
    };
    assert_eq!(plain("ioredis@5.11.1"), plain(MODEL));
}

#[test]
fn a_silent_node_with_socket_timeout_closes_its_connection_and_the_cluster_reconnects() {
    // Incident 1: A (the only node) is silent from 10 s to 12 s. With socketTimeout the
    // connection is destroyed ("Connection is closed."), the pool drains, the cluster closes
    // and reconnects from the startup node once A answers again.
    let (cluster, w) = (
        incident1_with(FaultKind::Timeout),
        workload_of(30, 100, "zadd"),
    );
    let r = run_model(&cluster, &w, &[("socketTimeout", "500")]);
    assert!(!r.wedged);
    assert_eq!(r.timeline[14].errors, 0);
    assert!(r.timeline[10].ok + r.timeline[11].ok < 100);
    // Without socketTimeout ioredis waits; the instant replay counts the command as unanswered.
    let waits = run_model(&cluster, &w, &[]);
    assert!(waits.errors["no reply (ioredis waits without socketTimeout)"] > 0);
}

#[test]
fn commands_waiting_on_a_silent_node_share_its_connection_and_its_end() {
    // B is silent from 10 s to 12 s; 450 commands a second, 14 in flight, socketTimeout 500 ms.
    // The commands waiting on B's connection are rejected together when it is destroyed, retried
    // together after one refresh, and the retries sent to B wait on the one connection made for
    // them: a connection to B per cycle (timeout, 100 ms failover delay), one more per refresh
    // (its duplicate), not one per command (as the driver, running each command whole, counted
    // when a later command met the connection an earlier one had seen end).
    let cluster = incident2_with_fault(B, 10, 12, FaultKind::Timeout);
    let w = workload_of(20, 450, "zadd").with_in_flight(14);
    let r = run_model(&cluster, &w, &[("socketTimeout", "500")]);
    assert!(!r.wedged);
    let during: u64 = r.timeline[10..13].iter().map(|s| s.new_connections).sum();
    let refreshes: u64 = r.timeline[10..13].iter().map(|s| s.full_reinits).sum();
    assert!(refreshes > 0, "{:?}", &r.timeline[10..13]);
    // 2 s of silence, 600 ms a cycle: at most 4 connections to B, and the refreshes'.
    assert!(
        during <= refreshes + 4,
        "{during} new connections, {refreshes} refreshes"
    );
    // Every command waiting on the connection failed with it, none on its own later timeout:
    // the service goes on once B answers.
    assert!(r.timeline[13].ok > 400, "{:?}", r.timeline[13]);
}

/// Replays `w` on `cluster` through MODEL with the options `set`.
fn run_model(cluster: &SimCluster, w: &Workload, set: &[(&str, &str)]) -> ReplayReport {
    run(cluster, w, MODEL, set)
}

#[test]
fn commands_in_flight_at_a_dead_node_share_the_failover_batches() {
    // B refuses from 10 s on, 100 commands in flight: each command for B's slots loops MOVED /
    // `Connection is closed.` through the failover bucket until 17 errors (about a second),
    // joining the batch whose timer runs when it is pushed. The commands do not queue behind
    // each other's retries: A's half goes on being served, B's half fails at the rate it comes.
    let cluster = incident2_with_fault(B, 10, 40, FaultKind::ConnectionError);
    let w = workload_of(20, 100, "zadd").with_in_flight(100);
    let r = run_model(&cluster, &w, &[]);
    assert_eq!(r.failures[&Failure::TooManyRedirects], r.failed);
    let after = commands_from(&w, at(11));
    assert!(
        r.skipped_while_waiting * 10 < after,
        "{} of {after} skipped",
        r.skipped_while_waiting
    );
    for s in &r.timeline[11..19] {
        assert!(s.ok >= 30, "A's half served: {} ok at {:?}", s.ok, s.t);
        assert!(
            s.ended_errors >= 30,
            "B's half fails as it comes: {}",
            s.ended_errors
        );
    }
    assert!(!r.wedged);
}

#[test]
fn commands_in_flight_on_a_recreated_connection_reuse_its_replacement() {
    // The storm above with 200 commands in flight and 2 ms round trips: a MOVED recreates A's
    // connection only while the pool still holds the one the command was sent on
    // (`getInstanceByKey(mappedKey) === lastRedis`, `cluster/index.js` l. 453-463); the commands
    // in flight on it when the first MOVED came reuse the replacement. So the connections follow
    // the round trips, not the MOVED replies (live, a remapped client at 703/s and 787 in flight:
    // 5 658 connections for 89 196 MOVED).
    let w = workload_of(10, 1_000, "zadd")
        .with_in_flight(200)
        .with_timing(slotscope_core::replay::Timing {
            rtt_us: 2_000,
            service_us: Vec::new(),
            default_us: 10,
        });
    let r = run_model(&incident2(), &w, &[("natMap", A)]);
    assert!(r.moved > 50_000, "{} MOVED", r.moved);
    assert!(
        r.new_connections * 5 < r.moved,
        "{} connections for {} MOVED",
        r.new_connections,
        r.moved
    );
    // Still one at least per round trip of the storm: each generation's first MOVED recreates.
    assert!(r.new_connections > 1_000, "{}", r.new_connections);
}

#[test]
fn a_dead_master_s_storm_refreshes_one_at_a_time_between_the_batches() {
    // B refuses from 10 s on (its replica never promoted), 400 commands a second, 100 in flight.
    // The commands that met B wait for the failover bucket's timer together and are retried
    // together; meanwhile the application's new commands for B's slots go to a random master,
    // and the MOVED of each starts a refresh when none runs (live, 60-75 refreshes a second in
    // the traced storm of case 2365334887738468882). Each refresh lasts its own work
    // (`refresh_cpu_ms`), so they run one at a time.
    let cluster = incident2_with_fault(B, 10, 40, FaultKind::ConnectionError);
    let w = workload_of(20, 400, "zadd").with_in_flight(100);
    let r = run_model(&cluster, &w, &[]);
    let storm = &r.timeline[11..19];
    let refreshes: Vec<u64> = storm.iter().map(|s| s.full_reinits).collect();
    for &n in &refreshes {
        // Well more than the bucket's ten timers a second (the model that ran each command
        // whole gave 13-29 here), fewer than one per 1.5 ms.
        assert!((40..=666).contains(&n), "refreshes a second {refreshes:?}");
    }
    // A longer refresh, fewer of them.
    let slow = run_model(&cluster, &w, &[("refresh_cpu_ms", "10")]);
    let slow_refreshes: u64 = slow.timeline[11..19].iter().map(|s| s.full_reinits).sum();
    assert!(
        slow_refreshes < refreshes.iter().sum::<u64>(),
        "{slow_refreshes} with 10 ms refreshes, {refreshes:?} with 1.5 ms"
    );
    assert!(slow_refreshes <= 8 * 100, "{slow_refreshes}");
}
