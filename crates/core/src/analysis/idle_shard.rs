//! Idle shards: a shard that owns slots but receives (almost) none of the cluster's commands
//! after a topology change.

use std::collections::{BTreeMap, BTreeSet};

use crate::finding::{Finding, FindingKind, Severity};
use crate::float;
use crate::node::NodeId;
use crate::slot::SLOT_COUNT;

use super::{Context, Detector};

/// Share of a cluster's commands below which a shard that owns slots counts as idle.
pub const IDLE_SHARE: f64 = 0.01;

/// Finds shards left idle after a topology change.
pub(super) struct IdleShard;

impl Detector for IdleShard {
    fn name(&self) -> &'static str {
        "idle shard"
    }

    /// A shard that owns slots but receives (almost) none of the cluster's commands after a change.
    ///
    /// The cluster's rate is the larger of the rates after and before the change, so a shard that
    /// gained slots is flagged also when the clients went silent altogether (they then show up
    /// as `client_group_lost` too).
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
        let total = total_after.max(total_before);
        let enough_time = traffic
            .iter()
            .any(|t| t.after.secs * 1000.0 >= 2.0 * ctx.interval());
        if total < 0.5 || !enough_time {
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
            if t.slots == 0
                || slot_share < 0.01
                || attempts / total >= IDLE_SHARE
                || !(received || total_after >= 0.5)
            {
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
                    if total_after >= total_before { "after it" } else { "before it" }
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
    use crate::analysis::fixture::{addr, found, reshard_lines};

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
