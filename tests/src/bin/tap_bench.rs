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
//! `--plain` records to JSON Lines without zstd; `--requests N` sets the pipelined tests'
//! requests (default 400,000).
//!
//! `--single` measures the hop itself: a one-master cluster (every slot on one node, so plain
//! `redis-benchmark` without `--cluster` meets no redirection) reached directly, through a bare
//! forwarder (this binary's `--forward LISTEN UPSTREAM` mode: tokio with two workers, the tap's
//! runtime shape, copying bytes both ways and nothing else) and through the tap. The forwarder is
//! the anchor: what any proxy on this host costs before it looks at a byte.
//!
//! Each proxy's own CPU per request (user and system time from `/proc/PID/stat` around each
//! `redis-benchmark` run, divided by its requests) is printed in a second table: on a host the
//! servers and the benchmark share, it holds still where throughput moves with the neighbours.

use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use slotscope_core::reader::RecordingReader;
use slotscope_core::tap::TapSummary;
use slotscope_core::NodeAddr;
use slotscope_tests::cpu::{clock_ticks, cpu_ticks};
use slotscope_tests::port::free_port;
use slotscope_tests::{slotscope_bin, Cluster, ClusterOptions, ServerKind};

/// One redis-benchmark CSV row: (test, requests/s, p50 ms).
fn bench(addr: &NodeAddr, cluster: bool, args: &[&str]) -> Vec<(String, f64, f64)> {
    let o = Command::new("redis-benchmark")
        .args(["-h", addr.host(), "-p", &addr.port().to_string(), "--csv"])
        .args(if cluster { &["--cluster"][..] } else { &[][..] })
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

/// The `tap_command` lines of the recording at `path`, and the commands its tap said it could
/// not record.
fn command_lines(path: &std::path::Path) -> (u64, u64) {
    let file = std::fs::File::open(path).expect("the tap's recording");
    let reader = RecordingReader::detect(std::io::BufReader::new(file)).expect("a recording");
    let mut summary = TapSummary::default();
    for (_, line) in reader.flatten() {
        summary.push(&line);
    }
    (summary.total.sent, summary.not_recorded)
}

/// The value after the option `name`, if it is there and parses.
fn value_of<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .skip_while(|a| *a != name)
        .nth(1)
        .and_then(|v| v.parse().ok())
}

/// Waits until something listens on `addr` (10 s at most).
fn wait_listening(addr: &NodeAddr) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect((addr.host(), addr.port())).is_err() {
        assert!(Instant::now() < deadline, "nothing listening on {addr}");
        sleep(Duration::from_millis(50));
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The bare forwarder's longest life: it stops by itself should the bench not stop it.
const FORWARD_LIFE: Duration = Duration::from_secs(3600);

/// `--forward LISTEN UPSTREAM`: copies bytes between each client of `LISTEN` and a connection of
/// its own to `UPSTREAM`, both ways, until either side closes; nothing else.
fn forward(listen: &str, upstream: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .expect("bind the forwarder");
        let accept = async {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let upstream = upstream.to_owned();
                tokio::spawn(async move {
                    let Ok(mut node) = tokio::net::TcpStream::connect(upstream).await else {
                        return;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = node.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut node).await;
                });
            }
        };
        let _ = tokio::time::timeout(FORWARD_LIFE, accept).await;
    });
}

/// A child process ended by its own PID when dropped.
struct Tap(Child);

impl Drop for Tap {
    fn drop(&mut self) {
        // SIGTERM to the child's own PID: the tap completes its file and exits.
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
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--forward") {
        let (Some(listen), Some(upstream)) = (args.get(i + 1), args.get(i + 2)) else {
            eprintln!("tap_bench: --forward LISTEN UPSTREAM");
            std::process::exit(2);
        };
        forward(listen, upstream);
        return;
    }
    let rounds: usize = value_of(&args, "--rounds").unwrap_or(3).clamp(1, 20);
    // `--single`: one master, no `--cluster`, and the bare forwarder beside the tap.
    let single = args.iter().any(|a| a == "--single");
    let cluster = Cluster::start(
        ServerKind::Redis,
        if single { 1 } else { 2 },
        ClusterOptions::default(),
    );
    let dir = tempfile::TempDir::new().expect("temporary directory");
    // `--plain`: record to JSON Lines without zstd (the compression's share of the cost).
    let plain = args.iter().any(|a| a == "--plain");
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
    wait_listening(&listen);
    let direct = cluster.addr(0);
    let mut paths = vec![("direct", direct.clone())];
    let mut forwarder = None;
    if single {
        let addr = NodeAddr::new("127.0.0.1", free_port()).expect("address");
        let child = Command::new(std::env::current_exe().expect("this program"))
            .args(["--forward", &addr.to_string(), &direct.to_string()])
            .stdin(Stdio::null())
            .spawn()
            .expect("start the forwarder");
        forwarder = Some(Tap(child));
        wait_listening(&addr);
        paths.push(("forward", addr));
    }
    paths.push(("tap", listen.clone()));
    eprintln!("tap_bench: {} (binary {})", cluster.kind(), bin.display());
    // `--requests N`: requests of each pipelined test (default 400,000; a short run's rate is
    // coarse, redis-benchmark timing it in milliseconds).
    let requests: u32 = value_of(&args, "--requests")
        .unwrap_or(400_000)
        .clamp(1_000, 10_000_000);
    let n = requests.to_string();
    let throughput = ["-t", "set,get", "-P", "16", "-c", "50", "-n", &n];
    let latency = ["-t", "get", "-P", "1", "-c", "1", "-n", "20000"];
    // Requests each invocation sends (two tests of `requests`; one of 20,000).
    let sent = [("P16 c50", 2.0 * f64::from(requests)), ("P1 c1", 20_000.0)];
    let pid_of = |via: &str| match via {
        "tap" => Some(tap.0.id()),
        "forward" => forwarder.as_ref().map(|f| f.0.id()),
        _ => None,
    };
    let mut results: Vec<(String, String, f64, f64)> = Vec::new();
    // (workload, path, CPU µs the proxy spent per request)
    let mut cpu: Vec<(String, String, f64)> = Vec::new();
    let ticks_per_sec = clock_ticks() as f64;
    for round in 0..rounds {
        for (via, addr) in &paths {
            for ((label, args), (_, requests)) in
                [("P16 c50", &throughput[..]), ("P1 c1", &latency[..])]
                    .into_iter()
                    .zip(sent)
            {
                let before = pid_of(via).and_then(cpu_ticks);
                for (test, rps, p50) in bench(addr, !single, args) {
                    eprintln!("round {round} {via:<6} {label:<8} {test:<4} {rps:>10.0} req/s  p50 {p50:.3} ms");
                    results.push((format!("{label} {test}"), (*via).to_owned(), rps, p50));
                }
                if let (Some(a), Some(b)) = (before, pid_of(via).and_then(cpu_ticks)) {
                    let us = (b - a) as f64 * 1e6 / ticks_per_sec / requests;
                    cpu.push((label.to_owned(), (*via).to_owned(), us));
                }
            }
        }
    }
    drop(tap);
    drop(forwarder);
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let vias: Vec<&str> = paths.iter().map(|p| p.0).collect();
    let mut head = String::from("| workload |");
    let mut rule = String::from("|---|");
    for via in &vias {
        head.push_str(&format!(" {via} req/s | {via} p50 |"));
        rule.push_str("---:|---:|");
    }
    for via in &vias[1..] {
        head.push_str(&format!(" {via} / direct | {via} p50 overhead |"));
        rule.push_str("---:|---:|");
    }
    if single {
        head.push_str(" tap / forward |");
        rule.push_str("---:|");
    }
    println!("{head}\n{rule}");
    let mut keys: Vec<String> = results.iter().map(|r| r.0.clone()).collect();
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
        let rps = |via: &str| pick(via, |r| r.2);
        let p50 = |via: &str| pick(via, |r| r.3);
        let mut row = format!("| {k} |");
        for via in &vias {
            row.push_str(&format!(" {:.0} | {:.3} ms |", rps(via), p50(via)));
        }
        for via in &vias[1..] {
            row.push_str(&format!(
                " {:.0} % | {:+.0} µs |",
                100.0 * rps(via) / rps("direct"),
                (p50(via) - p50("direct")) * 1000.0
            ));
        }
        if single {
            row.push_str(&format!(" {:.0} % |", 100.0 * rps("tap") / rps("forward")));
        }
        println!("{row}");
    }
    // The proxies' own CPU per request: steadier than their throughput on a shared host (it does
    // not move with what the servers and the benchmark get of the cores).
    let proxies: Vec<&str> = vias.iter().copied().filter(|v| *v != "direct").collect();
    let mut head = String::from("\n| workload |");
    let mut rule = String::from("|---|");
    for via in &proxies {
        head.push_str(&format!(" {via} CPU µs / request |"));
        rule.push_str("---:|");
    }
    println!("{head}\n{rule}");
    for (label, _) in sent {
        let mut row = format!("| {label} |");
        for via in &proxies {
            let v: Vec<f64> = cpu
                .iter()
                .filter(|c| c.0 == label && c.1 == *via)
                .map(|c| c.2)
                .collect();
            row.push_str(&format!(" {:.2} |", median(v)));
        }
        println!("{row}");
    }
    let kind = if plain { "plain" } else { "zstd" };
    println!("\nrecording: {size} bytes ({kind}) for {rounds} rounds");
    // Every request through the tap has its line: the benchmark's own (CONFIG GET at its start)
    // come on top of the counted ones.
    let (lines, unrecorded) = command_lines(&out);
    let through = rounds as f64 * sent.iter().map(|s| s.1).sum::<f64>();
    println!(
        "command lines: {lines} for {through:.0} benchmark requests through the tap ({}); \
         forwarded but not recorded: {unrecorded}",
        if lines as f64 >= through {
            "complete"
        } else {
            "SHORT"
        }
    );
}
