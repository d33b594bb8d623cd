//! Figures read from a finished recording: its size per node-hour, and the server time the
//! collector's commands cost each node (from the `commandstats` of its INFO samples).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use slotscope_core::info::InfoReport;
use slotscope_core::metrics::COLLECTOR_COMMANDS;
use slotscope_core::recording::{InfoSample, Line};
use slotscope_core::NodeAddr;
use slotscope_tests::Recording;

use crate::to_f64;

/// Size and extent of one recording.
pub struct FileFigures {
    /// File size.
    pub bytes: u64,
    /// Nodes with INFO samples in it.
    pub nodes: usize,
    /// From the header's start to the end line, in milliseconds.
    pub span_ms: u64,
    /// Poll rounds recorded.
    pub rounds: u64,
    /// Failed polls recorded.
    pub failures: usize,
}

impl FileFigures {
    /// Bytes per node per hour of recording.
    pub fn per_node_hour(&self) -> f64 {
        let hours = to_f64(self.span_ms) / 3.6e6;
        to_f64(self.bytes) / to_f64(self.nodes as u64) / hours
    }
}

/// What the collector's commands cost one node over a recording.
pub struct NodeCost {
    /// The node.
    pub addr: NodeAddr,
    /// Polls between the first and last INFO sample of this recording.
    pub polls_recorded: u64,
    /// Polls between them by every collector (growth of `cmdstat_info` calls).
    pub polls_total: u64,
    /// Command → (calls, usec) added between them.
    pub per_cmd: BTreeMap<String, (u64, u64)>,
}

impl NodeCost {
    /// Server microseconds of all the collector's commands.
    pub fn usec(&self) -> u64 {
        self.per_cmd.values().map(|&(_, u)| u).sum()
    }

    /// Server milliseconds per poll.
    pub fn ms_per_poll(&self) -> f64 {
        to_f64(self.usec()) / to_f64(self.polls_total.max(1)) / 1000.0
    }
}

/// Size, nodes, span, rounds and failures of the recording at `path`, read as `rec`.
pub fn file_figures(path: &Path, rec: &Recording) -> FileFigures {
    let bytes = fs::metadata(path).expect("recording size").len();
    let mut nodes = std::collections::BTreeSet::new();
    let (mut rounds, mut failures, mut end) = (0, 0, None);
    for l in &rec.lines {
        match l {
            Line::Info(i) => {
                nodes.insert(i.node.addr.clone());
            }
            Line::PollRound(_) => rounds += 1,
            Line::PollFailed(_) => failures += 1,
            Line::End(e) => end = Some(e.t),
            _ => {}
        }
    }
    let end = end.unwrap_or_else(|| panic!("{} has no end line", path.display()));
    FileFigures {
        bytes,
        nodes: nodes.len(),
        span_ms: end.millis_since(rec.header.started),
        rounds,
        failures,
    }
}

/// What the collector's commands cost each node, between its first and last INFO sample.
pub fn node_costs(rec: &Recording) -> Vec<NodeCost> {
    let mut by_node: BTreeMap<NodeAddr, Vec<&InfoSample>> = BTreeMap::new();
    for l in &rec.lines {
        if let Line::Info(i) = l {
            by_node.entry(i.node.addr.clone()).or_default().push(i);
        }
    }
    by_node
        .into_iter()
        .map(|(addr, samples)| {
            let first = &samples.first().expect("a sample").info;
            let last = &samples.last().expect("a sample").info;
            let stat = |r: &InfoReport, c: &str| {
                r.commandstats.get(c).map_or((0, 0), |s| (s.calls, s.usec))
            };
            let per_cmd = COLLECTOR_COMMANDS
                .iter()
                .map(|&c| {
                    let (c0, u0) = stat(first, c);
                    let (c1, u1) = stat(last, c);
                    (c.to_owned(), (c1.saturating_sub(c0), u1.saturating_sub(u0)))
                })
                .filter(|(_, (calls, _))| *calls > 0)
                .collect::<BTreeMap<_, _>>();
            NodeCost {
                addr,
                polls_recorded: samples.len() as u64 - 1,
                polls_total: per_cmd.get("info").map_or(0, |&(c, _)| c),
                per_cmd,
            }
        })
        .collect()
}
