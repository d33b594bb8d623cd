//! Connection churn: new connections per second far above the connections open, with the
//! topology refreshes that usually drive it.

use std::collections::{BTreeMap, BTreeSet};

use crate::census::ClientGroup;
use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::float;
use crate::metrics::{Interval, REFRESH_COMMANDS};
use crate::node::NodeAddr;
use crate::time::TimeSpan;

use super::attribution;
use super::context::Context;
use super::detector::Detector;

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
                    let open = float::from_u64(open) / float::from_u64(run.len() as u64);
                    runs.push((
                        TimeSpan::new(run[0].span.start, run[run.len() - 1].span.end),
                        float::from_u64(new) / secs,
                        open,
                        node.addr.clone(),
                    ));
                }
                run.clear();
            };
            for i in churning {
                let new_per_sec = float::from_u64(i.connections_received) / i.secs();
                let open = float::from_u64(i.connected_clients.unwrap_or(0).saturating_sub(1));
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
                float::from_u64(runs.iter().map(|r| &r.3).collect::<BTreeSet<_>>().len() as u64),
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
                "Connection churn: {new_per_sec:.1} new connections/s against {open:.0} open (connections live {} on average)",
                crate::quantity::duration(lifetime)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{clients, found, info, round, topology, view, Counters, A, T0};
    use crate::recording::Line;

    /// 40 polls of node A with 280 connections open, `new(k)` connections accepted in poll `k`
    /// and 30 `CLUSTER SLOTS`/s; with `listed`, each poll lists a new connection of
    /// "redis-py 8.1.0" and the same old one of "jedis 5.0.0".
    fn lines(listed: bool, new: impl Fn(u64) -> u64) -> Vec<Line> {
        let mut lines = vec![topology(T0, 7000, A, view(A, "0-16383", ""))];
        let mut c = Counters {
            uptime: 50,
            connected: 280,
            ..Counters::default()
        };
        for k in 0..40u64 {
            let t = T0 + k * 1000;
            c.uptime += 1;
            c.commands = vec![("get", 300 * k, 0), ("cluster|slots", 30 * k, 0)];
            if k > 0 {
                c.conns_received += new(k);
            }
            lines.push(info(t, 7000, A, &c));
            if listed {
                lines.push(clients(
                    t,
                    7000,
                    A,
                    &format!(
                        "id={} addr=10.2.0.1:{} fd=9 name= age=0 idle=0 flags=N cmd=get lib-name=redis-py lib-ver=8.1.0\n\
                         id=7 addr=10.3.0.1:5000 fd=10 name= age={} idle=0 flags=N cmd=get lib-name=jedis lib-ver=5.0.0\n",
                        100 + k,
                        6000 + k,
                        3600 + k
                    ),
                ));
            }
            lines.push(round(t, k));
        }
        lines
    }

    #[test]
    fn connections_opened_far_faster_than_they_stay_open_are_churn() {
        let f = found(&Churn, &lines(true, |_| 440));
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(f.kind, FindingKind::ConnectionChurn);
        assert_eq!(f.severity, Severity::Warning);
        assert!((f.numbers["new_connections_per_sec"] - 440.0).abs() < 1e-9);
        assert!((f.numbers["open_connections"] - 280.0).abs() < 1e-9);
        assert!((f.numbers["mean_lifetime_secs"] - 280.0 / 440.0).abs() < 1e-9);
        assert_eq!(f.numbers["nodes_churning"], 1.0);
        // 30 CLUSTER SLOTS/s counted by the server, less the collector's own one per poll.
        assert!((f.numbers["refresh_per_sec:cluster|slots"] - 29.0).abs() < 0.01);
        assert_eq!(
            f.title,
            "Connection churn: 440.0 new connections/s against 280 open (connections live 636 ms on average)"
        );
        assert_eq!(f.node, Some(crate::analysis::fixture::addr(7000)));
        // Only redis-py opens connections; jedis keeps its one.
        assert_eq!(
            f.attribution,
            Some(Attribution::Group {
                group: "redis-py 8.1.0".into(),
                commands: vec!["get".into()],
            })
        );
    }

    #[test]
    fn churn_without_client_lists_is_unattributed() {
        let f = found(&Churn, &lines(false, |_| 440));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            f[0].attribution,
            Some(Attribution::Unknown {
                commands: Vec::new()
            })
        );
    }

    #[test]
    fn two_polls_of_churn_are_too_short() {
        assert!(found(
            &Churn,
            &lines(true, |k| if k == 10 || k == 11 { 440 } else { 0 })
        )
        .is_empty());
        // Three are enough.
        let f = found(
            &Churn,
            &lines(true, |k| if (10..13).contains(&k) { 440 } else { 0 }),
        );
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].numbers["nodes_churning"], 1.0);
    }

    #[test]
    fn new_connections_well_below_the_open_ones_are_no_churn() {
        // 100 new/s against 279 open (the collector's own left out): under half.
        assert!(found(&Churn, &lines(true, |_| 100)).is_empty());
    }
}
