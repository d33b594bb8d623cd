//! `tap_bench`: `redis-benchmark --cluster` directly against a local cluster and through
//! `slotscope tap`, alternately in one run, for the throughput and latency overhead figures in
//! `BENCHMARKS.md`.
//!
//! Starts a two-master Redis cluster on 127.0.0.1 and `slotscope tap` in front of it (recording to a
//! temporary zstd file), then runs, `--rounds` times each and alternating direct / tap:
//!
//! - throughput: `redis-benchmark --cluster -t set,get -P 16 -c 50 -n 400000`;
//! - latency: `redis-benchmark --cluster -t get -P 1 -c 1 -n 20000`.
//!
//! and prints the median requests/s and p50 latency of each, and the ratios. Use a release build of
//! the tap (the figures of a debug build mean little):
//!
//! ```sh
//! cargo build --release -p slotscope && cargo run --release -p slotscope-tests --bin tap_bench -- --rounds 3
//! ```
//!
//! `--plain` records to JSON Lines without zstd.

use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use slotscope_core::NodeAddr;
use slotscope_tests::port::free_port;
use slotscope_tests::{slotscope_bin, Cluster, ClusterOptions, ServerKind};

/// One redis-benchmark CSV row: (test, requests/s, p50 ms).
fn bench(addr: &NodeAddr, args: &[&str]) -> Vec<(String, f64, f64)> {
    let o = Command::new("redis-benchmark")
        .args([
            "-h",
            addr.host(),
            "-p",
            &addr.port().to_string(),
            "--cluster",
            "--csv",
        ])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run redis-benchmark");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let mut rows = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').map(|c| c.trim_matches('"')).collect();
        if f.len() >= 5 {
            if let (Ok(rps), Ok(p50)) = (f[1].parse(), f[4].parse()) {
                rows.push((f[0].to_owned(), rps, p50));
            }
        }
    }
    assert!(!rows.is_empty(), "no CSV rows in {text}");
    rows
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Tap(Child);

impl Drop for Tap {
    fn drop(&mut self) {
        // SIGTERM to the tap's own PID: it completes its file and exits.
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.0.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while matches!(self.0.try_wait(), Ok(None)) && Instant::now() < deadline {
            sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() {
    let rounds: usize = std::env::args()
        .skip_while(|a| a != "--rounds")
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(3)
        .clamp(1, 20);
    let cluster = Cluster::start(ServerKind::Redis, 2, ClusterOptions::default());
    let dir = tempfile::TempDir::new().expect("temporary directory");
    // `--plain`: record to JSON Lines without zstd (the compression's share of the cost).
    let plain = std::env::args().any(|a| a == "--plain");
    let out = dir.path().join(if plain {
        "bench.jsonl"
    } else {
        "bench.jsonl.zst"
    });
    let listen = NodeAddr::new("127.0.0.1", free_port()).expect("address");
    let bin = slotscope_bin();
    let child = Command::new(&bin)
        .args(["tap", "--upstream", &cluster.addr(0).to_string()])
        .args([
            "--listen",
            &listen.to_string(),
            "--node-ports",
            "any",
            "--quiet",
        ])
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .spawn()
        .expect("start slotscope tap");
    let tap = Tap(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", listen.port())).is_err() {
        assert!(Instant::now() < deadline, "tap not listening");
        sleep(Duration::from_millis(50));
    }
    eprintln!("tap_bench: {} (binary {})", cluster.kind(), bin.display());
    let throughput = ["-t", "set,get", "-P", "16", "-c", "50", "-n", "400000"];
    let latency = ["-t", "get", "-P", "1", "-c", "1", "-n", "20000"];
    let direct = cluster.addr(0);
    let mut results: Vec<(String, String, f64, f64)> = Vec::new();
    for round in 0..rounds {
        for (via, addr) in [("direct", &direct), ("tap", &listen)] {
            for (label, args) in [("P16 c50", &throughput[..]), ("P1 c1", &latency[..])] {
                for (test, rps, p50) in bench(addr, args) {
                    eprintln!("round {round} {via:<6} {label:<8} {test:<4} {rps:>10.0} req/s  p50 {p50:.3} ms");
                    results.push((format!("{label} {test}"), via.to_owned(), rps, p50));
                }
            }
        }
    }
    drop(tap);
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    println!("| workload | direct req/s | tap req/s | tap / direct | direct p50 | tap p50 | p50 overhead |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut keys: Vec<String> = results.iter().map(|r| r.0.clone()).collect();
    keys.dedup();
    keys.sort();
    keys.dedup();
    for k in keys {
        let pick = |via: &str, f: fn(&(String, String, f64, f64)) -> f64| {
            median(
                results
                    .iter()
                    .filter(|r| r.0 == k && r.1 == via)
                    .map(f)
                    .collect(),
            )
        };
        let (d_rps, t_rps) = (pick("direct", |r| r.2), pick("tap", |r| r.2));
        let (d_p50, t_p50) = (pick("direct", |r| r.3), pick("tap", |r| r.3));
        println!(
            "| {k} | {d_rps:.0} | {t_rps:.0} | {:.0} % | {:.3} ms | {:.3} ms | {:+.0} µs |",
            100.0 * t_rps / d_rps,
            d_p50,
            t_p50,
            (t_p50 - d_p50) * 1000.0
        );
    }
    let kind = if plain { "plain" } else { "zstd" };
    println!("\nrecording: {size} bytes ({kind}) for {rounds} rounds");
}
