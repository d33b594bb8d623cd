//! Lost client groups: business traffic that vanishes or turns into errors after a topology
//! change, tied to the client groups whose connections are gone.

use std::collections::BTreeMap;

use crate::census::ClientGroup;
use crate::finding::{Finding, FindingKind, Severity};
use crate::time::{TimeSpan, Timestamp};

use super::attribution;
use super::{Context, Detector, Rates};

/// Finds the clients lost by a topology change.
pub(super) struct LostGroup;

impl Detector for LostGroup {
    fn name(&self) -> &'static str {
        "lost client group"
    }

    /// Business traffic that vanishes or turns into errors after a topology change.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let Some(after) = ctx.after else {
            return Vec::new();
        };
        let sum = |w: TimeSpan| {
            ctx.metrics.nodes.iter().fold(Rates::default(), |acc, n| {
                let r = Rates::of(n, w);
                Rates {
                    secs: acc.secs.max(r.secs),
                    calls: acc.calls + r.calls,
                    rejected: acc.rejected + r.rejected,
                    failed: acc.failed + r.failed,
                    moved: acc.moved + r.moved,
                    ask: acc.ask + r.ask,
                    new_connections: acc.new_connections + r.new_connections,
                }
            })
        };
        let b = sum(ctx.before);
        let a = sum(after);
        if b.calls < 0.5 || a.secs * 1000.0 < 3.0 * ctx.interval() {
            return Vec::new();
        }
        let ok_after = a.calls - a.failed.min(a.calls);
        if ok_after >= 0.1 * b.calls {
            return Vec::new();
        }
        // Groups seen before the change whose connections are gone by the end.
        let change_start = ctx.before.end;
        let settle = Timestamp(after.end.0.saturating_sub(2 * ctx.interval_ms));
        let vanished: Vec<&ClientGroup> = ctx
            .census
            .groups
            .iter()
            .filter(|g| g.first_seen < change_start && g.last_seen < settle)
            .collect();
        let attribution = attribution::to_groups(&vanished);
        let numbers = BTreeMap::from([
            ("commands_per_sec_before".to_owned(), b.calls),
            ("commands_per_sec_after".to_owned(), a.calls),
            ("rejected_per_sec_after".to_owned(), a.rejected),
            ("failed_per_sec_after".to_owned(), a.failed),
            ("window_secs_after".to_owned(), a.secs),
        ]);
        vec![Finding {
            kind: FindingKind::ClientGroupLost,
            severity: Severity::Critical,
            span: after,
            title: format!(
                "Successful commands fell from {:.1}/s to {:.1}/s after the topology change and did not return",
                b.calls, ok_after
            ),
            explanation: format!(
                "Before the slots moved the cluster executed {:.1} business commands/s; after the change it executed {:.1}/s \
                 ({:.1}/s rejected, {:.1}/s failed) while the server reported the cluster as healthy. The clients stopped \
                 sending, or every command they send is redirected or fails: a client whose node list or routing table did \
                 not survive the change (for example a cluster client that dropped its startup nodes on a connection error). \
                 Check the application's error logs for the same moment.",
                b.calls, a.calls, a.rejected, a.failed
            ),
            numbers,
            node: None,
            attribution,
            context: Vec::new(),
        }]
    }
}
