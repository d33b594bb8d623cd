//! `slotscope index`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::store::overview_file;
use slotscope_core::quantity::human_bytes;

/// `index --help`, above the options.
const LONG_ABOUT: &str = "\
Write the overview of recordings, for the viewer to show first.

A day-long recording at one poll a second is hundreds of megabytes of JSON, which the browser
viewer takes tens of seconds to read. Its overview (FILE.overview.json, beside FILE) holds the
analysis (story, findings, census) and every track reduced to at most 4096 points (each run of
polls as its smallest and largest value, so a one-second spike stays visible): the viewer draws the
whole recording from it at once, then reads the recording itself for detail and what-if.
`record` writes the overview of each file it closes, and `serve` of the file it serves when none
is there; this command writes it for older recordings. An existing overview is replaced.";

/// `index --help`, below the options.
const AFTER_HELP: &str = "\
Examples:
  slotscope index incident.jsonl.zst
  slotscope index /var/lib/slotscope/*.jsonl.zst";

/// Write the overview of recordings (FILE.overview.json), for the viewer to show first.
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// Recordings (.jsonl or .jsonl.zst).
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
}

/// Runs `slotscope index`: every file is tried; the exit status is a failure if any failed.
pub fn run(args: Args) -> ExitCode {
    let mut failed = 0;
    for file in &args.files {
        eprintln!("slotscope: reading {} …", file.display());
        match overview_file::write(file) {
            Ok(w) => eprintln!(
                "slotscope: {} lines, {} finding(s): wrote {} ({}) in {:.1} s",
                w.lines,
                w.findings,
                w.path.display(),
                human_bytes(w.bytes),
                w.took.as_secs_f64()
            ),
            Err(e) => {
                eprintln!("error: {e}");
                failed += 1;
            }
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
