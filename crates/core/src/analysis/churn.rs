//! Connection churn: new connections per second far above the connections open, with the
//! topology refreshes that usually drive it.

use std::collections::{BTreeMap, BTreeSet};

use crate::census::ClientGroup;
use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::metrics::{count_f64, Interval, REFRESH_COMMANDS};
use crate::node::NodeAddr;
use crate::time::TimeSpan;

use super::attribution;
use super::{Context, Detector};

/// New connections per open connection per second above which an interval counts as churning
/// (a mean connection lifetime under two seconds).
pub const CHURN_RATIO: f64 = 0.5;

/// Finds connections closed and opened again at a high rate.
pub(super) struct Churn;

impl Detector for Churn {
    fn name(&self) -> &'static str {
        "connection churn"
    }

    /// New connections per second far above the connections open.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let mut runs: Vec<(TimeSpan, f64, f64, NodeAddr)> = Vec::new();
        for node in &ctx.metrics.nodes {
            let churning: Vec<&Interval> = node.intervals.iter().collect();
            let mut run: Vec<&Interval> = Vec::new();
            let flush = |run: &mut Vec<&Interval>,
                         runs: &mut Vec<(TimeSpan, f64, f64, NodeAddr)>| {
                if run.len() >= 3 {
                    let secs: f64 = run.iter().map(|i| i.secs()).sum();
                    let new: u64 = run.iter().map(|i| i.connections_received).sum();
                    let open: u64 = run.iter().filter_map(|i| i.connected_clients).sum();
                    let open = count_f64(open) / count_f64(run.len() as u64);
                    runs.push((
                        TimeSpan::new(run[0].span.start, run[run.len() - 1].span.end),
                        count_f64(new) / secs,
                        open,
                        node.addr.clone(),
                    ));
                }
                run.clear();
            };
            for i in churning {
                let new_per_sec = count_f64(i.connections_received) / i.secs();
                let open = count_f64(i.connected_clients.unwrap_or(0).saturating_sub(1));
                if new_per_sec >= 2.0 && new_per_sec >= CHURN_RATIO * open.max(1.0) {
                    run.push(i);
                } else {
                    flush(&mut run, &mut runs);
                }
            }
            flush(&mut run, &mut runs);
        }
        if runs.is_empty() {
            return Vec::new();
        }
        let start = runs
            .iter()
            .map(|r| r.0.start)
            .min()
            .unwrap_or(ctx.span.start);
        let end = runs.iter().map(|r| r.0.end).max().unwrap_or(ctx.span.end);
        let new_per_sec: f64 = runs.iter().map(|r| r.1).sum();
        let open: f64 = runs.iter().map(|r| r.2).sum();
        let worst = runs
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|r| r.3.clone());
        let span = TimeSpan::new(start, end);
        // Topology-refresh fingerprints over the same span.
        let mut refresh: BTreeMap<String, f64> = BTreeMap::new();
        for node in &ctx.metrics.nodes {
            let t = node.total_in(span);
            for c in REFRESH_COMMANDS {
                let n = t.commands.get(*c).map_or(0, |d| d.calls);
                if n > 0 {
                    *refresh.entry((*c).to_owned()).or_default() += t.rate(n);
                }
            }
        }
        // Groups seen opening connections during the churn (a lower bound: connections shorter
        // than a poll are never listed); only those opening a fair share of what the busiest
        // group opened are candidates.
        let opened: Vec<(usize, u64)> = ctx
            .census
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (i, g.new_in(span)))
            .filter(|&(_, n)| n >= 3)
            .collect();
        let busiest = opened.iter().map(|&(_, n)| n).max().unwrap_or(0);
        let churners: Vec<&ClientGroup> = opened
            .iter()
            .filter(|&&(_, n)| n * 4 >= busiest)
            .map(|&(i, _)| &ctx.census.groups[i])
            .collect();
        let attribution = attribution::to_groups(&churners).unwrap_or(Attribution::Unknown {
            commands: Vec::new(),
        });
        let lifetime = if new_per_sec > 0.0 {
            open / new_per_sec
        } else {
            0.0
        };
        let mut numbers = BTreeMap::from([
            ("new_connections_per_sec".to_owned(), new_per_sec),
            ("open_connections".to_owned(), open),
            ("mean_lifetime_secs".to_owned(), lifetime),
            (
                "nodes_churning".to_owned(),
                count_f64(runs.iter().map(|r| &r.3).collect::<BTreeSet<_>>().len() as u64),
            ),
        ]);
        for (c, r) in &refresh {
            numbers.insert(format!("refresh_per_sec:{c}"), *r);
        }
        vec![Finding {
            kind: FindingKind::ConnectionChurn,
            severity: Severity::Warning,
            span,
            title: format!(
                "Connection churn: {new_per_sec:.1} new connections/s against {open:.0} open (connections live ~{lifetime:.1} s)"
            ),
            explanation: format!(
                "Open connections stay flat while new ones arrive far faster: connections are closed and opened again \
                 rather than leaked (a leak would show open connections climbing to the pool limit). Cluster clients do \
                 this when they rebuild themselves — redis-py closes every connection and reloads the slot map each \
                 `reinitialize_steps` (default 5) MOVED — so churn usually follows a redirect storm; the topology-refresh \
                 commands ({}) count the rebuilds. Worst node: {}.",
                if refresh.is_empty() {
                    "none seen".to_owned()
                } else {
                    refresh.iter().map(|(c, r)| format!("{c} {r:.1}/s")).collect::<Vec<_>>().join(", ")
                },
                worst.as_ref().map_or_else(|| "?".to_owned(), ToString::to_string)
            ),
            numbers,
            node: worst,
            attribution: Some(attribution),
            context: Vec::new(),
        }]
    }
}
