//! Live signals for a fleet's monitoring, derived from the lines a recorder writes: what no
//! exporter of server counters has — the share of each command's calls a node rejected (`MOVED`
//! in a cluster), new connections per second against the connections open, topology refreshes
//! per second, shards that own slots yet serve nothing while others do, client groups whose
//! library version has a known defect — and the health of the collector's own polling.
//!
//! [`Signals`] is fed every line the recorder writes, in order ([`Signals::push`]); it keeps only
//! the last [`IDLE_INTERVALS`] `INFO` intervals of each node, each node's latest topology and
//! client list, and the poll counters, so its memory does not grow with the recording.
//! [`Signals::families`] gives the metric families at that moment; [`openmetrics::render`] writes
//! them in the OpenMetrics text format.
//!
//! Definitions (each from the last interval of a node, between its last two `INFO` replies):
//! - `slotscope_moved_share{node,cmd}`: rejected ÷ (calls + rejected) of one business command
//!   ([`is_business_command`]); only commands attempted in the interval. `rejected_calls` counts
//!   every call refused before it ran; in a cluster that is `MOVED`/`ASK` above all, but wrong
//!   arity, ACL and `CROSSSLOT` refusals count too.
//! - `slotscope_new_connections_per_second{node}`: `total_connections_received` delta ÷ seconds;
//!   `slotscope_connected_clients{node}`: `connected_clients` at the interval's end (the
//!   collector's own connection included).
//! - `slotscope_topology_refreshes_per_second{node}`: `cluster|slots` + `cluster|shards` +
//!   `cluster|nodes` calls ÷ seconds, the collector's own taken out as [`crate::metrics`] does.
//! - `slotscope_idle_shard{node}`: 1 when the node is the primary of a shard that owns slots (in
//!   its own latest topology), it has [`IDLE_INTERVALS`] intervals, it executed no business call
//!   in any of them, and other nodes executed business calls over their last [`IDLE_INTERVALS`]
//!   intervals; else 0.
//! - `slotscope_client_groups_with_known_defect{library,version}`: census groups
//!   ([`GroupKey`]) in the latest `CLIENT LIST` of the nodes polled whose `lib-name`/`lib-ver`
//!   has a defect in [`crate::defect`], counted once across nodes.
//! - `slotscope_poll_rounds_total`, `slotscope_poll_failures_total{node}` (polls of the node
//!   with at least one failed step), `slotscope_round_seconds` (last round's duration),
//!   `slotscope_round_overruns_total` (rounds in which some node's poll did not finish before the
//!   round's deadline, or that lasted the whole interval).

pub mod openmetrics;

use std::collections::{BTreeMap, BTreeSet};

use crate::census::GroupKey;
use crate::client_delta::ClientBase;
use crate::client_list::ClientEntry;
use crate::defect;
use crate::metrics::{is_business_command, Metrics};
use crate::node::NodeAddr;
use crate::recording::Line;
use crate::topology::TopologyView;

/// Intervals without a business call after which a slot-owning primary counts as idle: at the
/// default 1 s interval, 5 s.
pub const IDLE_INTERVALS: usize = 5;

/// Client topology refresh commands: the slot map asked for again.
pub const TOPOLOGY_COMMANDS: &[&str] = &["cluster|slots", "cluster|shards", "cluster|nodes"];

/// Whether a family is a gauge or a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A value that goes up and down.
    Gauge,
    /// A value that only goes up; its sample name ends in `_total`.
    Counter,
}

/// One sample of a family: its labels (in order) and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Label names and values.
    pub labels: Vec<(&'static str, String)>,
    /// The value.
    pub value: f64,
}

/// A metric family: a name (without `_total` for counters), its help, its kind and samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    /// The family's name.
    pub name: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// Gauge or counter.
    pub kind: Kind,
    /// Its samples (possibly none).
    pub samples: Vec<Sample>,
}

/// The signals' state, fed the recorder's lines.
#[derive(Clone, Debug, Default)]
pub struct Signals {
    interval_ms: u64,
    metrics: Metrics,
    owns_slots: BTreeMap<NodeAddr, bool>,
    defective_groups: BTreeMap<NodeAddr, BTreeSet<GroupKey>>,
    /// Each node's last client list, to read the ones written as changes.
    client_lists: BTreeMap<NodeAddr, ClientBase>,
    rounds: u64,
    failures: BTreeMap<NodeAddr, u64>,
    failed_this_round: BTreeSet<NodeAddr>,
    last_round_ms: Option<u64>,
    overruns: u64,
}

impl Signals {
    /// No lines yet.
    pub fn new() -> Signals {
        Signals::default()
    }

    /// Notes the client groups with a known defect in `node`'s client list.
    fn client_list(&mut self, node: &NodeAddr, clients: &[ClientEntry]) {
        let groups = clients
            .iter()
            .map(GroupKey::of)
            .filter(|k| !known_defects(k).is_empty())
            .collect();
        self.defective_groups.insert(node.clone(), groups);
    }

    /// Folds one line the recorder wrote.
    pub fn push(&mut self, line: &Line) {
        match line {
            Line::Header(h) => self.interval_ms = h.options.interval_ms,
            Line::Info(_) => {
                self.metrics.push(line);
                for node in &mut self.metrics.nodes {
                    let n = node.intervals.len();
                    if n > IDLE_INTERVALS {
                        node.intervals.drain(..n - IDLE_INTERVALS);
                    }
                }
            }
            Line::Topology(s) => {
                self.owns_slots
                    .insert(s.node.addr.clone(), owns_slots(&s.view));
            }
            Line::ClientList(s) => {
                self.client_lists
                    .entry(s.node.addr.clone())
                    .or_default()
                    .reset(s.t, &s.clients);
                self.client_list(&s.node.addr, &s.clients);
            }
            Line::ClientListDelta(d) => {
                let base = self.client_lists.entry(d.node.addr.clone()).or_default();
                match base.apply(d) {
                    Ok(clients) => self.client_list(&d.node.addr, &clients),
                    Err(_) => base.clear(),
                }
            }
            Line::NodeGone(g) => {
                let addr = &g.node.addr;
                self.metrics.nodes.retain(|n| &n.addr != addr);
                self.owns_slots.remove(addr);
                self.defective_groups.remove(addr);
                self.client_lists.remove(addr);
            }
            Line::PollFailed(f) => {
                self.failed_this_round.insert(f.node.addr.clone());
            }
            Line::PollRound(r) => {
                self.rounds += 1;
                for addr in std::mem::take(&mut self.failed_this_round) {
                    *self.failures.entry(addr).or_default() += 1;
                }
                self.last_round_ms = Some(r.elapsed_ms);
                let unfinished = r.ok.saturating_add(r.failed) < r.nodes;
                if unfinished || (self.interval_ms > 0 && r.elapsed_ms >= self.interval_ms) {
                    self.overruns += 1;
                }
            }
            _ => {}
        }
    }

    /// The families at this moment, in a fixed order.
    pub fn families(&self) -> Vec<Family> {
        let mut moved = Vec::new();
        let mut new_conns = Vec::new();
        let mut connected = Vec::new();
        let mut refreshes = Vec::new();
        let mut idle = Vec::new();
        let served: BTreeMap<&NodeAddr, u64> = self
            .metrics
            .nodes
            .iter()
            .map(|n| {
                (
                    &n.addr,
                    n.intervals.iter().map(|i| i.business().calls).sum(),
                )
            })
            .collect();
        for node in &self.metrics.nodes {
            let label = || vec![("node", node.addr.to_string())];
            let Some(last) = node.intervals.last() else {
                continue;
            };
            for (cmd, d) in last.commands.iter().filter(|(c, _)| is_business_command(c)) {
                if d.attempts() > 0 {
                    moved.push(Sample {
                        labels: vec![("node", node.addr.to_string()), ("cmd", cmd.clone())],
                        value: ratio(d.rejected, d.attempts()),
                    });
                }
            }
            let secs = last.secs();
            new_conns.push(Sample {
                labels: label(),
                value: crate::float::from_u64(last.connections_received) / secs,
            });
            if let Some(c) = last.connected_clients {
                connected.push(Sample {
                    labels: label(),
                    value: crate::float::from_u64(c),
                });
            }
            let topo: u64 = TOPOLOGY_COMMANDS
                .iter()
                .map(|c| last.command(c).calls)
                .sum();
            refreshes.push(Sample {
                labels: label(),
                value: crate::float::from_u64(topo) / secs,
            });
            let others_served = served
                .iter()
                .any(|(addr, &calls)| *addr != &node.addr && calls > 0);
            let is_idle = self.owns_slots.get(&node.addr).copied().unwrap_or(false)
                && node.intervals.len() >= IDLE_INTERVALS
                && served.get(&node.addr).copied().unwrap_or(0) == 0
                && others_served;
            idle.push(Sample {
                labels: label(),
                value: if is_idle { 1.0 } else { 0.0 },
            });
        }
        let mut defective: BTreeMap<(String, String), u64> = BTreeMap::new();
        let groups: BTreeSet<&GroupKey> = self.defective_groups.values().flatten().collect();
        for g in groups {
            let key = (
                g.lib_name.clone().unwrap_or_default(),
                g.lib_ver.clone().unwrap_or_default(),
            );
            *defective.entry(key).or_default() += 1;
        }
        let counter = |v: u64| crate::float::from_u64(v);
        vec![
            Family {
                name: "slotscope_moved_share",
                help: "Share of a business command's attempts the node rejected (MOVED/ASK above all) over the last interval.",
                kind: Kind::Gauge,
                samples: moved,
            },
            Family {
                name: "slotscope_new_connections_per_second",
                help: "Connections the node accepted per second over the last interval.",
                kind: Kind::Gauge,
                samples: new_conns,
            },
            Family {
                name: "slotscope_connected_clients",
                help: "Client connections open on the node at the last poll (the collector's own included).",
                kind: Kind::Gauge,
                samples: connected,
            },
            Family {
                name: "slotscope_topology_refreshes_per_second",
                help: "CLUSTER SLOTS, SHARDS and NODES calls by clients per second over the last interval.",
                kind: Kind::Gauge,
                samples: refreshes,
            },
            Family {
                name: "slotscope_idle_shard",
                help: "1 when the node owns slots, other nodes serve business commands and it served none over the last 5 intervals.",
                kind: Kind::Gauge,
                samples: idle,
            },
            Family {
                name: "slotscope_client_groups_with_known_defect",
                help: "Client groups (lib-name, lib-ver, name) in the latest CLIENT LIST of the nodes whose library version has a known cluster-routing defect.",
                kind: Kind::Gauge,
                samples: defective
                    .into_iter()
                    .map(|((library, version), n)| Sample {
                        labels: vec![("library", library), ("version", version)],
                        value: counter(n),
                    })
                    .collect(),
            },
            Family {
                name: "slotscope_poll_rounds",
                help: "Poll rounds the collector completed.",
                kind: Kind::Counter,
                samples: vec![Sample {
                    labels: Vec::new(),
                    value: counter(self.rounds),
                }],
            },
            Family {
                name: "slotscope_poll_failures",
                help: "Polls of the node with at least one failed or timed-out step.",
                kind: Kind::Counter,
                samples: self
                    .failures
                    .iter()
                    .map(|(addr, &n)| Sample {
                        labels: vec![("node", addr.to_string())],
                        value: counter(n),
                    })
                    .collect(),
            },
            Family {
                name: "slotscope_round_seconds",
                help: "Duration of the last poll round.",
                kind: Kind::Gauge,
                samples: self
                    .last_round_ms
                    .map(|ms| Sample {
                        labels: Vec::new(),
                        value: crate::metrics::ms_to_secs(ms),
                    })
                    .into_iter()
                    .collect(),
            },
            Family {
                name: "slotscope_round_overruns",
                help: "Rounds in which some node's poll did not finish before the round's deadline, or that lasted the whole interval.",
                kind: Kind::Counter,
                samples: vec![Sample {
                    labels: Vec::new(),
                    value: counter(self.overruns),
                }],
            },
        ]
    }
}

/// The known defects of a group's library version (none when it did not say).
fn known_defects(key: &GroupKey) -> Vec<&'static defect::Defect> {
    match (&key.lib_name, &key.lib_ver) {
        (Some(n), Some(v)) => defect::known_defects(n, v),
        _ => Vec::new(),
    }
}

/// `a ÷ b` as a float (0 when `b` is 0).
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        crate::float::from_u64(a) / crate::float::from_u64(b)
    }
}

/// Whether the reporting node is the primary of a shard with slots, in its own view.
fn owns_slots(view: &TopologyView) -> bool {
    let Some(me) = &view.myself else {
        return false;
    };
    view.shards
        .iter()
        .any(|s| !s.slots.is_empty() && s.primary().is_some_and(|p| &p.id == me))
}

#[cfg(test)]
mod tests;
