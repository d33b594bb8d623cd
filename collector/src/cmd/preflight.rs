//! `slotscope preflight`: its arguments, its help and its run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use slotscope_core::preflight::{short_form, Assumption, Plan, PlanError};

use crate::cmd::exchange::ExchangeArgs;
use crate::cmd::format::ReportFormat;
use crate::cmd::hypotheses::secs_to_ms;
use crate::cmd::value_parser::parse_duration;
use crate::report::preflight;

/// `preflight --help`, above the options.
const LONG_ABOUT: &str = "\
Replay a planned change (a shard added, slots moved, a node stalled, killed, failed over, removed
or readdressed) against the clients a recording of the cluster as it is now shows, and say per
client group what the change will do to it: unaffected, a MOVED burst of N s, a storm (a MOVED
share of half or more for 2 s or more), errors for N s, or wedged
until restarted; when in the plan it starts, the figures behind it, why (the library behaviour,
with where its source does it), and what would make the change safe, each replayed: a later
release, a setting, the startup nodes, the plan at half speed.

The plan starts from the cluster the recording ends with. Each client group of the recording's
census is replayed at its rate with its command mix, as many commands in flight as it had
connections open at most (or --in-flight), through the model of the release it reports
(lib-name/lib-ver), else every model of the library its handshake names, else every model, and
the report gives the range. --assume states what the recording cannot tell.

A plan that cannot be carried out on the recording's cluster (a node it does not hold, slots the
source does not own by then, a removed node that still owns slots), a recording without any
client group, and bad options are errors with exit status 2.";

/// `preflight --help`, below the options.
const AFTER_HELP: &str = "\
Plans:
  --plan 'scale-out:+N'        N new masters join, then every master is rebalanced from 5 s
  --plan 'failover:HOST:PORT'  CLUSTER FAILOVER on a replica of that master at 0 s
  --plan plan.json             steps in order, each at a time from the plan's start:
    {\"steps\": [
      {\"at\": \"0s\",  \"add_master\": \"127.0.0.1:7006\"},
      {\"at\": \"5s\",  \"move\": {\"slots\": \"8192-16383\", \"from\": \"127.0.0.1:7000\",
                              \"to\": \"127.0.0.1:7006\", \"rate\": \"800/s\"}},
      {\"at\": \"9s\",  \"stall\": {\"node\": \"127.0.0.1:7000\", \"for\": \"2.5s\"}},
      {\"at\": \"30s\", \"failover\": {\"replica_of\": \"127.0.0.1:7001\"}},
      {\"at\": \"40s\", \"kill\": \"127.0.0.1:7002\"},
      {\"at\": \"50s\", \"remove\": \"127.0.0.1:7002\"},
      {\"at\": \"60s\", \"address_change\": {\"node\": \"127.0.0.1:7003\", \"to\": \"10.0.0.9:7003\"}}
    ]}
  slots: a range (\"0-99\"), {\"count\": N} (the source's last N) or \"rebalance\"; a failover is
  manual unless \"after_kill\": true (then 1.5 \"node_timeout\" (default 15s) and 0.75 s later:
  the failing flag, the FAIL reports and the election).

Examples:
  slotscope preflight now.jsonl.zst --plan 'scale-out:+1'
  slotscope preflight now.jsonl.zst --plan plan.json --assume 'orders=redis-py@5.0.0,socket_timeout=1'";

/// Predict, per client group of a recording, what a planned change will do to it.
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// A recording of the cluster as it is now (.jsonl or .jsonl.zst).
    #[arg(value_name = "REC")]
    file: PathBuf,
    /// The plan: a JSON file, JSON text, or a short form (scale-out:+N, failover:HOST:PORT).
    #[arg(long, value_name = "PLAN")]
    plan: String,
    /// What a group runs when the recording cannot tell: GROUP=LIB@VERSION[,option=value...]
    /// (GROUP: its label or connection name, or `*` for the commands no census group was seen
    /// running; repeatable).
    #[arg(long, value_name = "GROUP=LIB@VERSION")]
    assume: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReportFormat,
    /// Commands in flight for every group [default: each group's most connections open at once,
    /// else 8].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    in_flight: Option<u32>,
    /// How long an exchange takes.
    #[command(flatten)]
    exchange: ExchangeArgs,
    /// socket_timeout of redis-py groups whose own is not assumed, seconds (redis-py sets none;
    /// the replay needs a finite wait). 0: waiting not modelled.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    redis_py_socket_timeout: f64,
    /// How long the clients run before the plan's first step.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    lead: Duration,
    /// How long they run after the plan's last change (a wedge shows as failures to the end).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    tail: Duration,
    /// Number of distinct keys [default: the keys the nodes hold at the recording's end, else
    /// 10000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    keys: Option<u32>,
    /// Seed of the keys and of the migration coin.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
}

/// Commands in flight of a group the census tells nothing of.
const DEFAULT_IN_FLIGHT: u32 = 8;

/// The plan `text` names: a short form, a file, or JSON text.
fn read_plan(text: &str) -> Result<Plan, String> {
    if let Some(p) = short_form(text) {
        return p.map_err(|e| e.to_string());
    }
    let path = Path::new(text);
    if path.is_file() {
        let json = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the plan {}: {e}", path.display()))?;
        return Plan::from_json(&json).map_err(|e| format!("{}: {e}", path.display()));
    }
    if text.trim_start().starts_with('{') {
        return Plan::from_json(text).map_err(|e: PlanError| e.to_string());
    }
    Err(format!(
        "--plan {text:?} is no file, no JSON and no short form (scale-out:+N, failover:HOST:PORT)"
    ))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Runs `slotscope preflight`.
pub fn run(args: Args) -> ExitCode {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    };
    let plan = match read_plan(&args.plan) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let assumed = match args
        .assume
        .iter()
        .map(|a| Assumption::parse(a))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(a) => a,
        Err(e) => return fail(&format!("--assume: {e}")),
    };
    match preflight::run(&preflight::Request {
        file: &args.file,
        plan,
        assumed: &assumed,
        in_flight: args.in_flight,
        default_in_flight: DEFAULT_IN_FLIGHT,
        rtt_us: args.exchange.rtt_us,
        service_us: args.exchange.service_us,
        redis_py_socket_timeout_ms: secs_to_ms(args.redis_py_socket_timeout),
        lead_ms: millis(args.lead),
        tail_ms: millis(args.tail),
        keys: args.keys,
        seed: args.seed,
    }) {
        Ok(p) => {
            match args.format {
                ReportFormat::Text => print!("{}", preflight::render_text(&p)),
                ReportFormat::Json => println!("{}", preflight::render_json(&p)),
                ReportFormat::Markdown => print!("{}", preflight::render_markdown(&p)),
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}
