//! The cluster timeline: who owned which slot, which slots were migrating, and which nodes were
//! members, at every instant of a recording; the one place slot ownership is computed.
//!
//! [`ClusterTimeline`] is folded from a recording's lines ([`push`](ClusterTimeline::push)), or
//! given explicit layouts ([`set_state`](ClusterTimeline::set_state)) for simulations. It numbers
//! the nodes once ([`NodeTable`], [`NodeIdx`]), and every table over slots is a [`SlotTable`].
//! The summary, the analysis, the tracks and the replay's simulated cluster all read it; the
//! replay's client models keep their own routing in the same [`SlotTable`] type.
//!
//! Rules, as the nodes report them:
//! - **State** ([`state_at`](ClusterTimeline::state_at)): the latest topology sample, from
//!   whichever node, gives the slot owners from its time on; each node's own latest `MIGRATING`
//!   list gives the migrations. A recording may start anywhere: before slots are assigned (no
//!   owners), mid-migration, or with a node already gone: each is a state like any other.
//! - **Moves** ([`moves`](ClusterTimeline::moves)): a slot whose owner differs between two
//!   successive samples of the same node, first time any node reported that change. Slots that
//!   had no owner before are an assignment ([`OwnerMove::is_assignment`]), such as the cluster's
//!   creation, not a move between nodes.
//! - **Migrations** ([`migrations`](ClusterTimeline::migrations)): slots a node (knowing its own
//!   id) reported MIGRATING or IMPORTING, per pair, first to last report.
//! - **Membership** ([`membership`](ClusterTimeline::membership)): the recorder's discoveries and
//!   departures of nodes.

mod change;
mod first_seen;
mod flags;
mod node_table;
mod owner_ranges;
mod slot_table;

use std::collections::BTreeMap;

pub use change::{MigrationSpan, OwnerMove, MOVE_GAP_MS};
pub use flags::{FailFlag, FlagSighting};
pub use node_table::{InternError, NodeIdx, NodeTable};
pub use slot_table::{OwnerChange, SlotTable};

use change::ChangeLog;
use flags::FlagLog;
use owner_ranges::OwnerRanges;

use crate::node::NodeRef;
use crate::recording::{Discovery, GoneReason, Line, TopologySample};
use crate::slot::{Slot, SlotRange, SLOT_COUNT};
use crate::time::{TimeSpan, Timestamp};
use crate::topology::NodeRole;

/// A slot being migrated from one node to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Migrating {
    /// The slot.
    pub slot: Slot,
    /// The node migrating it out.
    pub from: NodeIdx,
    /// The node importing it.
    pub to: NodeIdx,
}

/// The cluster from one instant on, until the next state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterState {
    /// From when.
    pub start: Timestamp,
    /// Who owns each slot.
    pub owners: SlotTable,
    /// The same, as ascending ranges (unowned slots left out).
    pub ranges: Vec<(SlotRange, NodeIdx)>,
    /// Slots being migrated, by slot (one migration per slot).
    pub migrating: Vec<Migrating>,
}

impl ClusterState {
    /// The migration of `slot`, if it is being migrated.
    #[inline]
    pub fn migration(&self, slot: Slot) -> Option<Migrating> {
        self.migrating
            .binary_search_by_key(&slot, |m| m.slot)
            .ok()
            .map(|i| self.migrating[i])
    }
}

/// A node joining or leaving the set the recorder polls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MembershipChange {
    /// Discovered (or recovered after being gone).
    Discovered(Discovery),
    /// Recorded as gone.
    Gone(GoneReason),
}

/// One membership change of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MembershipEvent {
    /// When.
    pub t: Timestamp,
    /// Which node.
    pub node: NodeIdx,
    /// What happened.
    pub change: MembershipChange,
}

/// The owner of every slot by the most nodes' latest views, and how many slots they disagree on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consensus {
    /// Owners by vote: the owner most latest views name (ties: an owner over none, then the
    /// greater node id).
    pub owners: SlotTable,
    /// Slots for which the latest views name more than one owner (or an owner and none).
    pub disagreements: usize,
}

/// One node's latest view of the owners and of its own migrations.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ReporterView {
    owners: OwnerRanges,
    /// `(slot, target)` of the slots it migrates out.
    migrating: Vec<(Slot, NodeIdx)>,
    /// It left the topology since (its view no longer counts in the [`Consensus`]).
    left: bool,
}

/// Slot ownership, migrations and membership over time, folded from a recording's lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterTimeline {
    nodes: NodeTable,
    states: Vec<ClusterState>,
    reporters: BTreeMap<NodeIdx, ReporterView>,
    log: ChangeLog,
    membership: Vec<MembershipEvent>,
    /// `(replica, primary)` pairs as the views listed them, with when a view first and last did.
    replicas: BTreeMap<(NodeIdx, NodeIdx), TimeSpan>,
    /// The failure flags the views put on other nodes.
    flags: FlagLog,
}

impl ClusterTimeline {
    /// An empty timeline: no node, no state.
    pub fn new() -> ClusterTimeline {
        ClusterTimeline::default()
    }

    /// Folds one recording line (every line about a node numbers it; discoveries and departures
    /// change the membership, topology samples the state).
    pub fn push(&mut self, line: &Line) {
        match line {
            Line::NodeDiscovered(e) => {
                if let Ok(node) = self.nodes.intern(Some(&e.node.addr), e.node.id.as_ref()) {
                    self.membership.push(MembershipEvent {
                        t: e.t,
                        node,
                        change: MembershipChange::Discovered(e.via.clone()),
                    });
                }
            }
            Line::NodeGone(e) => {
                if let Ok(node) = self.nodes.intern(Some(&e.node.addr), e.node.id.as_ref()) {
                    // Gone from the topology, or unreachable (its view is then the last it gave
                    // before it died, and no one can ask it): its view votes no more, until it
                    // gives a new one.
                    if let Some(v) = self.reporters.get_mut(&node) {
                        v.left = true;
                    }
                    self.membership.push(MembershipEvent {
                        t: e.t,
                        node,
                        change: MembershipChange::Gone(e.reason),
                    });
                }
            }
            // Numbered in order of appearance like every other node the recording names.
            Line::PollFailed(e) => self.name(&e.node),
            Line::Info(e) => self.name(&e.node),
            Line::ClientList(e) => self.name(&e.node),
            Line::Topology(s) => self.push_topology(s),
            _ => {}
        }
    }

    fn name(&mut self, r: &NodeRef) {
        // A full table leaves the node unnumbered: it then takes part in nothing.
        let _ = self.nodes.intern(Some(&r.addr), r.id.as_ref());
    }

    fn push_topology(&mut self, s: &TopologySample) {
        let reporter_id = s.view.myself.as_ref().or(s.node.id.as_ref());
        let Ok(reporter) = self.nodes.intern(Some(&s.node.addr), reporter_id) else {
            return;
        };
        let mut assigned: Vec<(SlotRange, NodeIdx)> = Vec::new();
        for shard in &s.view.shards {
            for n in &shard.nodes {
                let addr = if Some(&n.id) == reporter_id {
                    n.addr.as_ref().or(Some(&s.node.addr))
                } else {
                    n.addr.as_ref()
                };
                // A node without address whose id is new cannot be numbered: it owns nothing
                // here (it cannot be reached either).
                let Ok(node) = self.nodes.intern(addr, Some(&n.id)) else {
                    continue;
                };
                if let Some(flag) = FailFlag::of(&n.flags).filter(|_| node != reporter) {
                    self.flags.push(node, flag, s.t, reporter);
                }
            }
            let Some(p) = shard.primary().and_then(|p| self.nodes.find_id(&p.id)) else {
                continue;
            };
            for n in shard.nodes.iter().filter(|n| n.role == NodeRole::Replica) {
                if let Some(r) = self.nodes.find_id(&n.id) {
                    self.replicas
                        .entry((r, p))
                        .and_modify(|span| span.end = span.end.max(s.t))
                        .or_insert(TimeSpan::new(s.t, s.t));
                }
            }
            assigned.extend(shard.slots.iter().map(|&r| (r, p)));
        }
        let owners = owner_ranges::canonical(assigned);
        if let Some(prev) = self.reporters.get(&reporter) {
            for c in owner_ranges::diff(&prev.owners, &owners) {
                self.log.change(c.range, c.from, c.to, s.t);
            }
        }
        if let Some(me) = s.view.myself.as_ref().and_then(|id| self.nodes.find_id(id)) {
            for m in &s.view.migrating {
                if let Some(peer) = self.nodes.find_id(&m.peer) {
                    self.log.migration(me, peer, m.slot, s.t);
                }
            }
            for m in &s.view.importing {
                if let Some(peer) = self.nodes.find_id(&m.peer) {
                    self.log.migration(peer, me, m.slot, s.t);
                }
            }
        }
        let mine: Vec<(Slot, NodeIdx)> = s
            .view
            .migrating
            .iter()
            .filter_map(|m| Some((m.slot, self.nodes.find_id(&m.peer)?)))
            .collect();
        self.reporters.insert(
            reporter,
            ReporterView {
                owners: owners.clone(),
                migrating: mine,
                left: false,
            },
        );
        let migrating: Vec<Migrating> = self
            .reporters
            .iter()
            .flat_map(|(&from, v)| {
                v.migrating
                    .iter()
                    .map(move |&(slot, to)| Migrating { slot, from, to })
            })
            .collect();
        self.set_ranges(s.t, owners, migrating);
    }

    /// Makes `owners` and `migrating` (sorted by slot, one per slot) the state from `t` on. The
    /// same state as the last is no change; a state at or before the last one's start replaces it.
    pub fn set_state(&mut self, t: Timestamp, owners: SlotTable, migrating: Vec<Migrating>) {
        self.set_ranges(t, owners.ranges(), migrating);
    }

    /// [`set_state`](Self::set_state) with the owners as their ranges; the table is made only for
    /// a new state.
    fn set_ranges(&mut self, t: Timestamp, ranges: OwnerRanges, mut migrating: Vec<Migrating>) {
        migrating.sort_unstable();
        migrating.dedup_by_key(|m| m.slot);
        if let Some(last) = self.states.last_mut() {
            if last.ranges == ranges && last.migrating == migrating {
                return;
            }
            if t <= last.start {
                last.owners = SlotTable::from_ranges(&ranges);
                last.ranges = ranges;
                last.migrating = migrating;
                return;
            }
        }
        self.states.push(ClusterState {
            start: t,
            owners: SlotTable::from_ranges(&ranges),
            ranges,
            migrating,
        });
    }

    /// The node table: every node the timeline names, numbered.
    pub fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// The node table, to number nodes the recording does not name (simulations).
    pub fn nodes_mut(&mut self) -> &mut NodeTable {
        &mut self.nodes
    }

    /// Every state, in time order.
    pub fn states(&self) -> &[ClusterState] {
        &self.states
    }

    /// The state at `t`: the last one starting at or before it (`None` before the first).
    pub fn state_at(&self, t: Timestamp) -> Option<&ClusterState> {
        let i = self.states.partition_point(|s| s.start <= t);
        self.states.get(i.checked_sub(1)?)
    }

    /// When the state changed: the start of every state after the first.
    pub fn changes(&self) -> Vec<Timestamp> {
        self.states.iter().skip(1).map(|s| s.start).collect()
    }

    /// The first instant from which every slot has an owner (`None`: never in the recording).
    pub fn covered_from(&self) -> Option<Timestamp> {
        self.states
            .iter()
            .find(|s| s.owners.is_covered())
            .map(|s| s.start)
    }

    /// Slot owner changes as the nodes reported them, grouped per pair of nodes, in time order.
    pub fn moves(&self) -> Vec<OwnerMove> {
        self.log.moves()
    }

    /// The [`moves`](Self::moves) with a report within `span`.
    pub fn moves_between(&self, span: TimeSpan) -> Vec<OwnerMove> {
        self.moves()
            .into_iter()
            .filter(|m| m.span.start < span.end && span.start < m.span.end)
            .collect()
    }

    /// Slots reported in migration, per pair of nodes, in time order.
    pub fn migrations(&self) -> Vec<MigrationSpan> {
        self.log.migrations()
    }

    /// When a topology view first and last listed `replica` as a replica of `primary` (`None`:
    /// none did).
    pub fn replica_of(&self, replica: NodeIdx, primary: NodeIdx) -> Option<TimeSpan> {
        self.replicas.get(&(replica, primary)).copied()
    }

    /// Every `(replica, primary)` pair a view listed, with when a view first and last did.
    pub fn replica_pairs(&self) -> impl Iterator<Item = (NodeIdx, NodeIdx, TimeSpan)> + '_ {
        self.replicas.iter().map(|(&(r, p), &span)| (r, p, span))
    }

    /// The views within `within` (ends included) in which other nodes flagged `node` with `flag`
    /// (`None`: none did).
    pub fn flagged(&self, node: NodeIdx, flag: FailFlag, within: TimeSpan) -> Option<FlagSighting> {
        self.flags.sighting(node, flag, within)
    }

    /// Nodes discovered and gone, in order.
    pub fn membership(&self) -> &[MembershipEvent] {
        &self.membership
    }

    /// The nodes discovered (or recovered) and not gone since, at `t`.
    pub fn members_at(&self, t: Timestamp) -> Vec<NodeIdx> {
        let mut member = vec![false; self.nodes.len()];
        for e in self.membership.iter().filter(|e| e.t <= t) {
            member[e.node.index()] = matches!(e.change, MembershipChange::Discovered(_));
        }
        self.nodes
            .iter()
            .map(|(n, _)| n)
            .filter(|n| member[n.index()])
            .collect()
    }

    /// The owners by the latest views of the nodes (those that left the topology since left out),
    /// and how far those views disagree.
    pub fn consensus(&self) -> Consensus {
        let views: Vec<&[(SlotRange, NodeIdx)]> = self
            .reporters
            .values()
            .filter(|v| !v.left)
            .map(|v| v.owners.as_slice())
            .collect();
        let starts = owner_ranges::starts(views.iter().copied());
        let mut owners = SlotTable::new();
        let mut disagreements = 0;
        let mut votes: Vec<(Option<NodeIdx>, usize)> = Vec::new();
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).map_or(SLOT_COUNT - 1, |&next| next - 1);
            let (Some(first), Some(range)) =
                (Slot::new(start), SlotRange::try_from((start, end)).ok())
            else {
                continue;
            };
            votes.clear();
            for v in &views {
                let o = owner_ranges::owner_at(v, first);
                match votes.iter_mut().find(|(x, _)| *x == o) {
                    Some((_, n)) => *n += 1,
                    None => votes.push((o, 1)),
                }
            }
            if votes.len() > 1 {
                disagreements += range.len();
            }
            let winner = votes
                .iter()
                .max_by_key(|(o, n)| (*n, o.is_some(), o.and_then(|o| self.nodes.id(o))))
                .and_then(|(o, _)| *o);
            owners.fill(range, winner);
        }
        Consensus {
            owners,
            disagreements,
        }
    }
}

#[cfg(test)]
mod tests;
