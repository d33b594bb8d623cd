//! Node outages: stretches in which a node did not answer the collector's polls (stopped,
//! stalled, killed, restarted), read from the gaps between its `INFO` samples.

use crate::metrics::NodeMetrics;
use crate::node::NodeAddr;
use crate::time::Timestamp;

use super::context::Context;

/// A gap longer than this many poll intervals between two samples of a node is an outage.
const GAP_INTERVALS: u64 = 2;

/// One node's outage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Outage {
    /// The node.
    pub(super) node: NodeAddr,
    /// Its last answer before the outage: it stopped answering after this.
    pub(super) last_answer: Timestamp,
    /// Its first answer after it, `None` when it never answered again.
    pub(super) answered_again: Option<Timestamp>,
    /// Whether it came back restarted (its uptime went back).
    pub(super) restarted: bool,
}

impl Outage {
    /// How long it lasted, milliseconds, up to `end` when it never answered again.
    pub(super) fn millis(&self, end: Timestamp) -> u64 {
        self.answered_again
            .unwrap_or(end)
            .millis_since(self.last_answer)
    }
}

/// The outages of one node: gaps of more than [`GAP_INTERVALS`] poll intervals between samples,
/// and a last sample that long before the recording's end.
fn of_node(n: &NodeMetrics, interval_ms: u64, end: Timestamp) -> Vec<Outage> {
    let limit = GAP_INTERVALS * interval_ms + interval_ms / 2;
    let mut out: Vec<Outage> = n
        .intervals
        .iter()
        .filter(|iv| iv.span.millis() > limit || iv.restarted)
        .map(|iv| Outage {
            node: n.addr.clone(),
            last_answer: iv.span.start,
            answered_again: Some(iv.span.end),
            restarted: iv.restarted,
        })
        .collect();
    if let Some(last) = n.intervals.last() {
        if end.millis_since(last.span.end) > limit {
            out.push(Outage {
                node: n.addr.clone(),
                last_answer: last.span.end,
                answered_again: None,
                restarted: false,
            });
        }
    }
    out
}

/// Every node's outages, in time order.
pub(super) fn outages(ctx: &Context<'_>) -> Vec<Outage> {
    let end = ctx.span.end;
    let mut out: Vec<Outage> = ctx
        .metrics
        .nodes
        .iter()
        .flat_map(|n| of_node(n, ctx.interval_ms, end))
        .collect();
    out.sort_by_key(|o| o.last_answer);
    out
}
