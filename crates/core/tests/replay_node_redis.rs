//! Replay of synthetic incidents through the node-redis 6.3.1 `createCluster` model.

use slotscope_core::float;
use slotscope_core::replay::{
    model, Failure, FaultKind, FaultWindow, ModelOptions, ReplayReport, SimCluster,
    SimClusterBuilder, Timing, Workload,
};
use slotscope_core::TimeSpan;

mod sim;
use sim::*;

const MODEL: &str = "node-redis@6.3.1";

#[test]
fn a_moved_waits_for_one_rediscovery_then_follows_the_new_table() {
    // B owns one slot until 20 s, then half of them: the first command for B's new slots meets
    // MOVED on A, waits for a rediscovery (CLUSTER SLOTS from A, the node that answered) and is
    // sent to B; the table is then right, so no other MOVED.
    let (cluster, w) = (reshard(), workload_of(30, 100, "zadd"));
    let r = run_model(&cluster, &w, &[]);
    assert_eq!(r.failed, 0);
    assert_eq!(r.moved, 1);
    // connect()'s discovery, then the MOVED's: the slot is not patched from the reply.
    assert_eq!(r.cluster_slots_calls, 2);
    assert_eq!(r.full_reinits, 2);
    // Each discovery on a client of its own, plus one client per master, connected at once.
    assert_eq!(r.new_connections, 2 + 2);
    let share = float::from_u64(r.nodes[B].ok) / float::from_u64(commands_from(&w, at(20)).max(1));
    assert!((0.4..0.6).contains(&share), "share to B {share}");
    assert!(!r.wedged);
}

#[test]
fn node_address_map_onto_one_address_fails_the_other_half_after_17_moved() {
    // Every node's client connects to A: B's half meets MOVED on A, each followed by a
    // rediscovery that names B again, whose client goes to A again: 17 MOVED, then
    // MaxCommandRedirectionsError.
    let (cluster, w) = (incident2(), workload_of(10, 100, "zadd"));
    let r = run_model(&cluster, &w, &[("nodeAddressMap", A)]);
    assert_other_half_fails(&r, "MaxCommandRedirectionsError");
    assert_eq!(r.moved, 17 * r.failed);
    // The 17th MOVED fails the command before a rediscovery: 16 each, after connect()'s.
    assert_eq!(r.cluster_slots_calls, 1 + 16 * r.failed);
    assert_eq!(r.new_connections, 1 + 2 + 16 * r.failed);
    assert_eq!(r.nodes.get(B).map_or(0, |n| n.calls), 0);
    assert!(!r.wedged);
    // `address_remap` is the same option.
    let alias = run_model(&cluster, &w, &[("address_remap", A)]);
    assert_eq!((alias.failed, alias.moved), (r.failed, r.moved));
    // maxCommandRedirections bounds the errors: with 2, the third fails the command.
    let two = run_model(
        &cluster,
        &w,
        &[("nodeAddressMap", A), ("maxCommandRedirections", "2")],
    );
    assert_eq!(two.failed, r.failed);
    assert_eq!(two.moved, 3 * two.failed);
    // Without a map nothing fails.
    assert_eq!(run_model(&cluster, &w, &[]).failed, 0);
}

#[test]
fn commands_that_meet_moved_while_a_rediscovery_runs_join_it() {
    // The MOVED storm of a map onto A, with commands in flight: a command that meets MOVED while
    // another's rediscovery runs waits for that one (`#runningRediscoverPromise`) instead of
    // starting its own, so there are fewer rediscoveries than MOVED handled. One at a time, none
    // overlap: 16 per failed command.
    let cluster = incident2();
    let w = workload_of(5, 1000, "zadd");
    let one = run_model(
        &cluster,
        &w.clone().with_in_flight(1),
        &[("nodeAddressMap", A)],
    );
    assert!(one.failed > 0);
    assert_eq!(one.cluster_slots_calls, 1 + 16 * one.failed);
    let many = run_model(&cluster, &w.with_in_flight(64), &[("nodeAddressMap", A)]);
    assert!(many.failed > 0);
    assert_eq!(many.moved, 17 * many.failed);
    assert!(
        2 * many.cluster_slots_calls < 16 * many.failed,
        "{} rediscoveries for {} failed commands",
        many.cluster_slots_calls,
        many.failed
    );
}

#[test]
fn a_discovery_s_own_work_paces_a_moved_storm() {
    // The storm of a map onto A with 64 in flight: a rediscovery that got its answer lasts at
    // least `rediscover_cpu_ms`, and the commands meeting MOVED meanwhile join it. At 3 ms each
    // the 5 s storm holds at most one a 3 ms (and the run's tail): far fewer than without the
    // cost, where the round trips alone pace them.
    let cluster = incident2();
    let w = workload_of(5, 1000, "zadd").with_in_flight(64);
    let storm = |cpu: &str| {
        run_model(
            &cluster,
            &w,
            &[("nodeAddressMap", A), ("rediscover_cpu_ms", cpu)],
        )
    };
    let (free, costly) = (storm("0"), storm("3"));
    assert!(costly.failed > 0 && free.failed > 0);
    assert!(
        costly.cluster_slots_calls * 3 <= 6_000,
        "{}",
        costly.cluster_slots_calls
    );
    assert!(
        free.cluster_slots_calls > 2 * costly.cluster_slots_calls,
        "{} free, {} at 3 ms",
        free.cluster_slots_calls,
        costly.cluster_slots_calls
    );
    // Work shorter than the discovery's round trips (a connect's two and CLUSTER SLOTS's one,
    // 750 us at the default 250 us) is done within them: nothing changes.
    let within = storm("0.5");
    assert_eq!(
        (within.cluster_slots_calls, within.moved, within.failed),
        (free.cluster_slots_calls, free.moved, free.failed)
    );
    // The lanes' instant clock takes no time for it.
    let lanes = workload_of(5, 100, "zadd");
    let run_lanes = |cpu: &str| {
        let r = run_model(
            &cluster,
            &lanes,
            &[("nodeAddressMap", A), ("rediscover_cpu_ms", cpu)],
        );
        (r.cluster_slots_calls, r.failed)
    };
    assert_eq!(run_lanes("3"), run_lanes("0"));
}

#[test]
fn a_storm_s_rediscoveries_take_their_round_trips_to_the_microsecond() {
    // One command in flight, every other command meeting MOVED 17 times: each of its 16
    // rediscoveries takes a connect (two round trips) and CLUSTER SLOTS (one), and each resend
    // one more: at a 100 us round trip, 16 x 4 x 100 us = 6.4 ms a failed command at the least.
    // The model once went back to the millisecond a discovery began in, so a storm ran faster
    // than its round trips.
    let cluster = incident2();
    let timing = Timing {
        rtt_us: 100,
        ..Timing::default()
    };
    let w = workload_of(5, 1000, "zadd")
        .with_in_flight(1)
        .with_timing(timing);
    let r = run_model(
        &cluster,
        &w,
        &[("nodeAddressMap", A), ("rediscover_cpu_ms", "0")],
    );
    assert!(r.failed > 0);
    assert!(
        r.failed * 6_400 <= 5_000_000 + 6_400,
        "{} failed in 5 s",
        r.failed
    );
}

#[test]
fn a_map_onto_a_node_without_slots_fails_every_command_and_wedges() {
    // A owns every slot, B none: every client connects to B, which answers MOVED for each.
    let mut builder = SimClusterBuilder::new();
    builder.layout(at(0), &[(range(0, 16383), addr(A))], &[]);
    builder.add_node(&addr(B));
    let cluster = builder.build();
    let w = workload_of(5, 100, "zadd");
    let r = run_model(&cluster, &w, &[("nodeAddressMap", B)]);
    assert_eq!(r.failed, r.commands);
    assert_eq!(r.errors["MaxCommandRedirectionsError"], r.failed);
    assert!(r.wedged);
    // Mapped onto A, the owner, nothing fails.
    let own = run_model(&cluster, &w, &[("nodeAddressMap", A)]);
    assert_eq!(own.failed, 0);
    assert!(!own.wedged);
}

#[test]
fn an_idle_connection_past_socket_timeout_is_closed_for_good() {
    // Two commands a second over two nodes: every connection idles longer than a 200 ms
    // socketTimeout, is destroyed and, with the default reconnect strategy, never reconnects:
    // every command after the first few raises ClientClosedError, and nothing rediscovers.
    let (cluster, w) = (incident2(), workload_of(10, 2, "zadd"));
    let r = run_model(&cluster, &w, &[("socketTimeout", "200")]);
    assert!(r.failed + 2 >= r.commands, "{} of {}", r.failed, r.commands);
    assert_eq!(r.errors["ClientClosedError"], r.failed);
    assert_eq!(r.failures[&Failure::Connection], r.failed);
    assert_eq!(r.cluster_slots_calls, 1);
    assert!(r.wedged);
    // The replay's socket_timeout is the same setting.
    let alias = run_model(&cluster, &w, &[("socket_timeout", "0.2")]);
    assert_eq!(alias.failed, r.failed);
    // At 100 commands a second no connection idles that long.
    let busy = run_model(
        &cluster,
        &workload_of(10, 100, "zadd"),
        &[("socketTimeout", "200")],
    );
    assert_eq!(busy.failed, 0);
    assert!(!busy.wedged);
    // With a reconnect strategy that does reconnect, each idle close costs a new connection.
    let fixed = run_model(
        &cluster,
        &w,
        &[("socketTimeout", "200"), ("reconnectStrategy", "50")],
    );
    assert_eq!(fixed.failed, 0);
    assert!(fixed.new_connections > r.new_connections + 10);
    assert!(!fixed.wedged);
    // Without socketTimeout no connection is closed.
    assert_eq!(run_model(&cluster, &w, &[]).failed, 0);
}

#[test]
fn a_refusing_node_s_commands_wait_in_its_queue_and_time_out_after_5_s() {
    // B refuses from 10 s to 20 s: B's client saw its socket close and reconnects in the
    // background, and B's commands, the first one after the close too, wait in its queue until
    // the 5000 ms command timeout (TimeoutError); the one lane is held meanwhile. None was
    // awaiting a reply at the close, so none gets the socket's error (as live: no node-redis
    // application reported Node's `Error` after a kill). After 5 s of reconnection attempts the
    // tracker rediscovers without B (the table is unchanged).
    let cluster = incident2_with_fault(B, 10, 20, FaultKind::ConnectionError);
    let w = workload_of(30, 100, "zadd");
    let r = run_model(&cluster, &w, &[]);
    assert_eq!(r.errors.get("Error"), None, "{:?}", r.errors);
    assert!(r.errors["TimeoutError"] >= 1, "{:?}", r.errors);
    assert_eq!(r.failures[&Failure::Timeout], r.errors["TimeoutError"]);
    assert!(r.skipped_while_waiting > 0);
    // The waits are the command timeout's: two or three 5 s waits in the outage.
    assert!(
        (1..=3).contains(&r.errors["TimeoutError"]),
        "{:?}",
        r.errors
    );
    assert!(r.cluster_slots_calls >= 2, "{}", r.cluster_slots_calls);
    // B reconnects once it takes connections again; nothing fails after.
    assert_eq!(r.timeline[22].errors, 0);
    assert!(r.timeline[22].ok > 50);
    assert!(!r.wedged);
    // A shorter command timeout frees the lane sooner.
    let short = run_model(&cluster, &w, &[("commandOptions.timeout", "500")]);
    assert!(short.errors["TimeoutError"] > 3 * r.errors["TimeoutError"]);
    assert!(short.succeeded > r.succeeded);
    // Without the tracker's refresh only connect() discovers.
    let quiet = run_model(
        &cluster,
        &w,
        &[("topologyRefreshOnReconnectionAttemptStrategy", "0")],
    );
    assert_eq!(quiet.cluster_slots_calls, 1);
}

#[test]
fn a_rediscovery_that_drops_a_reconnecting_node_rejects_its_queue() {
    // B refuses from 10 s on; at 12 s its slots pass to C. B's client reconnects and its
    // commands queue; 5 s of attempts later the tracker rediscovers without B, the answer
    // names A and C, and B's client is destroyed: every command queued on it fails with
    // DisconnectsClientError, and B's slots are served by C from then on.
    let c = "10.0.0.3:6379";
    let mut builder = incident2_builder();
    builder.layout(
        at(12),
        &[(range(0, 8191), addr(A)), (range(8192, 16383), addr(c))],
        &[],
    );
    builder.fault(FaultWindow {
        node: addr(B),
        span: TimeSpan::new(at(10), at(30)),
        kind: FaultKind::ConnectionError,
    });
    let cluster = builder.build();
    let w = workload_of(30, 100, "zadd").with_in_flight(64);
    let r = run_model(&cluster, &w, &[]);
    assert!(r.errors["DisconnectsClientError"] >= 2, "{:?}", r.errors);
    assert_eq!(
        r.failures[&Failure::Connection],
        r.errors["DisconnectsClientError"]
    );
    assert!(r.nodes[c].ok > 500);
    assert_eq!(r.timeline[20].errors, 0);
    assert!(!r.wedged);
}

#[test]
fn a_silent_node_with_socket_timeout_gives_socket_timeout_then_client_closed_for_good() {
    // Incident 1: A (the only node) is silent from 10 s to 12 s. With socketTimeout the command
    // waiting on it fails with SocketTimeoutError and A's client is closed for good: every later
    // command raises ClientClosedError, also once A answers again. Wedged.
    let (cluster, w) = (
        incident1_with(FaultKind::Timeout),
        workload_of(30, 100, "zadd"),
    );
    let r = run_model(&cluster, &w, &[("socketTimeout", "500")]);
    assert!(r.errors["SocketTimeoutError"] >= 1, "{:?}", r.errors);
    assert!(r.errors["ClientClosedError"] > 1000, "{:?}", r.errors);
    assert_eq!(r.timeline[14].ok, 0);
    assert!(r.wedged);
    // Without socketTimeout node-redis waits; the instant replay counts the command unanswered.
    let waits = run_model(&cluster, &w, &[]);
    assert!(waits.errors["no reply (node-redis waits without socketTimeout)"] > 0);
    assert!(waits.timeline[14].ok > 50);
    assert!(!waits.wedged);
}

#[test]
fn on_the_timed_clock_writes_to_a_silent_node_keep_its_connection_open() {
    // B is silent from 10 s to 12 s. Node's idle timer counts writes: while the application
    // keeps writing commands to B, its connection stays open and they wait for B's answer. With
    // 1000 commands in flight allowed they never stop (50 a second go to B): nothing fails.
    let cluster = incident2_with_fault(B, 10, 12, FaultKind::Timeout);
    let w = workload_of(20, 100, "zadd");
    let set = [("socketTimeout", "500")];
    let roomy = run_model(&cluster, &w.clone().with_in_flight(1000), &set);
    assert_eq!(roomy.failed, 0, "{:?}", roomy.errors);
    assert!(!roomy.wedged);
    // With 64, every place waits on B by about 11.3 s; nothing is written for 500 ms, B's
    // connection is destroyed, and A's, idle as long, too: closed for good, wedged.
    let tight = run_model(&cluster, &w.with_in_flight(64), &set);
    assert!(
        tight.errors["ClientClosedError"] > 500,
        "{:?}",
        tight.errors
    );
    assert_eq!(tight.timeline[14].ok, 0);
    assert!(tight.wedged);
}

#[test]
fn ask_follows_a_known_node_at_once_and_fails_for_an_unknown_one() {
    // A owns 0-16382, B 16383; from 10 s to 12 s A migrates 8192-16382 to B, then B owns them.
    // The ASKs name B, which the client knows: ASKING and the command on B, no rediscovery.
    let (a, b) = (addr(A), addr(B));
    let mut builder = b_owns_one_slot();
    let migrating: Vec<_> = range(8192, 16382)
        .slots()
        .map(|s| (s, a.clone(), b.clone()))
        .collect();
    builder.layout(
        at(10),
        &[
            (range(0, 16382), a.clone()),
            (range(16383, 16383), b.clone()),
        ],
        &migrating,
    );
    builder.layout(
        at(12),
        &[(range(0, 8191), a.clone()), (range(8192, 16383), b.clone())],
        &[],
    );
    let known = builder.build();
    let w = workload_of(20, 100, "zadd");
    let r = run_model(&known, &w, &[]);
    assert_eq!(r.failed, 0);
    assert!(r.ask > 10, "{} ASK", r.ask);
    // connect()'s discovery and the one the first MOVED after 12 s starts; none for ASK.
    assert_eq!(r.cluster_slots_calls, 2);
    // Incident 1: B appears at 20 s with no slot while A migrates half to it. CLUSTER SLOTS does
    // not name a node without slots, so an ASK to B rediscovers and still finds no B: `Error`
    // (`Cannot find node`).
    let r = run_model(
        &incident1_with(FaultKind::Timeout),
        &workload_of(30, 100, "zadd"),
        &[],
    );
    assert!(r.ask > 0);
    let cannot = r
        .failures
        .get(&Failure::NoTopology)
        .copied()
        .unwrap_or_default();
    assert!(cannot > 0, "{:?}", r.failures);
    assert!(r.cluster_slots_calls > 1 + cannot / 2);
}

#[test]
fn options_are_checked_by_their_node_redis_names_and_6_3_x_is_covered() {
    let mut o = ModelOptions::new(addr(A));
    o.set("maxCommandRedirections", "8").unwrap();
    o.set("commandOptions.timeout", "1000").unwrap();
    o.set("socketTimeout", "500").unwrap();
    o.set("connectTimeout", "500").unwrap();
    o.set("reconnectStrategy", "false").unwrap();
    o.set("topologyRefreshOnReconnectionAttemptStrategy", "false")
        .unwrap();
    o.set("minimizeConnections", "true").unwrap();
    o.set("rediscover_cpu_ms", "0.75").unwrap();
    assert!(model(MODEL, o.clone()).is_ok());
    o.set("socket_timeout", "0.5").unwrap();
    assert!(model(MODEL, o).is_err(), "the same setting twice");
    let mut o = ModelOptions::new(addr(A));
    o.set("useReplicas", "true").unwrap();
    let e = model(MODEL, o).err().unwrap().to_string();
    assert!(e.contains("only masters"), "{e}");
    let mut o = ModelOptions::new(addr(A));
    o.set("nodeAddressMap", A).unwrap();
    o.set("address_remap", A).unwrap();
    assert!(model(MODEL, o).is_err(), "the same setting twice");
    let mut o = ModelOptions::new(addr(A));
    assert!(o.set("nodeAddressMap", "not an address").is_err());
    o.set("reconnectStrategy", "sometimes").unwrap();
    assert!(model(MODEL, o).is_err());
    let mut o = ModelOptions::new(addr(A));
    o.set("rediscover_cpu_ms", "-1").unwrap();
    assert!(model(MODEL, o).is_err(), "a negative cost");
    let mut o = ModelOptions::new(addr(A));
    o.set("maxRedirections", "3").unwrap();
    assert!(model(MODEL, o).is_err(), "an ioredis option");
    assert!(model("node-redis@6.3.0", ModelOptions::new(addr(A))).is_ok());
    assert!(model("node-redis@6.4.0", ModelOptions::new(addr(A))).is_ok());
    let e = model("node-redis@6.2.0", ModelOptions::new(addr(A)))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("node-redis 6.3.0–6.4.0"), "{e}");
}

#[test]
fn minimize_connections_connects_a_node_on_its_first_command() {
    // Eager by default: every master's client connects at discovery. With minimizeConnections a
    // node without commands is never connected.
    let cluster = reshard();
    let w = workload_of(10, 100, "zadd");
    let eager = run_model(&cluster, &w, &[]);
    let lazy = run_model(&cluster, &w, &[("minimizeConnections", "true")]);
    assert_eq!(eager.failed + lazy.failed, 0);
    assert_eq!(eager.new_connections, 1 + 2);
    // B owns one slot of 16384: a node's client connects only if a command went there.
    let served = |n: &str| u64::from(lazy.nodes.get(n).map_or(0, |s| s.ok) > 0);
    assert_eq!(lazy.new_connections, 1 + served(A) + served(B));
    assert_eq!(served(B), 0, "no key of the workload is in slot 16383");
}

/// Replays `w` on `cluster` through MODEL with the options `set`.
fn run_model(cluster: &SimCluster, w: &Workload, set: &[(&str, &str)]) -> ReplayReport {
    run(cluster, w, MODEL, set)
}
