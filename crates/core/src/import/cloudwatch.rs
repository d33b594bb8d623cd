//! CloudWatch metrics of ElastiCache (`AWS/ElastiCache`), as `aws cloudwatch get-metric-data`
//! prints them, turned into redis_exporter-shaped [`Series`] that [`super::convert`] reads.
//!
//! Two inputs, both JSON, read into [`super::get_metric_data`]'s types:
//!
//! - the queries (what was given to `--metric-data-queries`: a list, or an object with
//!   `MetricDataQueries`), whose `Id`s tie each result to a metric (`MetricStat.Metric.MetricName`)
//!   and a node (the `CacheClusterId` and `CacheNodeId` dimensions), with its `Period` and `Stat`;
//! - the pages of the answer, in the order they were fetched:
//!
//! ```text
//! {"MetricDataResults":[{"Id":"m1","Label":"NewConnections","StatusCode":"Complete",
//!   "Timestamps":["2025-03-14T05:12:00+00:00","2025-03-14T05:11:00+00:00"],"Values":[840.0,12.0]}],
//!  "NextToken":null,"Messages":[]}
//! ```
//!
//! A result that says `PartialData` must be continued by a later page (its `NextToken` asked
//! again), and the last page must have no `NextToken`; `InternalError` or `Forbidden` is an error.
//! A datapoint's timestamp is the start of its period: every value is placed at the end of its
//! period, so that a period's count becomes the change of a counter over that period.
//!
//! | metric | series | as |
//! | --- | --- | --- |
//! | `CurrConnections` | `redis_connected_clients` | the period's statistic |
//! | `NewConnections` | `redis_connections_received_total` | the counts accumulated |
//! | `ClusterBasedCmds` | `redis_commands_total{cmd="cluster\|slots"}` | accumulated; all cluster commands lumped |
//! | other `…Cmds` (`KeyBasedCmds`, `StringBasedCmds`, `GetTypeCmds`, …) | `redis_commands_total{cmd="<metric, lower case>"}` | accumulated |
//! | `CurrItems` | `redis_db_keys{db="db0"}` | the period's statistic |
//! | `EngineCPUUtilization` | none | its highest peak (and node) is stated in the header |
//!
//! Every other metric (latencies, bytes, …) is left out and named in the header. A node is
//! `CacheClusterId:6379` (ElastiCache's default port; CloudWatch names no address), or
//! `CacheClusterId-CacheNodeId:6379` when one cluster id has several node ids in the queries.

use std::collections::{BTreeMap, BTreeSet};

use serde::de::DeserializeOwned;
use serde_json::error::Category;

use crate::time::{format_millis, Timestamp};

use super::get_metric_data::{Metric, MetricDataQuery, Output, Queries, Time};
use super::{ImportError, Series};

pub use super::get_metric_data::StatusCode;

/// The command that `ClusterBasedCmds` is counted as (every cluster command, lumped).
pub const CLUSTER_COMMAND: &str = "cluster|slots";

/// ElastiCache's default port, the port of every imported node.
pub const DEFAULT_PORT: u16 = 6379;

/// One `MetricDataQuery`: its `Id`, the metric and node it asks for, its period and statistic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// `Id`.
    pub id: String,
    /// `MetricStat.Metric.MetricName`.
    pub metric: String,
    /// The `CacheClusterId` dimension.
    pub cluster_id: String,
    /// The `CacheNodeId` dimension (`0001` when absent).
    pub node_id: String,
    /// `MetricStat.Period`, in seconds.
    pub period_s: u64,
    /// `MetricStat.Stat` (`Sum`, `Average`, `Maximum`, …).
    pub stat: String,
}

/// One `MetricDataResult` of a page.
#[derive(Clone, Debug, PartialEq)]
pub struct PageResult {
    /// `Id`.
    pub id: String,
    /// `StatusCode`.
    pub status: StatusCode,
    /// `(period start, value)` pairs, in the page's order.
    pub points: Vec<(Timestamp, f64)>,
    /// The `Value`s of its `Messages`.
    pub messages: Vec<String>,
}

/// One page of `get-metric-data` output.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    /// `MetricDataResults`.
    pub results: Vec<PageResult>,
    /// `NextToken`, when more pages follow.
    pub next_token: Option<String>,
}

/// The series made from CloudWatch, and what the header should say about them.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// redis_exporter-shaped series, one node per `addr` label.
    pub series: Vec<Series>,
    /// The period of the queries, in milliseconds.
    pub step_ms: u64,
    /// Notes for the header: lumping, metrics left out, CPU peaks, missing periods.
    pub notes: Vec<String>,
}

fn err(what: &str, detail: impl Into<String>) -> ImportError {
    ImportError::CloudWatch {
        what: what.to_owned(),
        detail: detail.into(),
    }
}

/// `text` read as `T`: text that is not JSON (or is cut short) is [`ImportError::NotJson`],
/// JSON of another shape an error saying what was wrong where, after `not` (what the text then
/// is not).
fn json<T: DeserializeOwned>(what: &str, not: &str, text: &str) -> Result<T, ImportError> {
    serde_json::from_str(text).map_err(|e| match e.classify() {
        Category::Data => err(what, format!("{not}: {e}")),
        Category::Io | Category::Syntax | Category::Eof => ImportError::NotJson {
            what: what.to_owned(),
            detail: e.to_string(),
        },
    })
}

/// The queries given to `--metric-data-queries` (a list, or `{"MetricDataQueries": [...]}`).
///
/// # Errors
///
/// When the text is not JSON, or a query has no `Id`, no `MetricStat` with a metric name and a
/// period, or no `CacheClusterId` dimension.
pub fn parse_queries(what: &str, text: &str) -> Result<Vec<Query>, ImportError> {
    let not = "not --metric-data-queries JSON";
    let list: Vec<MetricDataQuery> = if text.trim_start().starts_with('[') {
        json(what, not, text)?
    } else {
        json::<Queries>(what, not, text)?
            .metric_data_queries
            .ok_or_else(|| {
                err(
                    what,
                    "neither a list of queries nor {\"MetricDataQueries\": [...]}",
                )
            })?
    };
    let mut out = Vec::new();
    for q in list {
        let id = q.id.ok_or_else(|| err(what, "a query without \"Id\""))?;
        let Some(stat) = q.metric_stat else {
            // A math expression: its results are not per node.
            continue;
        };
        let metric = stat.metric.unwrap_or(Metric {
            metric_name: None,
            dimensions: None,
        });
        let name = metric
            .metric_name
            .clone()
            .ok_or_else(|| err(what, format!("query {id}: no MetricStat.Metric.MetricName")))?;
        let cluster_id = metric.dimension("CacheClusterId").ok_or_else(|| {
            err(
                what,
                format!("query {id} ({name}) has no CacheClusterId dimension: which node is it?"),
            )
        })?;
        let period_s = stat
            .period
            .or(q.period)
            .filter(|&p| p > 0)
            .ok_or_else(|| err(what, format!("query {id}: no MetricStat.Period")))?;
        out.push(Query {
            cluster_id: cluster_id.to_owned(),
            node_id: metric.dimension("CacheNodeId").unwrap_or("0001").to_owned(),
            id,
            metric: name,
            period_s,
            stat: stat.stat.unwrap_or_else(|| "Average".to_owned()),
        });
    }
    if out.is_empty() {
        return Err(err(what, "no MetricStat query"));
    }
    Ok(out)
}

/// One page of `get-metric-data` output.
///
/// # Errors
///
/// When the text is not JSON, has no `MetricDataResults`, or a result's `Timestamps` and
/// `Values` differ in length or hold something else than times and numbers.
pub fn parse_page(what: &str, text: &str) -> Result<Page, ImportError> {
    let output: Output = json(what, "not get-metric-data output", text)?;
    let list = output.metric_data_results.ok_or_else(|| {
        err(
            what,
            "no \"MetricDataResults\" list: not get-metric-data output",
        )
    })?;
    let mut results = Vec::with_capacity(list.len());
    for r in list {
        let id = r.id.ok_or_else(|| err(what, "a result without \"Id\""))?;
        let ts = r.timestamps.unwrap_or_default();
        let xs = r.values.unwrap_or_default();
        if ts.len() != xs.len() {
            return Err(err(
                what,
                format!(
                    "result {id}: {} Timestamps but {} Values",
                    ts.len(),
                    xs.len()
                ),
            ));
        }
        let mut points = Vec::with_capacity(ts.len());
        for (t, x) in ts.into_iter().zip(xs) {
            let t = match t {
                Time::Text(s) => parse_iso8601(&s).ok_or_else(|| {
                    err(
                        what,
                        format!("result {id}: timestamp {s:?} is not ISO 8601"),
                    )
                })?,
                Time::Seconds(s) => Timestamp(super::to_count(s * 1000.0)),
            };
            points.push((t, x));
        }
        results.push(PageResult {
            id,
            status: r.status_code.unwrap_or_default(),
            points,
            messages: r
                .messages
                .into_iter()
                .flatten()
                .filter_map(|m| m.value)
                .collect(),
        });
    }
    Ok(Page {
        results,
        next_token: output.next_token.filter(|t| !t.is_empty()),
    })
}

/// `YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]` (no zone reads as UTC), as the AWS CLI prints times: the
/// one RFC 3339 parser with the zone optional.
pub use crate::time::rfc3339::parse_or_utc as parse_iso8601;

/// How a metric is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A level: the period's statistic is the value at its end.
    Gauge(&'static str),
    /// Counts per period, accumulated into a counter.
    Count,
    /// Read for the header only.
    Cpu,
}

fn kind(metric: &str) -> Option<Kind> {
    match metric {
        "CurrConnections" => Some(Kind::Gauge("redis_connected_clients")),
        "CurrItems" => Some(Kind::Gauge("redis_db_keys")),
        "EngineCPUUtilization" => Some(Kind::Cpu),
        "NewConnections" => Some(Kind::Count),
        m if m.ends_with("Cmds") => Some(Kind::Count),
        _ => None,
    }
}

/// The node's address: `CacheClusterId`, or `CacheClusterId-CacheNodeId` when the cluster id has
/// several node ids.
fn node_names(queries: &[Query]) -> BTreeMap<(String, String), String> {
    let mut ids: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for q in queries {
        ids.entry(&q.cluster_id).or_default().insert(&q.node_id);
    }
    queries
        .iter()
        .map(|q| {
            let host = if ids[q.cluster_id.as_str()].len() > 1 {
                format!("{}-{}", q.cluster_id, q.node_id)
            } else {
                q.cluster_id.clone()
            };
            (
                (q.cluster_id.clone(), q.node_id.clone()),
                format!("{host}:{DEFAULT_PORT}"),
            )
        })
        .collect()
}

/// Joins the pages (in the order they were fetched) through the queries' `Id`s into
/// redis_exporter-shaped series. `what` names the input in errors.
///
/// # Errors
///
/// A result whose `Id` no query has; a `PartialData` result no later page continues; a last
/// page with a `NextToken`; an `InternalError` or `Forbidden` result; queries of different
/// periods; a count metric asked with a statistic other than `Sum` over more than one minute.
pub fn import(
    what: &str,
    queries: &[Query],
    pages: &[(String, Page)],
) -> Result<Imported, ImportError> {
    let by_id: BTreeMap<&str, &Query> = queries.iter().map(|q| (q.id.as_str(), q)).collect();
    let periods: BTreeSet<u64> = queries.iter().map(|q| q.period_s).collect();
    if periods.len() > 1 {
        return Err(err(
            what,
            format!(
                "queries of different periods ({periods:?} s): ask every metric with one Period"
            ),
        ));
    }
    let period_ms = periods.first().copied().unwrap_or(60) * 1000;
    for q in queries {
        if kind(&q.metric) == Some(Kind::Count) && q.stat != "Sum" && q.period_s > 60 {
            return Err(err(
                what,
                format!(
                    "query {} asks {} with Stat {} over {} s: ask counts with Stat Sum",
                    q.id, q.metric, q.stat, q.period_s
                ),
            ));
        }
    }
    let Some((last_name, last)) = pages.last() else {
        return Err(err(what, "no page"));
    };
    if last.next_token.is_some() {
        return Err(err(
            what,
            format!(
                "{last_name} has a NextToken: a later page is missing (run get-metric-data again \
                 with --next-token and give every page, in order)"
            ),
        ));
    }
    let mut points: BTreeMap<&str, BTreeMap<Timestamp, f64>> = BTreeMap::new();
    let mut partial: BTreeMap<&str, &str> = BTreeMap::new();
    for (name, page) in pages {
        for r in &page.results {
            let q = by_id.get(r.id.as_str()).ok_or_else(|| {
                err(
                    name,
                    format!(
                        "result Id {} is in no MetricStat query of the queries file (the wrong \
                         queries file, or a math expression: leave it out, its results are not \
                         per node)",
                        r.id
                    ),
                )
            })?;
            match r.status {
                StatusCode::Complete => {
                    partial.remove(q.id.as_str());
                }
                StatusCode::PartialData => {
                    partial.insert(&q.id, name);
                }
                other @ (StatusCode::InternalError | StatusCode::Forbidden) => {
                    return Err(err(
                        name,
                        format!(
                            "result {} ({}) says {other}: {}",
                            r.id,
                            q.metric,
                            r.messages.join("; ")
                        ),
                    ))
                }
            }
            points
                .entry(&q.id)
                .or_default()
                .extend(r.points.iter().copied());
        }
    }
    if let Some((id, name)) = partial.iter().next() {
        return Err(err(
            name,
            format!(
                "result {id} says PartialData and no later page continues it: fetch the next \
                 page (--next-token) and give it after this one"
            ),
        ));
    }
    let nodes = node_names(queries);
    let mut series = Vec::new();
    let mut left_out = BTreeSet::new();
    let mut notes = Vec::new();
    let mut missing = 0usize;
    let mut cpu_peak: Option<(f64, String)> = None;
    for q in queries {
        let Some(pts) = points.get(q.id.as_str()).filter(|p| !p.is_empty()) else {
            continue;
        };
        let addr = nodes[&(q.cluster_id.clone(), q.node_id.clone())].clone();
        let mut labels = BTreeMap::from([("addr".to_owned(), addr.clone())]);
        let end = |t: Timestamp| Timestamp(t.0 + period_ms);
        let (name, values): (&str, Vec<(Timestamp, f64)>) = match kind(&q.metric) {
            None => {
                left_out.insert(q.metric.clone());
                continue;
            }
            Some(Kind::Cpu) => {
                let peak = pts.values().copied().fold(f64::NAN, f64::max);
                if cpu_peak.as_ref().is_none_or(|(p, _)| peak > *p) {
                    cpu_peak = Some((peak, addr));
                }
                continue;
            }
            Some(Kind::Gauge(name)) => {
                if name == "redis_db_keys" {
                    labels.insert("db".to_owned(), "db0".to_owned());
                }
                // The first period's level also stands for its start, so that the period
                // has an interval (a node whose counts begin a period later has no sample
                // there otherwise).
                let start = pts.iter().next().map(|(&t, &x)| (t, x));
                (
                    name,
                    start
                        .into_iter()
                        .chain(pts.iter().map(|(&t, &x)| (end(t), x)))
                        .collect(),
                )
            }
            Some(Kind::Count) => {
                let name = match q.metric.as_str() {
                    "NewConnections" => "redis_connections_received_total",
                    m => {
                        let cmd = if m == "ClusterBasedCmds" {
                            CLUSTER_COMMAND.to_owned()
                        } else {
                            m.to_ascii_lowercase()
                        };
                        labels.insert("cmd".to_owned(), cmd);
                        "redis_commands_total"
                    }
                };
                // From 0 at the first period's start; a missing period adds nothing (stated).
                // The analysis takes one call of each interval off the collector's own commands
                // (`cluster|slots` among them, crate::metrics::COLLECTOR_COMMANDS): add it back.
                let own = if crate::metrics::COLLECTOR_COMMANDS
                    .contains(&labels.get("cmd").map_or("", String::as_str))
                {
                    1.0
                } else {
                    0.0
                };
                let first = *pts.keys().next().unwrap_or(&Timestamp(0));
                let mut out = vec![(first, 0.0)];
                let mut total = 0.0;
                let mut t = first;
                let last = *pts.keys().next_back().unwrap_or(&first);
                while t <= last {
                    total += own;
                    match pts.get(&t) {
                        Some(&x) if x.is_finite() => total += x.max(0.0),
                        _ => {}
                    }
                    out.push((end(t), total));
                    t = end(t);
                }
                (name, out)
            }
        };
        let have: Vec<Timestamp> = pts.keys().copied().collect();
        for w in have.windows(2) {
            let n = (w[1].0 - w[0].0) / period_ms;
            if n > 1 {
                missing += 1;
                if missing <= 5 {
                    notes.push(format!(
                        "{} of {addr} has no datapoint for {} from {}{}",
                        q.metric,
                        format_millis(w[1].0 - w[0].0 - period_ms),
                        end(w[0]).to_rfc3339(),
                        if kind(&q.metric) == Some(Kind::Count) {
                            " (counted as none)"
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
        series.push(Series {
            name: name.to_owned(),
            labels,
            points: values,
        });
    }
    if let Some((peak, addr)) = cpu_peak {
        notes.push(format!(
            "EngineCPUUtilization (not kept) peaks at {peak:.0} % on {addr}"
        ));
    }
    if missing > 5 {
        notes.push(format!("{} series with missing datapoints in all", missing));
    }
    if queries.iter().any(|q| q.metric == "ClusterBasedCmds") {
        notes.push(format!(
            "ClusterBasedCmds (every cluster command, lumped) is counted as {CLUSTER_COMMAND}: its \
             spikes are the fingerprint of topology-refresh storms"
        ));
    }
    if !left_out.is_empty() {
        let names: Vec<String> = left_out.into_iter().collect();
        notes.push(format!("not read: {}", names.join(", ")));
    }
    Ok(Imported {
        series,
        step_ms: period_ms,
        notes,
    })
}
