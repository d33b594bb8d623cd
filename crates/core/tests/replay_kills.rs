//! Connections someone else closed (`CLIENT KILL`, as a recording's `INFO commandstats` shows
//! it): what they cost a redis-py client with commands in flight, and each other library.

use std::collections::BTreeMap;

use slotscope_core::hypothesis::{
    compare, rank, Evidence, ExchangeTimes, HypothesisSpec, Prediction, Variant,
};
use slotscope_core::info::InfoReport;
use slotscope_core::node::NodeRef;
use slotscope_core::recording::{InfoSample, Line};
use slotscope_core::replay::{
    model, replay, replay_over_moments, ModelOptions, ReplayError, ReplayReport, Shape, SimCluster,
    SimClusterBuilder, Timing, Workload, WorkloadSpec, MOMENTS,
};
use slotscope_core::time::{TimeSpan, Timestamp};

mod sim;
use sim::*;

/// Incident 2 (A and B half the slots each), and with `kill` the clients' connections of A
/// closed at 10 s.
fn halves(kill: bool) -> SimCluster {
    let mut builder = incident2_builder();
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
fn a_kill_costs_redis_py_the_error_of_a_connection_ended_not_of_a_failed_connect() {
    // The commands a kill fails read the end of an open connection's stream: each costs
    // `closed_error_cpu_ms` beyond its own work, not `error_cpu_ms` (a refused connect's or a
    // timeout's, which this replay has none of).
    for name in ["redis-py@5.0.0", "redis-py@8.1.0"] {
        let cpu = |error: &str, closed: &str| {
            let set = [("error_cpu_ms", error), ("closed_error_cpu_ms", closed)];
            run(&halves(true), &busy(), name, &set).client_cpu_ms
        };
        let base = cpu("0", "0");
        assert!((cpu("40", "0") - base).abs() < 1e-9, "{name}");
        let closed = cpu("0", "40");
        assert!(
            closed >= base + 40.0,
            "{name}: {closed} ms, {base} ms without"
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

#[test]
fn glide_reconnects_both_connections_of_a_killed_node_and_nothing_else_happens() {
    let w = workload_of(20, 200, "zadd");
    let calm = run(&halves(false), &w, "glide@2.5.2", &[]);
    let killed = run(&halves(true), &w, "glide@2.5.2", &[]);
    // Its user and its management connection to A (`connect_and_check_all_connections`).
    assert_eq!(killed.new_connections, calm.new_connections + 2);
    assert_eq!(killed.cluster_slots_calls, calm.cluster_slots_calls);
    assert_eq!((killed.failed, calm.failed), (0, 0));
}

/// A alone, and with `kill` its clients' connections closed 1 ms after a command of
/// [`busy`] went to it (one every 2.5 ms, each 2.2 ms long).
fn alone(kill: bool) -> SimCluster {
    let mut builder = SimClusterBuilder::new();
    builder.layout(at(0), &[(range(0, 16383), addr(A))], &[]);
    if kill {
        builder.kill(&addr(A), Timestamp(at(10).0 + 1));
    }
    builder.build()
}

#[test]
fn glide_fails_the_command_waiting_on_a_killed_connection() {
    let calm = run_on(&alone(false), "glide@2.5.2");
    let killed = run_on(&alone(true), "glide@2.5.2");
    // Dropped with the connection (`FatalReceiveError`, not retried): `ConnectionError`; the
    // next command reconnects both connections.
    assert_eq!(calm.failed, 0);
    assert_eq!(
        killed.errors.get("ConnectionError"),
        Some(&1),
        "{:?}",
        killed.errors
    );
    assert_eq!(killed.new_connections, calm.new_connections + 2);
    assert_eq!(killed.cluster_slots_calls, calm.cluster_slots_calls);
}

#[test]
fn node_redis_reconnects_a_killed_client_at_once_and_rejects_what_waited_on_it() {
    let w = workload_of(20, 200, "zadd");
    let calm = run(&halves(false), &w, "node-redis@6.3.1", &[]);
    let killed = run(&halves(true), &w, "node-redis@6.3.1", &[]);
    assert_eq!(killed.new_connections, calm.new_connections + 1);
    assert_eq!(killed.cluster_slots_calls, calm.cluster_slots_calls);
    assert_eq!((killed.failed, calm.failed), (0, 0));
    let calm = run_on(&alone(false), "node-redis@6.3.1");
    let killed = run_on(&alone(true), "node-redis@6.3.1");
    assert_eq!(calm.failed, 0);
    assert_eq!(
        killed.errors.get("SocketClosedUnexpectedlyError"),
        Some(&1),
        "{:?}",
        killed.errors
    );
    assert_eq!(killed.new_connections, calm.new_connections + 1);
    assert_eq!(killed.cluster_slots_calls, calm.cluster_slots_calls);
}

#[test]
fn go_redis_drops_killed_connections_quietly_and_retries_what_waited_on_one() {
    let w = workload_of(20, 200, "zadd");
    let calm = run(&halves(false), &w, "go-redis@9.8.0", &[]);
    let killed = run(&halves(true), &w, "go-redis@9.8.0", &[]);
    // `isHealthyConn` drops the dead idle connection, `Get` dials another: no error, no reload.
    assert_eq!(killed.new_connections, calm.new_connections + 1);
    assert_eq!(killed.cluster_slots_calls, calm.cluster_slots_calls);
    assert_eq!((killed.failed, calm.failed), (0, 0));
    // The command on the connection at the kill reads `io.EOF` and is retried on a new one.
    let calm = run_on(&alone(false), "go-redis@9.8.0");
    let killed = run_on(&alone(true), "go-redis@9.8.0");
    assert_eq!((killed.failed, calm.failed), (0, 0));
    assert!(killed.new_connections > calm.new_connections);
    assert_eq!(killed.cluster_slots_calls, calm.cluster_slots_calls);
}

#[test]
fn jedis_meets_each_killed_pooled_connection_once() {
    let w = workload_of(20, 200, "zadd");
    let calm = run(&halves(false), &w, "jedis@5.1.0", &[]);
    let killed = run(&halves(true), &w, "jedis@5.1.0", &[]);
    // The one pooled connection to A fails its next command's first attempt (end of stream);
    // the second attempt borrows a new one. One failure in a row renews nothing.
    assert_eq!(killed.new_connections, calm.new_connections + 1);
    assert_eq!(killed.cluster_slots_calls, calm.cluster_slots_calls);
    assert_eq!((killed.failed, calm.failed), (0, 0));
    let calm = run_on(&alone(false), "jedis@5.1.0");
    let killed = run_on(&alone(true), "jedis@5.1.0");
    assert_eq!((killed.failed, calm.failed), (0, 0));
    assert!(killed.new_connections > calm.new_connections);
}

#[test]
fn redis_rs_meets_a_killed_connection_at_its_next_request_and_rebuilds_once() {
    let w = workload_of(20, 200, "zadd");
    let calm = run(&halves(false), &w, "redis-rs@1.8.1", &[]);
    let killed = run(&halves(true), &w, "redis-rs@1.8.1", &[]);
    // RESP2: nothing notices the close until a request meets it (`BrokenPipe`, `Reconnect`);
    // the retry goes to B, whose `MOVED` rebuilds the slots, whose `PING` repairs A; before it,
    // `reconnect_loop` and the redirected retry each made a connection to A, dropped after.
    assert_eq!(killed.new_connections, calm.new_connections + 3);
    assert_eq!(killed.cluster_slots_calls, calm.cluster_slots_calls + 1);
    assert_eq!((killed.failed, calm.failed), (0, 0));
}

#[test]
fn ioredis_drops_a_killed_node_from_its_pool_and_finds_it_again_by_moved() {
    let w = workload_of(20, 200, "zadd");
    let calm = run(&halves(false), &w, "ioredis@6.0.0", &[]);
    let killed = run(&halves(true), &w, "ioredis@6.0.0", &[]);
    // No reconnect (`clusterNodeRetryStrategy: null`): A leaves the pool; its next command
    // goes to B, whose `MOVED` makes a new connection to A and refreshes the slots (one more
    // `CLUSTER SLOTS`, on a duplicate connection of its own).
    assert_eq!(killed.new_connections, calm.new_connections + 2);
    assert_eq!(killed.cluster_slots_calls, calm.cluster_slots_calls + 1);
    assert_eq!((killed.failed, calm.failed), (0, 0));
}

/// An `INFO` sample of A `ms` after the start with `kills` `CLIENT KILL` calls counted.
fn info_of_a(ms: u64, kills: u64) -> Line {
    let text = format!(
        "# Server\r\nuptime_in_seconds:5\r\n# Commandstats\r\n\
         cmdstat_client|kill:calls={kills},usec=3,usec_per_call=0.5\r\n"
    );
    Line::Info(InfoSample {
        t: Timestamp(at(0).0 + ms),
        node: NodeRef {
            addr: addr(A),
            id: None,
        },
        latency_us: 100,
        info: InfoReport::parse(&text).expect("INFO text"),
    })
}

/// Incident 2 whose recording knows a kill of A's connections only between two samples 500 ms
/// apart (the count of `CLIENT KILL` rose between +3.0 s and +3.5 s).
fn killed_within_a_window() -> SimCluster {
    let mut builder = incident2_builder();
    for (ms, kills) in [(2_500, 0), (3_000, 0), (3_500, 1), (4_000, 1)] {
        builder.push(&info_of_a(ms, kills));
    }
    builder.build()
}

#[test]
fn a_kill_known_within_a_window_is_replayed_at_its_moments_and_the_majority_answers() {
    // A remapped redis-py 5.0.0 storm (every answer collapsed onto A, B's keys MOVED, a reset
    // every fifth), 57/s, its own costs as timed: it resets about every 100 ms and opens new
    // connections each time, so whether a kill of A's connections wedges it depends on where in
    // that cycle the kill comes. The recording knows the kill only between two samples 500 ms
    // apart: the replay tries 15 places of that window, answers with the majority and says how
    // many wedged; each place alone gives what it counted.
    let cluster = killed_within_a_window();
    assert!(cluster.has_uncertain_moments());
    let w = paced(8, 57);
    let opts = remapped_py5_options();
    let build = || model("redis-py@5.0.0", opts.clone());
    let r = replay_over_moments(&cluster, &w, build).unwrap();
    let k = r.moments.expect("replayed at the window's moments");
    assert_eq!(u64::from(k.tried), MOMENTS);
    let each: Vec<bool> = (0..MOMENTS)
        .map(|i| {
            replay(
                &cluster.at_moment(i, MOMENTS),
                &w,
                build().unwrap().as_mut(),
            )
            .wedged
        })
        .collect();
    assert_eq!(
        each.iter().filter(|&&w| w).count(),
        usize::try_from(k.wedged).unwrap(),
        "{each:?}"
    );
    assert_eq!(r.wedged, 2 * k.wedged > k.tried, "{each:?}");
    // The window holds both answers: the reason to try more than its middle.
    assert!(each.contains(&true) && each.contains(&false), "{each:?}");
    // A kill at a known moment is replayed once.
    let mut known = incident2_builder();
    known.kill(&addr(A), at(3));
    let known = known.build();
    assert!(!known.has_uncertain_moments());
    let once = replay_over_moments(&known, &w, build).unwrap();
    assert_eq!(once.moments, None);
    // A client the options cannot build is an error, not a replay.
    let bad = replay_over_moments(&cluster, &w, || -> Result<_, ReplayError> {
        let mut o = ModelOptions::new(addr(A));
        o.set("reinitialize_steps", "x")?;
        model("redis-py@5.0.0", o)
    });
    assert!(bad.is_err());
}

#[test]
fn hypotheses_replay_a_variant_at_the_moments_of_a_kill_window_as_replay_does() {
    // The storm above, ranked as `slotscope hypotheses` ranks a variant: with the kill known only
    // within its window, the variant's figures are those `replay_over_moments` gives (the
    // majority's run nearest the window's middle), not the middle's own.
    let cluster = killed_within_a_window();
    let opts = remapped_py5_options();
    let config: Vec<(&str, String)> = REMAPPED_PY5.map(|(k, v)| (k, v.to_owned())).to_vec();
    let variants = [Variant::new("redis-py@5.0.0", &config)];
    // A workload whose middle placement does not wedge where 12 of the 15 do.
    let (seed, rate, secs) = (4, 57, 8);
    let spec = HypothesisSpec {
        rate_per_sec: rate,
        keys: 10_000,
        seed,
        concurrency: 1,
        redis_py_socket_timeout_ms: None,
        window: Some(TimeSpan::new(at(0), at(secs))),
        shape: Shape::InFlight(113),
        timing: ExchangeTimes {
            rtt_us: Some(58),
            service_us: BTreeMap::new(),
            default_us: Some(10),
        },
    };
    // The workload the hypotheses replay for that spec.
    let w = Workload::generate(&WorkloadSpec {
        start: at(0),
        duration_ms: secs * 1000,
        rate_per_sec: rate,
        keys: 10_000,
        key_prefix: "key".into(),
        command: "zadd".into(),
        seed,
    })
    .unwrap()
    .with_mix(&[], seed)
    .with_concurrency(1)
    .with_in_flight(113);
    let timing = spec.timing.timing(&w.names);
    let w = w.with_timing(timing);
    let build = || model("redis-py@5.0.0", opts.clone());
    let figures = |r: &ReplayReport| {
        compare(
            &Evidence::default(),
            &Prediction::from_report(r, f64::from(u32::try_from(secs).unwrap())),
        )
    };
    let ranked = |c: &SimCluster| {
        let h = rank(c, &Evidence::default(), &variants, &spec).unwrap();
        h.variants.into_iter().next().unwrap().metrics
    };
    // That is the workload: a kill at a known moment ranks as it replays.
    let mut known = incident2_builder();
    known.kill(&addr(A), at(3));
    let known = known.build();
    let once = replay(&known, &w, build().unwrap().as_mut());
    assert_eq!(ranked(&known), figures(&once));
    let middle = cluster.at_moment((MOMENTS - 1) / 2, MOMENTS);
    let at_middle = replay(&middle, &w, build().unwrap().as_mut());
    let r = replay_over_moments(&cluster, &w, build).unwrap();
    let k = r.moments.expect("replayed at the window's moments");
    // The middle's answer is not the majority's: replaying it alone would answer otherwise.
    assert_ne!(at_middle.wedged, r.wedged, "{k:?}");
    assert_eq!(ranked(&cluster), figures(&r));
}
