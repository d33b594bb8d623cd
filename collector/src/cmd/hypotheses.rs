//! `slotscope hypotheses`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cmd::format::ReportFormat;
use crate::cmd::value_parser::{parse_rtt_ms, parse_time, TimeArg};
use crate::hypotheses_report;

/// Rank client variants (model × configuration × faults) by how well each reproduces a recording.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A recording (.jsonl or .jsonl.zst).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReportFormat,
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
    /// Start of the window replayed (see `replay --help`) [default: the first moment every slot
    /// is covered].
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    from: Option<TimeArg>,
    /// End of the window replayed [default: the recording's end].
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    to: Option<TimeArg>,
    /// Issue commands as tasks with at most N in flight (see `replay --help`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    in_flight: Option<u32>,
    /// Network round trip per exchange, milliseconds [default: 0.25].
    #[arg(long = "rtt-ms", value_name = "MS", value_parser = parse_rtt_ms)]
    rtt_us: Option<u32>,
    /// Service time of every command, microseconds [default: from INFO commandstats].
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u32).range(0..=60_000_000))]
    service_us: Option<u32>,
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

/// Runs `slotscope hypotheses`.
pub fn run(args: Args) -> ExitCode {
    match hypotheses_report::run(&hypotheses_report::Request {
        file: &args.file,
        keys: args.keys,
        seed: args.seed,
        concurrency: args.concurrency,
        redis_py_socket_timeout_ms: secs_to_ms(args.redis_py_socket_timeout),
        from: args.from,
        to: args.to,
        in_flight: args.in_flight,
        rtt_us: args.rtt_us,
        service_us: args.service_us,
    }) {
        Ok(h) => {
            match args.format {
                ReportFormat::Text => print!("{}", hypotheses_report::render_text(&h)),
                ReportFormat::Json => println!("{}", hypotheses_report::render_json(&h)),
                ReportFormat::Markdown => {
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
