//! Idle shards: a shard that owns slots but receives (almost) none of the cluster's commands
//! after a topology change.

use std::collections::{BTreeMap, BTreeSet};

use crate::finding::{Finding, FindingKind, Severity};
use crate::float;
use crate::node::NodeId;
use crate::slot::SLOT_COUNT;

use super::context::Context;
use super::detector::Detector;

/// Share of a cluster's commands below which a shard that owns slots counts as idle.
pub const IDLE_SHARE: f64 = 0.01;

/// Fraction of its slots' share of the commands below which a shard counts as idle while the
/// clients still send commands: a shard with 3 % of the slots is idle below 0.6 % of them.
pub const IDLE_OF_SLOT_SHARE: f64 = 0.2;

/// Finds shards left idle after a topology change.
pub(super) struct IdleShard;

impl Detector for IdleShard {
    fn name(&self) -> &'static str {
        "idle shard"
    }

    /// A shard that owns slots but receives (almost) none of the cluster's commands after a change.
    ///
    /// While the clients still send commands after the change, a shard is idle when it gets less
    /// than [`IDLE_SHARE`] of them and less than [`IDLE_OF_SLOT_SHARE`] of its slots' share: what
    /// counts is where the traffic goes, not how much of it is left (clients slowed by a dead
    /// node send less to every shard). When the clients went silent altogether, a shard that
    /// gained slots is measured against the rate before the change (the clients then show up as
    /// `client_group_lost` too). A node not measured after the change (it stopped answering) is
    /// not called idle: its traffic is unknown.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let traffic = ctx.traffic;
        let Some(after) = ctx.after else {
            return Vec::new();
        };
        let total_after: f64 = traffic
            .iter()
            .map(|t| t.after.calls + t.after.rejected)
            .sum();
        let total_before: f64 = traffic
            .iter()
            .map(|t| t.before.calls + t.before.rejected)
            .sum();
        let silent = total_after < 0.5;
        let total = if silent { total_before } else { total_after };
        let measured = |secs: f64| secs * 1000.0 >= 2.0 * ctx.interval();
        if total < 0.5 || !traffic.iter().any(|t| measured(t.after.secs)) {
            return Vec::new();
        }
        let gained: BTreeSet<&NodeId> = ctx
            .summary
            .changes()
            .filter_map(|m| m.to.as_ref())
            .collect();
        let mut out = Vec::new();
        for t in traffic {
            let attempts = t.after.calls + t.after.rejected;
            let slot_share = float::from_u64(t.slots as u64) / f64::from(SLOT_COUNT);
            let received = t.id.as_ref().is_some_and(|id| gained.contains(id));
            let idle = if silent {
                received && attempts / total < IDLE_SHARE
            } else {
                attempts / total < IDLE_SHARE.min(IDLE_OF_SLOT_SHARE * slot_share)
            };
            if t.slots == 0 || slot_share < 0.01 || !measured(t.after.secs) || !idle {
                continue;
            }
            let elsewhere_rejected: f64 = traffic
                .iter()
                .filter(|o| o.addr != t.addr)
                .map(|o| o.after.rejected)
                .sum();
            let elsewhere_moved: f64 = traffic
                .iter()
                .filter(|o| o.addr != t.addr)
                .map(|o| o.after.moved)
                .sum();
            let numbers = BTreeMap::from([
                ("slots".to_owned(), float::from_u64(t.slots as u64)),
                ("slot_share".to_owned(), slot_share),
                ("keys".to_owned(), float::from_u64(t.keys)),
                ("commands_per_sec".to_owned(), attempts),
                ("cluster_commands_per_sec_before".to_owned(), total_before),
                ("cluster_commands_per_sec_after".to_owned(), total_after),
                ("rejected_per_sec_elsewhere".to_owned(), elsewhere_rejected),
                ("moved_per_sec_elsewhere".to_owned(), elsewhere_moved),
                ("window_secs".to_owned(), t.after.secs),
            ]);
            out.push(Finding {
                kind: FindingKind::IdleShard,
                severity: Severity::Critical,
                span: after,
                title: format!(
                    "{} owns {} slots ({:.0} %) and {} keys but received {:.1} commands/s after the topology change, while the cluster served {:.1}/s {}",
                    t.addr,
                    t.slots,
                    slot_share * 100.0,
                    t.keys,
                    attempts,
                    total,
                    if silent { "before it" } else { "after it" }
                ),
                explanation: format!(
                    "After slots moved, this shard owns a share of the keyspace but clients do not send it commands: \
                     their routing tables still point elsewhere. Meanwhile the other shards rejected {elsewhere_rejected:.1} \
                     commands/s ({elsewhere_moved:.1} MOVED/s). Clients that never learn the new owner keep sending to the old \
                     one (a wedged or stale client); checking per-shard INFO commandstats after a topology change shows this at once."
                ),
                numbers,
                node: Some(t.addr.clone()),
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
    use crate::analysis::fixture::{addr, found, reshard_lines, two_nodes, After};
    use crate::recording::Line;

    #[test]
    fn a_shard_that_gained_slots_but_gets_no_commands_is_idle() {
        let f = found(&IdleShard, &reshard_lines(false));
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(f.kind, FindingKind::IdleShard);
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.node, Some(addr(7001)));
        assert_eq!(f.numbers["slots"], 8192.0);
        assert_eq!(f.numbers["slot_share"], 0.5);
        assert_eq!(f.numbers["commands_per_sec"], 0.0);
        assert!((f.numbers["moved_per_sec_elsewhere"] - 100.0).abs() < 1e-9);
        assert!((f.numbers["cluster_commands_per_sec_before"] - 200.0).abs() < 1e-9);
        assert!((f.numbers["cluster_commands_per_sec_after"] - 200.0).abs() < 1e-9);
        assert!(
            f.title.starts_with(
                "10.0.0.1:7001 owns 8192 slots (50 %) and 0 keys but received 0.0 commands/s"
            ),
            "{}",
            f.title
        );
    }

    #[test]
    fn a_shard_that_gets_its_share_is_not_idle() {
        assert!(found(&IdleShard, &reshard_lines(true)).is_empty());
    }

    /// 30 polls; at poll 10 slots 8192–16383 move from A to B (which then holds 500 keys).
    /// Before, A executes 200 `set`/s; after, A executes `a`/s and B `b`/s; B answers no poll
    /// after the change when `b_dies`.
    fn slowed_lines(a: u64, b: u64, b_dies: bool) -> Vec<Line> {
        two_nodes(&After {
            a,
            a_rejected: 0,
            b,
            b_keys: |k| if k >= 10 { 500 } else { 0 },
            b_dies,
            topology: true,
        })
    }

    #[test]
    fn a_shard_that_gets_its_share_of_slowed_clients_is_not_idle() {
        // The clients slow to a tenth; B gets 1 of their 20 commands/s: 0.5 % of the rate before
        // the change, but 5 % of what is left is not "none".
        assert!(found(&IdleShard, &slowed_lines(19, 1, false)).is_empty());
        // The same slowdown with B getting nothing is an idle B.
        let f = found(&IdleShard, &slowed_lines(20, 0, false));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].node, Some(addr(7001)));
        assert!(
            f[0].title
                .ends_with("while the cluster served 20.0/s after it"),
            "{}",
            f[0].title
        );
    }

    #[test]
    fn a_node_that_stopped_answering_is_not_called_idle() {
        let lines = slowed_lines(100, 0, true);
        assert!(found(&IdleShard, &lines).is_empty());
    }

    #[test]
    fn without_a_topology_change_no_shard_is_idle() {
        // The first ten polls: two topology lines and three lines a poll, before any slot moves.
        let lines: Vec<_> = reshard_lines(false).into_iter().take(2 + 10 * 3).collect();
        assert!(found(&IdleShard, &lines).is_empty());
    }

    #[test]
    fn one_poll_after_the_change_is_too_early_to_call_a_shard_idle() {
        // Up to poll 11: the change at poll 10 (two topology lines), one full poll after it.
        let lines: Vec<_> = reshard_lines(false)
            .into_iter()
            .take(2 + 10 * 3 + 2 + 2 * 3)
            .collect();
        assert!(found(&IdleShard, &lines).is_empty());
        // One poll more and it is.
        let lines: Vec<_> = reshard_lines(false)
            .into_iter()
            .take(2 + 10 * 3 + 2 + 3 * 3)
            .collect();
        assert_eq!(found(&IdleShard, &lines).len(), 1);
    }
}
