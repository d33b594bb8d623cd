//! Replay of synthetic incidents through the client models.

use slotscope_core::float;
use slotscope_core::redirect::Redirect;
use slotscope_core::replay::{
    model, FaultKind, FaultWindow, ModelOptions, Reply, Routed, SimCluster, SimClusterBuilder,
    Workload, WorkloadSpec,
};
use slotscope_core::{Slot, TimeSpan, Timestamp};

mod sim;
use sim::*;

#[test]
fn redis_py_5_wedges_after_one_timeout_and_never_reaches_the_new_node() {
    let (cluster, w) = (incident1(), workload_of(60, 100, "zadd"));
    let r = run(&cluster, &w, "redis-py@5.0.0", &[]);
    assert!(r.wedged);
    assert_eq!(r.startup_nodes, 0);
    assert_eq!(r.wedged_since, Some(at(10)));
    assert_eq!(r.nodes["10.0.0.2:6379"].calls, 0);
    // Every command from the timeout on fails in initialize().
    let after = commands_from(&w, at(10));
    assert_eq!(r.errors["RedisClusterException"], after);
    assert_eq!(r.failed, after);
    assert!(r.timeline[30].wedged && !r.timeline[9].wedged);
    assert_eq!(r.timeline[30].ok, 0);
}

#[test]
fn redis_py_8_recovers_and_sends_half_to_the_new_node() {
    let (cluster, w) = (incident1(), workload_of(60, 100, "zadd"));
    let r = run(&cluster, &w, "redis-py@8.0.0", &[]);
    assert!(!r.wedged);
    assert_eq!(
        r.startup_nodes, 2,
        "both nodes, discovered by the re-initialisations"
    );
    assert!(r.failed > 0 && r.failed <= commands_from(&w, at(10)) - commands_from(&w, at(12)));
    assert_eq!(r.timeline[30].errors, 0);
    let share =
        float::from_u64(r.nodes["10.0.0.2:6379"].ok) / float::from_u64(commands_from(&w, at(22)));
    assert!((0.4..0.6).contains(&share), "share to the new node {share}");
}

#[test]
fn ideal_client_recovers_and_sends_half_to_the_new_node() {
    let (cluster, w) = (incident1(), workload_of(60, 100, "zadd"));
    let r = run(&cluster, &w, "ideal", &[]);
    assert!(!r.wedged);
    assert_eq!(r.full_reinits, 1, "the ideal client initialises once");
    assert_eq!(r.errors.get("RedisClusterException"), None);
    assert!(r.errors["TimeoutError"] > 0);
    let share =
        float::from_u64(r.nodes["10.0.0.2:6379"].ok) / float::from_u64(commands_from(&w, at(22)));
    assert!((0.4..0.6).contains(&share), "share to the new node {share}");
}

#[test]
fn address_remap_to_one_node_gives_sustained_moved_and_reinit_every_five() {
    let (cluster, w) = (incident2(), workload_of(60, 100, "zrevrange"));
    let r = run(
        &cluster,
        &w,
        "redis-py@8.0.0",
        &[("address_remap", "10.0.0.1:6379")],
    );
    let share = r.moved_share["zrevrange"];
    assert!((0.3..0.5).contains(&share), "MOVED share {share}");
    assert_eq!(r.failed, 0);
    assert!(
        (r.moved / 5).abs_diff(r.full_reinits - 1) <= 1,
        "{} MOVED, {} re-inits",
        r.moved,
        r.full_reinits
    );
    // Sustained: MOVED in every second, and connections churn.
    assert!(r.timeline.iter().all(|s| s.moved > 0));
    assert!(r.new_connections > 100);
    // The client's table collapsed onto the one address (MOVED patches aside).
    assert!(
        r.timeline.iter().all(|s| s.top_node_slots > 16_000),
        "{:?}",
        r.timeline
            .iter()
            .map(|s| s.top_node_slots)
            .collect::<Vec<_>>()
    );
    assert_eq!(r.held.unmapped_slots, 0);
    assert_eq!(r.held.open_connections, 2);
    let plain = run(&cluster, &w, "redis-py@8.0.0", &[]);
    assert!(plain
        .timeline
        .iter()
        .all(|s| s.top_node_slots == 8192 && s.table_nodes == 2));
}

#[test]
fn without_remap_no_moved_after_the_first_init() {
    let (cluster, w) = (incident2(), workload_of(60, 100, "zrevrange"));
    let r = run(&cluster, &w, "redis-py@8.0.0", &[]);
    assert_eq!(r.moved, 0);
    assert_eq!(r.moved_share["zrevrange"], 0.0);
    assert_eq!(r.full_reinits, 1);
    // The seed's connection that asked CLUSTER SLOTS is marked for reconnect by the
    // initialisation's set_nodes() (7.2+), then one per node for the commands.
    assert_eq!(r.new_connections, 3);
}

#[test]
fn same_seed_gives_identical_reports() {
    let cluster = incident1();
    let a = run(
        &cluster,
        &workload_of(30, 100, "zadd"),
        "redis-py@8.0.0",
        &[],
    );
    let b = run(
        &cluster,
        &workload_of(30, 100, "zadd"),
        "redis-py@8.0.0",
        &[],
    );
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn migration_source_asks_for_about_half_the_keys_and_target_serves_after_asking() {
    let cluster = incident1();
    let (a, b) = (addr("10.0.0.1:6379"), addr("10.0.0.2:6379"));
    let slot = Slot::new(9000).unwrap();
    let asks = (0..1000u32)
        .filter(|&key| {
            matches!(
                cluster.answer(at(21), &a, Routed { slot, key }, false),
                Reply::Redirect(Redirect::Ask { .. })
            )
        })
        .count();
    assert!((400..600).contains(&asks), "{asks} ASK of 1000");
    let cmd = Routed { slot, key: 1 };
    assert_eq!(cluster.answer(at(21), &b, cmd, true), Reply::Ok);
    assert!(matches!(
        cluster.answer(at(21), &b, cmd, false),
        Reply::Redirect(Redirect::Moved { to, .. }) if to == a
    ));
    assert!(matches!(
        cluster.answer(at(25), &a, cmd, false),
        Reply::Redirect(Redirect::Moved { to, .. }) if to == b
    ));
    assert_eq!(cluster.answer(at(11), &a, cmd, false), Reply::Timeout);
}

#[test]
fn unknown_model_and_option_are_refused() {
    let opts = ModelOptions::new(addr("10.0.0.1:6379"));
    assert!(model("jedis@0.1", opts.clone()).is_err());
    let mut o = opts.clone();
    // An unknown name is taken as another library's option and refused by the model.
    o.set("reinitialize_stepz", "5").unwrap();
    let err = model("redis-py@8.0.0", o.clone()).err().unwrap();
    assert!(
        err.to_string().contains("no option `reinitialize_stepz`"),
        "{err}"
    );
    assert!(o.set("reinitialize steps", "5").is_err());
    let mut o = opts.clone();
    assert!(o.set("address_remap", "nohost").is_err());
    o.set("dynamic_startup_nodes", "false").unwrap();
    assert!(model("redis-py@5.0.0", o.clone()).is_err());
    assert!(model("redis-py@8.0.0", o).is_ok());
}

#[test]
fn poisson_arrivals_keep_the_commands_start_and_rate_and_bunch_some() {
    // 100 s at 500/s: the same 50,000 commands (keys, order) from the same start, their gaps
    // exponential with the even schedule's mean (2 ms): many a command falls in the same
    // millisecond as the one before, where the even schedule has none.
    let even = workload_of(100, 500, "zadd");
    let p = even.clone().with_poisson_arrivals(7);
    assert_eq!(p.commands.len(), even.commands.len());
    assert_eq!(p.commands[0].t, even.commands[0].t);
    assert!(p
        .commands
        .iter()
        .zip(&even.commands)
        .all(|(a, b)| a.key == b.key));
    assert!(p.commands.windows(2).all(|w| w[0].t <= w[1].t));
    let span = p.commands.last().unwrap().t.millis_since(at(0));
    assert!((95_000..=105_000).contains(&span), "span {span} ms");
    let same_ms = |w: &Workload| w.commands.windows(2).filter(|c| c[0].t == c[1].t).count();
    assert_eq!(same_ms(&even), 0);
    assert!(same_ms(&p) > 5_000, "{}", same_ms(&p));
    assert_eq!(p, even.clone().with_poisson_arrivals(7), "seeded");
    assert_ne!(p.commands, even.with_poisson_arrivals(8).commands);
}

#[test]
fn workload_is_seeded_and_evenly_spaced() {
    let w = workload_of(10, 100, "zadd");
    assert_eq!(w.commands.len(), 1000);
    assert_eq!(w.commands[100].t, at(1));
    assert_eq!(w.key_name(7), "device_imp:{7}");
    assert_eq!(w.key_slots[7], Slot::for_key(b"7"));
    assert_eq!(w, workload_of(10, 100, "zadd"));
    let other = Workload::generate(&WorkloadSpec {
        seed: 43,
        ..WorkloadSpec {
            start: at(0),
            duration_ms: 10_000,
            rate_per_sec: 100,
            keys: 10_000,
            key_prefix: "device_imp".into(),
            command: "zadd".into(),
            seed: 0,
        }
    })
    .unwrap();
    assert_ne!(w.commands, other.commands);
}

/// The real incident 1 recording (Valkey, one node SIGSTOPped for 2 s, then a scale-out).
fn fixture_cluster() -> SimCluster {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/incident1-redis-py-5.0.0-valkey.jsonl.zst"
    );
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut reader = slotscope_core::reader::RecordingReader::detect(file).unwrap();
    let mut builder = SimClusterBuilder::for_recording(&reader.header().unwrap().clone());
    for item in reader.by_ref() {
        builder.push(&item.unwrap().1);
    }
    builder.build()
}

#[test]
fn recording_folds_into_two_nodes_a_timeout_window_and_a_half_moved_slot_range() {
    let cluster = fixture_cluster();
    let (a, b) = (addr("127.0.0.1:22804"), addr("127.0.0.1:22807"));
    assert_eq!(cluster.nodes(), [a.clone(), b.clone()]);
    // Four poll timeouts 0.5 s apart (each [t - 400 ms, t]) merge into one window, which began
    // between the node's last answer (an INFO sample at ...864_546) and the sending of the
    // first poll that timed out (...865_459 - 400), and ended between the last timeout
    // (...866_947) and the sending of the next INFO, answered at ...867_047 in 1.3 ms (no slower
    // than the node's healthy answers: it was back before it was asked): in the middle of each,
    // or at any of 15 places of them.
    let faults = cluster.faults();
    assert_eq!(faults.len(), 1);
    assert_eq!(faults[0].node, a);
    assert_eq!(faults[0].kind, FaultKind::Timeout);
    let (from, to) = (1_795_992_864_546, 1_795_992_865_459 - 400);
    let (end_from, end_to) = (1_795_992_866_947, 1_795_992_867_047 - 1);
    assert_eq!(faults[0].span.start, Timestamp((from + to) / 2));
    assert_eq!(faults[0].span.end, Timestamp((end_from + end_to) / 2));
    assert!(cluster.has_uncertain_moments());
    let first = cluster.at_moment(0, 15).faults()[0].span;
    let last_place = cluster.at_moment(14, 15).faults()[0].span;
    assert_eq!(first.start, Timestamp(from + (to - from) / 30));
    assert_eq!(last_place.start, Timestamp(from + (to - from) * 29 / 30));
    assert_eq!(first.end, Timestamp(end_from + (end_to - end_from) / 30));
    assert_eq!(
        last_place.end,
        Timestamp(end_from + (end_to - end_from) * 29 / 30)
    );
    // A hypothesis's added failure keeps the recorded one's uncertain start; replacing every
    // window (an explicit hypothesis) leaves none.
    let added = FaultWindow {
        node: b.clone(),
        span: TimeSpan::new(Timestamp(to), Timestamp(to + 1_000)),
        kind: FaultKind::ConnectionError,
    };
    let with = cluster.with_fault_added(&added);
    assert_eq!(with.faults().len(), 2);
    assert!(with.faults().contains(&added));
    assert_eq!(with.at_moment(0, 15).faults()[0].span, first);
    assert!(!cluster.with_faults(&faults).has_uncertain_moments());
    let span = cluster.span().unwrap();
    let last = Slot::new(16383).unwrap();
    assert_eq!(cluster.owner(span.start, last), Some(&a));
    assert_eq!(cluster.owner(span.end, last), Some(&b));
    assert_eq!(cluster.owner(span.end, Slot::new(8191).unwrap()), Some(&a));
    assert!(cluster.epochs() > 10, "the migration is seen step by step");
}

#[test]
fn a_socket_timeout_makes_the_client_wait_out_a_silent_node() {
    let (cluster, w) = (incident1(), workload_of(60, 100, "zadd"));
    let open_loop = run(&cluster, &w, "redis-py@8.0.0", &[]);
    let waiting = run(&cluster, &w, "redis-py@8.0.0", &[("socket_timeout", "0.5")]);
    assert!(!waiting.wedged);
    // The 2 s stall: open loop, every scheduled command fails; waiting 0.5 s per timeout, only a
    // handful are issued and the rest of the stall's commands are never sent.
    assert!(open_loop.failed >= 150, "{}", open_loop.failed);
    assert!(waiting.failed <= 8, "{}", waiting.failed);
    assert!(waiting.skipped_while_waiting >= 150);
    assert_eq!(open_loop.skipped_while_waiting, 0);
    assert!(waiting.cluster_slots_calls < open_loop.cluster_slots_calls);
    let mut opts = ModelOptions::new(addr("10.0.0.1:6379"));
    assert!(opts.set("socket_timeout", "-1").is_err());
    assert!(opts.set("socket_timeout", "abc").is_err());
    assert!(opts.set("socket_timeout", "None").is_ok());
}

#[test]
fn concurrency_lets_other_commands_through_while_one_waits_out_a_timeout() {
    let cluster = incident1();
    let w = workload_of(60, 100, "zadd");
    let set = [("socket_timeout", "0.5")];
    let lanes = |n: u32| {
        run(
            &cluster,
            &w.clone().with_concurrency(n),
            "redis-py@8.0.0",
            &set,
        )
    };
    let (one, four, many) = (lanes(1), lanes(4), lanes(100));
    assert_eq!((one.concurrency, four.concurrency), (1, 4));
    // More lanes: fewer commands of the 2 s stall skipped. Even 100 lanes all end up waiting
    // (on the silent node, then on the initialisation that holds the lock until the node is
    // back), so about half the stall's 200 commands are still skipped.
    assert!(one.skipped_while_waiting > four.skipped_while_waiting);
    assert!(four.skipped_while_waiting > many.skipped_while_waiting);
    assert!(
        (80..=120).contains(&many.skipped_while_waiting),
        "{}",
        many.skipped_while_waiting
    );
    // `_initialize_lock`: tasks that need a re-initialisation while one runs wait for it, so
    // CLUSTER SLOTS calls hardly grow with the lanes ...
    assert!(
        many.cluster_slots_calls <= one.cluster_slots_calls + 2,
        "{} vs {}",
        many.cluster_slots_calls,
        one.cluster_slots_calls
    );
    // ... while connections do: each waiting task holds one of its own, and a pool grows to the
    // tasks that go out together, each reconnecting after the node's connections were dropped.
    assert!(one.new_connections < four.new_connections);
    assert!(four.new_connections < many.new_connections);
    // Without waiting, lanes change only the pool sizes.
    let plain = run(&cluster, &w, "redis-py@8.0.0", &[]);
    let plain4 = run(
        &cluster,
        &w.clone().with_concurrency(4),
        "redis-py@8.0.0",
        &[],
    );
    assert_eq!(plain.failed, plain4.failed);
    assert_eq!(plain.cluster_slots_calls, plain4.cluster_slots_calls);
    // The shared client recovers either way.
    assert!(!four.wedged && !many.wedged);
}

#[test]
fn a_mix_names_commands_in_proportion_and_is_seeded() {
    let mix = vec![("zrevrange".to_owned(), 3), ("GET".to_owned(), 1)];
    let w = workload_of(100, 100, "zadd").with_mix(&mix, 7);
    assert_eq!(w.names, ["zrevrange", "get"]);
    let gets = w.commands.iter().filter(|c| c.name == 1).count();
    let share = float::from_u64(u64::try_from(gets).unwrap()) / float::from_u64(10_000);
    assert!((0.23..0.27).contains(&share), "{share}");
    assert_eq!(w, workload_of(100, 100, "zadd").with_mix(&mix, 7));
    assert_ne!(w, workload_of(100, 100, "zadd").with_mix(&mix, 8));
    // Nothing to draw from: unchanged.
    assert_eq!(
        workload_of(1, 100, "zadd").with_mix(&[], 7),
        workload_of(1, 100, "zadd")
    );
    let r = run(&incident2(), &w, "ideal", &[]);
    assert_eq!(
        r.per_command["get"].issued + r.per_command["zrevrange"].issued,
        10_000
    );
}
