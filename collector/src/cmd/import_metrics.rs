//! `slotscope import-metrics`: its arguments, its help and its run.

use std::path::PathBuf;
use std::process::ExitCode;

use slotscope_core::node::NodeAddr;
use slotscope_core::time::{format_millis, Timestamp};

use crate::cmd::value_parser::{parse_duration, parse_time};
use crate::import::http_client::{basic_auth, HttpOptions};
use crate::import::metrics::{self, Input};
use crate::node::secret::Secret;
use slotscope_core::moment::Moment;

/// `import-metrics --help`, above the options.
const LONG_ABOUT: &str = "\
Make a recording from metrics a team already keeps, when nobody ran `slotscope record`:
redis_exporter's series, from a Prometheus-compatible HTTP API (Prometheus, VictoriaMetrics,
Thanos, Mimir), from saved query_range responses, from saved scrapes, or CloudWatch's
ElastiCache metrics. `analyze`, `summary`,
`replay`, `hypotheses` and the viewer then read FILE like any recording.

Give one kind of input per run:
  --prometheus URL --from T --to T [--step 15s] [--match SELECTOR]
      asks GET URL/api/v1/query_range for redis_commands_total, redis_commands_rejected_calls_total,
      redis_commands_failed_calls_total, redis_commands_duration_seconds_total, redis_errors_total,
      redis_connections_received_total, redis_connected_clients, redis_uptime_in_seconds,
      redis_instance_info, redis_memory_used_bytes, redis_db_keys(_expiring) and redis_cluster_*,
      in pages of at most 10,000 steps. Plain http:// only (no TLS yet: use a local endpoint or an
      SSH tunnel); no authentication.
  --prometheus-json FILE...
      saved responses of /api/v1/query_range (or /api/v1/query), one query each
      (curl -G URL/api/v1/query_range --data-urlencode query=redis_commands_total ...).
  --openmetrics [HOST:PORT=]FILE...
      saved scrapes of redis_exporter's /metrics, the Prometheus text format or OpenMetrics (with
      `# EOF`); each file is one instant. A sample's own timestamp is used when it has one
      (milliseconds in the text format, seconds in OpenMetrics); otherwise the instant is --at, or
      else the file's modification time. A scrape names no node: write HOST:PORT= before the file
      unless the samples carry an `addr` or `instance` label.
  --cloudwatch-json FILE... --cloudwatch-queries QUERIES
      saved `aws cloudwatch get-metric-data` output for AWS/ElastiCache, every page in the order
      fetched (NextToken pages are merged; a PartialData result no later page continues, or a
      last page with a NextToken, is refused), and QUERIES, the JSON given to
      --metric-data-queries, whose Ids tie each result to its metric and its CacheClusterId /
      CacheNodeId dimensions. All queries must have one Period; counts (NewConnections, *Cmds)
      with Stat Sum. CurrConnections becomes connected_clients, NewConnections is accumulated
      into total_connections_received, KeyBasedCmds, StringBasedCmds, GetTypeCmds, ... become one
      command each (the metric's name in lower case; do not ask overlapping families if you sum
      them), ClusterBasedCmds becomes cluster|slots (every cluster command lumped: its spikes are
      the fingerprint of refresh storms), CurrItems the keys of db0; EngineCPUUtilization's peak
      is stated in the header; other metrics are named there as not read. A node is
      CacheClusterId:6379 (CloudWatch names no address).

Each node is the series' `addr` label, else its `instance` label (the exporter's own address
unless relabelled: relabel `instance` to the Redis address, or add an `addr` target label). Every
point in time becomes one INFO sample of its node with the counters in the fields the collector
records, so per-interval rates, counter resets (a restart or failover) included, come out as from a
recording. The header's `source` says where the data came from, its resolution (the step) and
any gap (a node without points for more than 1.5 steps); the analysis says what metrics cannot
tell: no topology, so no slot moves, and rates averaged over each step. An idle shard is found
from the keys instead: a node that filled from next to no keys (slots moved to it) but gets less
than its share of the commands after. Client groups come from redis_exporter's client list
(redis_connected_clients_details, exported with its --export-client-list) when it is there: one
CLIENT LIST entry per connection series (name, host, age, idle, last command; no library and no
connection id), else there are none.

FILE is written as FILE.tmp and renamed at the end: on any error (a file that is not a response,
an \"status\":\"error\" body, a refused connection, a partial page, no redis_exporter series) nothing is
written and slotscope exits with status 2.";

/// `import-metrics --help`, below the options.
const AFTER_HELP: &str = "\
Examples:
  slotscope import-metrics --prometheus http://127.0.0.1:9090 --from 2025-03-14T05:10:00Z \\
      --to 2025-03-14T05:40:00Z --step 15s --match 'job=\"redis\"' --out incident.jsonl.zst
  SLOTSCOPE_PROMETHEUS_PASSWORD=... slotscope import-metrics --prometheus-user reader \\
      --prometheus https://prom.example:9090 --from ... --to ... --out f.jsonl
  slotscope import-metrics --prometheus https://mimir.example/prometheus \\
      --prometheus-token-file tok --prometheus-header 'X-Scope-OrgID: ops' ... --out f.jsonl
  slotscope import-metrics --prometheus-json commands.json rejected.json errors.json --out f.jsonl
  slotscope import-metrics --openmetrics 10.0.0.5:6379=scrape-0517.prom --at 2025-03-14T05:17:00Z \\
      --out f.jsonl
  aws cloudwatch get-metric-data --metric-data-queries file://q.json --start-time ... \
      --end-time ... > page1.json   # and --next-token ... > page2.json while NextToken is set
  slotscope import-metrics --cloudwatch-queries q.json --cloudwatch-json page1.json page2.json \
      --out f.jsonl";

/// Make a recording from redis_exporter metrics (Prometheus API, saved responses or scrapes) or
/// CloudWatch's ElastiCache metrics.
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT, after_help = AFTER_HELP)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["prometheus", "prometheus_json", "openmetrics", "cloudwatch_json"])))]
pub struct Args {
    /// The recording to write (.jsonl, or .jsonl.zst compressed); replaced if it exists.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// A Prometheus-compatible HTTP API, `http[s]://HOST:PORT[/PREFIX]` (Prometheus,
    /// VictoriaMetrics, Thanos Query, Mimir's `/prometheus`).
    #[arg(long, value_name = "URL", requires_all = ["from", "to"])]
    prometheus: Option<String>,
    /// User for HTTP basic authentication to --prometheus; the password comes from the
    /// SLOTSCOPE_PROMETHEUS_PASSWORD environment variable or --prometheus-password-file.
    #[arg(
        long,
        value_name = "USER",
        requires = "prometheus",
        conflicts_with = "prometheus_token_file"
    )]
    prometheus_user: Option<String>,
    /// File whose first line is the --prometheus-user password.
    #[arg(long, value_name = "FILE", requires = "prometheus_user")]
    prometheus_password_file: Option<PathBuf>,
    /// File whose first line is a bearer token for --prometheus.
    #[arg(long, value_name = "FILE", requires = "prometheus")]
    prometheus_token_file: Option<PathBuf>,
    /// A header sent with every --prometheus query, `NAME: VALUE` (e.g. `X-Scope-OrgID: tenant`
    /// for Mimir); repeatable. Its value never shows in messages.
    #[arg(long = "prometheus-header", value_name = "NAME: VALUE", requires = "prometheus", value_parser = parse_header)]
    prometheus_headers: Vec<(String, String)>,
    /// PEM file of the CAs to trust for an https --prometheus [default: the Mozilla roots].
    #[arg(long, value_name = "FILE", requires = "prometheus")]
    prometheus_cacert: Option<PathBuf>,
    /// Do not verify the certificate of an https --prometheus (for a test endpoint only).
    #[arg(long, requires = "prometheus")]
    prometheus_insecure: bool,
    /// Start of the window asked of --prometheus (RFC 3339 or epoch milliseconds).
    #[arg(long, value_name = "T", value_parser = parse_instant)]
    from: Option<Timestamp>,
    /// End of the window asked of --prometheus (RFC 3339 or epoch milliseconds).
    #[arg(long, value_name = "T", value_parser = parse_instant)]
    to: Option<Timestamp>,
    /// Query resolution of --prometheus: the recording's interval.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_duration)]
    step: std::time::Duration,
    /// Label matchers added to every --prometheus query, e.g. `job="redis"`.
    #[arg(long = "match", value_name = "SELECTOR")]
    matchers: Option<String>,
    /// Saved query_range responses (JSON).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    prometheus_json: Vec<PathBuf>,
    /// Saved scrapes (Prometheus text format or OpenMetrics), each `[HOST:PORT=]FILE`.
    #[arg(long, value_name = "[HOST:PORT=]FILE", num_args = 1.., value_parser = parse_scrape_arg)]
    openmetrics: Vec<(Option<NodeAddr>, PathBuf)>,
    /// Saved `aws cloudwatch get-metric-data` output (AWS/ElastiCache), every page in order.
    #[arg(long, value_name = "FILE", num_args = 1.., requires = "cloudwatch_queries")]
    cloudwatch_json: Vec<PathBuf>,
    /// The queries of --cloudwatch-json: the JSON given to `--metric-data-queries`.
    #[arg(long, value_name = "FILE", requires = "cloudwatch_json")]
    cloudwatch_queries: Option<PathBuf>,
    /// The instant of --openmetrics samples without a timestamp [default: the file's mtime].
    #[arg(long, value_name = "T", value_parser = parse_instant)]
    at: Option<Timestamp>,
}

fn parse_instant(s: &str) -> Result<Timestamp, String> {
    match parse_time(s)? {
        Moment::At(t) => Ok(t),
        Moment::Offset(_) => Err(format!(
            "`{s}`: give an instant (RFC 3339 or epoch milliseconds), not an offset"
        )),
    }
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    let (name, value) = s.split_once(':').ok_or("give a header as `NAME: VALUE`")?;
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err("a header name is letters, digits and `-`".to_owned());
    }
    if value.contains(['\r', '\n']) {
        return Err("a header value is one line".to_owned());
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

/// The environment variable the --prometheus-user password is read from.
const PROMETHEUS_PASSWORD_ENV: &str = "SLOTSCOPE_PROMETHEUS_PASSWORD";

/// First line of `path`, as a secret (the message names the file, never its content).
fn first_line(path: &std::path::Path, what: &str) -> Result<Secret, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {what} file {}: {e}", path.display()))?;
    let line = text.lines().next().unwrap_or("").trim().to_owned();
    if line.is_empty() {
        return Err(format!("{what} file {} is empty", path.display()));
    }
    Ok(Secret::new(line))
}

/// TLS and the login headers for --prometheus.
fn http_options(args: &Args) -> Result<HttpOptions, String> {
    let tls = crate::node::tls::client_config(
        args.prometheus_cacert.as_deref(),
        args.prometheus_insecure,
    )
    .map_err(|e| e.to_string())?;
    let authorization = if let Some(user) = &args.prometheus_user {
        let password = match &args.prometheus_password_file {
            Some(f) => first_line(f, "password")?,
            None => std::env::var(PROMETHEUS_PASSWORD_ENV)
                .ok()
                .filter(|p| !p.is_empty())
                .map(Secret::new)
                .ok_or_else(|| {
                    format!(
                        "--prometheus-user needs a password: set {PROMETHEUS_PASSWORD_ENV} or give \
                         --prometheus-password-file"
                    )
                })?,
        };
        Some(basic_auth(user, &password))
    } else if let Some(f) = &args.prometheus_token_file {
        Some(Secret::new(format!(
            "Bearer {}",
            first_line(f, "token")?.expose()
        )))
    } else {
        None
    };
    Ok(HttpOptions {
        tls: Some(tls),
        authorization,
        headers: args
            .prometheus_headers
            .iter()
            .map(|(k, v)| (k.clone(), Secret::new(v.clone())))
            .collect(),
    })
}

fn parse_scrape_arg(s: &str) -> Result<(Option<NodeAddr>, PathBuf), String> {
    if let Some((node, file)) = s.split_once('=') {
        if let Ok(addr) = node.parse::<NodeAddr>() {
            return Ok((Some(addr), PathBuf::from(file)));
        }
    }
    Ok((None, PathBuf::from(s)))
}

/// Runs `slotscope import-metrics`.
pub fn run(args: Args) -> ExitCode {
    let input = if let Some(url) = args.prometheus.clone() {
        let (Some(from), Some(to)) = (args.from, args.to) else {
            eprintln!("error: --prometheus needs --from and --to");
            return ExitCode::from(2);
        };
        let http = match http_options(&args) {
            Ok(h) => h,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        Input::Prometheus {
            url,
            from,
            to,
            step: args.step,
            matchers: args.matchers,
            http,
        }
    } else if let Some(queries) = args.cloudwatch_queries {
        Input::CloudWatch {
            queries,
            pages: args.cloudwatch_json,
        }
    } else if !args.prometheus_json.is_empty() {
        Input::PrometheusJson(args.prometheus_json)
    } else {
        Input::Scrapes {
            files: args.openmetrics,
            at: args.at,
        }
    };
    match metrics::run(&input, &args.out) {
        Ok(conv) => {
            let infos = conv
                .lines
                .iter()
                .filter(|l| matches!(l, slotscope_core::recording::Line::Info(_)))
                .count();
            println!(
                "wrote {}: {} nodes, {infos} INFO samples at {} resolution, {} gap(s)",
                args.out.display(),
                conv.nodes.len(),
                format_millis(conv.step_ms),
                conv.gaps.len()
            );
            for g in &conv.gaps {
                eprintln!(
                    "warning: {} has no points from {} to {}",
                    g.node,
                    g.from.to_rfc3339(),
                    g.to.to_rfc3339()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
