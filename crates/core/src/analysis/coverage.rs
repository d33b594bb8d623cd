//! Slot coverage at the end of a recording: slots without an owner, slots the nodes disagree
//! about.

use std::collections::BTreeMap;

use crate::finding::{Finding, FindingKind, Severity};
use crate::float;
use crate::slot::SLOT_COUNT;
use crate::time::{TimeSpan, Timestamp};

use super::context::Context;
use super::detector::Detector;

/// Finds slots left without an owner or disputed at the end.
pub(super) struct Coverage;

impl Detector for Coverage {
    fn name(&self) -> &'static str {
        "slot coverage"
    }

    /// Slots without an owner, or nodes that disagree about owners, at the end.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let unowned = usize::from(SLOT_COUNT) - ctx.owners.owners.covered();
        if (unowned == 0 && ctx.owners.disagreements == 0)
            || !ctx
                .timeline
                .nodes()
                .iter()
                .any(|(n, _)| ctx.timeline.nodes().id(n).is_some())
        {
            return Vec::new();
        }
        let at_end = TimeSpan::new(Timestamp(ctx.span.end.0.saturating_sub(1)), ctx.span.end);
        let numbers = BTreeMap::from([
            ("unowned_slots".to_owned(), float::from_u64(unowned as u64)),
            (
                "disputed_slots".to_owned(),
                float::from_u64(ctx.owners.disagreements as u64),
            ),
        ]);
        vec![Finding {
            kind: FindingKind::SlotCoverage,
            severity: if unowned > 0 { Severity::Critical } else { Severity::Warning },
            span: at_end,
            title: format!(
                "At the end of the recording {unowned} slots had no owner and nodes disagreed about {} slots",
                ctx.owners.disagreements
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{found, info, topology, view, Counters, A, B, T0};
    use crate::topology::TopologyView;

    #[test]
    fn slots_without_an_owner_are_critical() {
        let text = format!("{A} 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16000\n");
        let v = TopologyView::from_nodes(&text).unwrap();
        let f = found(&Coverage, &[topology(T0, 7000, A, v)]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].kind, FindingKind::SlotCoverage);
        assert_eq!(f[0].severity, Severity::Critical);
        assert_eq!(f[0].numbers["unowned_slots"], 383.0);
        assert_eq!(f[0].numbers["disputed_slots"], 0.0);
    }

    #[test]
    fn views_that_disagree_are_a_warning() {
        // A has seen B take 8192–16383; B still believes A owns everything.
        let f = found(
            &Coverage,
            &[
                topology(T0, 7000, A, view(A, "0-8191", "8192-16383")),
                topology(T0, 7001, B, view(B, "0-16383", "")),
            ],
        );
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].numbers["unowned_slots"], 0.0);
        assert_eq!(f[0].numbers["disputed_slots"], 8192.0);
        assert_eq!(
            f[0].title,
            "At the end of the recording 0 slots had no owner and nodes disagreed about 8192 slots"
        );
    }

    #[test]
    fn full_agreed_coverage_is_no_finding() {
        let f = found(
            &Coverage,
            &[
                topology(T0, 7000, A, view(A, "0-8191", "8192-16383")),
                topology(T0, 7001, B, view(B, "0-8191", "8192-16383")),
            ],
        );
        assert!(f.is_empty(), "{f:#?}");
    }

    #[test]
    fn without_any_node_nothing_is_said_about_coverage() {
        assert!(found(&Coverage, &[]).is_empty());
    }

    #[test]
    fn a_polled_node_without_a_view_leaves_every_slot_unowned() {
        // Known nodes but no topology view at all: nothing owns any slot.
        let c = Counters {
            uptime: 5,
            ..Counters::default()
        };
        let f = found(&Coverage, &[info(T0, 7000, A, &c)]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].numbers["unowned_slots"], 16384.0);
    }
}
