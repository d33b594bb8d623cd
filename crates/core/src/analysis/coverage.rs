//! Slot coverage at the end of a recording: slots without an owner, slots the nodes disagree
//! about.

use std::collections::BTreeMap;

use crate::finding::{Finding, FindingKind, Severity};
use crate::metrics::count_f64;
use crate::time::{TimeSpan, Timestamp};

use super::{Context, Detector};

/// Finds slots left without an owner or disputed at the end.
pub(super) struct Coverage;

impl Detector for Coverage {
    fn name(&self) -> &'static str {
        "slot coverage"
    }

    /// Slots without an owner, or nodes that disagree about owners, at the end.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let unowned = ctx.owners.owners.iter().filter(|o| o.is_none()).count();
        if ctx.owners.owners.is_empty()
            || (unowned == 0 && ctx.owners.disputed == 0)
            || ctx.ids.is_empty()
        {
            return Vec::new();
        }
        let at_end = TimeSpan::new(Timestamp(ctx.span.end.0.saturating_sub(1)), ctx.span.end);
        let numbers = BTreeMap::from([
            ("unowned_slots".to_owned(), count_f64(unowned as u64)),
            (
                "disputed_slots".to_owned(),
                count_f64(ctx.owners.disputed as u64),
            ),
        ]);
        vec![Finding {
            kind: FindingKind::SlotCoverage,
            severity: if unowned > 0 { Severity::Critical } else { Severity::Warning },
            span: at_end,
            title: format!(
                "At the end of the recording {unowned} slots had no owner and nodes disagreed about {} slots",
                ctx.owners.disputed
            ),
            explanation: "Slots without an owner answer CLUSTERDOWN; slots the nodes disagree about are answered \
                          differently depending on which node a client asks. Both are visible in each node's CLUSTER \
                          SHARDS / NODES; disagreement that lasts longer than gossip takes (seconds) points at a failed \
                          or half-finished migration."
                .to_owned(),
            numbers,
            node: None,
            attribution: None,
            context: Vec::new(),
        }]
    }
}
