//! `slotscope analyze`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cmd::format::ReportFormat;
use crate::cmd::recording_report;
use crate::report::analysis;

/// `analyze --help`, above the options.
const LONG_ABOUT: &str = "\
Analyse a recording and print a report. It opens with the story: what happened, in time order
(nodes that stopped answering, joined or left, slots that moved, what the client groups did), each
step with its evidence and how sure it is, the root cause marked, then what the recording cannot
tell (it began mid-migration, it was cut short, ...). Then the findings, the one the root cause rests
on first, each with its time span, where it sits relative to what happened, its figures with labels
and units, and an explanation; a timeline of topology changes (the cluster's creation is not one);
per-shard traffic before and after the change; and the client census from CLIENT LIST, with the
clients inferred from counters that no poll saw.

Findings (JSON `kind`): client_group_lost (a group's successful commands fell and did not return,
found at the poll it happened in; k of n instances when the loss is a fleet's share),
client_group_paused (they fell and recovered), redirect_storm (sustained MOVED/ASK, attributed to
the client group whose commands carry it, with the node they all land on first when a remap is
likely), short_lived_clients (a client no CLIENT LIST poll saw, inferred from the counters),
idle_shard (a shard owns slots but gets no commands after a change), connection_churn (new
connections/s far above open ones), redirects_decayed (the normal tail after a reshard),
slot_coverage (unowned or disputed slots), known_client_defect (a library version with a known
routing defect, from lib-name or, on servers that reject CLIENT SETINFO, from the rejection's
fingerprint).

--format markdown is ready to paste into a postmortem; --format json has `story` (steps with
`root_cause`, `role`, `confidence`, `finding` indices; `limits`; `cut_short`) and `findings` with
their raw numbers. Unreadable lines are reported with their number and the rest is analysed; a
recording without its end line is analysed and said to be cut short.";

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
    let analysed = analysis::analyse(&args.file);
    recording_report::print(
        analysed,
        |a| &a.input,
        |a| match args.format {
            ReportFormat::Text => print!("{}", analysis::render_text(a)),
            ReportFormat::Markdown => print!("{}", analysis::render_markdown(a)),
            ReportFormat::Json => println!("{}", analysis::render_json(a)),
        },
    )
}
