//! `slotscope record` with its default `--topology-every` on real 3-master clusters (Redis 7.0.15
//! and Valkey 8.1.8 on 127.0.0.1): slots moved mid-recording are all in the recording, while the
//! nodes are asked `CLUSTER SHARDS` far less often than once per round.

use std::collections::BTreeSet;
use std::thread::sleep;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use slotscope_core::recording::Line;
use slotscope_core::summary::SummaryBuilder;
use slotscope_core::{NodeAddr, Slot, SlotRange, Timestamp};
use slotscope_tests::{Cluster, ClusterOptions, Recorder, Recording, ServerKind};
use tempfile::TempDir;

fn now() -> Timestamp {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    Timestamp(u64::try_from(ms).unwrap())
}

fn range(first: u16, last: u16) -> SlotRange {
    SlotRange::new(Slot::new(first).unwrap(), Slot::new(last).unwrap()).unwrap()
}

/// `cmdstat_cluster|shards` calls in the node's first and last INFO sample of the recording.
fn shards_calls(rec: &Recording, addr: &NodeAddr) -> (u64, u64) {
    let calls: Vec<u64> = rec
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::Info(i) if &i.node.addr == addr => Some(
                i.info
                    .commandstats
                    .get("cluster|shards")
                    .map_or(0, |c| c.calls),
            ),
            _ => None,
        })
        .collect();
    (calls[0], calls[calls.len() - 1])
}

fn moves_are_all_recorded_with_few_topology_calls(kind: ServerKind) {
    let cluster = Cluster::start(kind, 3, ClusterOptions::default());
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("moves.jsonl.zst");
    let seed = cluster.seed().to_string();
    // The default --topology-every (10 polls).
    let rec = Recorder::start(&out, &["--seed", &seed, "--interval", "300ms"], &[]);
    sleep(Duration::from_millis(2000));
    let made = [
        (range(100, 199), 0, 1),
        (range(5600, 5699), 1, 2),
        (range(11000, 11099), 2, 0),
    ];
    // When each move was complete on every master (the harness sends SETSLOT … NODE to all),
    // and the span from its start to the cluster's agreement on it (epochs included).
    let mut done = Vec::new();
    let mut busy = Vec::new();
    for &(slots, from, to) in &made {
        let started = now();
        cluster.migrate_slots(slots, from, to);
        done.push(now());
        cluster.wait_converged();
        busy.push((started, now()));
        sleep(Duration::from_millis(2000));
    }
    sleep(Duration::from_millis(1000));
    rec.terminate();
    let o = rec.wait(Duration::from_secs(20));
    assert!(
        o.status.success(),
        "record failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );

    let r = Recording::read(&out);
    assert_eq!(r.header.options.topology_every, Some(10));
    let mut b = SummaryBuilder::new(r.header.clone());
    for l in &r.lines {
        b.push(l);
    }
    let s = b.finish();
    let recorded: BTreeSet<(String, String, Vec<SlotRange>)> = s
        .slot_moves
        .iter()
        .filter(|m| m.is_change())
        .map(|m| {
            let id = |i: &Option<slotscope_core::NodeId>| {
                i.as_ref()
                    .map(|i| i.as_str().to_owned())
                    .unwrap_or_default()
            };
            (id(&m.from), id(&m.to), m.ranges.clone())
        })
        .collect();
    let expected: BTreeSet<(String, String, Vec<SlotRange>)> = made
        .iter()
        .map(|&(slots, from, to)| {
            (
                cluster.node_id(from).to_owned(),
                cluster.node_id(to).to_owned(),
                vec![slots],
            )
        })
        .collect();
    assert_eq!(recorded, expected, "{:?}", s.slot_moves);
    // Seen at the next polls (the SETSLOT calls and epochs changed), not at the safety net's
    // 10th poll (3 s).
    for (&(slots, _, _), &t) in made.iter().zip(&done) {
        let m = s
            .slot_moves
            .iter()
            .find(|m| m.ranges == [slots])
            .expect("the move");
        println!("{slots:?} done at {t:?}, recorded {:?}", m.span);
        assert!(
            m.span.end.millis_since(t) <= 1200,
            "{slots:?} done at {t:?}, recorded until {:?}",
            m.span
        );
    }

    let starts: Vec<Timestamp> = r
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::PollRound(p) => Some(p.t),
            _ => None,
        })
        .collect();
    let rounds = starts.len() as u64;
    assert!(rounds >= 25, "{rounds} rounds");
    // Rounds that began from an interval before a move's start to two intervals after the
    // cluster's agreement on it: the changes (SETSLOT calls, epochs) a node may show there. How
    // many there are depends on the machine's pace; outside them only the safety net asks.
    let moving = starts
        .iter()
        .filter(|t| {
            busy.iter()
                .any(|&(a, b)| t.0 + 300 >= a.0 && t.0 <= b.0 + 600)
        })
        .count() as u64;
    for i in 0..3 {
        let (first, last) = shards_calls(&r, &cluster.addr(i));
        let asked = last - first;
        println!(
            "{kind} node {i}: CLUSTER SHARDS {asked} times in {rounds} rounds, {moving} of them \
             during the moves"
        );
        // Every 10th poll, and in rounds during the moves.
        assert!(
            asked <= rounds / 10 + 1 + moving,
            "node {i}: CLUSTER SHARDS {asked} times in {rounds} rounds, {moving} during the moves"
        );
        assert!(
            asked * 2 <= rounds,
            "node {i}: CLUSTER SHARDS {asked} times in {rounds} rounds"
        );
        assert!(
            asked + 1 >= rounds / 10,
            "node {i}: the safety net asks every 10 polls: {asked} times in {rounds} rounds"
        );
    }
}

#[test]
fn redis_moves_are_all_recorded_with_few_topology_calls() {
    moves_are_all_recorded_with_few_topology_calls(ServerKind::Redis);
}

#[test]
fn valkey_moves_are_all_recorded_with_few_topology_calls() {
    moves_are_all_recorded_with_few_topology_calls(ServerKind::Valkey);
}
