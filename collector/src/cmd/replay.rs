//! `slotscope replay`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cmd::format::ReportFormat;
use crate::cmd::shaping::ShapingArgs;
use crate::report::replay;

/// `replay --help`, above the options.
const LONG_ABOUT: &str = "\
Replay a workload against the cluster a recording describes (slot owners, migrations and node
failures over time, the failures taken from poll_failed timeouts and connection errors) through a
model of a client library, and report what the client would have done: MOVED share per command,
errors as the application sees them, full re-initialisations, new connections, and whether the
client ended wedged (no startup node left). A CLIENT KILL the recording knows only between two
INFO polls, and a node failure known only to have begun between the node's last answer and the
poll that failed, are replayed at 15 even moments of their windows, and the majority answers
whether the client wedged (the report says at how many it did).

Every model takes --set startup_nodes=HOST:PORT[,...] (default: the recording's seed) and
socket_timeout=SECONDS (a timeout costs the client that long; default: waiting not modelled); the
models and their own options, named as the library names them, are listed below.

--model takes a model's name or the library release you run (redis-py@8.1.0, go-redis@9.8.3):
a release resolves to the model that covers it, and the report names the model with its range
(\"redis-py@8.0.0 (covers 7.2.0–8.x)\"); a release no model covers is an error. The ranges are
listed below.

The workload is --rate commands per second (default: the business command rate the recording's
INFO samples show, per node the median over the intervals with any, summed; 100 if none), evenly
spaced (--arrivals poisson: at the times of a Poisson process of that rate), each on one of
--keys keys (key:{0}, key:{1}, …) drawn with --seed. It runs over a window
of the recording: from the first moment every one of the 16384 slots has an owner (a client
started on a cluster whose slots are not yet assigned fails until they are; the replay starts
where a working client could) to the recording's end; --from and --to choose the window (a
moment is +DURATION after the recording's start, e.g. +30s, epoch milliseconds, or RFC 3339). A
moment outside the recording, --from not before --to, and a recording whose slots are never all
covered without --from are errors (exit status 2). The report states the window and why it
starts there.

The application issues commands in --concurrency sequential lanes (the default, 1 lane), or as
tasks with at most --in-flight commands in flight: each exchange then takes --rtt-ms plus the
command's service time (its median usec_per_call over the recording's INFO commandstats, or
--service-us).";

/// `replay --help`, below the options: the models and their options.
fn after_help() -> String {
    let mut s = String::from("Models:\n");
    for m in slotscope_core::replay::MODELS {
        let covers = slotscope_core::replay::covers(m.name)
            .map(|c| format!(" (covers {} {})", c.library, c.range))
            .unwrap_or_default();
        s.push_str(&format!("  {}{covers}\n      {}\n", m.name, m.about));
        for o in m.options {
            s.push_str(&format!("      --set {}=…\n          {}\n", o.name, o.doc));
        }
    }
    s
}

/// When the replayed application's commands come.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Arrivals {
    /// Evenly spaced at the rate.
    Even,
    /// At the times of a Poisson process of the rate.
    Poisson,
}

/// Replay a workload against the recorded cluster through a client library model.
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT, after_help = after_help())]
pub struct Args {
    /// A recording (.jsonl or .jsonl.zst).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Client model, or the library release you run (redis-py@8.1.0): the models and the
    /// releases each covers are listed at the end of --help.
    #[arg(long, value_name = "NAME|LIBRARY@VERSION")]
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
    /// The application's shape and the window replayed.
    #[command(flatten)]
    shaping: ShapingArgs,
    /// Seed of the workload's key choice and of the migration coin.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// When the commands come: evenly spaced at --rate, or at the times of a Poisson process of
    /// that rate (independent requests; several may come at once), drawn with --seed.
    #[arg(long, value_enum, default_value = "even")]
    arrivals: Arrivals,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReportFormat,
}

/// Runs `slotscope replay`.
pub fn run(args: Args) -> ExitCode {
    let req = replay::Request {
        file: &args.file,
        model: &args.model,
        set: &args.set,
        rate: args.rate,
        keys: args.keys,
        command: args.command.as_deref(),
        shaping: args.shaping.shaping(),
        seed: args.seed,
        poisson: args.arrivals == Arrivals::Poisson,
    };
    match replay::run(&req) {
        Ok(report) => {
            match args.format {
                ReportFormat::Text => print!("{}", replay::render_text(&report)),
                ReportFormat::Json => println!("{}", replay::render_json(&report)),
                ReportFormat::Markdown => print!("{}", replay::render_markdown(&report)),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
