//! Scale mode (issue 14, point 4): one collector polling 100 real masters at 1 Hz.
//!
//! Starts `SLOTSCOPE_BENCH_MASTERS` (default 100) `redis-server` (or `valkey-server`) masters on
//! 127.0.0.1 with the harness's minimal config (no persistence) and `cluster-node-timeout 15000`
//! (the default of `redis-cli --cluster create`; the harness's 2 s would have 100 nodes ping each
//! other ten thousand times a second), slots spread evenly, no load. Then, for each value of
//! `SLOTSCOPE_BENCH_TOPOLOGY_EVERY` (default `1,10`: every poll as before, then the default), runs
//! `slotscope record --interval 1s --topology-every N` into a `.jsonl.zst` for
//! `SLOTSCOPE_BENCH_SECS` seconds (default 60), stops it with SIGTERM and prints: rounds, failed
//! polls, rounds that overran (a `poll_round` whose `elapsed_ms` reached the interval, or with
//! nodes unanswered), round time mean and max, server time per node per poll without `client|list`
//! (mean and max over the nodes, from `commandstats` usec), `CLUSTER SHARDS` calls per poll, the
//! collector's CPU (% of one core) and peak RSS, and file bytes per node-hour; with the targets.
//! The servers are stopped by PID when the run ends (each [`Server`] kills its own on drop).

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use slotscope_core::recording::Line;
use slotscope_tests::{Recording, Server, ServerKind, ServerOptions};

use crate::file_figures::{file_figures, node_costs};
use crate::proc_figures::cpu_percent;
use crate::recorder::Collector;
use crate::to_f64;

/// Masters by default.
pub const DEFAULT_MASTERS: usize = 100;
/// Recording length by default, in seconds.
pub const DEFAULT_SECS: u64 = 60;
/// `--topology-every` values run by default: every poll (as before), then the default.
pub const DEFAULT_EVERY: &[u32] = &[1, 10];
/// The poll interval, in milliseconds.
const INTERVAL_MS: u64 = 1000;
/// How long the masters may take to know each other.
const CONVERGE: Duration = Duration::from_secs(180);

/// What the scale mode runs.
pub struct ScaleOptions {
    /// Masters to start.
    pub masters: usize,
    /// Recording length in seconds.
    pub secs: u64,
    /// `--topology-every` values, one run each.
    pub every: Vec<u32>,
}

/// The figures of one run.
pub struct ScaleResult {
    every: u32,
    rounds: usize,
    failed_polls: usize,
    overran: usize,
    round_mean_ms: f64,
    round_max_ms: u64,
    server_mean_ms: f64,
    server_max_ms: f64,
    shards_per_poll: f64,
    cpu_percent: f64,
    rss_mb: f64,
    mb_per_node_hour: f64,
}

impl ScaleResult {
    fn print(&self, masters: usize) {
        let met = |ok: bool| if ok { "met" } else { "NOT met" };
        println!(
            "  --topology-every {}: {} rounds, {} failed polls, {} overran; round {:.1} ms mean, {} ms max",
            self.every,
            self.rounds,
            self.failed_polls,
            self.overran,
            self.round_mean_ms,
            self.round_max_ms
        );
        println!(
            "    server time per node per poll without client|list: {:.3} ms mean, {:.3} ms max over {masters} nodes (< 1 ms: {}); CLUSTER SHARDS {:.2} calls per poll",
            self.server_mean_ms,
            self.server_max_ms,
            met(self.server_mean_ms < 1.0 && self.server_max_ms < 1.0),
            self.shards_per_poll
        );
        println!(
            "    collector: {:.1} % of a core, peak RSS {:.1} MB (<= 60 MB: {}); file {:.3} MB per node-hour (<= 2 MB: {})",
            self.cpu_percent,
            self.rss_mb,
            met(self.rss_mb <= 60.0),
            self.mb_per_node_hour,
            met(self.mb_per_node_hour <= 2.0)
        );
    }
}

/// Starts the masters, runs one recording per `--topology-every` value, prints the figures.
pub fn run_scale(kind: ServerKind, bin: &Path, opts: &ScaleOptions, clk_tck: u64) {
    println!();
    println!(
        "== scale: {kind} {}; {} masters, no replicas, no load; record --interval 1s for {} s",
        kind.version(),
        opts.masters,
        opts.secs
    );
    let started = Instant::now();
    let servers = start_masters(kind, opts.masters);
    println!(
        "masters up and converged in {:.0} s (pids {}..{})",
        started.elapsed().as_secs_f64(),
        servers.first().map_or(0, Server::pid),
        servers.last().map_or(0, Server::pid)
    );
    let dir = tempfile::Builder::new()
        .prefix("slotscope-scale-")
        .tempdir()
        .expect("temporary directory");
    let mut results = Vec::new();
    for &every in &opts.every {
        results.push(record_once(&servers, bin, dir.path(), opts, every, clk_tck));
    }
    println!();
    println!(
        "== scale summary ({} masters, targets: server < 1 ms/node/poll mean and max without client|list, <= 2 MB/node-hour, RSS <= 60 MB; MB = 10^6 bytes)",
        opts.masters
    );
    for r in &results {
        r.print(opts.masters);
    }
    drop(servers);
}

/// `masters` servers with slots spread evenly, each knowing every other.
fn start_masters(kind: ServerKind, masters: usize) -> Vec<Server> {
    let opts = ServerOptions {
        extra: vec![("cluster-node-timeout".into(), "15000".into())],
        ..ServerOptions::default()
    };
    let servers: Vec<Server> = (0..masters).map(|_| Server::start(kind, &opts)).collect();
    let n = u32::try_from(masters).expect("few masters");
    let first_port = servers[0].port().to_string();
    for (k, s) in servers.iter().enumerate() {
        let k32 = u32::try_from(k).expect("few masters");
        let (first, last) = (16384 * k32 / n, 16384 * (k32 + 1) / n - 1);
        let mut c = s.client();
        c.cmd_ok(&[
            "CLUSTER",
            "ADDSLOTSRANGE",
            &first.to_string(),
            &last.to_string(),
        ])
        .expect("ADDSLOTSRANGE");
        c.cmd_ok(&["CLUSTER", "SET-CONFIG-EPOCH", &(k + 1).to_string()])
            .expect("SET-CONFIG-EPOCH");
        if k > 0 {
            c.cmd_ok(&["CLUSTER", "MEET", "127.0.0.1", &first_port])
                .expect("MEET");
        }
    }
    let deadline = Instant::now() + CONVERGE;
    let known = format!("cluster_known_nodes:{masters}");
    loop {
        let pending = servers
            .iter()
            .filter(|s| {
                let info = s
                    .client()
                    .cmd_text(&["CLUSTER", "INFO"])
                    .unwrap_or_default();
                !(info.contains("cluster_state:ok") && info.contains(&known))
            })
            .count();
        if pending == 0 {
            return servers;
        }
        assert!(
            Instant::now() < deadline,
            "{pending} of {masters} masters not converged after {CONVERGE:?}"
        );
        thread::sleep(Duration::from_secs(1));
    }
}

/// One `record --topology-every every` run over the masters, and its figures.
fn record_once(
    servers: &[Server],
    bin: &Path,
    dir: &Path,
    opts: &ScaleOptions,
    every: u32,
    clk_tck: u64,
) -> ScaleResult {
    let path = dir.join(format!("scale-every-{every}.jsonl.zst"));
    let seed = servers[0].addr();
    let every_arg = every.to_string();
    let mut c = Collector::start_with(bin, &seed, &path, &["--topology-every", &every_arg]);
    println!(
        "record --topology-every {every}: pid {} -> {}",
        c.pid(),
        path.display()
    );
    let until = Instant::now() + Duration::from_secs(opts.secs);
    while Instant::now() < until {
        thread::sleep(Duration::from_millis(250).min(until - Instant::now()));
        c.check_running();
    }
    let proc = c.proc_figures();
    c.terminate();
    c.wait(Duration::from_secs(30));

    let rec = Recording::read(&path);
    let file = file_figures(&path, &rec);
    let mut elapsed = Vec::new();
    let mut overran = 0;
    for l in &rec.lines {
        if let Line::PollRound(r) = l {
            elapsed.push(r.elapsed_ms);
            if r.elapsed_ms >= INTERVAL_MS || r.ok + r.failed < r.nodes {
                overran += 1;
            }
        }
    }
    let costs = node_costs(&rec);
    let per_node: Vec<f64> = costs
        .iter()
        .map(|c| {
            let list = c.per_cmd.get("client|list").map_or(0, |&(_, u)| u);
            to_f64(c.usec() - list) / to_f64(c.polls_total.max(1)) / 1000.0
        })
        .collect();
    if let Some((worst, ms)) = costs
        .iter()
        .zip(&per_node)
        .max_by(|a, b| a.1.total_cmp(b.1))
    {
        let cmds: Vec<String> = worst
            .per_cmd
            .iter()
            .map(|(c, (n, u))| format!("{c} {n} calls {u} us"))
            .collect();
        println!(
            "    slowest node {} ({ms:.3} ms per poll over {} polls): {}",
            worst.addr,
            worst.polls_total,
            cmds.join(", ")
        );
    }
    let shards: u64 = costs
        .iter()
        .map(|c| c.per_cmd.get("cluster|shards").map_or(0, |&(n, _)| n))
        .sum();
    let polls: u64 = costs.iter().map(|c| c.polls_total).sum();
    let result = ScaleResult {
        every,
        rounds: elapsed.len(),
        failed_polls: file.failures,
        overran,
        round_mean_ms: to_f64(elapsed.iter().sum()) / to_f64(elapsed.len().max(1) as u64),
        round_max_ms: elapsed.iter().copied().max().unwrap_or(0),
        server_mean_ms: per_node.iter().sum::<f64>() / per_node.len().max(1) as f64,
        server_max_ms: per_node.iter().copied().fold(0.0, f64::max),
        shards_per_poll: to_f64(shards) / to_f64(polls.max(1)),
        cpu_percent: cpu_percent(&proc, clk_tck),
        rss_mb: to_f64(proc.hwm_kib) * 1024.0 / 1e6,
        mb_per_node_hour: file.per_node_hour() / 1e6,
    };
    result.print(servers.len());
    result
}
