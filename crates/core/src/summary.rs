//! What a recording holds, folded from its lines: duration, nodes and when they were seen,
//! slot ownership changes (slots moved between which nodes, when), migrations in progress, and poll
//! failures. The same lines always fold into the same summary.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::info::ServerIdentity;
use crate::node::{NodeAddr, NodeId, NodeRef};
use crate::recording::{Discovery, EndReason, FailureKind, GoneReason, Header, Line};
use crate::slot::SlotRange;
use crate::time::{TimeSpan, Timestamp};
use crate::timeline::{ClusterTimeline, NodeIdx};

pub use crate::timeline::MOVE_GAP_MS;

/// Everything `slotscope summary` prints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The recording's header.
    pub header: Header,
    /// Time of the first and last line after the header.
    pub span: Option<TimeSpan>,
    /// Poll rounds recorded.
    pub rounds: u64,
    /// `INFO` samples recorded, all nodes together.
    pub info_samples: u64,
    /// `CLIENT LIST` samples recorded, all nodes together.
    pub client_list_samples: u64,
    /// Topology samples recorded (only changes are recorded).
    pub topology_samples: u64,
    /// Every node seen, in order of first appearance.
    pub nodes: Vec<NodeSummary>,
    /// Slot ownership changes, in time order.
    pub slot_moves: Vec<SlotMove>,
    /// Slots seen in MIGRATING / IMPORTING state, per pair of nodes.
    pub migrations: Vec<Migration>,
    /// Poll failures grouped per node and kind.
    pub failures: Vec<FailureGroup>,
    /// Operator and outside annotations, in order.
    pub annotations: Vec<(Timestamp, String, String)>,
    /// How the recording ended, if it did so normally.
    pub end: Option<(Timestamp, EndReason)>,
    /// Line number of a partial last line, if the file was cut short.
    pub truncated_tail: Option<u64>,
}

impl Summary {
    /// The slot moves that changed where clients send commands (every move but the cluster's
    /// creation), in time order.
    pub fn changes(&self) -> impl Iterator<Item = &SlotMove> + '_ {
        self.slot_moves.iter().filter(|m| m.is_change())
    }
}

/// One node of the recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeSummary {
    /// The address it was polled at.
    pub addr: NodeAddr,
    /// Its cluster id, once known.
    pub id: Option<NodeId>,
    /// Server software and version, from `INFO server`.
    pub server: Option<ServerIdentity>,
    /// When it was first discovered.
    pub discovered: Timestamp,
    /// How.
    pub via: Discovery,
    /// Last successful sample.
    pub last_sample: Option<Timestamp>,
    /// Successful `INFO` samples.
    pub samples: u64,
    /// Failed polls.
    pub failures: u64,
    /// Times it was recorded as gone (and why), and as recovered.
    pub gone: Vec<(Timestamp, GoneReason)>,
    /// Times it answered again after being recorded as gone.
    pub recovered: Vec<Timestamp>,
}

/// Slots whose owner changed from one node to another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlotMove {
    /// Previous owner (`None`: the slots were unassigned).
    pub from: Option<NodeId>,
    /// New owner (`None`: the slots became unassigned).
    pub to: Option<NodeId>,
    /// The slots, as ranges.
    pub ranges: Vec<SlotRange>,
    /// Number of slots.
    pub slots: usize,
    /// First and last time a node reported one of these changes (end exclusive: last + 1 ms).
    pub span: TimeSpan,
    /// Whether this is the cluster's creation: slots that had no owner yet, assigned before every
    /// slot had one (`CLUSTER ADDSLOTS` on a new cluster). Creation is not a topology change: no
    /// client routed by the old layout, so no "before" and "after" is measured from it.
    pub creation: bool,
}

impl SlotMove {
    /// Whether it changed where clients must send commands: any move but the creation.
    pub fn is_change(&self) -> bool {
        !self.creation
    }
}

/// Slots reported MIGRATING from one node to another (or IMPORTING on the other side).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Migration {
    /// Source node.
    pub from: NodeId,
    /// Destination node.
    pub to: NodeId,
    /// Slots seen in migration, as ranges.
    pub ranges: Vec<SlotRange>,
    /// Number of slots.
    pub slots: usize,
    /// First and last time a node reported one of them in migration.
    pub span: TimeSpan,
}

/// Failures of one kind at one node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureGroup {
    /// The node's address.
    pub addr: NodeAddr,
    /// Kind of failure.
    pub kind: FailureKind,
    /// How many.
    pub count: u64,
    /// First and last occurrence.
    pub span: TimeSpan,
    /// The first error text.
    pub example: String,
}

/// Builds a [`Summary`] one line at a time.
#[derive(Clone, Debug)]
pub struct SummaryBuilder {
    summary: Summary,
    /// Slot owners, migrations and the node numbering.
    timeline: ClusterTimeline,
    /// Position in `summary.nodes` of each node (by [`NodeIdx`] of the timeline).
    position: Vec<Option<usize>>,
    failures: BTreeMap<(NodeAddr, FailureKind), FailureGroup>,
}

impl SummaryBuilder {
    /// A builder for a recording with this header.
    pub fn new(header: Header) -> Self {
        SummaryBuilder {
            summary: Summary {
                header,
                span: None,
                rounds: 0,
                info_samples: 0,
                client_list_samples: 0,
                topology_samples: 0,
                nodes: Vec::new(),
                slot_moves: Vec::new(),
                migrations: Vec::new(),
                failures: Vec::new(),
                annotations: Vec::new(),
                end: None,
                truncated_tail: None,
            },
            timeline: ClusterTimeline::new(),
            position: Vec::new(),
            failures: BTreeMap::new(),
        }
    }

    /// The summary of the node `r` names (numbered by the timeline, which has folded the line).
    fn node(&mut self, r: &NodeRef, t: Timestamp) -> &mut NodeSummary {
        let addr = &r.addr;
        let n = self.timeline.nodes().find_addr(addr).map(NodeIdx::index);
        let found = match n {
            Some(n) => self.position.get(n).copied().flatten(),
            // Not numbered (a full table): found by address.
            None => self.summary.nodes.iter().position(|s| &s.addr == addr),
        };
        let i = match found {
            Some(i) => i,
            None => {
                self.summary.nodes.push(NodeSummary {
                    addr: addr.clone(),
                    id: None,
                    server: None,
                    discovered: t,
                    via: Discovery::Seed,
                    last_sample: None,
                    samples: 0,
                    failures: 0,
                    gone: Vec::new(),
                    recovered: Vec::new(),
                });
                let i = self.summary.nodes.len() - 1;
                if let Some(n) = n {
                    if self.position.len() <= n {
                        self.position.resize(n + 1, None);
                    }
                    self.position[n] = Some(i);
                }
                i
            }
        };
        &mut self.summary.nodes[i]
    }

    /// Folds one line into the summary.
    pub fn push(&mut self, line: &Line) {
        let t = line.time();
        if !matches!(line, Line::Header(_)) {
            self.summary.span = Some(match self.summary.span {
                None => TimeSpan::new(t, t),
                Some(s) => TimeSpan::new(s.start.min(t), s.end.max(t)),
            });
        }
        let known = match line {
            Line::NodeDiscovered(e) => self
                .timeline
                .nodes()
                .find_addr(&e.node.addr)
                .and_then(|n| self.position.get(n.index()).copied().flatten())
                .is_some(),
            _ => false,
        };
        self.timeline.push(line);
        match line {
            Line::Header(_) => {}
            Line::NodeDiscovered(e) => {
                let n = self.node(&e.node, e.t);
                if known {
                    n.recovered.push(e.t);
                } else {
                    n.via = e.via.clone();
                }
                if e.node.id.is_some() {
                    n.id = e.node.id.clone();
                }
            }
            Line::NodeGone(e) => self.node(&e.node, e.t).gone.push((e.t, e.reason)),
            Line::Topology(e) => {
                self.summary.topology_samples += 1;
                let n = self.node(&e.node, e.t);
                if e.node.id.is_some() {
                    n.id = e.node.id.clone();
                }
            }
            Line::Info(e) => {
                self.summary.info_samples += 1;
                let server = e.info.server();
                let n = self.node(&e.node, e.t);
                n.samples += 1;
                n.last_sample = Some(e.t);
                n.server = Some(server);
                if e.node.id.is_some() {
                    n.id = e.node.id.clone();
                }
            }
            Line::ClientList(e) => {
                self.summary.client_list_samples += 1;
                self.node(&e.node, e.t).last_sample = Some(e.t);
            }
            // The reader gives these whole, as `ClientList`; one pushed as it is counts alike.
            Line::ClientListDelta(e) => {
                self.summary.client_list_samples += 1;
                self.node(&e.node, e.t).last_sample = Some(e.t);
            }
            Line::PollFailed(e) => {
                self.node(&e.node, e.t).failures += 1;
                self.failures
                    .entry((e.node.addr.clone(), e.kind))
                    .and_modify(|g| {
                        g.count += 1;
                        g.span = TimeSpan::new(g.span.start, e.t.max(g.span.end));
                    })
                    .or_insert_with(|| FailureGroup {
                        addr: e.node.addr.clone(),
                        kind: e.kind,
                        count: 1,
                        span: TimeSpan::new(e.t, e.t),
                        example: e.error.clone(),
                    });
            }
            Line::PollRound(r) => {
                self.summary.rounds = self.summary.rounds.max(r.round.saturating_add(1))
            }
            Line::Annotation(a) => {
                self.summary
                    .annotations
                    .push((a.t, a.source.clone(), a.text.clone()))
            }
            Line::End(e) => self.summary.end = Some((e.t, e.reason)),
            // Client-side evidence: folded by `tap::TapSummary`.
            Line::TapConn(_) | Line::TapCommand(_) => {}
        }
    }

    /// Notes that the input ended in a partial line (see [`crate::reader::RecordingReader::truncated_tail`]).
    pub fn set_truncated_tail(&mut self, line: Option<u64>) {
        self.summary.truncated_tail = line;
    }

    /// The timeline folded so far.
    pub fn timeline(&self) -> &ClusterTimeline {
        &self.timeline
    }

    /// The finished summary.
    pub fn finish(self) -> Summary {
        self.into_parts().0
    }

    /// The finished summary, and the timeline it was read from.
    pub fn into_parts(mut self) -> (Summary, ClusterTimeline) {
        let tl = &self.timeline;
        let id = |n: Option<NodeIdx>| n.and_then(|n| tl.nodes().id(n)).cloned();
        let covered = tl.covered_from();
        self.summary.slot_moves = tl
            .moves()
            .into_iter()
            .map(|m| SlotMove {
                creation: m.is_assignment() && covered.is_none_or(|c| m.span.start <= c),
                from: id(m.from),
                to: id(m.to),
                ranges: m.ranges,
                slots: m.slots,
                span: m.span,
            })
            .collect();
        self.summary.migrations = tl
            .migrations()
            .into_iter()
            .filter_map(|m| {
                Some(Migration {
                    from: id(Some(m.from))?,
                    to: id(Some(m.to))?,
                    ranges: m.ranges,
                    slots: m.slots,
                    span: m.span,
                })
            })
            .collect();
        let mut failures: Vec<FailureGroup> = self.failures.into_values().collect();
        failures.sort_by_key(|f| (f.span.start, f.addr.clone()));
        self.summary.failures = failures;
        (self.summary, self.timeline)
    }
}
