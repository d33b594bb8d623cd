//! What changed over a selected range: per-node and per-command counter deltas.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use slotscope_core::metrics::{is_business_command, Metrics};
use slotscope_core::{TimeSpan, Timestamp};

/// One node's deltas over the range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeRow {
    /// The node's address.
    pub node: String,
    /// Business commands executed.
    pub calls: u64,
    /// Business commands rejected (MOVED, ASK, …).
    pub rejected: u64,
    /// Business commands failed.
    pub failed: u64,
    /// MOVED errors.
    pub moved: u64,
    /// Connections accepted.
    pub new_connections: u64,
    /// Seconds of samples covered.
    pub secs: f64,
}

/// One command's deltas over the range, all nodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommandRow {
    /// The command.
    pub command: String,
    /// Executed.
    pub calls: u64,
    /// Rejected.
    pub rejected: u64,
    /// Failed.
    pub failed: u64,
}

/// The deltas over one range.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Deltas {
    /// Per node, in the order of first sample.
    pub nodes: Vec<NodeRow>,
    /// Per command, most attempts first.
    pub commands: Vec<CommandRow>,
}

/// The deltas of the intervals ending inside `[start, end]`.
pub fn over(metrics: &Metrics, (start, end): (u64, u64)) -> Deltas {
    let span = TimeSpan::new(Timestamp(start), Timestamp(end));
    let mut commands: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    let mut nodes = Vec::new();
    for n in &metrics.nodes {
        let t = n.total_in(span);
        for (c, d) in &t.commands {
            if is_business_command(c) {
                let e = commands.entry(c.clone()).or_default();
                e.0 += d.calls;
                e.1 += d.rejected;
                e.2 += d.failed;
            }
        }
        nodes.push(NodeRow {
            node: n.addr.to_string(),
            calls: t.business.calls,
            rejected: t.business.rejected,
            failed: t.business.failed,
            moved: t.errors.get("MOVED").copied().unwrap_or(0),
            new_connections: t.connections_received,
            secs: t.secs,
        });
    }
    let mut commands: Vec<CommandRow> = commands
        .into_iter()
        .map(|(command, (calls, rejected, failed))| CommandRow {
            command,
            calls,
            rejected,
            failed,
        })
        .collect();
    commands.sort_by_key(|c| std::cmp::Reverse(c.calls + c.rejected + c.failed));
    Deltas { nodes, commands }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn incident_2_selection_shows_rejections_on_the_stormy_command_only() {
        let (read, metrics) = fixture("incident2-valkey");
        let span = read.tracks.grid.span();
        let span = (span.start.as_millis(), span.end.as_millis());
        let d = over(&metrics, span);
        assert_eq!(d.nodes.len(), 2);
        assert!(d.nodes.iter().all(|n| n.calls > 0));
        let storm = d
            .commands
            .iter()
            .find(|c| c.command == "zrevrange")
            .unwrap();
        let calm = d
            .commands
            .iter()
            .find(|c| c.command == "zrevrangebyscore")
            .unwrap();
        assert!(storm.rejected * 5 > storm.calls, "{storm:?}");
        assert!(calm.rejected * 20 < calm.calls.max(1), "{calm:?}");
        // An empty range has nothing.
        let none = over(&metrics, (span.0, span.0));
        assert!(none.nodes.iter().all(|n| n.calls == 0));
        assert!(none.commands.is_empty());
    }
}
