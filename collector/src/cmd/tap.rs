//! `slotscope tap`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use slotscope_core::NodeAddr;

use crate::cmd::output::create_sink;
use crate::cmd::record::GONE_AFTER;
use crate::cmd::runtime;
use crate::cmd::value_parser::{parse_addr, parse_duration};
use crate::node::connection::ConnectOptions;
use crate::record::recorder::RecordConfig;
use crate::record::topology_watch::DEFAULT_TOPOLOGY_EVERY;
use crate::store::sink;
use crate::tap;

/// `tap --help`, above the options.
const LONG_ABOUT: &str = "\
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

/// `tap --help`, below the options.
const AFTER_HELP: &str = "\
Examples:
  slotscope tap --upstream 10.0.0.5:6379 --listen 127.0.0.1:7400 --out client.jsonl
  slotscope tap --upstream 127.0.0.1:7000 --listen 127.0.0.1:0 --poll 1s --out r.jsonl
  slotscope analyze client.jsonl      # per-command MOVED share as the client saw it";

/// Worker threads of the tap's runtime. Two: on the 2-core host that also runs the servers and
/// the client, two workers carried about 38 % more pipelined throughput than one, at the same
/// unpipelined latency (BENCHMARKS.md, tap, "Runtime workers").
const WORKERS: usize = 2;

/// Proxy a real client's connections to a cluster and record its routing: which node each
/// command went to and what came back.
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT, after_help = AFTER_HELP)]
pub struct Args {
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
    node_ports: tap::registry::NodePorts,
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

/// Runs `slotscope tap`.
pub fn run(args: Args) -> ExitCode {
    if args.listen.ip().is_unspecified() {
        eprintln!(
            "error: --listen {} is not an address a client can be redirected to; give the IP the \
             client reaches this host at (e.g. 127.0.0.1 or 10.0.0.7)",
            args.listen
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
        topology_every: DEFAULT_TOPOLOGY_EVERY,
        gone_after: GONE_AFTER,
    });
    let cfg = tap::TapConfig {
        upstream: args.upstream,
        listen: args.listen,
        node_ports: args.node_ports,
        record_keys: args.record_keys,
        poll,
        duration: args.duration,
        quiet: args.quiet,
        queued_lines: tap::writer::QUEUED_LINES,
    };
    let out = args.out.clone();
    match runtime.block_on(tap::run(cfg, Box::new(sink), shutdown.wait())) {
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
                if s.not_recorded + s.events_not_recorded > 0 {
                    eprintln!(
                        "slotscope tap: {} more commands and {} connection events were forwarded \
                         but not recorded: the recording's writer fell behind (the clients were \
                         not held back; the file says so in an annotation)",
                        s.not_recorded, s.events_not_recorded
                    );
                }
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
