//! What a recording holds, folded from its lines: duration, nodes and when they were seen,
//! slot ownership changes (slots moved between which nodes, when), migrations in progress, and poll
//! failures. The same lines always fold into the same summary.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::info::ServerIdentity;
use crate::node::{NodeAddr, NodeId};
use crate::recording::{Discovery, EndReason, FailureKind, GoneReason, Header, Line};
use crate::slot::{Slot, SlotRange, SLOT_COUNT};
use crate::time::{TimeSpan, Timestamp};
use crate::topology::TopologyView;

/// Gap after which two moves between the same pair of nodes are reported as separate changes.
pub const MOVE_GAP_MS: u64 = 30_000;

/// Everything `slotscope summary` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
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

/// One node of the recording.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize)]
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
}

/// Slots reported MIGRATING from one node to another (or IMPORTING on the other side).
#[derive(Clone, Debug, PartialEq, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    node_index: BTreeMap<NodeAddr, usize>,
    ids: Interner,
    owners_by_reporter: BTreeMap<NodeAddr, Vec<u32>>,
    moves_seen: BTreeMap<(u16, u32, u32), Timestamp>,
    migrating_seen: BTreeMap<(u32, u32, u16), (Timestamp, Timestamp)>,
    failures: BTreeMap<(NodeAddr, FailureKind), FailureGroup>,
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
struct Interner {
    ids: Vec<NodeId>,
    index: BTreeMap<NodeId, u32>,
}

impl Interner {
    fn get(&mut self, id: &NodeId) -> u32 {
        if let Some(&i) = self.index.get(id) {
            return i;
        }
        let i = u32::try_from(self.ids.len()).unwrap_or(NONE - 1);
        self.ids.push(id.clone());
        self.index.insert(id.clone(), i);
        i
    }

    fn id(&self, i: u32) -> Option<NodeId> {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.ids.get(i))
            .cloned()
    }
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
            node_index: BTreeMap::new(),
            ids: Interner::default(),
            owners_by_reporter: BTreeMap::new(),
            moves_seen: BTreeMap::new(),
            migrating_seen: BTreeMap::new(),
            failures: BTreeMap::new(),
        }
    }

    fn node(&mut self, addr: &NodeAddr, t: Timestamp) -> &mut NodeSummary {
        let i = match self.node_index.get(addr) {
            Some(&i) => i,
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
                self.node_index.insert(addr.clone(), i);
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
        match line {
            Line::Header(_) => {}
            Line::NodeDiscovered(e) => {
                let known = self.node_index.contains_key(&e.node.addr);
                let n = self.node(&e.node.addr, e.t);
                if known {
                    n.recovered.push(e.t);
                } else {
                    n.via = e.via.clone();
                }
                if e.node.id.is_some() {
                    n.id = e.node.id.clone();
                }
            }
            Line::NodeGone(e) => self.node(&e.node.addr, e.t).gone.push((e.t, e.reason)),
            Line::Topology(e) => {
                self.summary.topology_samples += 1;
                let n = self.node(&e.node.addr, e.t);
                if e.node.id.is_some() {
                    n.id = e.node.id.clone();
                }
                self.fold_topology(&e.node.addr, e.t, &e.view);
            }
            Line::Info(e) => {
                self.summary.info_samples += 1;
                let server = e.info.server();
                let n = self.node(&e.node.addr, e.t);
                n.samples += 1;
                n.last_sample = Some(e.t);
                n.server = Some(server);
                if e.node.id.is_some() {
                    n.id = e.node.id.clone();
                }
            }
            Line::ClientList(e) => {
                self.summary.client_list_samples += 1;
                self.node(&e.node.addr, e.t).last_sample = Some(e.t);
            }
            Line::PollFailed(e) => {
                self.node(&e.node.addr, e.t).failures += 1;
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
            Line::PollRound(r) => self.summary.rounds = self.summary.rounds.max(r.round + 1),
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

    fn fold_topology(&mut self, reporter: &NodeAddr, t: Timestamp, view: &TopologyView) {
        let owners: Vec<u32> = view
            .slot_owners()
            .iter()
            .map(|o| o.as_ref().map_or(NONE, |id| self.ids.get(id)))
            .collect();
        if let Some(prev) = self.owners_by_reporter.get(reporter) {
            for (slot, (&before, &after)) in prev.iter().zip(&owners).enumerate() {
                if before != after {
                    let slot = u16::try_from(slot).unwrap_or(SLOT_COUNT - 1);
                    self.moves_seen.entry((slot, before, after)).or_insert(t);
                }
            }
        }
        self.owners_by_reporter.insert(reporter.clone(), owners);
        if let Some(me) = &view.myself {
            let me = self.ids.get(me);
            let mut pairs: Vec<(u32, u32, Slot)> = Vec::new();
            for m in &view.migrating {
                pairs.push((me, self.ids.get(&m.peer), m.slot));
            }
            for m in &view.importing {
                pairs.push((self.ids.get(&m.peer), me, m.slot));
            }
            for (from, to, slot) in pairs {
                self.migrating_seen
                    .entry((from, to, slot.get()))
                    .and_modify(|(_, last)| *last = t)
                    .or_insert((t, t));
            }
        }
    }

    /// Notes that the input ended in a partial line (see [`crate::reader::RecordingReader::truncated_tail`]).
    pub fn set_truncated_tail(&mut self, line: Option<u64>) {
        self.summary.truncated_tail = line;
    }

    /// The finished summary.
    pub fn finish(mut self) -> Summary {
        // Slot moves: group by (from, to), then split where consecutive changes are far apart.
        let mut by_pair: BTreeMap<(u32, u32), Vec<(Timestamp, u16)>> = BTreeMap::new();
        for (&(slot, from, to), &t) in &self.moves_seen {
            by_pair.entry((from, to)).or_default().push((t, slot));
        }
        let mut moves = Vec::new();
        for ((from, to), mut changes) in by_pair {
            changes.sort_unstable();
            let mut group: Vec<(Timestamp, u16)> = Vec::new();
            for c in changes {
                if let Some(&(last, _)) = group.last() {
                    if c.0.millis_since(last) > MOVE_GAP_MS {
                        moves.push(self.slot_move(from, to, &group));
                        group.clear();
                    }
                }
                group.push(c);
            }
            if !group.is_empty() {
                moves.push(self.slot_move(from, to, &group));
            }
        }
        moves.sort_by_key(|m| (m.span.start, m.span.end));
        self.summary.slot_moves = moves;

        let mut mig: BTreeMap<(u32, u32), (BTreeSet<u16>, Timestamp, Timestamp)> = BTreeMap::new();
        for (&(from, to, slot), &(first, last)) in &self.migrating_seen {
            let e = mig
                .entry((from, to))
                .or_insert((BTreeSet::new(), first, last));
            e.0.insert(slot);
            e.1 = e.1.min(first);
            e.2 = e.2.max(last);
        }
        let mut migrations: Vec<Migration> = mig
            .into_iter()
            .filter_map(|((from, to), (slots, first, last))| {
                let ranges = SlotRange::coalesce(slots.into_iter().filter_map(Slot::new));
                Some(Migration {
                    from: self.ids.id(from)?,
                    to: self.ids.id(to)?,
                    slots: ranges.iter().map(|r| r.len()).sum(),
                    ranges,
                    span: TimeSpan::new(first, Timestamp(last.0 + 1)),
                })
            })
            .collect();
        migrations.sort_by_key(|m| m.span.start);
        self.summary.migrations = migrations;

        let mut failures: Vec<FailureGroup> = self.failures.into_values().collect();
        failures.sort_by_key(|f| (f.span.start, f.addr.clone()));
        self.summary.failures = failures;
        self.summary
    }

    fn slot_move(&self, from: u32, to: u32, group: &[(Timestamp, u16)]) -> SlotMove {
        let ranges = SlotRange::coalesce(group.iter().filter_map(|&(_, s)| Slot::new(s)));
        let first = group.first().map_or(Timestamp(0), |g| g.0);
        let last = group.last().map_or(first, |g| g.0);
        SlotMove {
            from: self.ids.id(from),
            to: self.ids.id(to),
            slots: ranges.iter().map(|r| r.len()).sum(),
            ranges,
            span: TimeSpan::new(first, Timestamp(last.0 + 1)),
        }
    }
}
