//! `slotscope analyze`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::analysis_report;
use crate::cmd::format::ReportFormat;
use crate::cmd::recording_report;

/// `analyze --help`, above the options.
const LONG_ABOUT: &str = "\
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

/// Analyse a recording: findings with their evidence, timeline, per-shard traffic, client census.
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT)]
pub struct Args {
    /// A recording (.jsonl or .jsonl.zst).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReportFormat,
}

/// Runs `slotscope analyze`.
pub fn run(args: Args) -> ExitCode {
    let analysed = analysis_report::analyse(&args.file);
    recording_report::print(
        analysed,
        |a| &a.input,
        |a| match args.format {
            ReportFormat::Text => print!("{}", analysis_report::render_text(a)),
            ReportFormat::Markdown => print!("{}", analysis_report::render_markdown(a)),
            ReportFormat::Json => println!("{}", analysis_report::render_json(a)),
        },
    )
}
