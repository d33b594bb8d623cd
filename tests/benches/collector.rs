//! What `slotscope record` costs on a busy-ish cluster: file size per node-hour, the collector's
//! own memory and CPU, and the server time each poll takes from a node.
//!
//! Starts a real 6-master Redis 7.0.15 cluster (or Valkey, see below) on 127.0.0.1, opens 96 client
//! connections spread evenly over the nodes (16 per node, so `CLIENT LIST` has 18 entries with the
//! two collectors') that each send one `GET` or `SET` every 100 ms from a few threads, then
//! runs two `slotscope record --interval 1s` side by side, one writing `.jsonl` and one writing
//! `.jsonl.zst`, for three minutes, and stops them with SIGTERM. It prints:
//!
//! - file size per node-hour, plain and zstd (bytes / nodes / hours of recording);
//! - each collector's peak RSS (`VmHWM` of `/proc/<pid>/status`, read just before SIGTERM) and CPU
//!   (`utime + stime` of `/proc/<pid>/stat`, as % of one core over its run);
//! - server time per poll per node, from the recordings themselves: between a node's first and
//!   last INFO sample, the `usec` its `commandstats` added for the collector's commands
//!   (`cluster|shards`, `cluster|slots`, `cluster|nodes`, `cluster|info`, `info`, `client|list`),
//!   divided by how many polls ran in between (the growth of `cmdstat_info` calls, which counts
//!   both collectors' polls since they run at the same time; the load never sends these commands);
//! - where the bytes of the plain file go, by line type, INFO section and CLIENT LIST field, each
//!   with how well it compresses alone;
//! - the plain file compressed again as the collector does (a zstd stream flushed after every
//!   poll round), with the collector's settings and a few others: size, encoder memory, time;
//!
//! and compares them with the targets: at most 2 MB per node-hour with zstd, peak RSS at most
//! 30 MB, under 1 ms of server time per node per poll (MB = 10^6 bytes).
//!
//! Run with `cargo bench -p slotscope-tests --bench collector`. It is not part of `cargo test`
//! (and exits at once when started without the `--bench` flag `cargo bench` passes). Settings:
//!
//! - `SLOTSCOPE_BENCH_SECS` (or `--secs N`): recording length in seconds, default 180.
//! - `SLOTSCOPE_BENCH_SERVER` (or `--server redis|valkey|both`): server kind, default `redis`.
//! - `SLOTSCOPE_BIN`: the `slotscope` binary to run; by default the bench builds
//!   `cargo build --release -p slotscope` and runs `target/release/slotscope`.
//! - `SLOTSCOPE_BENCH_KEEP=1`: keep the recordings (their directory is printed).

#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use slotscope_core::info::InfoReport;
use slotscope_core::metrics::COLLECTOR_COMMANDS;
use slotscope_core::recording::{InfoSample, Line};
use slotscope_core::resp::Value;
use slotscope_core::{NodeAddr, Slot};
use slotscope_tests::kind::workspace_root;
use slotscope_tests::{Client, Cluster, ClusterOptions, Recording, ServerKind};

/// Masters in the cluster (no replicas).
const MASTERS: usize = 6;
/// Load connections per node.
const CONNS_PER_NODE: usize = 16;
/// Threads driving the load connections.
const LOAD_THREADS: usize = 4;
/// Each load connection sends one command this often.
const OP_PERIOD: Duration = Duration::from_millis(100);
/// Distinct keys per node the load writes and reads.
const KEYS_PER_NODE: usize = 256;
/// Default recording length.
const DEFAULT_SECS: u64 = 180;
/// zstd level of the collector (`collector/src/sink.rs`), used for the per-part compression figures.
const ZSTD_LEVEL: i32 = 9;

/// Target: zstd bytes per node-hour.
const TARGET_ZSTD_PER_NODE_HOUR: f64 = 2e6;
/// Target: collector peak RSS in bytes.
const TARGET_RSS: f64 = 30e6;
/// Target: server milliseconds per node per poll (strictly below).
const TARGET_SERVER_MS: f64 = 1.0;

struct Options {
    secs: u64,
    kinds: Vec<ServerKind>,
    keep: bool,
}

fn options() -> Result<Option<Options>, String> {
    let mut secs = std::env::var("SLOTSCOPE_BENCH_SECS").ok();
    let mut server = std::env::var("SLOTSCOPE_BENCH_SERVER").ok();
    let mut bench = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bench" => bench = true,
            "--secs" => secs = Some(args.next().ok_or("--secs needs a value")?),
            "--server" => server = Some(args.next().ok_or("--server needs a value")?),
            other => {
                return Err(format!(
                    "unknown argument `{other}` (accepted: --secs N, --server redis|valkey|both)"
                ))
            }
        }
    }
    if !bench {
        return Ok(None);
    }
    let secs =
        match secs.filter(|s| !s.is_empty()) {
            None => DEFAULT_SECS,
            Some(s) => s.parse::<u64>().ok().filter(|&n| n >= 10).ok_or_else(|| {
                format!("recording length `{s}` is not a number of seconds >= 10")
            })?,
        };
    let kinds = match server.as_deref().unwrap_or("redis") {
        "" | "redis" => vec![ServerKind::Redis],
        "valkey" => vec![ServerKind::Valkey],
        "both" => ServerKind::ALL.to_vec(),
        other => return Err(format!("unknown server `{other}` (redis, valkey or both)")),
    };
    let keep = std::env::var("SLOTSCOPE_BENCH_KEEP").is_ok_and(|v| !v.is_empty() && v != "0");
    Ok(Some(Options { secs, kinds, keep }))
}

fn main() {
    let opts = match options() {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!(
                "collector bench: run it with `cargo bench -p slotscope-tests --bench collector`"
            );
            return;
        }
        Err(e) => {
            eprintln!("collector bench: {e}");
            std::process::exit(2);
        }
    };
    let bin = slotscope_release_bin();
    let clk_tck = clock_ticks();
    println!("slotscope binary: {}", bin.display());
    println!(
        "machine: {} ({} cores), clock ticks {clk_tck}/s",
        cpu_model(),
        thread::available_parallelism().map_or(0, std::num::NonZero::get)
    );
    let mut results = Vec::new();
    for &kind in &opts.kinds {
        results.push(run(kind, &bin, opts.secs, clk_tck, opts.keep));
    }
    println!();
    println!("== summary (targets: zstd <= 2 MB/node-hour, peak RSS <= 30 MB, server < 1 ms/node/poll; MB = 10^6 bytes)");
    for r in &results {
        r.print_summary();
    }
}

// ---------------------------------------------------------------------------------------------
// The slotscope binary and its process.

/// `$SLOTSCOPE_BIN`, else `target/release/slotscope` after `cargo build --release -p slotscope`.
fn slotscope_release_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("SLOTSCOPE_BIN").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "$SLOTSCOPE_BIN names {}, which does not exist",
            p.display()
        );
        return p;
    }
    // The bench runs from target/release/deps; the binary lands in target/release.
    let exe = std::env::current_exe().expect("bench executable path");
    let release = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/release")
        .to_path_buf();
    let mut build = Command::new(env!("CARGO"));
    build
        .args([
            "build",
            "--release",
            "-p",
            "slotscope",
            "--bin",
            "slotscope",
        ])
        .current_dir(workspace_root());
    // `cargo bench` runs this bench with the variables of the tests package set; build scripts
    // that watch them (ring watches CARGO_MANIFEST_DIR) would rebuild on every run.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("CARGO_PKG_")
            || matches!(
                &*k,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "OUT_DIR"
            )
        {
            build.env_remove(&*k);
        }
    }
    let status = build
        .status()
        .expect("run cargo build --release -p slotscope");
    assert!(
        status.success(),
        "cargo build --release -p slotscope failed"
    );
    let bin = release.join("slotscope");
    assert!(
        bin.is_file(),
        "no slotscope binary at {}; set SLOTSCOPE_BIN",
        bin.display()
    );
    bin
}

/// `getconf CLK_TCK`, 100 if that fails.
fn clock_ticks() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .filter(|&n: &u64| n > 0)
        .unwrap_or(100)
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

/// A running `slotscope record`, killed on drop if still running.
struct Collector {
    child: Option<Child>,
    out: PathBuf,
    stderr: PathBuf,
    started: Instant,
}

/// What `/proc` said about a collector just before it was stopped.
#[derive(Clone, Copy, Debug, Default)]
struct ProcFigures {
    hwm_kib: u64,
    cpu_ticks: u64,
    wall: Duration,
}

impl Collector {
    fn start(bin: &Path, seed: &NodeAddr, out: &Path) -> Collector {
        let mut stderr = out.as_os_str().to_owned();
        stderr.push(".stderr");
        let stderr = PathBuf::from(stderr);
        let err_file = File::create(&stderr).expect("create the collector's stderr file");
        let child = Command::new(bin)
            .arg("record")
            .arg("--seed")
            .arg(seed.to_string())
            .arg("--out")
            .arg(out)
            .args(["--interval", "1s", "--quiet"])
            .env_remove("SLOTSCOPE_PASSWORD")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err_file)
            .spawn()
            .expect("start slotscope record");
        Collector {
            child: Some(child),
            out: out.to_owned(),
            stderr,
            started: Instant::now(),
        }
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    fn stderr_text(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Panics if the collector has already exited.
    fn check_running(&mut self) {
        let child = self.child.as_mut().expect("collector running");
        if let Some(status) = child.try_wait().expect("poll the collector") {
            panic!(
                "slotscope record ({}) exited early with {status}; stderr:\n{}",
                self.out.display(),
                self.stderr_text()
            );
        }
    }

    /// `VmRSS` now, in KiB (0 if unreadable).
    fn rss_kib(&self) -> u64 {
        fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmRSS:"))
                    .and_then(|v| v.split_whitespace().next())
                    .and_then(|v| v.parse().ok())
            })
            .unwrap_or(0)
    }

    fn proc_figures(&self) -> ProcFigures {
        let pid = self.pid();
        let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
        let hwm_kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .expect("VmHWM in /proc/PID/status");
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
        // Fields after the `(comm)` one start at field 3 (state); utime and stime are fields 14, 15.
        let rest = &stat[stat.rfind(')').expect("(comm) in /proc/PID/stat") + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let tick = |i: usize| -> u64 { fields[i - 3].parse().expect("clock ticks") };
        ProcFigures {
            hwm_kib,
            cpu_ticks: tick(14) + tick(15),
            wall: self.started.elapsed(),
        }
    }

    /// SIGTERM by PID.
    fn terminate(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM {} failed", self.pid());
    }

    /// Waits (at most `limit`) for a clean exit.
    fn wait(mut self, limit: Duration) {
        let mut child = self.child.take().expect("collector running");
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = child.try_wait().expect("poll the collector") {
                assert!(
                    status.success(),
                    "slotscope record ({}) exited with {status}; stderr:\n{}",
                    self.out.display(),
                    self.stderr_text()
                );
                return;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "slotscope record ({}) did not exit within {limit:?} of SIGTERM; stderr:\n{}",
                    self.out.display(),
                    self.stderr_text()
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The load: many idle-ish connections, each sending a GET or SET every OP_PERIOD.

struct LoadFigures {
    connections: usize,
    ok: u64,
    errors: u64,
    first_error: Option<String>,
}

struct Load {
    stop: Arc<AtomicBool>,
    handles: Vec<JoinHandle<(u64, u64, Option<String>)>>,
    connections: usize,
}

/// Keys owned by each node (by its index), from node 0's `CLUSTER SLOTS`.
fn keys_per_node(cluster: &Cluster) -> Vec<Vec<String>> {
    let owners = cluster.slots_seen_by(0);
    let mut keys = vec![Vec::new(); cluster.len()];
    let mut n = 0u64;
    while keys.iter().any(|k| k.len() < KEYS_PER_NODE) {
        assert!(n < 1_000_000, "could not find keys for every node");
        let key = format!("bench:{n}");
        n += 1;
        let slot = Slot::for_key(key.as_bytes());
        let owner = owners
            .iter()
            .find(|o| o.range.contains(slot))
            .and_then(|o| cluster.index_of(&o.id))
            .expect("every slot is served");
        if keys[owner].len() < KEYS_PER_NODE {
            keys[owner].push(key);
        }
    }
    keys
}

impl Load {
    /// Opens every connection (named `app-<node>-<k>`), then starts the threads. Each thread stops
    /// at `stop`, after `max_time`, or after `max_rounds` rounds, whichever comes first.
    fn start(cluster: &Cluster, max_time: Duration) -> Load {
        let keys = Arc::new(keys_per_node(cluster));
        let mut conns: Vec<Vec<(usize, Client)>> = (0..LOAD_THREADS).map(|_| Vec::new()).collect();
        let mut total = 0;
        for node in 0..cluster.len() {
            for k in 0..CONNS_PER_NODE {
                let mut c = Client::connect_timeout(&cluster.addr(node), Duration::from_secs(2))
                    .unwrap_or_else(|e| panic!("connect to node {node}: {e}"));
                c.cmd_ok(&["CLIENT", "SETNAME", &format!("app-{node}-{k}")])
                    .expect("CLIENT SETNAME");
                conns[total % LOAD_THREADS].push((node, c));
                total += 1;
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let max_rounds = u64::try_from(max_time.as_millis() / OP_PERIOD.as_millis()).unwrap_or(0);
        let handles = conns
            .into_iter()
            .enumerate()
            .map(|(t, conns)| {
                let (stop, keys) = (stop.clone(), keys.clone());
                thread::Builder::new()
                    .name(format!("bench-load-{t}"))
                    .spawn(move || load_thread(t, conns, &keys, &stop, max_time, max_rounds))
                    .expect("spawn a load thread")
            })
            .collect();
        Load {
            stop,
            handles,
            connections: total,
        }
    }

    fn stop(self) -> LoadFigures {
        self.stop.store(true, Ordering::Relaxed);
        let mut f = LoadFigures {
            connections: self.connections,
            ok: 0,
            errors: 0,
            first_error: None,
        };
        for h in self.handles {
            let (ok, errors, first) = h.join().expect("load thread");
            f.ok += ok;
            f.errors += errors;
            f.first_error = f.first_error.or(first);
        }
        f
    }
}

/// One load thread: every OP_PERIOD, one command on each of its connections.
fn load_thread(
    t: usize,
    mut conns: Vec<(usize, Client)>,
    keys: &[Vec<String>],
    stop: &AtomicBool,
    max_time: Duration,
    max_rounds: u64,
) -> (u64, u64, Option<String>) {
    let started = Instant::now();
    // xorshift64: which key, GET or SET, and the value's length.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ (t as u64 + 1);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut ok, mut errors, mut first_error) = (0u64, 0u64, None);
    let mut round = 0u64;
    while !stop.load(Ordering::Relaxed) && round < max_rounds && started.elapsed() < max_time {
        let tick = started + OP_PERIOD * u32::try_from(round).unwrap_or(u32::MAX);
        round += 1;
        for (node, c) in &mut conns {
            let r = next();
            let key = &keys[*node][usize::try_from(r % KEYS_PER_NODE as u64).unwrap_or(0)];
            let reply = if (r >> 32) & 1 == 0 {
                let len = 16 + usize::try_from((r >> 40) % 256).unwrap_or(0);
                c.cmd(&["SET", key.as_str(), &"v".repeat(len)])
            } else {
                c.cmd(&["GET", key.as_str()])
            };
            match reply {
                Ok(Value::Error(e)) => {
                    errors += 1;
                    first_error.get_or_insert(e);
                }
                Ok(_) => ok += 1,
                Err(e) => {
                    errors += 1;
                    first_error.get_or_insert(e.to_string());
                }
            }
        }
        let next_tick = tick + OP_PERIOD;
        let now = Instant::now();
        if next_tick > now {
            thread::sleep(next_tick - now);
        }
    }
    (ok, errors, first_error)
}

// ---------------------------------------------------------------------------------------------
// One run: cluster, load, two collectors, figures.

/// Size and extent of one recording.
struct FileFigures {
    bytes: u64,
    nodes: usize,
    span_ms: u64,
    rounds: u64,
    failures: usize,
}

impl FileFigures {
    fn per_node_hour(&self) -> f64 {
        let hours = to_f64(self.span_ms) / 3.6e6;
        to_f64(self.bytes) / to_f64(self.nodes as u64) / hours
    }
}

/// What the collector's commands cost one node over a recording.
struct NodeCost {
    addr: NodeAddr,
    /// Polls between the first and last INFO sample of this recording.
    polls_recorded: u64,
    /// Polls between them by every collector (growth of `cmdstat_info` calls).
    polls_total: u64,
    /// Command → (calls, usec) added between them.
    per_cmd: BTreeMap<String, (u64, u64)>,
}

impl NodeCost {
    fn usec(&self) -> u64 {
        self.per_cmd.values().map(|&(_, u)| u).sum()
    }

    fn ms_per_poll(&self) -> f64 {
        to_f64(self.usec()) / to_f64(self.polls_total.max(1)) / 1000.0
    }
}

struct RunResult {
    kind: ServerKind,
    version: String,
    clk_tck: u64,
    plain: FileFigures,
    zstd: FileFigures,
    proc_plain: ProcFigures,
    proc_zstd: ProcFigures,
    cost: Vec<NodeCost>,
}

fn run(kind: ServerKind, bin: &Path, secs: u64, clk_tck: u64, keep: bool) -> RunResult {
    let version = kind.version();
    println!();
    println!("== {kind}: {version}; {MASTERS} masters, recording {secs} s");
    let cluster = Cluster::start(kind, MASTERS, ClusterOptions::default());
    let load = Load::start(&cluster, Duration::from_secs(secs + 60));
    println!(
        "load: {} connections ({CONNS_PER_NODE} per node), one GET/SET each every {} ms from {LOAD_THREADS} threads",
        load.connections,
        OP_PERIOD.as_millis()
    );
    // Let every load connection run a command before recording starts.
    thread::sleep(Duration::from_secs(1));

    let dir = tempfile::Builder::new()
        .prefix("slotscope-bench-")
        .tempdir()
        .expect("temporary directory");
    let seed = cluster.seed();
    let plain_path = dir.path().join(format!("{kind}.jsonl"));
    let zstd_path = dir.path().join(format!("{kind}.jsonl.zst"));
    let mut plain = Collector::start(bin, &seed, &plain_path);
    let mut zstd = Collector::start(bin, &seed, &zstd_path);
    println!(
        "collectors: pid {} -> {}, pid {} -> {}",
        plain.pid(),
        plain_path.display(),
        zstd.pid(),
        zstd_path.display()
    );

    let until = Instant::now() + Duration::from_secs(secs);
    let mut next_report = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        thread::sleep(Duration::from_millis(250).min(until - Instant::now()));
        plain.check_running();
        zstd.check_running();
        if Instant::now() >= next_report {
            let size = |p: &Path| fs::metadata(p).map_or(0, |m| m.len());
            println!(
                "  {:>4} s: plain {} bytes (collector RSS {} KiB), zstd {} bytes (collector RSS {} KiB)",
                plain.started.elapsed().as_secs(),
                size(&plain_path),
                plain.rss_kib(),
                size(&zstd_path),
                zstd.rss_kib()
            );
            next_report += Duration::from_secs(30);
        }
    }
    let proc_plain = plain.proc_figures();
    let proc_zstd = zstd.proc_figures();
    plain.terminate();
    zstd.terminate();
    plain.wait(Duration::from_secs(20));
    zstd.wait(Duration::from_secs(20));
    let load = load.stop();
    println!(
        "load: {} connections, {} commands answered, {} failed{}",
        load.connections,
        load.ok,
        load.errors,
        load.first_error
            .map(|e| format!(" (first: {e})"))
            .unwrap_or_default()
    );

    let plain_rec = Recording::read(&plain_path);
    let zstd_rec = Recording::read(&zstd_path);
    let plain_figs = file_figures(&plain_path, &plain_rec);
    let zstd_figs = file_figures(&zstd_path, &zstd_rec);
    let cost = node_costs(&plain_rec);
    let cost_zstd = node_costs(&zstd_rec);

    let result = RunResult {
        kind,
        version,
        clk_tck,
        plain: plain_figs,
        zstd: zstd_figs,
        proc_plain,
        proc_zstd,
        cost,
    };
    result.print_details(&cost_zstd);
    breakdown(&plain_path);
    zstd_settings(&plain_path, &result.plain);
    if keep {
        let kept = dir.keep();
        println!("recordings kept in {}", kept.display());
    }
    drop(cluster);
    result
}

fn file_figures(path: &Path, rec: &Recording) -> FileFigures {
    let bytes = fs::metadata(path).expect("recording size").len();
    let mut nodes = std::collections::BTreeSet::new();
    let (mut rounds, mut failures, mut end) = (0, 0, None);
    for l in &rec.lines {
        match l {
            Line::Info(i) => {
                nodes.insert(i.node.addr.clone());
            }
            Line::PollRound(_) => rounds += 1,
            Line::PollFailed(_) => failures += 1,
            Line::End(e) => end = Some(e.t),
            _ => {}
        }
    }
    let end = end.unwrap_or_else(|| panic!("{} has no end line", path.display()));
    FileFigures {
        bytes,
        nodes: nodes.len(),
        span_ms: end.millis_since(rec.header.started),
        rounds,
        failures,
    }
}

fn node_costs(rec: &Recording) -> Vec<NodeCost> {
    let mut by_node: BTreeMap<NodeAddr, Vec<&InfoSample>> = BTreeMap::new();
    for l in &rec.lines {
        if let Line::Info(i) = l {
            by_node.entry(i.node.addr.clone()).or_default().push(i);
        }
    }
    by_node
        .into_iter()
        .map(|(addr, samples)| {
            let first = &samples.first().expect("a sample").info;
            let last = &samples.last().expect("a sample").info;
            let stat = |r: &InfoReport, c: &str| {
                r.commandstats.get(c).map_or((0, 0), |s| (s.calls, s.usec))
            };
            let per_cmd = COLLECTOR_COMMANDS
                .iter()
                .map(|&c| {
                    let (c0, u0) = stat(first, c);
                    let (c1, u1) = stat(last, c);
                    (c.to_owned(), (c1.saturating_sub(c0), u1.saturating_sub(u0)))
                })
                .filter(|(_, (calls, _))| *calls > 0)
                .collect::<BTreeMap<_, _>>();
            NodeCost {
                addr,
                polls_recorded: samples.len() as u64 - 1,
                polls_total: per_cmd.get("info").map_or(0, |&(c, _)| c),
                per_cmd,
            }
        })
        .collect()
}

fn to_f64(n: u64) -> f64 {
    // Exact below 2^53, which every figure here is.
    n as f64
}

fn cpu_percent(p: &ProcFigures, clk_tck: u64) -> f64 {
    to_f64(p.cpu_ticks) / to_f64(clk_tck) / p.wall.as_secs_f64() * 100.0
}

fn mean_max(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = v.collect();
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    (mean, v.iter().copied().fold(0.0, f64::max))
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT met"
    }
}

impl RunResult {
    fn server_ms(&self) -> (f64, f64) {
        mean_max(self.cost.iter().map(NodeCost::ms_per_poll))
    }

    fn print_details(&self, cost_zstd: &[NodeCost]) {
        println!();
        for (name, f, p) in [
            ("plain", &self.plain, &self.proc_plain),
            ("zstd ", &self.zstd, &self.proc_zstd),
        ] {
            println!(
                "{name}: {} bytes, {} nodes, {:.1} s, {} rounds, {} poll failures -> {:.0} bytes/node-hour; \
                 collector VmHWM {} KiB, CPU {} ticks in {:.1} s = {:.2}% of a core",
                f.bytes,
                f.nodes,
                to_f64(f.span_ms) / 1000.0,
                f.rounds,
                f.failures,
                f.per_node_hour(),
                p.hwm_kib,
                p.cpu_ticks,
                p.wall.as_secs_f64(),
                cpu_percent(p, self.clk_tck)
            );
        }
        println!(
            "zstd / plain: {:.3} (size per node-hour)",
            self.zstd.per_node_hour() / self.plain.per_node_hour()
        );
        println!();
        println!("server time of the collector's commands, per node (from the plain recording; both collectors polled):");
        println!(
            "  {:<16} {:>6} {:>6} {:>9} {:>9}   per command: calls, usec/call",
            "node", "polls", "total", "usec", "ms/poll"
        );
        for c in &self.cost {
            let cmds: Vec<String> = c
                .per_cmd
                .iter()
                .map(|(n, &(calls, usec))| {
                    format!("{n} {calls}x{:.1}", to_f64(usec) / to_f64(calls.max(1)))
                })
                .collect();
            println!(
                "  {:<16} {:>6} {:>6} {:>9} {:>9.3}   {}",
                c.addr.to_string(),
                c.polls_recorded,
                c.polls_total,
                c.usec(),
                c.ms_per_poll(),
                cmds.join(", ")
            );
        }
        let (mean, max) = self.server_ms();
        let (zmean, zmax) = mean_max(cost_zstd.iter().map(NodeCost::ms_per_poll));
        println!(
            "  ms per node per poll: mean {mean:.3}, max {max:.3} (same window from the zstd recording: mean {zmean:.3}, max {zmax:.3})"
        );
    }

    fn print_summary(&self) {
        let rss = self.proc_plain.hwm_kib.max(self.proc_zstd.hwm_kib) * 1024;
        let (mean, max) = self.server_ms();
        let zstd = self.zstd.per_node_hour();
        println!("{} ({}):", self.kind, self.version);
        println!(
            "  plain size          {:>10.2} MB/node-hour",
            self.plain.per_node_hour() / 1e6
        );
        println!(
            "  zstd size           {:>10.2} MB/node-hour   target <= 2 MB: {}",
            zstd / 1e6,
            verdict(zstd <= TARGET_ZSTD_PER_NODE_HOUR)
        );
        println!(
            "  peak RSS            {:>10.2} MB (plain {} KiB, zstd {} KiB)   target <= 30 MB: {}",
            to_f64(rss) / 1e6,
            self.proc_plain.hwm_kib,
            self.proc_zstd.hwm_kib,
            verdict(to_f64(rss) <= TARGET_RSS)
        );
        println!(
            "  CPU                 {:>10.2} % of a core (plain), {:.2} % (zstd)",
            cpu_percent(&self.proc_plain, self.clk_tck),
            cpu_percent(&self.proc_zstd, self.clk_tck)
        );
        println!(
            "  server time         {:>10.3} ms/node/poll mean, {max:.3} max   target < 1 ms: {}",
            mean,
            verdict(max < TARGET_SERVER_MS)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Where the bytes go.

/// Bytes of one part of the recording, and the part's lines compressed on their own.
#[derive(Default)]
struct Part {
    lines: u64,
    bytes: u64,
    text: Vec<u8>,
}

impl Part {
    fn add(&mut self, bytes: usize, text: &str) {
        self.lines += 1;
        self.bytes += bytes as u64;
        self.text.extend_from_slice(text.as_bytes());
        self.text.push(b'\n');
    }
}

fn zstd_len(text: &[u8]) -> u64 {
    let mut enc = zstd::Encoder::new(Vec::new(), ZSTD_LEVEL).expect("zstd encoder");
    enc.long_distance_matching(true).expect("zstd ldm");
    enc.window_log(24).expect("zstd window");
    std::io::Write::write_all(&mut enc, text).expect("zstd write");
    enc.finish().expect("zstd finish").len() as u64
}

/// `"key":value` plus its separating comma, as it sits in the line.
fn member_len(key: &str, value: &Json) -> usize {
    serde_json::to_string(key).expect("json").len() + 1 + value.to_string().len() + 1
}

fn print_parts(title: &str, parts: &BTreeMap<String, Part>, file_bytes: u64, min_share: f64) {
    let mut rows: Vec<(&String, &Part)> = parts.iter().collect();
    rows.sort_by_key(|(_, p)| std::cmp::Reverse(p.bytes));
    println!(
        "  {title:<34} {:>7} {:>12} {:>7} {:>12} {:>7}",
        "lines", "bytes", "share", "zstd alone", "ratio"
    );
    let mut hidden = 0u64;
    for (name, p) in rows {
        let share = to_f64(p.bytes) / to_f64(file_bytes);
        if share < min_share {
            hidden += p.bytes;
            continue;
        }
        let z = zstd_len(&p.text);
        println!(
            "  {name:<34} {:>7} {:>12} {:>6.1}% {:>12} {:>7.1}",
            p.lines,
            p.bytes,
            share * 100.0,
            z,
            to_f64(p.bytes) / to_f64(z.max(1))
        );
    }
    if hidden > 0 {
        println!(
            "  {:<34} {:>7} {:>12} {:>6.1}%",
            "(smaller parts)",
            "",
            hidden,
            to_f64(hidden) / to_f64(file_bytes) * 100.0
        );
    }
}

/// Prints the plain recording's bytes by line type, INFO part and CLIENT LIST field, each part
/// also compressed on its own (same zstd settings as the collector).
fn breakdown(path: &Path) {
    let file = File::open(path).expect("open the plain recording");
    let mut by_type: BTreeMap<String, Part> = BTreeMap::new();
    let mut info_parts: BTreeMap<String, Part> = BTreeMap::new();
    let mut client_fields: BTreeMap<String, Part> = BTreeMap::new();
    let mut file_bytes = 0u64;
    let mut clients_per_line = Vec::new();
    for line in BufReader::new(file).lines() {
        let line = line.expect("read the plain recording");
        let bytes = line.len() + 1;
        file_bytes += bytes as u64;
        let v: Json = serde_json::from_str(&line).expect("a JSON line");
        let kind = v["type"].as_str().unwrap_or("?").to_owned();
        by_type.entry(kind.clone()).or_default().add(bytes, &line);
        match kind.as_str() {
            "info" => {
                let info = &v["info"];
                let mut inside = 0;
                if let Some(obj) = info.as_object() {
                    for (k, part) in obj {
                        if k == "sections" {
                            for (s, fields) in part.as_object().into_iter().flatten() {
                                let n = member_len(s, fields);
                                inside += n;
                                info_parts
                                    .entry(format!("info.sections.{s}"))
                                    .or_default()
                                    .add(n, &fields.to_string());
                            }
                            inside += "\"sections\":{},".len();
                        } else {
                            let n = member_len(k, part);
                            inside += n;
                            info_parts
                                .entry(format!("info.{k}"))
                                .or_default()
                                .add(n, &part.to_string());
                        }
                    }
                }
                let mut rest = v.clone();
                if let Some(o) = rest.as_object_mut() {
                    o.remove("info");
                }
                info_parts
                    .entry("(t, node, latency_us, type, braces)".to_owned())
                    .or_default()
                    .add(bytes.saturating_sub(inside), &rest.to_string());
            }
            "client_list" => {
                let clients = v["clients"].as_array().cloned().unwrap_or_default();
                clients_per_line.push(clients.len());
                let mut inside = 0;
                let mut per_field: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for c in &clients {
                    for (k, val) in c.as_object().into_iter().flatten() {
                        let n = member_len(k, val);
                        inside += n;
                        per_field
                            .entry(k.clone())
                            .or_default()
                            .push(val.as_str().unwrap_or_default().to_owned());
                        client_fields
                            .entry(format!("clients[].{k}"))
                            .or_default()
                            .bytes += n as u64;
                    }
                }
                for (k, vals) in per_field {
                    let p = client_fields.entry(format!("clients[].{k}")).or_default();
                    p.lines += 1;
                    p.text.extend_from_slice(vals.join(" ").as_bytes());
                    p.text.push(b'\n');
                }
                let mut rest = v.clone();
                if let Some(o) = rest.as_object_mut() {
                    o.remove("clients");
                }
                client_fields
                    .entry("(t, node, type, braces, commas)".to_owned())
                    .or_default()
                    .add(bytes.saturating_sub(inside), &rest.to_string());
            }
            _ => {}
        }
    }
    println!();
    println!(
        "where the bytes of the plain recording go ({file_bytes} bytes; zstd alone = that part's lines \
         compressed by themselves at level {ZSTD_LEVEL}, long window):"
    );
    print_parts("line type", &by_type, file_bytes, 0.0);
    println!();
    print_parts("info line part", &info_parts, file_bytes, 0.002);
    println!();
    let (mean, max) = mean_max(clients_per_line.iter().map(|&n| n as f64));
    println!("client_list lines: {mean:.1} clients per line (max {max:.0}); per field (values only in the zstd column):");
    print_parts("client_list part", &client_fields, file_bytes, 0.002);
}

/// The plain recording compressed again the way the collector does it (a stream flushed after
/// every poll round), with the collector's zstd settings and a few others: size, the encoder's
/// memory (`ZSTD_sizeof_CCtx`, which the RSS includes as pages get touched) and time.
fn zstd_settings(path: &Path, plain: &FileFigures) {
    use std::io::Write;
    use zstd::zstd_safe::{CCtx, CParameter};

    let text = fs::read(path).expect("read the plain recording");
    let settings: [(&str, i32, Option<u32>, bool); 5] = [
        (
            "level 9, window 2^24, long-distance (collector)",
            ZSTD_LEVEL,
            Some(24),
            true,
        ),
        ("level 9, window 2^24", ZSTD_LEVEL, Some(24), false),
        ("level 9, default window (2^22)", ZSTD_LEVEL, None, false),
        ("level 9, window 2^20", ZSTD_LEVEL, Some(20), false),
        ("level 3, default window (2^21)", 3, None, false),
    ];
    println!();
    println!(
        "the plain recording compressed again, flushed after every poll round like the collector:"
    );
    println!(
        "  {:<48} {:>10} {:>14} {:>13} {:>8}",
        "zstd settings", "bytes", "MB/node-hour", "encoder MiB", "ms"
    );
    for (name, level, window, ldm) in settings {
        let mut cctx = CCtx::create();
        let started = Instant::now();
        let compressed = {
            let mut enc = zstd::Encoder::with_context(Vec::new(), &mut cctx);
            enc.set_parameter(CParameter::CompressionLevel(level))
                .expect("zstd level");
            enc.include_checksum(true).expect("zstd checksum");
            if let Some(w) = window {
                enc.window_log(w).expect("zstd window");
            }
            enc.long_distance_matching(ldm).expect("zstd ldm");
            for line in text.split_inclusive(|&b| b == b'\n') {
                enc.write_all(line).expect("zstd write");
                if line.starts_with(br#"{"type":"poll_round""#) {
                    enc.flush().expect("zstd flush");
                }
            }
            enc.finish().expect("zstd finish")
        };
        let ms = started.elapsed().as_millis();
        let bytes = compressed.len() as u64;
        let per_node_hour = FileFigures {
            bytes,
            nodes: plain.nodes,
            span_ms: plain.span_ms,
            rounds: plain.rounds,
            failures: plain.failures,
        }
        .per_node_hour();
        println!(
            "  {name:<48} {bytes:>10} {:>14.2} {:>13.1} {ms:>8}",
            per_node_hour / 1e6,
            cctx.sizeof() as f64 / 1024.0 / 1024.0
        );
    }
}
