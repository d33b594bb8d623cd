//! Connections closed by someone: `CLIENT KILL` calls in a node's `INFO commandstats` (the
//! collector never sends it; an operator, a tool or a test does). A client whose connections are
//! killed under its commands meets connection errors: a trigger like a node's stall.

use crate::moment::at;
use crate::node::NodeAddr;
use crate::time::Timestamp;

use super::context::Context;

/// `CLIENT KILL` calls on one node, within one poll interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Kill {
    /// The node.
    pub(super) node: NodeAddr,
    /// The start of the interval the calls were counted in.
    pub(super) at: Timestamp,
    /// Calls.
    pub(super) calls: u64,
}

impl Kill {
    /// `CLIENT KILL ran 4 times on node … at …`.
    pub(super) fn text(&self, start: Timestamp) -> String {
        format!(
            "CLIENT KILL ran {} times on node {} at {}",
            self.calls,
            self.node,
            at(self.at, start)
        )
    }
}

/// Every interval of every node with `CLIENT KILL` calls, in time order.
pub(super) fn kills(ctx: &Context<'_>) -> Vec<Kill> {
    let mut out: Vec<Kill> = ctx
        .metrics
        .nodes
        .iter()
        .flat_map(|n| {
            n.intervals.iter().filter_map(|iv| {
                let calls = iv.command("client|kill").attempts();
                (calls > 0).then(|| Kill {
                    node: n.addr.clone(),
                    at: iv.span.start,
                    calls,
                })
            })
        })
        .collect();
    out.sort_by_key(|k| k.at);
    out
}
