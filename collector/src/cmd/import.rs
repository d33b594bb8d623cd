//! `slotscope import`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::import::evidence;

/// `import --help`, above the options.
const LONG_ABOUT: &str = "\
Add outside evidence to a recording: a cloud provider's event log (scale-out, slot migration,
failover) or an application's error log, as `annotation` lines that `summary` and `analyze` show
next to what the cluster recorded.

FILE is appended to, never rewritten: a plain recording gets new lines at its end, a zstd
recording a new zstd frame (readers read concatenated frames). A recording that ends in a
partial line (cut short by a crash) is refused, since lines appended after it would be
unreadable, and so is a recording still being written (no end line, written to within the last
10 s or 3 poll intervals): let it end first. Annotations already in FILE (same
time, source and text) are not added again. On any error met before writing, FILE is left
untouched and slotscope exits with status 2.

Cloud event logs (--format cloud): one event per line, the time first, then the message (tab-,
space- or CSV-separated). Each line becomes one annotation, with a `kind` when the message says
what happened: scaling_start, node_group_added, node_added, migration_start, migration_done,
scaling_done, node_group_removed, failover. The JSON printed by `aws elasticache
describe-events` is read too. Lines without a time (a CSV heading) are skipped.

Application logs (--format applog): timestamped text lines (Python's default asctime format, ISO
8601) or JSON lines (time in timestamp/time/ts/@timestamp, message in message/msg, class in
exc_type/error.type/exception/error, level in level/severity). A line is an error when it names
an error class (RedisClusterException, ConnectionError, MovedError, ...) or has an error level.
Errors are counted per second per class and message (numbers ignored); each count becomes one
annotation `12 × Class: message`. Lines without a time (tracebacks) belong to the line before;
they are not counted, but the last `Class: message` line of a traceback names the class of an
error line that named none.

--format auto (the default): JSON lines, lines naming an error class, or timestamped lines with
an upper-case level (ERROR, INFO, ...) make an application log; anything else is a cloud event
log.

Times without a zone are read as UTC. A time of day alone takes its date from --date, else from
the recording's start: it is placed within 12 hours of the start (a time more than 12 h earlier
than the start's time of day is on the next day), and each further line within 12 hours of the
one before, so a log that runs past midnight moves on to the next day.";

/// `import --help`, below the options.
const AFTER_HELP: &str = "\
Lines slotscope reads:
  cloud   05:17:18  Migrating slots from node groups 0001 to 0002 to rebalance slots
  cloud   2025-03-14T05:21:24Z  Completed migrating 8192 of 8192 slots
  cloud   \"2025-03-14 05:15:39\",\"Added node group 0002\"
  applog  2025-03-14 05:17:30,123 ERROR app RedisClusterException: Redis Cluster cannot be ...
  applog  {\"ts\": \"2025-03-14T05:17:30.123Z\", \"level\": \"error\", \"exc_type\": \"ConnectionError\"}

Examples:
  slotscope import incident.jsonl.zst --events console-events.txt --date 2025-03-14
  slotscope import incident.jsonl.zst --events app.log --source checkout-api --dry-run
  aws elasticache describe-events --source-type replication-group --duration 360 > events.json
  slotscope import incident.jsonl --events events.json";

/// Add outside evidence (a cloud event log, an application error log) to a recording.
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The recording to add to (.jsonl or .jsonl.zst); it is appended to, never rewritten.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The outside evidence: a cloud event log or an application log (`-`: standard input).
    #[arg(long, value_name = "EVENTS")]
    events: PathBuf,
    /// What EVENTS is.
    #[arg(long, value_enum, default_value = "auto")]
    format: evidence::ImportFormat,
    /// Date of lines that carry only a time of day [default: the recording's start date].
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = evidence::parse_date)]
    date: Option<slotscope_core::evidence::Date>,
    /// The annotations' source [default: cloud_event_log or app_log].
    #[arg(long, value_name = "NAME", value_parser = evidence::parse_source)]
    source: Option<String>,
    /// Print the annotations that would be added; write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Runs `slotscope import`.
pub fn run(args: Args) -> ExitCode {
    let req = evidence::Request {
        file: args.file,
        events: args.events,
        format: args.format,
        date: args.date,
        source: args.source,
        dry_run: args.dry_run,
    };
    match evidence::run(&req) {
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
