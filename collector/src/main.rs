//! `slotscope`: records a live Redis Cluster / Valkey cluster into one file, and reads it back.

mod analysis_report;
mod clock;
mod command;
mod connection;
mod hypotheses_report;
mod import;
mod input;
mod poll;
mod progress;
mod recorder;
mod replay_report;
mod report;
mod secret;
mod serve;
mod sink;
mod tap;
mod tls;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use slotscope_core::NodeAddr;

use crate::connection::ConnectOptions;
use crate::progress::{human_bytes, Progress};
use crate::recorder::{RecordConfig, RecordError};
use crate::sink::FileSink;

/// Postmortem tool for Redis Cluster / Valkey cluster incidents on the client side of routing.
#[derive(Parser, Debug)]
#[command(name = "slotscope", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Record a live cluster into one file (JSON Lines, optionally zstd).
    #[command(long_about = RECORD_ABOUT, after_help = RECORD_AFTER)]
    Record(RecordArgs),
    /// Print what a recording holds: duration, nodes, topology changes, poll failures.
    Summary(SummaryArgs),
    /// Analyse a recording: findings with their evidence, timeline, per-shard traffic, client census.
    #[command(long_about = ANALYZE_ABOUT)]
    Analyze(AnalyzeArgs),
    /// Add outside evidence (a cloud event log, an application error log) to a recording.
    #[command(long_about = import::ABOUT, after_help = import::AFTER)]
    Import(ImportArgs),
    /// Replay a workload against the recorded cluster through a client library model.
    #[command(long_about = REPLAY_ABOUT, after_help = replay_models_help())]
    Replay(ReplayArgs),
    /// Rank client variants (model × configuration × faults) by how well each reproduces a recording.
    Hypotheses(HypothesesArgs),
    /// Serve the browser viewer on 127.0.0.1, on a recording or on the demo.
    #[command(long_about = serve::ABOUT, after_help = serve::AFTER)]
    Serve(serve::ServeArgs),
    /// Proxy a real client's connections to a cluster and record its routing: which node each
    /// command went to and what came back.
    #[command(long_about = TAP_ABOUT, after_help = TAP_AFTER)]
    Tap(TapArgs),
}

const TAP_ABOUT: &str = "\
Proxy a real client's connections to a cluster and record, per command, which node it was
sent to and what came back: client-side truth, where the servers' counters are global and
include every other client.

Point the client at --listen instead of the cluster. The tap stands for --upstream there, and
for every other node on a listener of its own on the same IP (bound at start from CLUSTER
SLOTS, or when a reply first names the node; see --node-ports). Node addresses in MOVED and
ASK errors and in the replies of CLUSTER SLOTS, CLUSTER SHARDS and CLUSTER NODES are rewritten
to those listeners, so every connection the client makes goes through the tap; every other
byte passes through unchanged, in both directions (RESP2 and RESP3, HELLO 3, pipelining,
pub/sub).

Recorded as tap_conn and tap_command lines of the recording format `analyze` reads: each
client connection opened and closed; each command's time, connection, name, key slot, node,
reply class (ok, moved with its target, ask, try_again, cluster_down, error with its code
only, closed) and latency. Never values, never AUTH or HELLO arguments; the first key's name
only with --record-keys. With --poll the cluster's own counters are recorded into the same
file too, as `record` does, so `analyze` shows the client's evidence next to the servers'.

Memory is bounded: requests and replies are forwarded as they arrive (a frame larger than a
few MiB is forwarded in pieces), and at most 16384 commands per connection wait for replies
before the tap stops reading that client. A node that fails affects only the connections to
it. SIGINT or SIGTERM ends the recording cleanly (an end line, exit status 0). For high
command rates prefer a plain .jsonl (zstd costs CPU; see BENCHMARKS.md).";

const TAP_AFTER: &str = "\
Examples:
  slotscope tap --upstream 10.0.0.5:6379 --listen 127.0.0.1:7400 --out client.jsonl
  slotscope tap --upstream 127.0.0.1:7000 --listen 127.0.0.1:0 --poll 1s --out r.jsonl
  slotscope analyze client.jsonl      # per-command MOVED share as the client saw it";

#[derive(clap::Args, Debug)]
struct TapArgs {
    /// The cluster node the client would connect to, HOST:PORT.
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_addr)]
    upstream: NodeAddr,
    /// Where the client connects instead, IP:PORT (port 0: any free port, printed at start). The IP
    /// is also the one written into rewritten replies: not 0.0.0.0.
    #[arg(long, value_name = "IP:PORT")]
    listen: std::net::SocketAddr,
    /// File to write; a name ending in .zst is zstd-compressed.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Ports of the other nodes' listeners: the next free port after the previous listener's, or
    /// any free port.
    #[arg(long, value_enum, default_value = "next")]
    node_ports: tap::listener::NodePorts,
    /// Record the first key's name of each command (never recorded otherwise).
    #[arg(long)]
    record_keys: bool,
    /// Also poll every node at this interval, as `record` does, into the same file (no login:
    /// for clusters without a password).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    poll: Option<Duration>,
    /// Stop after this long; without it, run until Ctrl-C / SIGTERM.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Compress with zstd whatever the file name.
    #[arg(long)]
    compress: bool,
    /// Overwrite FILE if it exists.
    #[arg(long)]
    force: bool,
    /// No messages on stderr but errors.
    #[arg(long, short)]
    quiet: bool,
}

const REPLAY_ABOUT: &str = "\
Replay a workload against the cluster a recording describes (slot owners, migrations and node
failures over time, the failures taken from poll_failed timeouts and connection errors) through a
model of a client library, and report what the client would have done: MOVED share per command,
errors as the application sees them, full re-initialisations, new connections, and whether the
client ended wedged (no startup node left).

Every model takes --set startup_nodes=HOST:PORT[,...] (default: the recording's seed) and
socket_timeout=SECONDS (a timeout costs the client that long; default: waiting not modelled); the
models and their own options, named as the library names them, are listed below.

The workload is --rate evenly spaced commands per second over the recording's span (default: the
business command rate the recording's INFO samples show, per node the median over the intervals
with any, summed; 100 if none), each on one of --keys keys (key:{0}, key:{1}, …) drawn with --seed.";

/// The models and their options, for `replay --help`.
fn replay_models_help() -> String {
    let mut s = String::from("Models:\n");
    for m in slotscope_core::replay::MODELS {
        s.push_str(&format!("  {}\n      {}\n", m.name, m.about));
        for (name, about) in m.options {
            s.push_str(&format!("      --set {name}=…\n          {about}\n"));
        }
    }
    s
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ReplayFormat {
    Text,
    Json,
    Markdown,
}

#[derive(clap::Args, Debug)]
struct ReplayArgs {
    /// A recording (.jsonl or .jsonl.zst).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Client model (listed at the end of --help).
    #[arg(long, value_name = "NAME")]
    model: String,
    /// A model option, KEY=VALUE (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Commands per second [default: the business command rate observed in the recording, else 100].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    rate: Option<u32>,
    /// Number of distinct keys.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..))]
    keys: u32,
    /// Replay this command only [default: the business command mix the recording shows, else
    /// zadd].
    #[arg(long, value_name = "NAME")]
    command: Option<String>,
    /// Commands the application has in flight at most (tasks or threads sharing the client); with
    /// socket_timeout set, a command scheduled while all of them wait on a timeout is not issued.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    concurrency: u32,
    /// Seed of the workload's key choice and of the migration coin.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReplayFormat,
}

const RECORD_ABOUT: &str = "\
Record a live cluster into one file.

Starting from one seed address (a configuration endpoint is typical), slotscope discovers every node
(CLUSTER SHARDS, falling back to CLUSTER SLOTS / CLUSTER NODES), polls all of them concurrently every
--interval and keeps following the topology: a node added mid-recording is polled from the next round
on, a node that no other node lists any more is recorded as gone, a node that fails 3 polls in a row
is recorded as unreachable (and as recovered when it answers again). Each poll takes the node's
topology (recorded when it changes), INFO (server, clients, stats, commandstats, errorstats, keyspace,
memory) and CLIENT LIST. One slow or dead node never delays the others: each poll has its own
--timeout, and a failure is recorded as an event.

The collector is read-only: it sends only CLUSTER SHARDS/SLOTS/NODES/INFO, INFO, CLIENT LIST, PING
and AUTH/HELLO to log in; any other command is refused before it reaches the network. An ACL user
allowed just these is enough, e.g.
  ACL SETUSER slotscope on >PASSWORD -@all +cluster|shards +cluster|slots +cluster|nodes
      +cluster|info +info +client|list +ping +auth +hello

The file is written as JSON Lines (zstd-compressed when FILE ends in .zst or with --compress) and
flushed after every poll round. SIGINT or SIGTERM ends the recording cleanly: the current round is
written, an end line is added and slotscope exits 0.";

const RECORD_AFTER: &str = "\
Passwords are never taken on the command line (they would show in ps and in shell history): set
SLOTSCOPE_PASSWORD or use --password-file. They never appear in the recording, logs or errors.

Examples:
  slotscope record --seed clustercfg.example.cache.amazonaws.com:6379 --tls --out incident.jsonl.zst
  SLOTSCOPE_PASSWORD=... slotscope record --seed 10.0.0.5:6379 --user slotscope --out r.jsonl --duration 10m";

#[derive(clap::Args, Debug)]
struct RecordArgs {
    /// Address of one cluster node or of the configuration endpoint, HOST:PORT.
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_addr)]
    seed: NodeAddr,
    /// File to write; a name ending in .zst is zstd-compressed.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Time between polls of each node (e.g. 500ms, 1s, 5s).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    interval: Duration,
    /// Stop after this long (e.g. 90s, 10m, 2h); without it, record until Ctrl-C / SIGTERM.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Give up on a node's poll after this long [default: 4/5 of --interval].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    timeout: Option<Duration>,
    /// Compress with zstd whatever the file name.
    #[arg(long)]
    compress: bool,
    /// Overwrite FILE if it exists (by default an existing file is never touched).
    #[arg(long)]
    force: bool,
    /// Take CLIENT LIST every N polls of a node (it is the largest reply on busy nodes).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    client_list_every: u32,
    /// Connect with TLS (certificate verified against the Mozilla roots or --cacert).
    #[arg(long)]
    tls: bool,
    /// PEM file of the CA(s) that signed the servers' certificates (implies --tls).
    #[arg(long, value_name = "FILE")]
    cacert: Option<PathBuf>,
    /// Do not verify the servers' certificates (implies --tls).
    #[arg(long)]
    insecure: bool,
    /// ACL user name to log in as (password from SLOTSCOPE_PASSWORD or --password-file).
    #[arg(long, value_name = "NAME")]
    user: Option<String>,
    /// File whose first line is the password (else the SLOTSCOPE_PASSWORD environment variable).
    #[arg(long, value_name = "FILE")]
    password_file: Option<PathBuf>,
    /// Refused: passwords are not taken on the command line.
    #[arg(long, hide = true, value_name = "PASSWORD", num_args = 0..=1)]
    password: Option<Option<String>>,
    /// No progress line, even on a terminal.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SummaryFormat {
    Text,
    Json,
}

const ANALYZE_ABOUT: &str = "\
Analyse a recording and print a report: the findings (most important first), each with its time
span, the numbers behind it and an explanation; a timeline of topology changes; per-shard traffic
before and after each change; and the client census from CLIENT LIST.

Findings (JSON `kind`): idle_shard (a shard owns slots but gets no commands after a change),
redirect_storm (sustained MOVED/ASK, attributed to the client group whose commands carry it),
redirects_decayed (the normal tail after a reshard), connection_churn (new connections/s far above
open ones), client_group_lost (traffic vanishes or turns into errors after a change), slot_coverage
(unowned or disputed slots), known_client_defect (a library version with a known routing defect).

--format markdown is ready to paste into a postmortem; --format json has `findings` ordered by
importance. Unreadable lines are reported with their number and the rest is analysed.";

#[derive(Clone, Copy, Debug, ValueEnum)]
enum AnalyzeFormat {
    Text,
    Json,
    Markdown,
}

#[derive(clap::Args, Debug)]
struct AnalyzeArgs {
    /// A recording (.jsonl or .jsonl.zst).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: AnalyzeFormat,
}

#[derive(clap::Args, Debug)]
struct SummaryArgs {
    /// A recording (.jsonl or .jsonl.zst).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: SummaryFormat,
}

#[derive(clap::Args, Debug)]
struct ImportArgs {
    /// The recording to add to (.jsonl or .jsonl.zst); it is appended to, never rewritten.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The outside evidence: a cloud event log or an application log (`-`: standard input).
    #[arg(long, value_name = "EVENTS")]
    events: PathBuf,
    /// What EVENTS is.
    #[arg(long, value_enum, default_value = "auto")]
    format: import::ImportFormat,
    /// Date of lines that carry only a time of day [default: the recording's start date].
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = import::parse_date)]
    date: Option<slotscope_core::evidence::Date>,
    /// The annotations' source [default: cloud_event_log or app_log].
    #[arg(long, value_name = "NAME", value_parser = import::parse_source)]
    source: Option<String>,
    /// Print the annotations that would be added; write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// A tokio runtime with `workers` threads, or the exit status after saying why there is none.
pub(crate) fn start_runtime(workers: usize) -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("error: cannot start the runtime: {e}");
            ExitCode::FAILURE
        })
}

/// The output file of `record` or `tap`, or the exit status after saying why it cannot be made.
fn create_sink(
    out: &std::path::Path,
    zstd: Option<i32>,
    force: bool,
) -> Result<FileSink, ExitCode> {
    FileSink::create(out, zstd, force).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            eprintln!(
                "error: {} already exists; choose another --out or pass --force to overwrite it",
                out.display()
            );
        } else {
            eprintln!("error: cannot create {}: {e}", out.display());
        }
        ExitCode::from(2)
    })
}

fn parse_addr(s: &str) -> Result<NodeAddr, String> {
    s.parse()
        .map_err(|e: slotscope_core::node::AddrError| e.to_string())
}

/// Parses `250ms`, `1s`, `1.5s`, `10m`, `2h` (a bare number is seconds).
fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (examples: 500ms, 1s, 10m, 2h)"))?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}` (use ms, s, m or h)"
            ))
        }
    };
    if !(secs.is_finite() && secs > 0.0 && secs < 1e9) {
        return Err(format!("`{s}` must be a positive duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Cmd::Record(args) => run_record(args),
        Cmd::Summary(args) => run_summary(args),
        Cmd::Analyze(args) => run_analyze(args),
        Cmd::Import(args) => run_import(args),
        Cmd::Replay(args) => run_replay(args),
        Cmd::Hypotheses(args) => run_hypotheses(args),
        Cmd::Serve(args) => serve::run(args, shutdown_signal),
        Cmd::Tap(args) => run_tap(args),
    }
}

fn run_tap(args: TapArgs) -> ExitCode {
    if args.listen.ip().is_unspecified() {
        eprintln!(
            "error: --listen {} is not an address a client can be redirected to; give the IP the \
             client reaches this host at (e.g. 127.0.0.1 or 10.0.0.7)",
            args.listen
        );
        return ExitCode::from(2);
    }
    let compress = args.compress || sink::wants_zstd(&args.out);
    let zstd = compress.then_some(sink::TAP_ZSTD_LEVEL);
    let sink = match create_sink(&args.out, zstd, args.force) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let poll = args.poll.map(|interval| RecordConfig {
        seed: args.upstream.clone(),
        interval,
        timeout: interval.mul_f64(0.8).max(Duration::from_millis(10)),
        duration: None,
        connect: ConnectOptions {
            tls: None,
            user: None,
            password: None,
        },
        client_list_every: 1,
        gone_after: 3,
    });
    let cfg = tap::TapConfig {
        upstream: args.upstream,
        listen: args.listen,
        node_ports: args.node_ports,
        record_keys: args.record_keys,
        poll,
        duration: args.duration,
        quiet: args.quiet,
    };
    let runtime = match start_runtime(2) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let out = args.out.clone();
    match runtime.block_on(tap::run(cfg, Box::new(sink), shutdown_signal())) {
        Ok(s) => {
            if !args.quiet {
                eprintln!(
                    "slotscope tap: recorded {} commands ({} MOVED, {} ASK) on {} connections to {}",
                    s.total.sent,
                    s.total.moved,
                    s.total.ask,
                    s.connections_opened,
                    out.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e @ tap::TapError::Listen { .. }) => {
            let _ = std::fs::remove_file(&out);
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_record(args: RecordArgs) -> ExitCode {
    if args.password.is_some() {
        eprintln!(
            "error: --password is not accepted: a password on the command line shows in ps and shell \
             history. Set {} or use --password-file FILE.",
            secret::PASSWORD_ENV
        );
        return ExitCode::from(2);
    }
    let password = match secret::load_password(args.password_file.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let use_tls = args.tls || args.cacert.is_some() || args.insecure;
    let tls = if use_tls {
        match tls::client_config(args.cacert.as_deref(), args.insecure) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    let timeout = args
        .timeout
        .unwrap_or_else(|| args.interval.mul_f64(0.8))
        .max(Duration::from_millis(10));
    let cfg = RecordConfig {
        seed: args.seed,
        interval: args.interval,
        timeout,
        duration: args.duration,
        connect: ConnectOptions {
            tls,
            user: args.user,
            password,
        },
        client_list_every: args.client_list_every,
        gone_after: 3,
    };
    let compress = args.compress || sink::wants_zstd(&args.out);
    let zstd = compress.then_some(sink::ZSTD_LEVEL);
    let sink = match create_sink(&args.out, zstd, args.force) {
        Ok(s) => s,
        Err(code) => return code,
    };
    // One worker: the tap's tasks are short and I/O-bound, and on a small host shared with the
    // servers and the client a second worker costs more in contention than it brings (measured in
    // BENCHMARKS.md).
    let runtime = match start_runtime(1) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let mut progress = if args.quiet {
        Progress::disabled()
    } else {
        Progress::on_stderr()
    };
    let out = args.out.clone();
    let result = runtime.block_on(async {
        recorder::record(cfg, Box::new(sink), &mut progress, shutdown_signal()).await
    });
    progress.finish();
    match result {
        Ok(stats) => {
            let f = &stats.figures;
            eprintln!(
                "slotscope: recorded {} rounds from {} nodes ({} samples, {} failures) to {} ({}), ended by {}",
                f.rounds,
                f.nodes,
                f.samples,
                f.failures,
                out.display(),
                human_bytes(std::fs::metadata(&out).map(|m| m.len()).unwrap_or(f.bytes)),
                format!("{:?}", stats.reason).to_lowercase()
            );
            ExitCode::SUCCESS
        }
        Err(e @ RecordError::Seed { .. }) => {
            // Nothing was recorded: leave no empty file behind.
            let _ = std::fs::remove_file(&out);
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    tokio::select! {
        _ = async { match term.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
        _ = async { match int.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
    }
}

fn run_summary(args: SummaryArgs) -> ExitCode {
    let read = match report::read(&args.file) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match args.format {
        SummaryFormat::Text => print!("{}", report::render_text(&read)),
        SummaryFormat::Json => {
            let mut v = serde_json::to_value(&read.summary).unwrap_or_default();
            if let Some(obj) = v.as_object_mut() {
                let bad: Vec<String> = read
                    .input
                    .bad_lines
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                obj.insert("bad_lines".into(), bad.into());
            }
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
    }
    for e in &read.input.bad_lines {
        eprintln!("warning: {e}");
    }
    if read.input.bad_lines.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run_analyze(args: AnalyzeArgs) -> ExitCode {
    let analysed = match analysis_report::analyse(&args.file) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match args.format {
        AnalyzeFormat::Text => print!("{}", analysis_report::render_text(&analysed)),
        AnalyzeFormat::Markdown => print!("{}", analysis_report::render_markdown(&analysed)),
        AnalyzeFormat::Json => println!("{}", analysis_report::render_json(&analysed)),
    }
    for e in &analysed.input.bad_lines {
        eprintln!("warning: {e}");
    }
    if analysed.input.bad_lines.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run_import(args: ImportArgs) -> ExitCode {
    let req = import::Request {
        file: args.file,
        events: args.events,
        format: args.format,
        date: args.date,
        source: args.source,
        dry_run: args.dry_run,
    };
    match import::run(&req) {
        Ok(outcome) => {
            print!("{}", outcome.report);
            for w in &outcome.warnings {
                eprintln!("warning: {w}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn run_replay(args: ReplayArgs) -> ExitCode {
    let req = replay_report::Request {
        file: &args.file,
        model: &args.model,
        set: &args.set,
        rate: args.rate,
        keys: args.keys,
        command: args.command.as_deref(),
        concurrency: args.concurrency,
        seed: args.seed,
    };
    match replay_report::run(&req) {
        Ok(report) => {
            match args.format {
                ReplayFormat::Text => print!("{}", replay_report::render_text(&report)),
                ReplayFormat::Json => println!("{}", replay_report::render_json(&report)),
                ReplayFormat::Markdown => print!("{}", replay_report::render_markdown(&report)),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Arguments of `slotscope hypotheses`.
#[derive(clap::Args, Debug)]
struct HypothesesArgs {
    /// A recording (.jsonl or .jsonl.zst).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: AnalyzeFormat,
    /// Seed of the workload's key choice and of the migration coin.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Number of distinct keys.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..))]
    keys: u32,
    /// Commands the application has in flight at most (see `replay --help`).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    concurrency: u32,
    /// socket_timeout of the redis-py variants, seconds (redis-py sets none and waits while a node
    /// is silent; the replay needs a finite wait). 0: waiting not modelled.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    redis_py_socket_timeout: f64,
}

/// Seconds in `(0, 3600]` to whole milliseconds (at least 1); `None` for 0 or anything else.
fn secs_to_ms(secs: f64) -> Option<u64> {
    if secs.is_finite() && secs > 0.0 && secs <= 3600.0 {
        // In (0, 3.6e6]: the conversion cannot truncate.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ms = (secs * 1000.0).round() as u64;
        Some(ms.max(1))
    } else {
        None
    }
}

fn run_hypotheses(args: HypothesesArgs) -> ExitCode {
    match hypotheses_report::run(
        &args.file,
        args.keys,
        args.seed,
        args.concurrency,
        secs_to_ms(args.redis_py_socket_timeout),
    ) {
        Ok(h) => {
            match args.format {
                AnalyzeFormat::Text => print!("{}", hypotheses_report::render_text(&h)),
                AnalyzeFormat::Json => println!("{}", hypotheses_report::render_json(&h)),
                AnalyzeFormat::Markdown => {
                    print!("{}", hypotheses_report::render_markdown(&h));
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_like_people_write_them() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("5d").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
