//! What `slotscope record` costs on a node with thousands of connections (issue 14, point 4).
//!
//! Starts a real 3-master Redis 7.0.15 cluster (or Valkey) on 127.0.0.1, opens 5,000 plain TCP
//! connections to one node (each sends one `PING`, so the server lists it), and keeps a slow
//! churn going (10 of them closed and 10 opened every second, bounded by the run's length). Then
//! runs `slotscope record --interval 1s` (release build, zstd file) for two minutes and stops it
//! with SIGTERM. It prints, for the crowded node and the quiet ones:
//!
//! - how often `CLIENT LIST` was taken (polls per list) and what one costs the server (`usec` of
//!   `cmdstat_client|list` per call), and the server time per poll of everything else;
//! - the file: bytes per node-hour, and the bytes of its client list lines (whole and as
//!   changes) against one whole list;
//! - the collector's peak RSS and CPU.
//!
//! Targets: ≤ 2 MB per node-hour, < 1 ms server time per node per poll excluding `CLIENT LIST`,
//! and no megabyte of `CLIENT LIST` every second (MB = 10^6 bytes).
//!
//! Run with `cargo bench -p slotscope-tests --bench crowded` (not part of `cargo test`; exits at
//! once without the `--bench` flag). Settings: `SLOTSCOPE_BENCH_SECS` (default 120),
//! `SLOTSCOPE_BENCH_SERVER` (`redis`, `valkey` or `both`; default `redis`),
//! `SLOTSCOPE_BENCH_CONNS` (default 5000), `SLOTSCOPE_BIN` (the binary to run).

#[path = "../collector/proc_figures.rs"]
mod proc_figures;
#[path = "../collector/recorder.rs"]
mod recorder;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use slotscope_core::recording::Line;
use slotscope_core::NodeAddr;
use slotscope_tests::{Cluster, ClusterOptions, Recording, ServerKind};

use crate::proc_figures::{clock_ticks, cpu_model, cpu_percent};
use crate::recorder::{slotscope_release_bin, Collector};

/// Commands of the collector whose server time counts, `client|list` apart.
const POLL_COMMANDS: [&str; 5] = [
    "cluster|shards",
    "cluster|slots",
    "cluster|nodes",
    "cluster|info",
    "info",
];

/// A count as `f64` (exact below 2^53).
#[allow(clippy::cast_precision_loss)]
pub fn to_f64(n: u64) -> f64 {
    n as f64
}

/// Opens a connection to `addr` that has sent one `PING` (2 s limits).
fn connect(addr: &str) -> TcpStream {
    let mut s = TcpStream::connect_timeout(&addr.parse().expect("addr"), Duration::from_secs(2))
        .expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    s.write_all(b"PING\r\n").expect("ping");
    let mut buf = [0u8; 7];
    s.read_exact(&mut buf).expect("pong");
    s
}

/// Per node: (`client|list` calls, its usec, usec of the other poll commands, polls) between the
/// node's first and last INFO sample.
fn server_costs(rec: &Recording) -> BTreeMap<NodeAddr, (u64, u64, u64, u64)> {
    let mut first: BTreeMap<NodeAddr, &slotscope_core::info::InfoReport> = BTreeMap::new();
    let mut last = BTreeMap::new();
    for l in &rec.lines {
        if let Line::Info(s) = l {
            first.entry(s.node.addr.clone()).or_insert(&s.info);
            last.insert(s.node.addr.clone(), &s.info);
        }
    }
    first
        .iter()
        .map(|(addr, a)| {
            let b = last[addr];
            let grew = |cmd: &str| {
                let (x, y) = (a.commandstats.get(cmd), b.commandstats.get(cmd));
                (
                    y.map_or(0, |s| s.calls) - x.map_or(0, |s| s.calls),
                    y.map_or(0, |s| s.usec) - x.map_or(0, |s| s.usec),
                )
            };
            let (list_calls, list_usec) = grew("client|list");
            let others: u64 = POLL_COMMANDS.iter().map(|c| grew(c).1).sum();
            let polls = grew("info").0;
            (addr.clone(), (list_calls, list_usec, others, polls))
        })
        .collect()
}

fn run(kind: ServerKind, secs: u64, conns: usize) {
    let cluster = Cluster::start(kind, 3, ClusterOptions::default());
    let crowded = cluster.addr(1);
    let addr = crowded.to_string();
    let opened = Instant::now();
    let mut held: Vec<TcpStream> = (0..conns).map(|_| connect(&addr)).collect();
    println!(
        "{kind:?}: {conns} connections to {crowded} opened in {:.1} s",
        opened.elapsed().as_secs_f64()
    );
    let stop = Arc::new(AtomicBool::new(false));
    let churn = {
        let stop = Arc::clone(&stop);
        let addr = addr.clone();
        let mut pool: Vec<TcpStream> = held.drain(..100).collect();
        thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(secs + 30);
            let mut k = 0usize;
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                for _ in 0..10 {
                    pool.remove(k % pool.len());
                    pool.push(connect(&addr));
                    k += 7;
                }
                thread::sleep(Duration::from_secs(1));
            }
        })
    };
    let dir = tempfile::TempDir::new().expect("tempdir");
    let out = dir.path().join("crowded.jsonl.zst");
    let bin = slotscope_release_bin();
    let mut c = Collector::start(&bin, &cluster.seed(), &out);
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        thread::sleep(Duration::from_millis(500));
        c.check_running();
    }
    let proc = c.proc_figures();
    let rss_now = c.rss_kib();
    c.terminate();
    c.wait(Duration::from_secs(30));
    stop.store(true, Ordering::Relaxed);
    churn.join().expect("churn thread");
    drop(held);

    let rec = Recording::read(&out);
    let bytes = std::fs::metadata(&out).expect("file").len();
    let hours = secs as f64 / 3600.0;
    let nodes = cluster.len();
    let plain = {
        let raw = zstd::decode_all(std::fs::File::open(&out).expect("open")).expect("zstd");
        String::from_utf8(raw).expect("utf-8")
    };
    let (mut whole, mut deltas, mut whole_lines, mut delta_lines) = (0usize, 0usize, 0, 0);
    for l in plain
        .lines()
        .filter(|l| l.contains(&format!("\"addr\":\"{crowded}\"")))
    {
        if l.starts_with("{\"type\":\"client_list\"") {
            whole += l.len();
            whole_lines += 1;
        } else if l.starts_with("{\"type\":\"client_list_delta\"") {
            deltas += l.len();
            delta_lines += 1;
        }
    }
    println!(
        "  file: {bytes} bytes zstd over {secs} s and {nodes} nodes: {:.2} MB per node-hour \
         (target <= 2)",
        to_f64(bytes) / 1e6 / to_f64(nodes as u64) / hours
    );
    println!(
        "  crowded node's client lists in the plain text: {whole_lines} whole ({whole} bytes), \
         {delta_lines} as changes ({deltas} bytes, {:.0} bytes each)",
        to_f64(deltas as u64) / to_f64(delta_lines.max(1) as u64)
    );
    for (node, (list_calls, list_usec, others, polls)) in server_costs(&rec) {
        let label = if node == crowded { "crowded" } else { "quiet" };
        println!(
            "  {node} ({label}): {polls} polls, CLIENT LIST {list_calls} times (every {:.1} polls, \
             {:.2} ms a call), other poll commands {:.3} ms per poll (target < 1)",
            to_f64(polls) / to_f64(list_calls.max(1)),
            to_f64(list_usec) / 1000.0 / to_f64(list_calls.max(1)),
            to_f64(others) / 1000.0 / to_f64(polls.max(1)),
        );
    }
    let lists = rec
        .lines
        .iter()
        .filter(|l| matches!(l, Line::ClientList(c) if c.node.addr == crowded))
        .count();
    let reply_per_sec = to_f64(whole as u64) / to_f64(whole_lines.max(1) as u64)
        * to_f64(lists as u64)
        / secs as f64;
    println!(
        "  CLIENT LIST of the crowded node: about {:.0} KB a second on the wire (one list's \
         text over the seconds between lists)",
        reply_per_sec / 1000.0
    );
    println!(
        "  collector: peak RSS {:.1} MB ({:.1} MB at the end), CPU {:.1} % of a core ({})",
        to_f64(proc.hwm_kib) / 1024.0,
        to_f64(rss_now) / 1024.0,
        cpu_percent(&proc, clock_ticks()),
        cpu_model()
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let secs: u64 = env("SLOTSCOPE_BENCH_SECS").map_or(120, |s| s.parse().expect("seconds"));
    let conns: usize = env("SLOTSCOPE_BENCH_CONNS").map_or(5000, |s| s.parse().expect("count"));
    let kinds = match env("SLOTSCOPE_BENCH_SERVER").as_deref() {
        None | Some("redis") => vec![ServerKind::Redis],
        Some("valkey") => vec![ServerKind::Valkey],
        Some("both") => vec![ServerKind::Redis, ServerKind::Valkey],
        Some(other) => panic!("SLOTSCOPE_BENCH_SERVER={other}: redis, valkey or both"),
    };
    for kind in kinds {
        run(kind, secs, conns);
    }
}
