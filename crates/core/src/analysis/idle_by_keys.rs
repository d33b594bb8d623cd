//! Idle shards in a recording without topology (one imported from metrics): a node that filled
//! with keys during the recording (slots moved to it, though no topology says so) but receives
//! (almost) none of the cluster's commands after.
//!
//! Its share of the keys stands for its share of the slots. The window after is from the end of
//! its fill (the first sample at 90 % of the keys it gained) to the end; the rule is the slot
//! version's ([`super::idle_shard`]): while the clients still send commands, less than
//! [`IDLE_SHARE`] of them and less than [`IDLE_OF_SLOT_SHARE`] of its keys' share; when they went
//! silent, measured against the rate before its fill began.

use std::collections::BTreeMap;

use crate::finding::{Finding, FindingKind, Severity};
use crate::float;
use crate::metrics::NodeMetrics;
use crate::time::{TimeSpan, Timestamp};

use super::context::Context;
use super::detector::Detector;
use super::idle_shard::{IDLE_OF_SLOT_SHARE, IDLE_SHARE};

/// The least share of the cluster's keys a node must hold at the end to be looked at.
const MIN_KEY_SHARE: f64 = 0.05;

/// A node "filled" when it ended with at least this many times the keys it began with.
const FILLED: u64 = 4;

/// Finds nodes that filled with keys but get no commands, where the recording has no topology.
pub(super) struct IdleByKeys;

/// Business attempts per second on `n` over the intervals inside `w`, and the seconds measured.
fn rate(n: &NodeMetrics, w: TimeSpan) -> (f64, f64) {
    let (mut attempts, mut secs) = (0u64, 0.0);
    for iv in n
        .intervals
        .iter()
        .filter(|i| i.span.start >= w.start && i.span.end <= w.end)
    {
        attempts += iv.business().attempts();
        secs += iv.secs();
    }
    (float::from_u64(attempts), secs)
}

impl Detector for IdleByKeys {
    fn name(&self) -> &'static str {
        "idle shard by keys"
    }

    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        if ctx.summary.topology_samples > 0 || ctx.metrics.nodes.len() < 2 {
            return Vec::new();
        }
        let nodes = &ctx.metrics.nodes;
        let end_keys = |n: &NodeMetrics| n.intervals.last().map_or(0, |i| i.keys);
        let total_keys: u64 = nodes.iter().map(end_keys).sum();
        if total_keys == 0 {
            return Vec::new();
        }
        let per_sec = |w: TimeSpan| -> f64 {
            nodes
                .iter()
                .map(|n| {
                    let (a, s) = rate(n, w);
                    if s > 0.0 {
                        a / s
                    } else {
                        0.0
                    }
                })
                .sum()
        };
        let mut out = Vec::new();
        for n in nodes {
            let (Some(first), Some(_)) = (n.intervals.first(), n.intervals.last()) else {
                continue;
            };
            let (start_keys, last_keys) = (first.keys, end_keys(n));
            let share = float::from_u64(last_keys) / float::from_u64(total_keys);
            if share < MIN_KEY_SHARE || start_keys.saturating_mul(FILLED) > last_keys {
                continue;
            }
            let gained = last_keys - start_keys;
            let began = n
                .intervals
                .iter()
                .find(|i| i.keys > start_keys)
                .map_or(first.span.start, |i| i.span.start);
            let Some(filled) = n
                .intervals
                .iter()
                .find(|i| (i.keys - start_keys.min(i.keys)) * 10 >= gained * 9)
                .map(|i| i.span.end)
            else {
                continue;
            };
            let after = TimeSpan::new(filled, Timestamp(ctx.span.end.0));
            let before = TimeSpan::new(ctx.span.start, began);
            let (attempts, secs) = rate(n, after);
            if secs * 1000.0 < 2.0 * ctx.interval() {
                continue;
            }
            let own = attempts / secs;
            let cluster_after = per_sec(after);
            let cluster_before = per_sec(before);
            let silent = cluster_after < 0.5;
            let total = if silent {
                cluster_before
            } else {
                cluster_after
            };
            let idle = total >= 0.5
                && own / total
                    < IDLE_SHARE.min(if silent {
                        1.0
                    } else {
                        IDLE_OF_SLOT_SHARE * share
                    });
            if !idle {
                continue;
            }
            let numbers = BTreeMap::from([
                ("keys".to_owned(), float::from_u64(last_keys)),
                ("keys_at_start".to_owned(), float::from_u64(start_keys)),
                ("key_share".to_owned(), share),
                ("commands_per_sec".to_owned(), own),
                ("cluster_commands_per_sec_before".to_owned(), cluster_before),
                ("cluster_commands_per_sec_after".to_owned(), cluster_after),
                ("window_secs".to_owned(), secs),
            ]);
            out.push(Finding {
                kind: FindingKind::IdleShard,
                severity: Severity::Critical,
                span: after,
                title: format!(
                    "{} filled from {start_keys} to {last_keys} keys ({:.0} % of the keys) but received {own:.1} commands/s after, while the cluster served {total:.1}/s {}",
                    n.addr,
                    share * 100.0,
                    if silent { "before its keys came" } else { "after it" }
                ),
                explanation: "The recording has no topology (it was imported from metrics), so slot moves are inferred \
                     from the keys: this node's keys grew from next to none, as a node does when slots are migrated \
                     to it, and its share of the keys stands for its share of the slots. Clients that do not send it \
                     commands still route by an old slot map (a wedged or stale client). Check the node's slots \
                     (CLUSTER SHARDS) and the clients' errors from the same moment."
                    .to_owned(),
                numbers,
                node: Some(n.addr.clone()),
                attribution: None,
                context: Vec::new(),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{addr, found, two_nodes, After};
    use crate::recording::Line;

    /// 30 polls, no topology. A serves 200 `set`/s; from poll 10 to 12 B's keys grow from 0 to
    /// 600 (A's stay at 1000); after, A serves `a`/s and B `b`/s.
    fn lines(a: u64, b: u64) -> Vec<Line> {
        two_nodes(&After {
            a,
            a_rejected: 0,
            b,
            b_keys: |k| (k.saturating_sub(9) * 200).min(600),
            b_dies: false,
            topology: false,
        })
    }

    #[test]
    fn a_node_that_filled_with_keys_but_gets_no_commands_is_idle() {
        let f = found(&IdleByKeys, &lines(200, 0));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].node, Some(addr(7001)));
        assert!((f[0].numbers["key_share"] - 600.0 / 1600.0).abs() < 1e-9);
        assert!(
            f[0].title.contains("filled from 0 to 600 keys"),
            "{}",
            f[0].title
        );
    }

    #[test]
    fn a_node_that_filled_and_gets_its_share_is_not_idle() {
        assert!(found(&IdleByKeys, &lines(120, 80)).is_empty());
    }

    #[test]
    fn clients_gone_silent_leave_the_filled_node_idle_against_the_rate_before() {
        let f = found(&IdleByKeys, &lines(0, 0));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].title.ends_with("before its keys came"),
            "{}",
            f[0].title
        );
    }

    #[test]
    fn with_topology_the_slot_rule_speaks_instead() {
        let l = two_nodes(&After {
            a: 200,
            a_rejected: 0,
            b: 0,
            b_keys: |k| (k.saturating_sub(9) * 200).min(600),
            b_dies: false,
            topology: true,
        });
        assert!(found(&IdleByKeys, &l).is_empty());
    }
}
