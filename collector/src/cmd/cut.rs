//! `slotscope cut`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cmd::value_parser::parse_time;
use crate::store::cut::{self, CutError};
use slotscope_core::moment::Moment;
use slotscope_core::quantity::human_bytes;

/// `cut --help`, above the options.
const LONG_ABOUT: &str = "\
Join the files of an always-on recording (record --out DIR/ --rotate …) that cover a window into
one recording.

The files whose periods meet [--from, --to] are read oldest first; the poll rounds that start in
the window are written, numbered from 0, under one header (the first file's, starting at the
window), with one end line. What was known before the window (the polled nodes, those unreachable,
each node's last topology) is written at its start, so the cut stands alone even when the window
starts in the middle of a file; what each file repeats at its start is left out. A file cut short
by a crash is read up to its last complete line (and said so). The output is written to FILE.tmp
and renamed to FILE when complete; it is zstd-compressed when FILE ends in .zst.";

/// `cut --help`, below the options.
const AFTER_HELP: &str = "\
Moments (--from, --to): +DURATION after the start of the oldest file in DIR (+30s, +2h, +1d),
epoch milliseconds (1741929434000) or RFC 3339 (2025-03-14T05:17:14Z).

Examples:
  slotscope cut /var/lib/slotscope/ --from 2026-12-01T05:10:00Z --to 2026-12-01T05:40:00Z --out incident.jsonl.zst
  slotscope analyze incident.jsonl.zst";

/// Join the files of an always-on recording that cover a window into one recording.
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The directory `record --out DIR/` writes into.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Start of the window (+DURATION after the oldest file's start, epoch ms or RFC 3339).
    #[arg(long, value_name = "T", value_parser = parse_time)]
    from: Moment,
    /// End of the window (same forms as --from).
    #[arg(long, value_name = "T", value_parser = parse_time)]
    to: Moment,
    /// The recording to write (zstd-compressed when it ends in .zst).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Overwrite FILE if it exists.
    #[arg(long)]
    force: bool,
}

/// Runs `slotscope cut`.
pub fn run(args: Args) -> ExitCode {
    if args.out.exists() && !args.force {
        eprintln!(
            "error: {} already exists; choose another --out or pass --force to overwrite it",
            args.out.display()
        );
        return ExitCode::from(2);
    }
    match cut::cut(&args.dir, args.from, args.to, &args.out) {
        Ok(r) => {
            let size = std::fs::metadata(&args.out).map_or(0, |m| m.len());
            eprintln!(
                "slotscope: cut {} to {} from {} file(s): {} rounds, {} lines, {} to {}",
                r.from.to_rfc3339(),
                r.to.to_rfc3339(),
                r.files.len(),
                r.rounds,
                r.lines,
                human_bytes(size),
                args.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e @ (CutError::EmptyWindow { .. } | CutError::NothingCovers { .. })) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
