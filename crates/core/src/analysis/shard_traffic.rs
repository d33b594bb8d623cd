//! A shard's traffic around the topology changes: its rates before the first and after the last.

use serde::{Deserialize, Serialize};

use crate::metrics::NodeMetrics;
use crate::node::{NodeAddr, NodeId};
use crate::time::TimeSpan;

/// Traffic of one node around a topology change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardTraffic {
    /// The node.
    pub addr: NodeAddr,
    /// Its id.
    pub id: Option<NodeId>,
    /// Slots it owns at the end of the recording.
    pub slots: usize,
    /// Keys it holds at the end.
    pub keys: u64,
    /// Rates before the first topology change (or over the whole recording when there is none).
    pub before: Rates,
    /// Rates after the last topology change.
    pub after: Rates,
}

/// Per-second rates over a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// Seconds covered.
    pub secs: f64,
    /// Business commands executed per second.
    pub calls: f64,
    /// Business commands rejected per second (MOVED, ASK, …).
    pub rejected: f64,
    /// Business commands failed per second.
    pub failed: f64,
    /// MOVED replies per second.
    pub moved: f64,
    /// ASK replies per second.
    pub ask: f64,
    /// Connections accepted per second.
    pub new_connections: f64,
}

impl Rates {
    /// The rates of one node over `window`.
    pub(super) fn of(node: &NodeMetrics, window: TimeSpan) -> Rates {
        let t = node.total_in(window);
        Rates {
            secs: t.secs,
            calls: t.rate(t.business.calls),
            rejected: t.rate(t.business.rejected),
            failed: t.rate(t.business.failed),
            moved: t.rate(t.errors.get("MOVED").copied().unwrap_or(0)),
            ask: t.rate(t.errors.get("ASK").copied().unwrap_or(0)),
            new_connections: t.rate(t.connections_received),
        }
    }
}
