//! `slotscope hypotheses`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cmd::format::ReportFormat;
use crate::cmd::shaping::ShapingArgs;
use crate::report::hypotheses;

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
    /// The application's shape and the window replayed.
    #[command(flatten)]
    shaping: ShapingArgs,
    /// socket_timeout of the redis-py variants, seconds (redis-py sets none and waits while a node
    /// is silent; the replay needs a finite wait). 0: waiting not modelled.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    redis_py_socket_timeout: f64,
}

/// Seconds in `(0, 3600]` to whole milliseconds (at least 1); `None` for 0 or anything else.
pub(crate) fn secs_to_ms(secs: f64) -> Option<u64> {
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
    match hypotheses::run(&hypotheses::Request {
        file: &args.file,
        keys: args.keys,
        seed: args.seed,
        redis_py_socket_timeout_ms: secs_to_ms(args.redis_py_socket_timeout),
        shaping: args.shaping.shaping(),
    }) {
        Ok(h) => {
            match args.format {
                ReportFormat::Text => print!("{}", hypotheses::render_text(&h)),
                ReportFormat::Json => println!("{}", hypotheses::render_json(&h)),
                ReportFormat::Markdown => {
                    print!("{}", hypotheses::render_markdown(&h));
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
