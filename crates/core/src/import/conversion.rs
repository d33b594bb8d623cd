//! redis_exporter's series turned into a recording: per node (the `addr` label, else `instance`)
//! and per point in time, one `info` line whose report carries the counters in the fields the
//! collector records (`commandstats`, `errorstats`, `stats.total_connections_received`,
//! `clients.connected_clients`, `server.uptime_in_seconds` and `run_id`, …), so
//! [`crate::metrics`] turns them into intervals unchanged, counter resets included.
//!
//! | series | field of the report |
//! | --- | --- |
//! | `redis_commands_total{cmd}` | `commandstats[cmd].calls` |
//! | `redis_commands_rejected_calls_total{cmd}` | `commandstats[cmd].rejected_calls` |
//! | `redis_commands_failed_calls_total{cmd}` | `commandstats[cmd].failed_calls` |
//! | `redis_commands_duration_seconds_total{cmd}` | `commandstats[cmd].usec` |
//! | `redis_errors_total{err}` | `errorstats[err]` |
//! | `redis_connections_received_total` | `stats.total_connections_received` |
//! | `redis_connected_clients` | `clients.connected_clients` |
//! | `redis_uptime_in_seconds` | `server.uptime_in_seconds` |
//! | `redis_instance_info{run_id,redis_version,…}` | `server.run_id`, `server.redis_version`, … |
//! | `redis_memory_used_bytes` | `memory.used_memory` |
//! | `redis_db_keys{db}`, `redis_db_keys_expiring{db}` | `keyspace` |
//! | `redis_cluster_<field>` | `cluster_info.cluster_<field>` (`cluster_state` 1 → `ok`) |
//!
//! No topology line is made: metrics do not have it. `redis_connected_clients_details` (the
//! exporter's `--export-client-list`) becomes a `client_list` line of its node at every time the
//! node has a report, one entry per connection series with a point then (see
//! [`super::client_details`]); without that series, no `client_list` line is made.

use std::collections::{BTreeMap, BTreeSet};

use crate::client_list::ClientEntry;
use crate::info::{CommandStat, InfoReport, KeyspaceStat, CLUSTER_INFO_SECTION};
use crate::node::{NodeAddr, NodeRef};
use crate::recording::{
    ClientListSample, Discovery, End, EndReason, Header, InfoSample, Line, NodeDiscovered,
    PollRound, RecordOptions, SCHEMA_VERSION,
};
use crate::time::{format_millis, Timestamp};

use super::{client_details, to_count, ImportError, Series};

/// What the series came from, as the header will say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceInfo {
    /// The source in words: `prometheus query_range http://…, step 15s`.
    pub description: String,
    /// The resolution: the query step, or the time between scrapes; `None` to take the median
    /// time between points.
    pub step_ms: Option<u64>,
    /// The header's `collector` (`slotscope 0.1.0 import-metrics`).
    pub collector: String,
}

/// A node's points that are missing: no point for more than one and a half steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The node.
    pub node: NodeAddr,
    /// Its last point before the gap.
    pub from: Timestamp,
    /// Its first point after.
    pub to: Timestamp,
}

/// The recording made from the series.
#[derive(Clone, Debug, PartialEq)]
pub struct Conversion {
    /// Every line, the header first and the end line last.
    pub lines: Vec<Line>,
    /// The gaps found (also stated in the header's `source`).
    pub gaps: Vec<Gap>,
    /// The resolution used, in milliseconds.
    pub step_ms: u64,
    /// Nodes, in address order.
    pub nodes: Vec<NodeAddr>,
}

/// The node a series belongs to: its `addr` label, else its `instance` label, without a
/// `redis://` or `rediss://` scheme.
fn node_of(s: &Series) -> Result<NodeAddr, ImportError> {
    let raw = s
        .labels
        .get("addr")
        .or_else(|| s.labels.get("instance"))
        .ok_or_else(|| ImportError::Node {
            detail: format!(
                "series {} has neither an `addr` nor an `instance` label: the node it belongs to \
                 is unknown (name it: HOST:PORT=FILE for a saved scrape)",
                s.name
            ),
        })?;
    let bare = raw
        .strip_prefix("redis://")
        .or_else(|| raw.strip_prefix("rediss://"))
        .unwrap_or(raw);
    bare.trim_end_matches('/')
        .parse()
        .map_err(|e| ImportError::Node {
            detail: format!("series {} names node `{raw}`, not HOST:PORT: {e}", s.name),
        })
}

/// Applies one point of one series to the report of its node at that time.
fn apply(r: &mut InfoReport, s: &Series, x: f64) {
    let label = |k: &str| s.labels.get(k).cloned().unwrap_or_default();
    let n = to_count(x);
    let mut set = |section: &str, field: &str, value: String| {
        r.sections
            .entry(section.to_owned())
            .or_default()
            .insert(field, value);
    };
    let name = s.name.as_str();
    match name {
        "redis_commands_total"
        | "redis_commands_rejected_calls_total"
        | "redis_commands_failed_calls_total"
        | "redis_commands_duration_seconds_total" => {
            let c = r
                .commandstats
                .entry(label("cmd"))
                .or_insert_with(|| CommandStat {
                    calls: 0,
                    usec: 0,
                    rejected_calls: None,
                    failed_calls: None,
                });
            match name {
                "redis_commands_total" => c.calls = n,
                "redis_commands_rejected_calls_total" => c.rejected_calls = Some(n),
                "redis_commands_failed_calls_total" => c.failed_calls = Some(n),
                _ => c.usec = to_count(x * 1e6),
            }
        }
        "redis_errors_total" => {
            r.errorstats.insert(label("err"), n);
        }
        "redis_connections_received_total" => {
            set("stats", "total_connections_received", n.to_string());
        }
        "redis_connected_clients" => set("clients", "connected_clients", n.to_string()),
        "redis_uptime_in_seconds" => set("server", "uptime_in_seconds", n.to_string()),
        "redis_memory_used_bytes" => set("memory", "used_memory", n.to_string()),
        "redis_instance_info" => {
            for k in ["run_id", "redis_version", "redis_mode", "role", "tcp_port"] {
                if let Some(v) = s.labels.get(k) {
                    set("server", k, v.clone());
                }
            }
        }
        "redis_db_keys" | "redis_db_keys_expiring" => {
            let db = label("db");
            if let Ok(i) = db.trim_start_matches("db").parse::<u32>() {
                let k = r.keyspace.entry(i).or_insert(KeyspaceStat {
                    keys: 0,
                    expires: 0,
                    avg_ttl: 0,
                });
                if name == "redis_db_keys" {
                    k.keys = n;
                } else {
                    k.expires = n;
                }
            }
        }
        "redis_cluster_state" => set(
            CLUSTER_INFO_SECTION,
            "cluster_state",
            if n == 1 { "ok" } else { "fail" }.to_owned(),
        ),
        _ => {
            if let Some(field) = name.strip_prefix("redis_cluster_") {
                if s.labels
                    .keys()
                    .all(|k| matches!(k.as_str(), "addr" | "instance" | "job"))
                {
                    set(
                        CLUSTER_INFO_SECTION,
                        &format!("cluster_{field}"),
                        n.to_string(),
                    );
                }
            }
        }
    }
}

/// Whether the series is one the conversion reads.
fn is_used(name: &str) -> bool {
    name.starts_with("redis_commands_")
        || name.starts_with("redis_cluster_")
        || name.starts_with("redis_db_keys")
        || matches!(
            name,
            "redis_errors_total"
                | "redis_connections_received_total"
                | "redis_connected_clients"
                | "redis_uptime_in_seconds"
                | "redis_memory_used_bytes"
                | "redis_instance_info"
                | "redis_connected_clients_details"
        )
}

/// Turns redis_exporter's series into a recording. `what` names the input in errors.
///
/// # Errors
///
/// When a series names no node, or no series the conversion reads has a point.
pub fn convert(what: &str, series: &[Series], src: &SourceInfo) -> Result<Conversion, ImportError> {
    let mut reports: BTreeMap<NodeAddr, BTreeMap<Timestamp, InfoReport>> = BTreeMap::new();
    let mut clients: BTreeMap<NodeAddr, BTreeMap<Timestamp, Vec<ClientEntry>>> = BTreeMap::new();
    for s in series.iter().filter(|s| is_used(&s.name)) {
        let node = node_of(s)?;
        if s.name == client_details::DETAILS {
            let per_time = clients.entry(node).or_default();
            for &(t, _) in s.points.iter().filter(|(_, x)| x.is_finite() && *x > 0.0) {
                per_time
                    .entry(t)
                    .or_default()
                    .push(client_details::entry(s, t));
            }
            continue;
        }
        let per_time = reports.entry(node).or_default();
        for &(t, x) in s.points.iter().filter(|(_, x)| x.is_finite()) {
            apply(per_time.entry(t).or_default(), s, x);
        }
    }
    reports.retain(|_, r| !r.is_empty());
    if reports.is_empty() {
        return Err(ImportError::Empty {
            what: what.to_owned(),
        });
    }
    let step_ms = src.step_ms.unwrap_or_else(|| median_step(&reports)).max(1);
    let mut gaps = Vec::new();
    for (node, per_time) in &reports {
        let times: Vec<Timestamp> = per_time.keys().copied().collect();
        for w in times.windows(2) {
            if w[1].0 - w[0].0 > step_ms + step_ms / 2 {
                gaps.push(Gap {
                    node: node.clone(),
                    from: w[0],
                    to: w[1],
                });
            }
        }
    }
    let times: BTreeSet<Timestamp> = reports.values().flat_map(|r| r.keys().copied()).collect();
    let first = times.first().copied().unwrap_or_default();
    let last = times.last().copied().unwrap_or_default();
    let nodes: Vec<NodeAddr> = reports.keys().cloned().collect();
    let mut description = format!(
        "{}; imported from metrics at {} resolution (rates averaged over each step)",
        src.description,
        format_millis(step_ms)
    );
    if !gaps.is_empty() {
        let shown: Vec<String> = gaps
            .iter()
            .take(5)
            .map(|g| {
                format!(
                    "{} has no points for {} from {}",
                    g.node,
                    format_millis(g.to.0 - g.from.0),
                    g.from.to_rfc3339()
                )
            })
            .collect();
        description.push_str(&format!(
            "; {} gap(s) in the series: {}{}",
            gaps.len(),
            shown.join(", "),
            if gaps.len() > 5 { ", …" } else { "" }
        ));
    }
    let header = Header {
        schema: SCHEMA_VERSION,
        collector: src.collector.clone(),
        seed: nodes[0].clone(),
        started: first,
        options: RecordOptions {
            interval_ms: step_ms,
            timeout_ms: step_ms,
            duration_ms: Some(last.0 - first.0),
            tls: false,
            user: None,
            auth: false,
            client_list_every: 1,
            topology_every: None,
        },
        source: Some(description),
    };
    let mut lines = vec![Line::Header(header)];
    let node_ref = |addr: &NodeAddr| NodeRef {
        addr: addr.clone(),
        id: None,
    };
    for (addr, per_time) in &reports {
        lines.push(Line::NodeDiscovered(NodeDiscovered {
            t: per_time.keys().next().copied().unwrap_or(first),
            node: node_ref(addr),
            via: Discovery::Seed,
        }));
    }
    let total = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
    for (round, &t) in times.iter().enumerate() {
        let mut ok = 0u32;
        for (addr, per_time) in &reports {
            if let Some(info) = per_time.get(&t) {
                ok += 1;
                lines.push(Line::Info(InfoSample {
                    t,
                    node: node_ref(addr),
                    latency_us: 0,
                    info: info.clone(),
                }));
                // A node whose client list is exported: its connections then (none is none).
                if let Some(by_time) = clients.get(addr) {
                    lines.push(Line::ClientList(ClientListSample {
                        t,
                        node: node_ref(addr),
                        clients: by_time.get(&t).cloned().unwrap_or_default(),
                    }));
                }
            }
        }
        lines.push(Line::PollRound(PollRound {
            t,
            elapsed_ms: 0,
            round: round as u64,
            nodes: total,
            ok,
            failed: total - ok,
        }));
    }
    lines.push(Line::End(End {
        t: last,
        reason: EndReason::Duration,
        rounds: times.len() as u64,
    }));
    // Node discoveries come first; keep every line in time order after them.
    lines[1..].sort_by_key(Line::time);
    Ok(Conversion {
        lines,
        gaps,
        step_ms,
        nodes,
    })
}

/// The median time between a node's consecutive points, over all nodes (1 s when none).
fn median_step(reports: &BTreeMap<NodeAddr, BTreeMap<Timestamp, InfoReport>>) -> u64 {
    let mut d: Vec<u64> = reports
        .values()
        .flat_map(|r| {
            let t: Vec<u64> = r.keys().map(|t| t.0).collect();
            t.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>()
        })
        .collect();
    d.sort_unstable();
    d.get(d.len() / 2).copied().unwrap_or(1000)
}
