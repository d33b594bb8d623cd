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
//! - `SLOTSCOPE_BENCH_SCALE=1` (or `--scale`): run the scale mode of [`scale`] instead (100
//!   masters, no load, 60 s by default), with `SLOTSCOPE_BENCH_MASTERS` (default 100) and
//!   `SLOTSCOPE_BENCH_TOPOLOGY_EVERY` (comma-separated `--topology-every` values, default `1,10`).

mod breakdown;
mod file_figures;
mod load;
mod proc_figures;
mod recorder;
mod report;
mod scale;

use std::fs;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use slotscope_tests::{Cluster, ClusterOptions, Recording, ServerKind};

use crate::breakdown::{breakdown, zstd_settings};
use crate::file_figures::{file_figures, node_costs};
use crate::load::{Load, CONNS_PER_NODE, LOAD_THREADS, OP_PERIOD};
use crate::proc_figures::{clock_ticks, cpu_model};
use crate::recorder::{slotscope_release_bin, Collector};
use crate::report::RunResult;
use crate::scale::{run_scale, ScaleOptions};

/// Masters in the cluster (no replicas).
const MASTERS: usize = 6;
/// Default recording length.
const DEFAULT_SECS: u64 = 180;

/// The bench's settings, from the environment and the command line.
struct Options {
    /// Recording length in seconds.
    secs: u64,
    /// Server kinds to run, one run each.
    kinds: Vec<ServerKind>,
    /// Keep the recordings.
    keep: bool,
    /// Run the scale mode instead.
    scale: Option<ScaleOptions>,
}

/// The settings, `None` when not started by `cargo bench` (no `--bench` flag).
fn options() -> Result<Option<Options>, String> {
    let mut secs = std::env::var("SLOTSCOPE_BENCH_SECS").ok();
    let mut server = std::env::var("SLOTSCOPE_BENCH_SERVER").ok();
    let mut bench = false;
    let mut scale = std::env::var("SLOTSCOPE_BENCH_SCALE").is_ok_and(|v| !v.is_empty() && v != "0");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bench" => bench = true,
            "--scale" => scale = true,
            "--secs" => secs = Some(args.next().ok_or("--secs needs a value")?),
            "--server" => server = Some(args.next().ok_or("--server needs a value")?),
            other => {
                return Err(format!(
                    "unknown argument `{other}` (accepted: --secs N, --server redis|valkey|both, --scale)"
                ))
            }
        }
    }
    if !bench {
        return Ok(None);
    }
    let secs =
        match secs.filter(|s| !s.is_empty()) {
            None if scale => scale::DEFAULT_SECS,
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
    let scale = if scale {
        Some(scale_options(secs)?)
    } else {
        None
    };
    Ok(Some(Options {
        secs,
        kinds,
        keep,
        scale,
    }))
}

/// The scale mode's settings, from the environment.
fn scale_options(secs: u64) -> Result<ScaleOptions, String> {
    let masters = match std::env::var("SLOTSCOPE_BENCH_MASTERS") {
        Ok(m) if !m.is_empty() => m
            .parse::<usize>()
            .ok()
            .filter(|&n| (3..=500).contains(&n))
            .ok_or_else(|| format!("SLOTSCOPE_BENCH_MASTERS `{m}` is not a number in 3..=500"))?,
        _ => scale::DEFAULT_MASTERS,
    };
    let every = match std::env::var("SLOTSCOPE_BENCH_TOPOLOGY_EVERY") {
        Ok(e) if !e.is_empty() => e
            .split(',')
            .map(|v| v.trim().parse::<u32>().ok().filter(|&n| n >= 1))
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| {
                format!("SLOTSCOPE_BENCH_TOPOLOGY_EVERY `{e}` is not a list of numbers >= 1")
            })?,
        _ => scale::DEFAULT_EVERY.to_vec(),
    };
    Ok(ScaleOptions {
        masters,
        secs,
        every,
    })
}

/// Runs the bench once per server kind, then prints the summary.
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
    if let Some(scale) = &opts.scale {
        for &kind in &opts.kinds {
            run_scale(kind, &bin, scale, clk_tck);
        }
        return;
    }
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

/// One run: cluster, load, two collectors side by side for `secs` seconds, then their figures.
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

/// `n` as a float.
pub fn to_f64(n: u64) -> f64 {
    // Exact below 2^53, which every figure here is.
    n as f64
}
