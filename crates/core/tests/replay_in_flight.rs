//! The event-driven engine: commands in flight, replies landing in time order, resets under
//! commands in flight, topology answers that do not cover the slots.

use slotscope_core::float;
use slotscope_core::replay::{
    model, replay, FaultKind, ModelOptions, ReplayReport, SimCluster, SimClusterBuilder, Timing,
    Workload,
};

mod sim;
use sim::*;

/// `w` as tasks with at most `n` in flight, exchanges of `rtt_us` and `service_us`.
fn in_flight(w: Workload, n: u32, rtt_us: u32, service_us: u32) -> Workload {
    w.with_in_flight(n).with_timing(Timing {
        rtt_us,
        service_us: Vec::new(),
        default_us: service_us,
    })
}

/// Replays `w` through `name` with the options `set`. The redis-py models' own CPU time (per
/// initialisation, connection and reply) is 0 unless `set` gives it: the tests below are about other things
/// (`the_clients_own_initialisation_work_…` is about that one).
fn run_with(cluster: &SimCluster, w: &Workload, name: &str, set: &[(&str, &str)]) -> ReplayReport {
    let mut opts = ModelOptions::new(addr(A));
    if name.starts_with("redis-py") || name == "ideal" {
        opts.set("initialize_cpu_ms", "0").unwrap();
        opts.set("command_cpu_ms", "0").unwrap();
        opts.set("connect_cpu_ms", "0").unwrap();
        opts.set("reply_cpu_ms", "0").unwrap();
        opts.set("error_cpu_ms", "0").unwrap();
        opts.set("closed_error_cpu_ms", "0").unwrap();
        opts.set("refused_cpu_ms", "0").unwrap();
        opts.set("disconnect_cpu_ms", "0").unwrap();
        opts.set("gc_full_ms", "0").unwrap();
    }
    for (k, v) in set {
        opts.set(k, v).unwrap();
    }
    let mut client = model(name, opts).unwrap();
    replay(cluster, w, client.as_mut())
}

#[test]
fn one_in_flight_at_a_short_round_trip_agrees_with_the_lanes() {
    let cluster = incident2();
    for name in ["redis-py@5.0.0", "redis-py@8.0.0", "ideal", "jedis@5.1.0"] {
        let lanes = run(&cluster, &workload(30), name, &[]);
        let timed = run_with(&cluster, &in_flight(workload(30), 1, 200, 10), name, &[]);
        assert_eq!(timed.commands, lanes.commands, "{name}");
        assert_eq!(timed.succeeded, lanes.succeeded, "{name}");
        assert_eq!(timed.moved, lanes.moved, "{name}");
        assert_eq!(timed.full_reinits, lanes.full_reinits, "{name}");
        assert_eq!(timed.peak_in_flight, Some(1), "{name}");
    }
}

#[test]
fn commands_in_flight_meet_the_same_moved_before_the_first_patch_lands() {
    // B takes half of the slots at 20 s; 2000 commands/s of 2 ms each keep ~4 in flight.
    let cluster = reshard();
    let w = workload_of(30, 2000, "zadd");
    let seq = run_with(&cluster, &in_flight(w.clone(), 1, 2000, 0), "ideal", &[]);
    let par = run_with(&cluster, &in_flight(w, 64, 2000, 0), "ideal", &[]);
    assert!(par.peak_in_flight.unwrap() >= 4, "{:?}", par.peak_in_flight);
    assert!(
        par.moved > seq.moved,
        "in flight {} MOVED, one at a time {}",
        par.moved,
        seq.moved
    );
    // One at a time skips commands while each waits; in flight, every command is sent.
    assert_eq!(par.skipped_while_waiting, 0);
    assert!(seq.skipped_while_waiting > 0);
}

#[test]
fn pools_grow_to_what_is_in_flight_not_to_a_setting() {
    let cluster = incident2();
    // 200/s of 1 ms each: rarely more than one in flight, whatever the cap.
    let calm = run_with(
        &cluster,
        &in_flight(workload_of(20, 200, "zadd"), 500, 1000, 0),
        "redis-py@5.0.0",
        &[],
    );
    assert!(calm.new_connections <= 6, "{}", calm.new_connections);
    // A stalls for 2 s with no socket_timeout: everything sent to it waits, the pools grow.
    let stalled = incident2_with_fault(A, 5, 7, FaultKind::Timeout);
    let r = run_with(
        &stalled,
        &in_flight(workload_of(20, 200, "zadd"), 500, 1000, 0),
        "redis-py@5.0.0",
        &[],
    );
    assert!(r.peak_in_flight.unwrap() > 150, "{:?}", r.peak_in_flight);
    assert!(r.new_connections > 150, "{}", r.new_connections);
    // 8.x stops at max_connections (100 per node) with MaxConnectionsError.
    let r8 = run_with(
        &stalled,
        &in_flight(workload_of(20, 200, "zadd"), 500, 1000, 0),
        "redis-py@8.0.0",
        &[],
    );
    assert!(r8.errors["MaxConnectionsError"] > 0, "{:?}", r8.errors);
    assert!(
        r8.new_connections <= 100 + 100 + 4,
        "{}",
        r8.new_connections
    );
}

#[test]
fn redis_py_5_with_address_remap_wedges_within_two_seconds_under_load() {
    // Every 5th MOVED closes every connection, the ones other commands wait on included; each
    // such command's ConnectionError pops a startup node.
    let cluster = incident2();
    let w = in_flight(workload_of(30, 500, "zrevrange"), 64, 2000, 50);
    let r = run_with(
        &cluster,
        &w,
        "redis-py@5.0.0",
        &[("address_remap", A), ("socket_timeout", "0.5")],
    );
    assert!(r.wedged, "{r:?}");
    let since = r.wedged_since.expect("wedged").millis_since(at(0));
    assert!(since <= 2000, "wedged after {since} ms");
    // Sequentially it keeps running (the old answer).
    let lanes = run(
        &cluster,
        &workload_of(30, 500, "zrevrange"),
        "redis-py@5.0.0",
        &[("address_remap", A)],
    );
    assert!(!lanes.wedged);
}

#[test]
fn redis_py_8_retries_replies_its_resets_lose_and_raises_attribute_error_from_a_waiting_handshake()
{
    // Remapped to A: a reset every fifth MOVED under 64 commands in flight.
    let cluster = incident2();
    let w = in_flight(workload_of(30, 500, "zrevrange"), 64, 2000, 50);
    let remapped = |set: &[(&str, &str)]| {
        let mut opts = vec![("address_remap", A)];
        opts.extend_from_slice(set);
        run_with(&cluster, &w, "redis-py@8.0.0", &opts)
    };
    let attribute = |r: &ReplayReport| r.errors.get("AttributeError").copied().unwrap_or(0);
    // With the client's own work free, no reply waits for the loop: every lost reply is a
    // ConnectionError, retried after an initialisation, and no AttributeError is raised.
    let free = remapped(&[]);
    assert!(!free.wedged);
    assert_eq!(attribute(&free), 0, "{:?}", free.errors);
    // Commands that were past their initialize() check go on to the stale owners.
    assert!(free.moved_share["zrevrange"] > 0.3);
    // With the release's own costs the loop is held: a new connection's handshake reply waits
    // for it, and a reset in that wait leaves the writer None (redis-py #4028).
    let busy = remapped(&[
        ("initialize_cpu_ms", "3"),
        ("command_cpu_ms", "27"),
        ("connect_cpu_ms", "1.3"),
        ("reply_cpu_ms", "0.15"),
    ]);
    assert!(attribute(&busy) > 0, "{:?}", busy.errors);
    // The lost replies themselves are retried: what the application sees of them without the
    // loop's wait is only the ConnectionError of a command that lost all eleven attempts.
    assert!(
        free.errors.keys().all(|k| k == "ConnectionError"),
        "{:?}",
        free.errors
    );
}

#[test]
fn redis_py_a_reset_waits_its_turn_behind_the_tasks_waiting_for_an_initialisation() {
    // Remapped to A, 600/s with up to 300 in flight and the release's own costs: every fifth
    // MOVED calls aclose(), which takes `_lock` after the tasks already waiting on it for an
    // initialisation. When one ends, each of those finds it done and sends its command before
    // the close comes, so every initialisation serves the whole queue and the application
    // keeps up. (A close at once left each waiter to run an initialisation of its own, a
    // handful of commands apart: 279 initialisations, 9339 of 12000 commands skipped.)
    let cluster = incident2();
    let w = in_flight(workload_of(20, 600, "zrevrange"), 300, 100, 10);
    let r = run_with(
        &cluster,
        &w,
        "redis-py@8.1.0",
        &[
            ("address_remap", A),
            ("initialize_cpu_ms", "6.5"),
            ("command_cpu_ms", "49"),
            ("connect_cpu_ms", "1.3"),
            ("reply_cpu_ms", "0.15"),
        ],
    );
    assert!(
        r.skipped_while_waiting * 10 < r.commands,
        "{} skipped, {} sent",
        r.skipped_while_waiting,
        r.commands
    );
    assert!(r.full_reinits > 10, "{r:?}");
    assert!(
        r.full_reinits * 100 < r.commands,
        "{} initialisations for {} commands",
        r.full_reinits,
        r.commands
    );
}

#[test]
fn redis_py_counts_only_the_replies_it_reads() {
    // Remapped to A with 64 in flight: resets close connections whose replies are still on
    // their way. The application's counters (and the report's) hold only the replies the
    // library read: every OK read ended a command, so the OKs counted are the commands that
    // succeeded, and no lost reply is among the exchanges.
    let cluster = incident2();
    let w = in_flight(workload_of(30, 500, "zrevrange"), 64, 2000, 50);
    for name in ["redis-py@5.0.0", "redis-py@8.0.0"] {
        let r = run_with(&cluster, &w, name, &[("address_remap", A)]);
        let lost = r.errors.get("ConnectionError").copied().unwrap_or(0);
        let ok: u64 = r.nodes.values().map(|n| n.ok).sum();
        assert_eq!(ok, r.succeeded, "{name}: {:?}", r.errors);
        let moved: u64 = r.nodes.values().map(|n| n.moved).sum();
        assert_eq!(moved, r.moved, "{name}");
        if name.ends_with("5.0.0") {
            // 5.0.0 raises the lost replies that emptied its startup nodes.
            assert!(lost > 0 || r.wedged, "{name}: {:?}", r.errors);
        }
    }
}

/// A cluster whose slots are assigned at 5 s (none before), then stay.
fn assigned_late() -> SimCluster {
    let mut b = SimClusterBuilder::new();
    b.layout(at(0), &[], &[]);
    b.add_node(&addr(B));
    b.layout(
        at(5),
        &[(range(0, 8191), addr(A)), (range(8192, 16383), addr(B))],
        &[],
    );
    b.build()
}

/// Half of the slots assigned from 0 s, the rest at 5 s.
fn covered_late() -> SimCluster {
    let mut b = SimClusterBuilder::new();
    b.layout(at(0), &[(range(0, 8191), addr(A))], &[]);
    b.add_node(&addr(B));
    b.layout(
        at(5),
        &[(range(0, 8191), addr(A)), (range(8192, 16383), addr(B))],
        &[],
    );
    b.build()
}

#[test]
fn an_answer_that_does_not_cover_the_slots_keeps_the_startup_nodes() {
    for cluster in [assigned_late(), covered_late()] {
        for name in ["redis-py@5.0.0", "redis-py@8.0.0", "ideal"] {
            for w in [workload(20), in_flight(workload(20), 8, 500, 10)] {
                let r = run_with(&cluster, &w, name, &[]);
                assert!(!r.wedged, "{name} wedged: {r:?}");
                assert_eq!(
                    r.errors.get("RedisClusterException").copied(),
                    Some(500),
                    "{name}: {:?}",
                    r.errors
                );
                assert_eq!(r.succeeded, r.commands - 500, "{name}");
                assert_eq!(r.startup_nodes, 2, "{name}");
            }
        }
    }
}

#[test]
fn the_clients_own_initialisation_work_holds_every_command_in_flight() {
    // Remapped: a rebuild every fifth MOVED. Each rebuild's CPU holds the event loop, so with
    // a few commands in flight the application falls behind and skips.
    let cluster = incident2();
    let w = in_flight(workload_of(20, 500, "zrevrange"), 4, 500, 10);
    let remapped = |option: (&str, &str)| {
        run_with(
            &cluster,
            &w,
            "redis-py@8.0.0",
            &[("address_remap", A), option],
        )
    };
    let free = remapped(("initialize_cpu_ms", "0"));
    let held = remapped(("initialize_cpu_ms", "20"));
    assert!(
        held.skipped_while_waiting > free.skipped_while_waiting + 100,
        "skipped: {} with 20 ms a rebuild, {} with none",
        held.skipped_while_waiting,
        free.skipped_while_waiting
    );
    // So does the COMMAND table every initialisation fetches and parses.
    let command = remapped(("command_cpu_ms", "20"));
    assert!(
        command.skipped_while_waiting > free.skipped_while_waiting + 100,
        "skipped: {} with a 20 ms COMMAND table, {} with none",
        command.skipped_while_waiting,
        free.skipped_while_waiting
    );
    // The instant clock of the lanes takes no time for it.
    let lanes = |cpu: &str| {
        run_with(
            &cluster,
            &workload_of(20, 500, "zrevrange"),
            "redis-py@8.0.0",
            &[("address_remap", A), ("initialize_cpu_ms", cpu)],
        )
    };
    assert_eq!(lanes("0"), lanes("20"));
}

#[test]
fn the_clients_own_work_per_reply_and_per_connection_holds_its_loop() {
    // No topology change, 2000 commands/s with 8 in flight. At 1 ms of the client's own work per
    // reply its loop serves at most 1000/s: the application falls behind and skips about half;
    // with none it skips next to nothing (only the first commands, issued before the first
    // initialisation gave the client a default node, go to random primaries and may take a
    // MOVED's extra round trip: keyless.rs).
    let cluster = incident2();
    let w = in_flight(workload_of(10, 2000, "zadd"), 8, 500, 10);
    let free = run_with(&cluster, &w, "redis-py@8.1.0", &[]);
    let busy = run_with(&cluster, &w, "redis-py@8.1.0", &[("reply_cpu_ms", "1")]);
    assert!(free.skipped_while_waiting < 10, "{free:?}");
    let half = float::from_u64(busy.skipped_while_waiting) / 20_000.0;
    assert!((0.35..0.65).contains(&half), "skipped share {half}");
    // Remapped, every fifth MOVED closes every connection; each reopened one runs its handshake
    // on the loop.
    let w = in_flight(workload_of(20, 500, "zrevrange"), 4, 500, 10);
    let remapped = |cpu: &str| {
        run_with(
            &cluster,
            &w,
            "redis-py@8.1.0",
            &[("address_remap", A), ("connect_cpu_ms", cpu)],
        )
    };
    let (free, held) = (remapped("0"), remapped("5"));
    assert!(
        held.skipped_while_waiting > free.skipped_while_waiting + 100,
        "skipped: {} with 5 ms a connection, {} with none",
        held.skipped_while_waiting,
        free.skipped_while_waiting
    );
}

#[test]
fn redis_py_7_1_and_later_commands_issued_while_the_first_command_table_loads_fetch_their_own() {
    // From 7.1.0 a command's slot is determined before its initialisation once the client has a
    // default node: a command issued while the first COMMAND table is on its way finds the table
    // empty and fetches its own, each holding the loop. 7.0.x determines the slot after the
    // initialisation and waits for it (both asked of the redis-py@5.0.0 model). The table is in
    // place before its parse's hold: the few issued during its round trip fetch their own, the
    // ones due during the hold find it (kept after the hold, every command due during it fetched
    // one: over 500 more skipped here).
    let cluster = incident2();
    let w = in_flight(workload_of(10, 2000, "zadd"), 64, 500, 10);
    let cpu = [("command_cpu_ms", "27")];
    let v71 = run_with(&cluster, &w, "redis-py@7.1.0", &cpu);
    let v70 = run_with(&cluster, &w, "redis-py@7.0.1", &cpu);
    let extra = v71.skipped_while_waiting - v70.skipped_while_waiting;
    assert!(
        (100..500).contains(&extra),
        "skipped: 7.1.0 {}, 7.0.1 {}",
        v71.skipped_while_waiting,
        v70.skipped_while_waiting
    );
    // The start's pile-up opens a connection per command waiting.
    assert!(
        v71.new_connections > v70.new_connections,
        "new connections: 7.1.0 {}, 7.0.1 {}",
        v71.new_connections,
        v70.new_connections
    );
    // Only at the start: no failures, and at most the one more initialisation that the
    // start's commands sent to random primaries before the first default node can set off
    // (keyless.rs).
    assert_eq!((v71.failed, v70.failed), (0, 0));
    assert!(
        v71.full_reinits <= v70.full_reinits + 1,
        "{} {}",
        v71.full_reinits,
        v70.full_reinits
    );
    // 8.0.0 routes its start as 8.1.0 does (8.0.0 `redis/asyncio/cluster.py` l. 987-990).
    let v81 = run_with(&cluster, &w, "redis-py@8.1.0", &cpu);
    let v80 = run_with(&cluster, &w, "redis-py@8.0.0", &cpu);
    assert_eq!(
        (v81.skipped_while_waiting, v81.new_connections, v81.moved),
        (v80.skipped_while_waiting, v80.new_connections, v80.moved)
    );
}

#[test]
fn redis_py_the_slot_cache_is_in_place_for_the_commands_due_while_it_was_built() {
    // Building the slot cache from CLUSTER SLOTS is one synchronous step holding the event loop;
    // the commands due meanwhile start after it and find the client with a default node, so
    // 7.1.0+ routes them by slot, not to random primaries (keyless.rs). Only the few started
    // before the first slot cache (within its round trip) may meet a MOVED; built after its
    // hold instead, 1526 MOVEDs.
    let cluster = incident2();
    let w = in_flight(workload_of(10, 2000, "zadd"), 64, 500, 10);
    let slow = run_with(
        &cluster,
        &w,
        "redis-py@8.1.0",
        &[("initialize_cpu_ms", "200")],
    );
    assert!(slow.skipped_while_waiting > 300, "{slow:?}");
    assert!(slow.moved <= 3, "moved {}", slow.moved);
    assert_eq!(slow.failed, 0);
}

#[test]
fn redis_py_commands_due_while_the_command_table_was_parsed_find_the_client_initialised() {
    // The first initialisation's `COMMAND` table holds the event loop 30 ms; the client counts
    // itself initialised (`_initialize = False`) in the step that parses it, so the ~30 commands
    // due meanwhile, which start when it frees the loop, skip `_lock` and go to their nodes at
    // once, each taking a connection (none is free yet): live, the quiet runs open a connection
    // for each of them (docs/FIDELITY.md, "the burst a loop turn opens"). Counted initialised
    // only after the hold, they queued on `_lock` and were handed on one at a time, the first
    // freeing its connection for the later ones: 15 connections (5.0.0), 24 (8.1.0).
    let cluster = incident2();
    let w = in_flight(workload_of(2, 1000, "zadd"), 64, 200, 10);
    let set = [
        ("initialize_cpu_ms", "3"),
        ("command_cpu_ms", "30"),
        ("connect_cpu_ms", "0.3"),
        ("reply_cpu_ms", "0.05"),
    ];
    for name in ["redis-py@5.0.0", "redis-py@8.1.0"] {
        let held = run_with(&cluster, &w, name, &set);
        assert_eq!(held.failed, 0, "{name}: {held:?}");
        assert!(
            held.new_connections >= 25,
            "{name}: {} connections for the burst of ~30",
            held.new_connections
        );
        // Nothing holds the loop: the commands go out at their times, a few connections serve.
        let free = run_with(&cluster, &w, name, &[]);
        assert!(
            free.new_connections <= 6,
            "{name}: {} connections without a burst",
            free.new_connections
        );
    }
}

#[test]
fn redis_py_8_spends_ten_retries_on_a_dead_node_and_fails_few_commands() {
    // A (the startup node, the owner of slot 0, first in every answer) refuses connections from
    // 10 s to 14 s; one command in flight, 100/s. From 8.0.0 a command retries 10 times, each
    // after an initialisation whose COMMAND goes to the default node, which is B once A failed
    // (moved to the end of nodes_cache): ~0.3 s a command, so few of them fail and the
    // application skips the rest. 7.4.x retries 3 times.
    let cluster = incident2_with_fault(A, 10, 14, FaultKind::ConnectionError);
    let w = in_flight(workload(20), 1, 500, 10);
    let cpu = [("command_cpu_ms", "27")];
    let v8 = run_with(&cluster, &w, "redis-py@8.1.0", &cpu);
    let v7 = run_with(&cluster, &w, "redis-py@7.4.0", &cpu);
    let failed = |r: &ReplayReport| r.errors.get("ConnectionError").copied().unwrap_or(0);
    // 4 s of A's half of the keys at 0.3 s a failing command: about 13.
    assert!((5..=25).contains(&failed(&v8)), "8.1.0: {:?}", v8.errors);
    assert!(
        v8.skipped_while_waiting > 150,
        "{}",
        v8.skipped_while_waiting
    );
    // Four attempts a command instead of eleven: more failures, fewer skipped.
    assert!(
        failed(&v7) > failed(&v8) * 2,
        "7.4.0 {:?}, 8.1.0 {:?}",
        v7.errors,
        v8.errors
    );
    assert!(v7.skipped_while_waiting < v8.skipped_while_waiting);
    // Given, the option wins over the release's default.
    let three = run_with(
        &cluster,
        &w,
        "redis-py@8.1.0",
        &[
            ("command_cpu_ms", "27"),
            ("cluster_error_retry_attempts", "3"),
        ],
    );
    assert_eq!(failed(&three), failed(&v7));
}

/// A owns 0-8191 and B the rest; at 2 s B's slots 16000-16383 move to C.
fn moved_to_c_at_two_seconds() -> SimCluster {
    const C: &str = "10.0.0.3:6379";
    let mut b = SimClusterBuilder::new();
    b.layout(
        at(0),
        &[(range(0, 8191), addr(A)), (range(8192, 16383), addr(B))],
        &[],
    );
    b.add_node(&addr(C));
    b.layout(
        at(2),
        &[
            (range(0, 8191), addr(A)),
            (range(8192, 15999), addr(B)),
            (range(16000, 16383), addr(C)),
        ],
        &[],
    );
    b.build()
}

/// The client's own costs of the storms below: 7.2+'s, the `COMMAND` table shortened.
const STORM_COSTS: [(&str, &str); 4] = [
    ("initialize_cpu_ms", "6.5"),
    ("command_cpu_ms", "30"),
    ("connect_cpu_ms", "1.3"),
    ("reply_cpu_ms", "0.15"),
];

#[test]
fn redis_py_7_2_sends_commands_to_random_primaries_while_it_has_no_default_node() {
    // 500/s with 200 in flight, the releases' own costs. The move sends B's commands for the
    // moved slots back with MOVED; every fifth one resets the client, which drops its default
    // node until the next initialisation, and from 7.1.0 a command that starts meanwhile has no
    // request policy and goes to a random primary (`keyless.rs`). A never loses a slot, so a
    // MOVED from A is such a command; 5.0.0 routes every command by its key and A sends none.
    let cluster = moved_to_c_at_two_seconds();
    let w = in_flight(workload_of(6, 500, "zadd"), 200, 100, 10);
    let moved_at_a = |name: &str| {
        let r = run_with(&cluster, &w, name, &STORM_COSTS);
        (r.nodes.get(A).map_or(0, |n| n.moved), r)
    };
    let (by_key, r5) = moved_at_a("redis-py@5.0.0");
    assert_eq!(by_key, 0, "{r5:?}");
    assert!(r5.moved > 0, "the move was met: {r5:?}");
    let (random, r8) = moved_at_a("redis-py@8.0.0");
    assert!(random > 0, "{r8:?}");
    assert!(r8.moved > r5.moved, "{} vs {}", r8.moved, r5.moved);
}

#[test]
fn redis_py_random_seed_draws_other_random_primaries_and_the_same_seed_the_same_ones() {
    // The commands without a default node go to random primaries; `random_seed` seeds that
    // choice. Another seed sends them elsewhere (other MOVED counts at A, the only node that never
    // loses a slot), the same seed replays the same run.
    let cluster = moved_to_c_at_two_seconds();
    let w = in_flight(workload_of(6, 500, "zadd"), 200, 100, 10);
    let at_a = |seed: &str| {
        let mut set = STORM_COSTS.to_vec();
        set.push(("random_seed", seed));
        let r = run_with(&cluster, &w, "redis-py@8.0.0", &set);
        (
            r.nodes.get(A).map_or(0, |n| n.moved),
            r.moved,
            r.full_reinits,
        )
    };
    let runs: Vec<_> = (1..=6).map(|s| at_a(&s.to_string())).collect();
    assert!(runs.iter().all(|r| r.0 > 0), "{runs:?}");
    assert!(runs.iter().any(|r| *r != runs[0]), "{runs:?}");
    assert_eq!(at_a("3"), runs[2]);
    // A seed that is not a number is refused with the option's name.
    let mut opts = ModelOptions::new(addr(A));
    let refused = opts.set("random_seed", "-1").unwrap_err().to_string();
    assert!(refused.contains("random_seed"), "{refused}");
}

#[test]
fn redis_py_5_charges_each_failed_initialisation_on_a_dead_node() {
    // A (the startup node, first in every answer, so the default node of 5.0.0's COMMAND table)
    // refuses connections from 10 s to 14 s. Every command that meets it fails, and so does every
    // initialisation after it: the slot cache is built, the COMMAND table is refused, the
    // exception goes up through `initialize()`'s `except` to the application. Each such failure
    // is the client's work: with `error_cpu_ms` 2, the client's CPU grows by at least 2 ms a
    // failed command, and the report says how much it charged.
    let cluster = incident2_with_fault(A, 10, 14, FaultKind::ConnectionError);
    let w = in_flight(workload(20), 1, 500, 10);
    let idle = run_with(&cluster, &w, "redis-py@5.0.0", &[]);
    assert!(idle.client_cpu_ms.abs() < 1e-9, "{}", idle.client_cpu_ms);
    let busy = run_with(&cluster, &w, "redis-py@5.0.0", &[("error_cpu_ms", "2")]);
    let failed: u64 = busy.errors.values().sum();
    assert!(failed > 20, "{:?}", busy.errors);
    assert!(
        busy.client_cpu_ms >= 2.0 * float::from_u64(failed),
        "{} ms charged for {failed} failed commands",
        busy.client_cpu_ms
    );
}

#[test]
fn redis_py_charges_a_refused_connect_its_own_cost_not_a_handshake_s_and_an_error_s() {
    // B (not the startup node) refuses connections from 10 s to 14 s; commands in flight meet it
    // on connections it had open (each an ended connection) and then on new ones, refused. A
    // refused attempt costs `refused_cpu_ms`, the whole of it: no handshake's work
    // (`connect_cpu_ms`).
    let cluster = incident2_with_fault(B, 10, 14, FaultKind::ConnectionError);
    let w = in_flight(workload(20), 4, 500, 10);
    for name in ["redis-py@5.0.0", "redis-py@8.1.0"] {
        let cpu = |set: &[(&str, &str)]| run_with(&cluster, &w, name, set).client_cpu_ms;
        let refused = cpu(&[("refused_cpu_ms", "3")]);
        assert!(refused >= 3.0, "{name}: {refused} ms");
        // Every charge is a whole refused attempt.
        assert!(
            (refused / 3.0 - (refused / 3.0).round()).abs() < 1e-6,
            "{name}: {refused}"
        );
        // A handshake is charged for the connections opened, none for the refused.
        let r = run_with(&cluster, &w, name, &[("connect_cpu_ms", "5")]);
        let opened = float::from_u64(r.new_connections);
        assert!(
            (r.client_cpu_ms - 5.0 * opened).abs() < 1e-6,
            "{name}: {} ms for {opened} connections",
            r.client_cpu_ms
        );
    }
}

#[test]
fn redis_py_5_builds_a_larger_slot_cache_when_the_answer_lists_replicas() {
    // Incident 2's dead-default-node storm (A refuses from 10 s to 14 s), with and without a
    // replica of B listed beside its 8 192 slots: 5.0.0 walks every slot once more for it, so
    // its slot cache costs half as much again (24 576 entries against 16 384) and the storm,
    // whose pace is that work, runs fewer initialisations; 8.x's does not change.
    let storm = |replica: bool| {
        let mut builder = incident2_builder();
        if replica {
            builder.replicas(at(0), &[(addr("10.0.0.3:6379"), addr(B))]);
        }
        builder.fault(slotscope_core::replay::FaultWindow {
            node: addr(A),
            span: slotscope_core::TimeSpan::new(at(10), at(14)),
            kind: FaultKind::ConnectionError,
        });
        builder.build()
    };
    let (plain, listed) = (storm(false), storm(true));
    assert_eq!(plain.answer_entries(at(5)), 16_384);
    assert_eq!(listed.answer_entries(at(5)), 16_384 + 8_192);
    let w = in_flight(workload(20), 4, 500, 10);
    let set = [("initialize_cpu_ms", "10")];
    let cost = |cluster: &SimCluster, name: &str| {
        let r = run_with(cluster, &w, name, &set);
        (r.full_reinits, r.client_cpu_ms)
    };
    let (plain_inits, plain_cpu) = cost(&plain, "redis-py@5.0.0");
    let (listed_inits, listed_cpu) = cost(&listed, "redis-py@5.0.0");
    assert!(plain_inits > 100, "{plain_inits}");
    let per = |cpu: f64, n: u64| cpu / float::from_u64(n);
    assert!(
        (per(plain_cpu, plain_inits) - 10.0).abs() < 0.5,
        "{plain_cpu} ms over {plain_inits}"
    );
    assert!(
        (per(listed_cpu, listed_inits) - 15.0).abs() < 0.75,
        "{listed_cpu} ms over {listed_inits}"
    );
    assert!(
        float::from_u64(listed_inits) < 0.8 * float::from_u64(plain_inits),
        "{listed_inits} against {plain_inits}"
    );
    let (p8, l8) = (
        cost(&plain, "redis-py@8.1.0"),
        cost(&listed, "redis-py@8.1.0"),
    );
    assert!(
        (per(p8.1, p8.0.max(1)) - per(l8.1, l8.0.max(1))).abs() < 0.5,
        "{p8:?} {l8:?}"
    );
}
