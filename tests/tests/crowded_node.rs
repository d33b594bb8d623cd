//! A node with many connections (issue 14, point 4): `slotscope record` asks it for `CLIENT LIST`
//! less often (every `ceil(n / 500)` rounds), writes its lists as changes (`client_list_delta`),
//! and the reader still gives every list whole, with every connection's first and last
//! sighting. Real servers (Redis 7.0.15 and Valkey 8.1.8) on 127.0.0.1; the connections are
//! plain TCP connections the test opens and closes.

use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpStream;
use std::thread::sleep;
use std::time::{Duration, Instant};

use slotscope_core::recording::Line;
use slotscope_core::Timestamp;
use slotscope_tests::{Cluster, ClusterOptions, Recorder, Recording, ServerKind};
use tempfile::TempDir;

/// Connections held open on the crowded node all along.
const HELD: usize = 1200;
/// Connections opened (and others closed) while the recording runs.
const CHURN: usize = 100;

/// Opens `n` connections to `addr`, each sending one `PING` so that the server lists it with
/// a command (bounded: `n` connects, each within 2 s).
fn open(addr: &str, n: usize) -> Vec<TcpStream> {
    use std::io::{Read, Write};
    (0..n)
        .map(|_| {
            let mut s = TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(2))
                .expect("connect");
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            s.write_all(b"PING\r\n").unwrap();
            let mut buf = [0u8; 7];
            s.read_exact(&mut buf).unwrap();
            assert_eq!(&buf, b"+PONG\r\n");
            s
        })
        .collect()
}

/// The peer addresses of `conns` as the server lists them (`addr=`).
fn peers(conns: &[TcpStream]) -> BTreeSet<String> {
    conns
        .iter()
        .map(|s| s.local_addr().unwrap().to_string())
        .collect()
}

fn crowded_node_is_recorded_in_changes(kind: ServerKind) {
    let cluster = Cluster::start(kind, 3, ClusterOptions::default());
    let crowded = cluster.addr(1).to_string();
    let held = open(&crowded, HELD);
    let mut leaving = open(&crowded, CHURN);
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("crowded.jsonl");
    let seed = cluster.seed().to_string();
    let rec = Recorder::start(
        &out,
        &["--seed", &seed, "--interval", "250ms", "--duration", "6s"],
        &[],
    );
    // Mid-recording: CHURN connections close and CHURN new ones open.
    sleep(Duration::from_millis(2500));
    let left = peers(&leaving);
    let closed_at = Instant::now();
    leaving.clear();
    let joined = open(&crowded, CHURN);
    let came = peers(&joined);
    let o = rec.wait(Duration::from_secs(30));
    assert!(
        o.status.success(),
        "record failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        closed_at.elapsed() > Duration::from_secs(1),
        "closed mid-run"
    );

    // The file: the crowded node's lists after its first are written as changes.
    let raw = std::fs::read_to_string(&out).unwrap();
    let lines_of = |kind: &str, node: &str| {
        raw.lines()
            .filter(|l| l.contains(&format!("\"type\":\"{kind}\"")))
            .filter(|l| l.contains(&format!("\"addr\":\"{node}\"")))
            .map(str::len)
            .collect::<Vec<_>>()
    };
    let whole = lines_of("client_list", &crowded);
    let deltas = lines_of("client_list_delta", &crowded);
    assert_eq!(whole.len(), 1, "one whole list of the crowded node");
    assert!(!deltas.is_empty(), "later lists are changes");
    let delta_bytes: usize = deltas.iter().sum();
    assert!(
        delta_bytes < whole[0],
        "all the changes ({delta_bytes} bytes over {} lists) cost less than one whole list ({} bytes)",
        deltas.len(),
        whole[0]
    );

    // Read back: whole lists, taken every ceil(n / 500) = 3 rounds on the crowded node and every
    // round on the others.
    let r = Recording::read(&out);
    let rounds = r
        .lines
        .iter()
        .filter(|l| matches!(l, Line::PollRound(_)))
        .count();
    let mut lists: BTreeMap<String, Vec<(Timestamp, BTreeSet<String>)>> = BTreeMap::new();
    for l in &r.lines {
        if let Line::ClientList(s) = l {
            lists.entry(s.node.addr.to_string()).or_default().push((
                s.t,
                s.clients
                    .iter()
                    .filter_map(|c| c.addr().map(str::to_owned))
                    .collect(),
            ));
        }
    }
    let on_crowded = &lists[&crowded];
    let expected = rounds.div_ceil(3);
    assert!(
        on_crowded.len().abs_diff(expected) <= 1,
        "{} lists of the crowded node in {rounds} rounds (every third: {expected})",
        on_crowded.len()
    );
    let other = cluster.addr(0).to_string();
    assert!(
        lists[&other].len() + 1 >= rounds,
        "{} lists of a quiet node in {rounds} rounds",
        lists[&other].len()
    );
    for (t, seen) in on_crowded {
        assert!(
            seen.len() >= HELD,
            "a whole list at {t:?}: {} connections",
            seen.len()
        );
    }
    // Every connection held all along is in every list; the ones that left are in the first
    // and in none of the last; the ones that came are in the last and not in the first.
    let (first, last) = (&on_crowded[0].1, &on_crowded[on_crowded.len() - 1].1);
    let held_peers = peers(&held);
    assert!(on_crowded.iter().all(|(_, s)| held_peers.is_subset(s)));
    assert!(left.is_subset(first) && left.is_disjoint(last));
    assert!(came.is_subset(last) && came.is_disjoint(first));
    drop(joined);
    drop(held);
}

#[test]
fn a_crowded_redis_node_is_recorded_in_changes() {
    crowded_node_is_recorded_in_changes(ServerKind::Redis);
}

#[test]
fn a_crowded_valkey_node_is_recorded_in_changes() {
    crowded_node_is_recorded_in_changes(ServerKind::Valkey);
}
