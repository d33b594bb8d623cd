//! The simulated cluster: the slot layouts of a [`ClusterTimeline`] and fault windows, answering
//! routed commands at virtual times; built by [`SimClusterBuilder`] (`cluster/builder.rs`).
//!
//! [`ClusterTimeline`]: crate::timeline::ClusterTimeline

use serde::Serialize;

use super::fault_edges::{place_edges, Edge};
use super::kills::{first_kill, moments_at};
use super::replicas::{answer_entries, Listed};

mod builder;
use super::{mix64, Routed};
use crate::node::NodeAddr;
use crate::redirect::Redirect;
use crate::slot::{Slot, SlotRange};
use crate::time::{TimeSpan, Timestamp};
use crate::timeline::{ClusterState, NodeIdx, NodeTable};
pub use builder::SimClusterBuilder;

/// A server's answer to a routed command, as the client sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The command was served.
    Ok,
    /// `-MOVED slot addr` (the node does not own the slot) or `-ASK slot addr` (the slot is
    /// migrating and the key is already on the target).
    Redirect(Redirect),
    /// The connection could not be made or broke (also: an address no node has).
    ConnectionError,
    /// No reply within the client's timeout.
    Timeout,
    /// `-CLUSTERDOWN`: no node owns the slot.
    ClusterDown,
}

/// A [`Reply`] with the redirect's node by the cluster's number, as the replay engine passes it
/// around (no address copied).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Served.
    Ok,
    /// `-MOVED slot` to node `to`.
    Moved {
        /// The slot.
        slot: Slot,
        /// The owner.
        to: NodeIdx,
    },
    /// `-ASK slot` to node `to`.
    Ask {
        /// The slot.
        slot: Slot,
        /// The migration's target.
        to: NodeIdx,
    },
    /// The connection could not be made or broke.
    ConnectionError,
    /// No reply within the client's timeout.
    Timeout,
    /// `-CLUSTERDOWN`.
    ClusterDown,
}

/// What kind of failure a node shows inside a fault window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// The node accepts nothing (refused or reset connections).
    ConnectionError,
    /// The node does not answer (e.g. `SIGSTOP`, a network partition).
    Timeout,
}

/// A node failing for a span of time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultWindow {
    /// The node's address.
    pub node: NodeAddr,
    /// When it fails.
    pub span: TimeSpan,
    /// How it fails.
    pub kind: FaultKind,
}

/// How a migration source answers for a key of a slot it is migrating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskPolicy {
    /// Every key of a migrating slot is answered with `ASK` (as if already moved).
    Always,
    /// A deterministic per-key coin decides whether the key has already moved (`ASK`) or is still
    /// on the source (`OK`): half of the keys, chosen by a hash of the seed and the key index.
    /// The same key gets the same answer for the whole migration.
    KeyCoin {
        /// Seed of the coin.
        seed: u64,
    },
}

/// A cluster whose slot owners, migrations and failures follow a timeline; it answers routed
/// commands at virtual times. Built by [`SimClusterBuilder`].
#[derive(Clone, Debug)]
pub struct SimCluster {
    /// The nodes, numbered as in the timeline the cluster was built from.
    table: NodeTable,
    /// Every node's address, by number (what [`nodes`](Self::nodes) lends out).
    addrs: Vec<NodeAddr>,
    states: Vec<ClusterState>,
    faults: Vec<(NodeIdx, TimeSpan, FaultKind)>,
    /// The windows the faults taken from the polls began and ended in (`fault_edges.rs`); each
    /// edge is in the middle of its window unless [`at_moment`](Self::at_moment) placed it
    /// elsewhere.
    edges: Vec<Edge>,
    /// When someone closed the clients' connections of a node (`kills.rs`), by node then time:
    /// the middle of each window of [`kill_windows`](Self::kill_windows) unless
    /// [`at_moment`](Self::at_moment) placed them elsewhere.
    kills: Vec<(NodeIdx, Timestamp)>,
    /// Between which moments each kill came (the samples its count rose between).
    kill_windows: Vec<(NodeIdx, Timestamp, Timestamp)>,
    ask: AskPolicy,
    span: Option<TimeSpan>,
    seed: Option<NodeAddr>,
    /// When each node (by number) was first known: discovered in the recording, named by a
    /// layout, or added without a time (from the start).
    joined: Vec<Timestamp>,
    /// The replicas an answer lists, with when (`replicas.rs`).
    replicas: Vec<Listed>,
}

impl SimCluster {
    /// The nodes the cluster lists at `t`, as `CLUSTER NODES` does: every node known by then
    /// (masters without slots and replicas included), in order of first appearance.
    pub fn members(&self, t: Timestamp) -> impl Iterator<Item = &NodeAddr> + '_ {
        self.addrs
            .iter()
            .zip(&self.joined)
            .filter(move |(_, &j)| j <= t)
            .map(|(a, _)| a)
    }

    /// The replicas a `CLUSTER SLOTS` answer at `t` lists beside the owners `owners`, each as
    /// `(replica, its primary among them)`, as `replicas.rs` keeps them.
    pub fn listed_replicas<'s>(
        &'s self,
        t: Timestamp,
        owners: &'s [NodeAddr],
    ) -> impl Iterator<Item = (&'s NodeAddr, &'s NodeAddr)> + 's {
        self.replicas
            .iter()
            .filter(move |&&(_, p, span)| {
                span.contains(t) && self.addr(p).is_some_and(|a| owners.contains(a))
            })
            .filter_map(|&(r, p, _)| Some((self.addr(r)?, self.addr(p)?)))
    }

    /// Every node address, in order of first appearance.
    pub fn nodes(&self) -> &[NodeAddr] {
        &self.addrs
    }

    /// The fault windows, merged and by node then time.
    pub fn faults(&self) -> Vec<FaultWindow> {
        self.faults
            .iter()
            .map(|&(n, span, kind)| FaultWindow {
                node: self.addrs[n.index()].clone(),
                span,
                kind,
            })
            .collect()
    }

    /// The same cluster with its fault windows replaced by `windows` (windows of nodes the
    /// cluster does not know are dropped): a hypothesis of what failed.
    #[must_use]
    pub fn with_faults(&self, windows: &[FaultWindow]) -> SimCluster {
        let mut faults: Vec<(NodeIdx, TimeSpan, FaultKind)> = windows
            .iter()
            .filter_map(|w| Some((self.table.find_addr(&w.node)?, w.span, w.kind)))
            .collect();
        faults.sort_by_key(|&(n, span, _)| (n, span.start));
        SimCluster {
            faults,
            edges: Vec::new(),
            ..self.clone()
        }
    }

    /// The same cluster with `window` added to its fault windows (dropped when the cluster does
    /// not know its node); the others keep the windows they began and ended in
    /// (`fault_edges.rs`).
    #[must_use]
    pub fn with_fault_added(&self, window: &FaultWindow) -> SimCluster {
        let mut c = self.clone();
        if let Some(n) = self.table.find_addr(&window.node) {
            let key = (n, window.span.start);
            let at = c
                .faults
                .partition_point(|&(m, span, _)| (m, span.start) <= key);
            c.faults.insert(at, (n, window.span, window.kind));
            for e in &mut c.edges {
                if e.fault >= at {
                    e.fault += 1;
                }
            }
        }
        c
    }

    /// The slot layouts in time order (node numbers index [`nodes`](Self::nodes)).
    pub fn layouts(&self) -> &[ClusterState] {
        &self.states
    }

    /// When the slot layout changed: the start of every layout after the first.
    pub fn changes(&self) -> Vec<Timestamp> {
        self.states.iter().skip(1).map(|e| e.start).collect()
    }

    /// From the first to the last line folded (recordings only).
    pub fn span(&self) -> Option<TimeSpan> {
        self.span
    }

    /// The address the recording started discovery from (recordings only).
    pub fn seed(&self) -> Option<&NodeAddr> {
        self.seed.as_ref()
    }

    /// Number of slot layouts (one per topology change, and the first).
    pub fn epochs(&self) -> usize {
        self.states.len()
    }

    /// The owner of `slot` at `t`.
    pub fn owner(&self, t: Timestamp, slot: Slot) -> Option<&NodeAddr> {
        let o = self.epoch(t)?.owners.get(slot)?;
        self.addrs.get(o.index())
    }

    /// The layout at `t`; before the first, the first (a recording's first sample stands for its
    /// start).
    fn epoch(&self, t: Timestamp) -> Option<&ClusterState> {
        let i = self.states.partition_point(|e| e.start <= t);
        self.states.get(i.saturating_sub(1))
    }

    /// The fault of `node` at `t` and when its window ends.
    pub fn fault_until(&self, t: Timestamp, node: NodeIdx) -> Option<(FaultKind, Timestamp)> {
        self.faults
            .iter()
            .find(|(n, span, _)| *n == node && span.contains(t))
            .map(|(_, span, k)| (*k, span.end))
    }

    /// The first moment after `after` and at or before `until` someone closed the clients'
    /// connections of `node` (`kills.rs`): a connection to it opened at `after` is closed then.
    pub fn killed(&self, node: NodeIdx, after: Timestamp, until: Timestamp) -> Option<Timestamp> {
        first_kill(&self.kills, node, after, until)
    }

    /// Whether the recording shows anyone closing clients' connections at all (a model then
    /// need not look up a node to learn that nobody closed its connections).
    #[inline]
    pub fn has_kills(&self) -> bool {
        !self.kills.is_empty()
    }

    /// Whether some kill's moment (between two `INFO` samples) or some failure's start or end
    /// (between the node's answers and the polls that failed) is known only within a window, so
    /// that another moment of it might change a replay's answer (`moments.rs`).
    pub fn has_uncertain_moments(&self) -> bool {
        self.kill_windows.iter().any(|&(_, from, to)| to > from)
            || self.edges.iter().any(|e| e.to > e.from)
    }

    /// This cluster with every kill and every failure's start and end at the `k`-th of `n` even
    /// places in its window instead of its middle (`k = (n - 1) / 2` of an odd `n` is the
    /// middle).
    pub fn at_moment(&self, k: u64, n: u64) -> SimCluster {
        let mut c = self.clone();
        c.kills = moments_at(&self.kill_windows, k, n);
        place_edges(&mut c.faults, &self.edges, k, n);
        c
    }

    /// Every moment someone closed the clients' connections of a node, by node then time.
    pub fn kills(&self) -> Vec<(NodeAddr, Timestamp)> {
        self.kills
            .iter()
            .map(|&(n, t)| (self.addrs[n.index()].clone(), t))
            .collect()
    }

    fn fault(&self, t: Timestamp, node: NodeIdx) -> Option<FaultKind> {
        self.faults
            .iter()
            .find(|(n, span, _)| *n == node && span.contains(t))
            .map(|(_, _, k)| *k)
    }

    /// The index of the node at `addr` in [`nodes`](Self::nodes), if the cluster has one there.
    pub fn node_index(&self, addr: &NodeAddr) -> Option<NodeIdx> {
        self.table.find_addr(addr)
    }

    /// The reply of the node at `to` to command `cmd` at `t`; `asking` when the client sent
    /// `ASKING` first (after an `ASK` redirect).
    pub fn answer(&self, t: Timestamp, to: &NodeAddr, cmd: Routed, asking: bool) -> Reply {
        self.answer_at(t, self.node_index(to), cmd, asking)
    }

    /// [`answer`](Self::answer) for the node of index `node` (from [`node_index`](Self::node_index);
    /// `None`: no node at that address, a connection error).
    pub fn answer_at(
        &self,
        t: Timestamp,
        node: Option<NodeIdx>,
        cmd: Routed,
        asking: bool,
    ) -> Reply {
        self.reply_of(self.answer_idx(t, node, cmd, asking))
    }

    /// The [`Reply`] an [`Answer`] stands for (the redirect's address written out).
    pub fn reply_of(&self, answer: Answer) -> Reply {
        let addr = |n: NodeIdx| self.addrs[n.index()].clone();
        match answer {
            Answer::Ok => Reply::Ok,
            Answer::Moved { slot, to } => Reply::Redirect(Redirect::Moved { slot, to: addr(to) }),
            Answer::Ask { slot, to } => Reply::Redirect(Redirect::Ask { slot, to: addr(to) }),
            Answer::ConnectionError => Reply::ConnectionError,
            Answer::Timeout => Reply::Timeout,
            Answer::ClusterDown => Reply::ClusterDown,
        }
    }

    /// [`answer_at`](Self::answer_at) with the redirect's node by number (no address copied).
    pub fn answer_idx(
        &self,
        t: Timestamp,
        node: Option<NodeIdx>,
        cmd: Routed,
        asking: bool,
    ) -> Answer {
        let Some(node) = node else {
            return Answer::ConnectionError;
        };
        if let Some(kind) = self.fault(t, node) {
            return match kind {
                FaultKind::ConnectionError => Answer::ConnectionError,
                FaultKind::Timeout => Answer::Timeout,
            };
        }
        let Some(e) = self.epoch(t) else {
            return Answer::ClusterDown;
        };
        let Some(owner) = e.owners.get(cmd.slot) else {
            return Answer::ClusterDown;
        };
        let migration = e.migration(cmd.slot);
        if owner == node {
            if let Some(m) = migration.filter(|m| m.from == node) {
                let moved = match self.ask {
                    AskPolicy::Always => true,
                    AskPolicy::KeyCoin { seed } => mix64(seed ^ mix64(u64::from(cmd.key))) & 1 == 1,
                };
                if moved {
                    return Answer::Ask {
                        slot: m.slot,
                        to: m.to,
                    };
                }
            }
            return Answer::Ok;
        }
        if asking && migration.is_some_and(|m| m.to == node) {
            return Answer::Ok;
        }
        Answer::Moved {
            slot: cmd.slot,
            to: owner,
        }
    }

    /// The address of node `n` (a number this cluster gave out).
    pub fn addr(&self, n: NodeIdx) -> Option<&NodeAddr> {
        self.addrs.get(n.index())
    }

    /// The reply of the node at `to` to `CLUSTER SLOTS` at `t`: owner ranges with addresses, or
    /// the failure.
    pub fn cluster_slots(
        &self,
        t: Timestamp,
        to: &NodeAddr,
    ) -> Result<Vec<(SlotRange, NodeAddr)>, Reply> {
        let ranges = self.cluster_slots_idx(t, self.table.find_addr(to))?;
        Ok(ranges
            .iter()
            .map(|&(r, n)| (r, self.addrs[n.index()].clone()))
            .collect())
    }

    /// The slot-node entries of a `CLUSTER SLOTS` answer at `t`: every slot once for its owner
    /// and once for each replica listed with it (`replicas.rs`); 0 without a layout.
    pub fn answer_entries(&self, t: Timestamp) -> u64 {
        self.epoch(t)
            .map_or(0, |e| answer_entries(&e.ranges, &self.replicas, t))
    }

    /// [`cluster_slots`](Self::cluster_slots) of the node of index `node`, the owners by the
    /// cluster's numbers (nothing copied).
    pub fn cluster_slots_idx(
        &self,
        t: Timestamp,
        node: Option<NodeIdx>,
    ) -> Result<&[(SlotRange, NodeIdx)], Reply> {
        let Some(node) = node else {
            return Err(Reply::ConnectionError);
        };
        if let Some(kind) = self.fault(t, node) {
            return Err(match kind {
                FaultKind::ConnectionError => Reply::ConnectionError,
                FaultKind::Timeout => Reply::Timeout,
            });
        }
        let e = self.epoch(t).ok_or(Reply::ClusterDown)?;
        Ok(&e.ranges)
    }
}

/// How long past the end of what is known a fault that has not ended lasts (a day): a node whose
/// last poll failed, a node a plan kills. Longer than any command the replay still sends after
/// the end (its retries, its wait for a permit).
pub(crate) const DOWN_PAST_END_MS: u64 = 86_400_000;
