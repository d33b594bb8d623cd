//! Replay of synthetic incidents through the Jedis 5.x model.

use slotscope_core::float;
use slotscope_core::replay::{
    model, Failure, FaultKind, ModelOptions, ReplayReport, SimCluster, SimClusterBuilder, Timing,
    Workload,
};

mod sim;
use sim::*;

const JEDIS: &str = "jedis@5.1.0";

#[test]
fn jedis_renews_the_slot_cache_on_moved_so_a_reshard_costs_one_moved() {
    let (cluster, w) = (reshard(), workload(60));
    let r = run_model(&cluster, &w, &[]);
    assert_eq!(r.model, JEDIS);
    assert_eq!(r.failed, 0);
    assert_eq!(r.moved, 1);
    assert_eq!(
        r.full_reinits, 2,
        "start-up, then the MOVED's renewSlotCache"
    );
    assert_eq!(r.cluster_slots_calls, 2);
    assert_eq!(r.nodes[A].cluster_slots, 2);
    assert!(!r.wedged);
}

#[test]
fn jedis_recovers_in_incident1_and_sends_half_to_the_new_node() {
    let (cluster, w) = (incident1(), workload(60));
    let r = run_model(&cluster, &w, &[]);
    assert!(!r.wedged);
    assert_eq!(r.startup_nodes, 1, "startNodes are kept");
    assert_eq!(
        r.moved, 1,
        "the first MOVED after the migration renews the cache"
    );
    assert_eq!(
        r.full_reinits, 2,
        "start-up and that MOVED; renewals in the stall fail"
    );
    assert_eq!(r.timeline[30].errors, 0);
    assert_eq!(r.failed, commands_within(&w, at(10), at(12)));
    let share = float::from_u64(r.nodes[B].ok) / float::from_u64(commands_from(&w, at(22)));
    assert!((0.4..0.6).contains(&share), "share to the new node {share}");
}

#[test]
fn jedis_in_a_two_second_timeout_window_tries_four_times_renews_and_gives_up_on_the_deadline() {
    let (cluster, w) = (incident1(), workload(30));
    let r = run_model(&cluster, &w, &[]);
    let stalled = commands_within(&w, at(10), at(12));
    assert_eq!(r.errors["JedisClusterOperationException"], stalled);
    assert_eq!(r.errors.len(), 1);
    // soTimeout 2 s, maxTotalRetriesDuration 10 s: attempt 4 (8 s of timeouts plus one failed
    // renewal's 2 s) passes the deadline; attempt 5 is never made.
    assert_eq!(r.nodes[A].failed, 4 * stalled);
    // One or two failed renewals per command (the second only with a zero backoff draw), the
    // start node A each time (B is not known yet); then start-up and the MOVED at 22 s.
    let slots_calls = r.nodes[A].cluster_slots - 2;
    assert!(
        (stalled..=2 * stalled).contains(&slots_calls),
        "{slots_calls} renewals for {stalled} commands"
    );
}

#[test]
fn jedis_renews_after_two_consecutive_connection_failures_and_runs_out_of_attempts() {
    let (cluster, w) = (b_refuses_for_two_seconds(), workload(30));
    let r = run_model(&cluster, &w, &[]);
    let failed = r.errors["JedisClusterOperationException"];
    assert_eq!(failed, r.failed);
    assert!(failed > 50, "{failed}");
    // Five refused attempts per command; renewals (through start node A, which answers) after
    // the 2nd and the 4th.
    assert_eq!(r.nodes[B].failed, 5 * failed);
    assert_eq!(r.full_reinits, 1 + 2 * failed);
    assert!(r.timeline[13..].iter().all(|s| s.errors == 0));
    let two = run_model(&cluster, &w, &[("maxAttempts", "2")]);
    // With fewer than 3 attempts, one renewal when no attempt is left.
    assert_eq!(two.nodes[B].failed, 2 * two.failed);
    assert_eq!(two.full_reinits, 1 + two.failed);
}

#[test]
fn jedis_max_attempts_one_fails_the_command_that_meets_moved() {
    let (cluster, w) = (reshard(), workload(60));
    let r = run_model(&cluster, &w, &[("maxAttempts", "1")]);
    assert_eq!(r.moved, 1);
    assert_eq!(r.failed, 1);
    assert_eq!(r.errors["JedisClusterOperationException"], 1);
    assert_eq!(r.full_reinits, 2, "the cache was renewed before giving up");
}

#[test]
fn jedis_topology_refresh_period_renews_in_the_background_and_avoids_the_moved() {
    let (cluster, w) = (reshard(), workload(60));
    let r = run_model(&cluster, &w, &[("topologyRefreshPeriod", "5")]);
    // Every 5 s from the first command: 5, 10, …, 55 s; the one at 20 s sees the reshard.
    assert_eq!(r.full_reinits, 1 + 11);
    assert_eq!(r.cluster_slots_calls, 12);
    assert_eq!(r.moved, 0);
    let default = run_model(&cluster, &w, &[]);
    assert_eq!(default.full_reinits, 2);
}

#[test]
fn jedis_refuses_a_slot_map_with_holes_at_start_up() {
    let mut builder = SimClusterBuilder::new();
    builder.layout(at(0), &[(range(0, 16382), addr(A))], &[]);
    let (cluster, w) = (builder.build(), workload(5));
    let r = run_model(&cluster, &w, &[]);
    assert_eq!(r.succeeded, 0);
    assert_eq!(r.full_reinits, 0);
    assert_eq!(
        r.cluster_slots_calls, r.commands,
        "one start node tried per command"
    );
    assert_eq!(r.errors["JedisClusterOperationException"], r.commands);
    assert!(!r.wedged);
}

#[test]
fn jedis_options_are_checked() {
    let opts = ModelOptions::new(addr(A));
    let with = |k: &str, v: &str| {
        let mut o = opts.clone();
        o.set(k, v).unwrap();
        model(JEDIS, o)
    };
    assert!(with("maxAttempts", "3").is_ok());
    assert!(with("maxAttempts", "0").is_err());
    assert!(with("maxTotalRetriesDuration", "2.5").is_ok());
    assert!(with("maxTotalRetriesDuration", "soon").is_err());
    assert!(with("topologyRefreshPeriod", "none").is_ok());
    assert!(with("topologyRefreshPeriod", "0").is_err());
    assert!(with("maxRedirects", "5").is_err(), "a Lettuce option");
    assert!(
        with("dynamic_startup_nodes", "false").is_err(),
        "a redis-py option"
    );
}

/// Replays `w` on `cluster` through JEDIS with the options `set`.
fn run_model(cluster: &SimCluster, w: &Workload, set: &[(&str, &str)]) -> ReplayReport {
    run(cluster, w, JEDIS, set)
}

#[test]
fn host_and_port_mapper_onto_one_address_fails_the_other_half_after_max_attempts_moved() {
    // Every socket connects to A; the slot cache and the pools keep B's announced address. B's
    // half meets MOVED (to B) on A at each of the 5 attempts, each MOVED renews the slot cache
    // through A (the same table), and the command fails; A's half is served.
    let (cluster, w) = (incident2(), workload_of(10, 100, "zadd"));
    let r = run_model(&cluster, &w, &[("hostAndPortMapper", A)]);
    let b_half = float::from_u64(r.failed) / float::from_u64(r.commands);
    assert!((0.4..0.6).contains(&b_half), "failed share {b_half}");
    assert_eq!(r.errors["JedisClusterOperationException"], r.failed);
    assert_eq!(r.failures[&Failure::TooManyRedirects], r.failed);
    assert_eq!(r.moved, 5 * r.failed);
    // Start-up, then one renewal per MOVED, all answered by A.
    assert_eq!(r.full_reinits, 1 + r.moved);
    assert_eq!(r.cluster_slots_calls, 1 + r.moved);
    assert_eq!(r.nodes.get(B).map_or(0, |n| n.calls), 0);
    assert_eq!(r.nodes[A].cluster_slots, r.cluster_slots_calls);
    // The seed's own connection, then one per pool (A's and B's, both dialled to A): the
    // renewals go through the connection that got the MOVED.
    assert_eq!(r.new_connections, 3);
    // The table is the announced one: two nodes, half each.
    assert_eq!(r.held.table_nodes, 2);
    assert!(!r.wedged);
    // Without a mapper nothing fails.
    let plain = run_model(&cluster, &w, &[]);
    assert_eq!((plain.failed, plain.moved), (0, 0));
    // A mapper that names the address met changes nothing.
    let same = run_model(&cluster, &w, &[("hostAndPortMapper", "none")]);
    assert_eq!((same.failed, same.moved), (0, 0));
}

#[test]
fn concurrent_renewals_are_dropped_while_one_holds_the_rediscover_lock() {
    // A is silent for 2 s; 64 commands in flight, 0.5 s socket timeout. Every command for A's
    // half gives up its attempts with a renewal, and each renewal asks A first (the start node,
    // 0.5 s) then B. Renewals that start while another runs find the lock taken and do nothing,
    // so the CLUSTER SLOTS sent are bounded by the renewals that fit one after another.
    let cluster = incident2_with_fault(A, 10, 12, FaultKind::Timeout);
    let w = workload_of(20, 200, "zadd")
        .with_in_flight(64)
        .with_timing(Timing {
            rtt_us: 1000,
            service_us: Vec::new(),
            default_us: 0,
        });
    let r = run_model(&cluster, &w, &[("socket_timeout", "0.5")]);
    let stalled = commands_within(&w, at(10), at(12));
    // Each renewal that runs costs at least A's 0.5 s timeout: at most ~2 s / 0.5 s of them
    // back to back in the stall (and its tail), two CLUSTER SLOTS each, after start-up's one.
    assert!(
        r.cluster_slots_calls <= 1 + 2 * 8,
        "{} CLUSTER SLOTS for {stalled} stalled commands",
        r.cluster_slots_calls
    );
    assert!(r.cluster_slots_calls >= 3, "{}", r.cluster_slots_calls);
    // A renewal's new connection to the silent start node times out in its handshake (CLIENT
    // SETINFO): CLUSTER SLOTS is never written to A then, though the exchange was tried.
    let tried = r.nodes[A].cluster_slots + r.nodes[B].cluster_slots;
    assert!(
        r.cluster_slots_calls < tried,
        "{} of {tried}",
        r.cluster_slots_calls
    );
}

#[test]
fn renewals_cost_the_client_time_and_concurrent_ones_meet_the_lock() {
    // Every node mapped to A: each command for B's half renews after each MOVED. With 16 in
    // flight and 0.1 ms exchanges, a renewal's own 0.5 ms (renew_cpu_ms) makes other commands'
    // renewals find the lock taken; without that cost they rarely overlap.
    let cluster = incident2();
    let w = workload_of(2, 1000, "zadd")
        .with_in_flight(16)
        .with_timing(Timing {
            rtt_us: 100,
            service_us: Vec::new(),
            default_us: 0,
        });
    let r = run_model(&cluster, &w, &[("hostAndPortMapper", A)]);
    let free = run_model(
        &cluster,
        &w,
        &[("hostAndPortMapper", A), ("renew_cpu_ms", "0")],
    );
    assert_eq!(r.failed, free.failed);
    assert_eq!(r.moved, 5 * r.failed);
    // Without the cost: start-up, then one renewal per MOVED.
    assert_eq!(free.cluster_slots_calls, 1 + free.moved);
    // With it: a large share of the renewals is dropped (live remap runs with 2-16 in flight:
    // 1389 CLUSTER SLOTS for 2013 MOVED, 5667 for 10595).
    assert!(
        r.cluster_slots_calls * 10 < r.moved * 8,
        "{} CLUSTER SLOTS, {} MOVED",
        r.cluster_slots_calls,
        r.moved
    );
}

#[test]
fn pools_grow_to_the_commands_in_flight_at_once() {
    // 1000 commands/s of 5 ms each: about 5 in flight, spread over A and B. Each attempt holds a
    // pooled connection of its node; a command that finds none idle makes one.
    let cluster = incident2();
    let timed = |n: u32| {
        workload_of(5, 1000, "zadd")
            .with_in_flight(n)
            .with_timing(Timing {
                rtt_us: 5000,
                service_us: Vec::new(),
                default_us: 0,
            })
    };
    let one = run_model(&cluster, &timed(1), &[]);
    let many = run_model(&cluster, &timed(64), &[]);
    // One at a time: the start-up's connection, then one per node.
    assert_eq!(one.new_connections, 3);
    // Each node's pool grows to the most commands on it at once: more than one, at most the
    // peak in flight per node (plus the start-up's connection).
    let peak = u64::from(many.peak_in_flight.unwrap());
    assert!(
        many.new_connections > one.new_connections + 4 && many.new_connections <= 1 + 2 * peak,
        "{} connections for a peak of {peak} in flight",
        many.new_connections
    );
    assert_eq!(many.failed, 0);
    assert_eq!(many.held.open_connections + 1, many.new_connections);
}

#[test]
fn a_renewal_after_a_timeout_is_not_seen_by_the_commands_sent_before_it() {
    // At 20 s B's upper part moves to C and A (most of the slots) stops answering. The commands sent to A then time
    // out, and only their second timeout renews the slots (21 s); the commands meanwhile for the
    // moved slots still go to B by the old table (other threads of the application) and meet
    // MOVED, however the replay orders the commands' runs.
    const C: &str = "10.0.0.3:6379";
    let mut b = SimClusterBuilder::new();
    b.layout(
        at(0),
        &[(range(0, 15000), addr(A)), (range(15001, 16383), addr(B))],
        &[],
    );
    b.layout(
        at(20),
        &[
            (range(0, 15000), addr(A)),
            (range(15001, 15999), addr(B)),
            (range(16000, 16383), addr(C)),
        ],
        &[],
    );
    b.fault(slotscope_core::replay::FaultWindow {
        node: addr(A),
        span: slotscope_core::TimeSpan::new(at(20), at(23)),
        kind: FaultKind::Timeout,
    });
    let cluster = b.build();
    let w = workload_of(30, 200, "zadd").with_in_flight(64);
    let r = run_model(&cluster, &w, &[("socket_timeout", "0.5")]);
    let before_renewal: u64 = r.timeline[20].moved;
    assert!(
        before_renewal >= 1,
        "the moved slots' commands of 20 s met no MOVED: {:?}",
        r.timeline[19..23]
            .iter()
            .map(|s| s.moved)
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_command_asleep_in_its_backoff_leaves_its_pools_to_the_commands_sent_meanwhile() {
    // A refuses connections from 10 s to 12 s. With 64 in flight and 0.1 ms exchanges, each
    // command for A fails twice, sleeps a random backoff (up to hundreds of ms), renews the slot
    // cache through B's pool and tries again. The commands sent during that sleep run after it
    // in the replay but earlier on the clock: B's connections are free for them then, so B's
    // pool stays at the commands on B at once. Kept as one "busy until" moment, each connection
    // looked held through the sleep and B's pool grew by one for nearly every command sent
    // meanwhile (the live library kept 4-6 per node where the model opened 20: seed 349468527).
    let cluster = incident2_with_fault(A, 10, 12, FaultKind::ConnectionError);
    let w = workload_of(20, 200, "zadd")
        .with_in_flight(64)
        .with_timing(Timing {
            rtt_us: 100,
            service_us: Vec::new(),
            default_us: 0,
        });
    let r = run_model(&cluster, &w, &[("socket_timeout", "0.5")]);
    assert!(r.full_reinits > 3, "{} renewals", r.full_reinits);
    // The pools end with a few connections each (the renewals' own connections to the start
    // node are closed after their CLUSTER SLOTS).
    assert!(
        r.held.open_connections <= 10,
        "{} pooled connections at the end ({} new, {} renewals)",
        r.held.open_connections,
        r.new_connections,
        r.full_reinits
    );
}

#[test]
fn a_replica_the_answer_lists_keeps_its_pool() {
    // B's slots move to its replica R at 10 s (B becomes R's replica) and back at 20 s. Every
    // answer lists the replica beside the owner, and Jedis gives every node it lists a pool
    // (`discoverClusterSlots`): B's pool and its connection outlive its time as a replica, so
    // the move back opens nothing. Kept to the owners, the model destroyed B's pool at the
    // renewal after 10 s and dialled B again after 20 s (the live failovers of seed 176543604:
    // 32 and 18 new connections in the model, 13 and 7 live).
    const R: &str = "10.0.0.3:6379";
    let mut b = SimClusterBuilder::new();
    let (low, high) = (range(0, 8191), range(8192, 16383));
    b.layout(at(0), &[(low, addr(A)), (high, addr(B))], &[]);
    b.replicas(at(0), &[(addr(R), addr(B))]);
    b.layout(at(10), &[(low, addr(A)), (high, addr(R))], &[]);
    b.replicas(at(10), &[(addr(B), addr(R))]);
    b.layout(at(20), &[(low, addr(A)), (high, addr(B))], &[]);
    b.replicas(at(20), &[(addr(R), addr(B))]);
    let r = run_model(&b.build(), &workload_of(30, 100, "zadd"), &[]);
    assert_eq!(r.failed, 0);
    assert!(r.moved >= 2, "{} MOVED", r.moved);
    // The start-up's connection, then one per pool: A, B, R.
    assert_eq!(r.new_connections, 4);
}
