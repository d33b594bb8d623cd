//! `slotscope record`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use slotscope_core::NodeAddr;

use crate::cmd::output::create_sink;
use crate::cmd::runtime;
use crate::cmd::value_parser::{parse_addr, parse_duration, parse_size};
use crate::node::connection::ConnectOptions;
use crate::node::{secret, tls};
use crate::progress::Progress;
use crate::record::recorder::{self, RecordConfig, RecordError};
use crate::record::topology_watch::DEFAULT_TOPOLOGY_EVERY;
use crate::serve::metrics as metrics_server;
use crate::store::retention::Retention;
use crate::store::rotation::RotatingSink;
use crate::store::sink;
use crate::store::sink::Sink;
use slotscope_core::quantity::human_bytes;

/// `record --help`, above the options.
const LONG_ABOUT: &str = "\
Record a live cluster into one file.

Starting from one seed address (a configuration endpoint is typical), slotscope discovers every node
(CLUSTER SHARDS, falling back to CLUSTER SLOTS / CLUSTER NODES), polls all of them concurrently every
--interval and keeps following the topology: a node added mid-recording is polled from the next round
on, a node that no other node lists any more is recorded as gone, a node that fails 3 polls in a row
is recorded as unreachable (and as recovered when it answers again). Each poll takes the node's INFO
(server, clients, stats, commandstats, errorstats, keyspace, memory), CLUSTER INFO and CLIENT LIST;
its whole topology (recorded when it changes) on its first poll, whenever CLUSTER INFO, its slot
commands or its ASK replies change, and otherwise every --topology-every polls. One slow or dead node
never delays the others: each poll has its own --timeout, and a failure is recorded as an event.

The collector is read-only: it sends only CLUSTER SHARDS/SLOTS/NODES/INFO, INFO, CLIENT LIST, PING
and AUTH/HELLO to log in; any other command is refused before it reaches the network. An ACL user
allowed just these is enough, e.g.
  ACL SETUSER slotscope on >PASSWORD -@all +cluster|shards +cluster|slots +cluster|nodes
      +cluster|info +info +client|list +ping +auth +hello
(deploy/acl.md has the full line, tested on Redis 7.0 and Valkey 8.1).

The file is written as JSON Lines (zstd-compressed when FILE ends in .zst or with --compress) and
flushed after every poll round. SIGINT or SIGTERM ends the recording cleanly: the current round is
written, an end line is added and slotscope exits 0. Then the file's overview is written beside it
(FILE.overview.json, which the viewer shows first; see `slotscope index --help`).

Always on: when --out names a directory (it ends in / or is one), slotscope writes one file per
--rotate period (default 1h; periods are aligned on multiples of it, UTC), named by its start time
(slotscope-20261201T051700Z.jsonl.zst). Each file is complete on its own: its header, the nodes
polled, every node's topology and INFO from its first round on, and an end line (reason `rotated`)
when its period ends. Every round is put on disk (fdatasync) before the next one starts, so a
crash or a power loss loses at most the round being written; a file cut short reads back up to
its last complete round. Files beyond --retain (age of their last write) or --retain-size (all
files together) are deleted, oldest first, never the one being written, each with its overview
(written when its period ends). `slotscope cut DIR --from
T --to T --out FILE` joins the files that cover a window into one recording.";

/// `record --help`, below the options.
const AFTER_HELP: &str = "\
Passwords are never taken on the command line (they would show in ps and in shell history): set
SLOTSCOPE_PASSWORD or use --password-file. They never appear in the recording, logs or errors.

Examples:
  slotscope record --seed clustercfg.example.cache.amazonaws.com:6379 --tls --out incident.jsonl.zst
  SLOTSCOPE_PASSWORD=... slotscope record --seed 10.0.0.5:6379 --user slotscope --out r.jsonl --duration 10m
  slotscope record --seed 10.0.0.5:6379 --out /var/lib/slotscope/ --rotate 1h --retain 7d --quiet

A systemd unit and the least-privilege ACL user for an always-on collector are in deploy/.

Signals for monitoring: with --metrics-listen 127.0.0.1:9187, GET /metrics answers in OpenMetrics
(from each node's last interval): slotscope_moved_share{node,cmd} (rejected / attempted calls of a
business command), slotscope_new_connections_per_second{node}, slotscope_connected_clients{node},
slotscope_topology_refreshes_per_second{node} (clients' CLUSTER SLOTS/SHARDS/NODES),
slotscope_idle_shard{node} (owns slots, others serve, it served nothing for 5 intervals),
slotscope_client_groups_with_known_defect{library,version}, and the collector's own health:
slotscope_poll_rounds_total, slotscope_poll_failures_total{node}, slotscope_round_seconds,
slotscope_round_overruns_total. A non-loopback address is refused (no authentication). Alert rules
and their promtool tests: deploy/prometheus/.";

/// Period of each file of an always-on recording when --rotate is not given.
const DEFAULT_ROTATE: Duration = Duration::from_secs(3600);

/// Whether `--out` names a directory: it ends in a path separator or is an existing directory.
fn is_directory(out: &std::path::Path) -> bool {
    out.as_os_str()
        .to_str()
        .is_some_and(|s| s.ends_with(std::path::MAIN_SEPARATOR))
        || out.is_dir()
}

/// Consecutive failed polls after which a node is recorded as unreachable.
pub const GONE_AFTER: u32 = 3;

/// Worker threads of `record`'s runtime. One: the recorder's work is one short, I/O-bound poll
/// per node and interval. Not measured against two; the tap's measurement (BENCHMARKS.md, tap,
/// "Runtime workers") does not carry over: the tap forwards every byte of a busy client.
const WORKERS: usize = 1;

/// Record a live cluster into one file (JSON Lines, optionally zstd).
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// Address of one cluster node or of the configuration endpoint, HOST:PORT.
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_addr)]
    seed: NodeAddr,
    /// File to write (a name ending in .zst is zstd-compressed), or a directory (ending in / or
    /// existing) to write one file per --rotate period into.
    #[arg(long, value_name = "FILE|DIR/")]
    out: PathBuf,
    /// With --out DIR/: length of each file's period (e.g. 10m, 1h, 1d) [default: 1h].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    rotate: Option<Duration>,
    /// With --out DIR/: delete files whose last write is older than this (e.g. 7d, 36h).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    retain: Option<Duration>,
    /// With --out DIR/: delete the oldest files while all together are larger than this (e.g.
    /// 2GB, 500MB, 1GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    retain_size: Option<u64>,
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
    /// Take CLIENT LIST every N polls of a node (it is the largest reply on busy nodes). A node
    /// whose last list had n > 500 connections is asked every max(N, ceil(n / 500)) polls
    /// (5,000 connections: every 10th); after a node's first list in a file, lists are written
    /// as the changes since the previous one (client_list_delta lines: new or changed
    /// connections whole, closed ones by id), which every reader rebuilds whole.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    client_list_every: u32,
    /// Ask a node's whole topology (CLUSTER NODES and CLUSTER SHARDS, the costly part of a poll
    /// on a large cluster) at the latest every N polls; sooner on its first poll, after a failure,
    /// and whenever its CLUSTER INFO (epochs, state, slot counts, known nodes, size), its slot
    /// commands (SETSLOT, ADDSLOTS, …) or its ASK replies change. 1 asks it every poll.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TOPOLOGY_EVERY, value_parser = clap::value_parser!(u32).range(1..))]
    topology_every: u32,
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
    /// Serve the derived signals (MOVED share, churn, topology refreshes, idle shards, client
    /// groups with a known defect, poll health) at http://ADDR/metrics in OpenMetrics, for
    /// Prometheus to scrape. Loopback addresses only (e.g. 127.0.0.1:9187).
    #[arg(long, value_name = "ADDR:PORT")]
    metrics_listen: Option<std::net::SocketAddr>,
    /// No progress line, even on a terminal.
    #[arg(long, short)]
    quiet: bool,
}

/// Binds the `--metrics-listen` address, or the exit status after saying why not.
fn listen(addr: std::net::SocketAddr) -> Result<std::net::TcpListener, ExitCode> {
    if let Some(why) = metrics_server::refusal(&addr) {
        eprintln!("error: {why}");
        return Err(ExitCode::from(2));
    }
    metrics_server::bind(addr).map_err(|e| {
        eprintln!("error: --metrics-listen {addr}: {e}");
        ExitCode::from(2)
    })
}

/// Runs `slotscope record`.
pub fn run(args: Args) -> ExitCode {
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
        topology_every: args.topology_every,
        gone_after: GONE_AFTER,
    };
    let metrics_listener = match args.metrics_listen.map(listen).transpose() {
        Ok(l) => l,
        Err(code) => return code,
    };
    let directory = is_directory(&args.out);
    if !directory && (args.rotate.is_some() || args.retain.is_some() || args.retain_size.is_some())
    {
        eprintln!(
            "error: --rotate, --retain and --retain-size need --out to name a directory (end it \
             with /): {} is a file",
            args.out.display()
        );
        return ExitCode::from(2);
    }
    // The runtime, and the signals listened for, before the file exists: a SIGTERM from then on
    // ends the recording cleanly.
    let runtime = match runtime::start(WORKERS) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let shutdown = runtime::Shutdown::listen(&runtime);
    let (sink, out): (Box<dyn Sink>, PathBuf) = if directory {
        let period = args.rotate.unwrap_or(DEFAULT_ROTATE);
        if period < Duration::from_secs(1) || period < args.interval {
            eprintln!(
                "error: --rotate must be at least 1s and at least --interval ({} ms)",
                args.interval.as_millis()
            );
            return ExitCode::from(2);
        }
        let retention = Retention {
            max_age: args.retain,
            max_bytes: args.retain_size,
        };
        match RotatingSink::create(&args.out, period, retention, crate::record::clock::now()) {
            Ok(s) => {
                let path = s.current_path().to_owned();
                (Box::new(s), path)
            }
            Err(e) => {
                eprintln!("error: cannot write into {}: {e}", args.out.display());
                return ExitCode::from(2);
            }
        }
    } else {
        let compress = args.compress || sink::wants_zstd(&args.out);
        let zstd = compress.then_some(sink::ZSTD_LEVEL);
        match create_sink(&args.out, zstd, args.force) {
            Ok(s) => (Box::new(s), args.out.clone()),
            Err(code) => return code,
        }
    };
    let sink: Box<dyn Sink> = match metrics_listener {
        Some(listener) => {
            let signals = metrics_server::SharedSignals::default();
            runtime.spawn(metrics_server::serve(listener, signals.clone()));
            Box::new(metrics_server::SignalSink::new(sink, signals))
        }
        None => sink,
    };
    let mut progress = if args.quiet {
        Progress::disabled()
    } else {
        Progress::on_stderr()
    };
    let result = runtime
        .block_on(async { recorder::record(cfg, sink, &mut progress, shutdown.wait()).await });
    progress.finish();
    match result {
        Ok(stats) => {
            // The viewer's overview (a rotating sink wrote the one of each file it closed).
            if !directory {
                crate::store::overview_file::write_or_report(&out);
            }
            let f = &stats.figures;
            eprintln!(
                "slotscope: recorded {} rounds from {} nodes ({} samples, {} failures) to {} ({}), ended by {}",
                f.rounds,
                f.nodes,
                f.samples,
                f.failures,
                args.out.display(),
                human_bytes(if directory {
                    f.bytes
                } else {
                    std::fs::metadata(&out).map(|m| m.len()).unwrap_or(f.bytes)
                }),
                format!("{:?}", stats.reason).to_lowercase()
            );
            ExitCode::SUCCESS
        }
        Err(e @ RecordError::Seed { .. }) => {
            // Nothing was recorded, and nothing is left: the file had its temporary name still,
            // and dropping the sink deleted it (an existing FILE, with --force, is untouched).
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
