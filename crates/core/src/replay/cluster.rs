//! The simulated cluster: slot owners and migrations over time, and fault windows.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{mix64, Routed};
use crate::node::{NodeAddr, NodeId};
use crate::recording::{FailureKind, Header, Line, TopologySample};
use crate::slot::{Slot, SlotRange, SLOT_COUNT};
use crate::time::{TimeSpan, Timestamp};

/// A server's answer to a routed command, as the client sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The command was served.
    Ok,
    /// `-MOVED slot addr`: the node does not own the slot.
    Moved {
        /// The slot.
        slot: Slot,
        /// The slot's owner.
        to: NodeAddr,
    },
    /// `-ASK slot addr`: the slot is migrating and the key is already on the target.
    Ask {
        /// The slot.
        slot: Slot,
        /// The migration target.
        to: NodeAddr,
    },
    /// The connection could not be made or broke (also: an address no node has).
    ConnectionError,
    /// No reply within the client's timeout.
    Timeout,
    /// `-CLUSTERDOWN`: no node owns the slot.
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

const NO_OWNER: u16 = u16::MAX;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Epoch {
    start: Timestamp,
    /// Owner node index per slot (`NO_OWNER` if none).
    owners: Vec<u16>,
    /// Owner ranges, ascending.
    ranges: Vec<(SlotRange, u16)>,
    /// `(slot, source, target)`, by slot.
    migrating: Vec<(Slot, u16, u16)>,
}

/// One slot layout of a [`SimCluster`]'s timeline (node indices into [`SimCluster::nodes`]).
#[derive(Clone, Copy, Debug)]
pub struct EpochLayout<'a> {
    /// From when.
    pub start: Timestamp,
    /// Owner ranges, ascending.
    pub owners: &'a [(SlotRange, u16)],
    /// Slots being migrated: `(slot, source, target)`, by slot.
    pub migrating: &'a [(Slot, u16, u16)],
}

/// A cluster whose slot owners, migrations and failures follow a timeline; it answers routed
/// commands at virtual times. Built by [`SimClusterBuilder`].
#[derive(Clone, Debug)]
pub struct SimCluster {
    addrs: Vec<NodeAddr>,
    by_addr: BTreeMap<NodeAddr, u16>,
    epochs: Vec<Epoch>,
    faults: Vec<(u16, TimeSpan, FaultKind)>,
    ask: AskPolicy,
    span: Option<TimeSpan>,
    seed: Option<NodeAddr>,
}

impl SimCluster {
    /// Every node address, in order of first appearance.
    pub fn nodes(&self) -> &[NodeAddr] {
        &self.addrs
    }

    /// The fault windows, merged and by node then time.
    pub fn faults(&self) -> Vec<FaultWindow> {
        self.faults
            .iter()
            .map(|&(n, span, kind)| FaultWindow {
                node: self.addrs[usize::from(n)].clone(),
                span,
                kind,
            })
            .collect()
    }

    /// The same cluster with its fault windows replaced by `windows` (windows of nodes the
    /// cluster does not know are dropped): a hypothesis of what failed.
    #[must_use]
    pub fn with_faults(&self, windows: &[FaultWindow]) -> SimCluster {
        let mut faults: Vec<(u16, TimeSpan, FaultKind)> = windows
            .iter()
            .filter_map(|w| Some((*self.by_addr.get(&w.node)?, w.span, w.kind)))
            .collect();
        faults.sort_by_key(|&(n, span, _)| (n, span.start));
        SimCluster {
            faults,
            ..self.clone()
        }
    }

    /// The slot layouts in time order.
    pub fn layouts(&self) -> impl Iterator<Item = EpochLayout<'_>> + '_ {
        self.epochs.iter().map(|e| EpochLayout {
            start: e.start,
            owners: &e.ranges,
            migrating: &e.migrating,
        })
    }

    /// When the slot layout changed: the start of every epoch after the first.
    pub fn changes(&self) -> Vec<Timestamp> {
        self.epochs.iter().skip(1).map(|e| e.start).collect()
    }

    /// From the first to the last line folded (recordings only).
    pub fn span(&self) -> Option<TimeSpan> {
        self.span
    }

    /// The address the recording started discovery from (recordings only).
    pub fn seed(&self) -> Option<&NodeAddr> {
        self.seed.as_ref()
    }

    /// Number of topology changes (epochs) in the timeline.
    pub fn epochs(&self) -> usize {
        self.epochs.len()
    }

    /// The owner of `slot` at `t`.
    pub fn owner(&self, t: Timestamp, slot: Slot) -> Option<&NodeAddr> {
        let e = self.epoch(t)?;
        let o = e.owners[usize::from(slot.get())];
        self.addrs.get(usize::from(o))
    }

    fn epoch(&self, t: Timestamp) -> Option<&Epoch> {
        let i = self.epochs.partition_point(|e| e.start <= t);
        self.epochs.get(i.saturating_sub(1))
    }

    fn fault(&self, t: Timestamp, node: u16) -> Option<FaultKind> {
        self.faults
            .iter()
            .find(|(n, span, _)| *n == node && span.contains(t))
            .map(|(_, _, k)| *k)
    }

    /// The index of the node at `addr` in [`nodes`](Self::nodes), if the cluster has one there.
    pub fn node_index(&self, addr: &NodeAddr) -> Option<u16> {
        self.by_addr.get(addr).copied()
    }

    /// The reply of the node at `to` to command `cmd` at `t`; `asking` when the client sent
    /// `ASKING` first (after an `ASK` redirect).
    pub fn answer(&self, t: Timestamp, to: &NodeAddr, cmd: Routed, asking: bool) -> Reply {
        self.answer_at(t, self.node_index(to), cmd, asking)
    }

    /// [`answer`](Self::answer) for the node of index `node` (from [`node_index`](Self::node_index);
    /// `None`: no node at that address, a connection error).
    pub fn answer_at(&self, t: Timestamp, node: Option<u16>, cmd: Routed, asking: bool) -> Reply {
        let Some(node) = node else {
            return Reply::ConnectionError;
        };
        if let Some(kind) = self.fault(t, node) {
            return match kind {
                FaultKind::ConnectionError => Reply::ConnectionError,
                FaultKind::Timeout => Reply::Timeout,
            };
        }
        let Some(e) = self.epoch(t) else {
            return Reply::ClusterDown;
        };
        let owner = e.owners[usize::from(cmd.slot.get())];
        if owner == NO_OWNER {
            return Reply::ClusterDown;
        }
        let migration = e
            .migrating
            .binary_search_by_key(&cmd.slot, |m| m.0)
            .ok()
            .map(|i| e.migrating[i]);
        if owner == node {
            if let Some((slot, _, target)) = migration.filter(|m| m.1 == node) {
                let moved = match self.ask {
                    AskPolicy::Always => true,
                    AskPolicy::KeyCoin { seed } => mix64(seed ^ mix64(u64::from(cmd.key))) & 1 == 1,
                };
                if moved {
                    return Reply::Ask {
                        slot,
                        to: self.addrs[usize::from(target)].clone(),
                    };
                }
            }
            return Reply::Ok;
        }
        if asking && migration.is_some_and(|m| m.2 == node) {
            return Reply::Ok;
        }
        Reply::Moved {
            slot: cmd.slot,
            to: self.addrs[usize::from(owner)].clone(),
        }
    }

    /// The reply of the node at `to` to `CLUSTER SLOTS` at `t`: owner ranges with addresses, or
    /// the failure.
    pub fn cluster_slots(
        &self,
        t: Timestamp,
        to: &NodeAddr,
    ) -> Result<Vec<(SlotRange, NodeAddr)>, Reply> {
        let Some(&node) = self.by_addr.get(to) else {
            return Err(Reply::ConnectionError);
        };
        if let Some(kind) = self.fault(t, node) {
            return Err(match kind {
                FaultKind::ConnectionError => Reply::ConnectionError,
                FaultKind::Timeout => Reply::Timeout,
            });
        }
        let e = self.epoch(t).ok_or(Reply::ClusterDown)?;
        Ok(e.ranges
            .iter()
            .map(|&(r, n)| (r, self.addrs[usize::from(n)].clone()))
            .collect())
    }
}

/// Builds a [`SimCluster`]: from a recording's lines ([`push`](Self::push)) or from explicit
/// layouts ([`layout`](Self::layout)) and fault windows ([`fault`](Self::fault)).
///
/// Topology samples are folded in order: the latest sample (from whichever node) gives the slot
/// owners; each node's own `MIGRATING` list (the latest it reported) gives the migrations.
/// `poll_failed` timeouts and connection failures become fault windows `[t - timeout, t]` of that
/// node, merged when less than one poll interval apart.
#[derive(Clone, Debug)]
pub struct SimClusterBuilder {
    addrs: Vec<NodeAddr>,
    ids: Vec<Option<NodeId>>,
    by_addr: BTreeMap<NodeAddr, u16>,
    by_id: BTreeMap<NodeId, u16>,
    epochs: Vec<Epoch>,
    migrating_by_node: BTreeMap<u16, Vec<(Slot, u16)>>,
    failures: Vec<(u16, TimeSpan, FaultKind)>,
    ask: AskPolicy,
    interval_ms: u64,
    timeout_ms: u64,
    span: Option<TimeSpan>,
    seed: Option<NodeAddr>,
}

impl Default for SimClusterBuilder {
    fn default() -> Self {
        SimClusterBuilder::new()
    }
}

impl SimClusterBuilder {
    /// An empty cluster, with [`AskPolicy::KeyCoin`] seeded with 0.
    pub fn new() -> SimClusterBuilder {
        SimClusterBuilder {
            addrs: Vec::new(),
            ids: Vec::new(),
            by_addr: BTreeMap::new(),
            by_id: BTreeMap::new(),
            epochs: Vec::new(),
            migrating_by_node: BTreeMap::new(),
            failures: Vec::new(),
            ask: AskPolicy::KeyCoin { seed: 0 },
            interval_ms: 1000,
            timeout_ms: 800,
            span: None,
            seed: None,
        }
    }

    /// A builder for the recording that starts with `header` (its poll interval and timeout
    /// size the fault windows derived from `poll_failed` lines).
    pub fn for_recording(header: &Header) -> SimClusterBuilder {
        let mut b = SimClusterBuilder::new();
        b.interval_ms = header.options.interval_ms;
        b.timeout_ms = header.options.timeout_ms;
        b.seed = Some(header.seed.clone());
        b.span = Some(TimeSpan::new(header.started, header.started));
        b
    }

    /// Sets how migration sources answer (default: a per-key coin seeded with 0).
    pub fn ask_policy(&mut self, policy: AskPolicy) -> &mut Self {
        self.ask = policy;
        self
    }

    fn node(&mut self, addr: Option<&NodeAddr>, id: Option<&NodeId>) -> Option<u16> {
        let found = id
            .and_then(|id| self.by_id.get(id))
            .or_else(|| addr.and_then(|a| self.by_addr.get(a)))
            .copied();
        let n = match found {
            Some(n) => n,
            None => {
                let addr = addr?;
                let n = u16::try_from(self.addrs.len())
                    .ok()
                    .filter(|&n| n != NO_OWNER)?;
                self.addrs.push(addr.clone());
                self.ids.push(None);
                n
            }
        };
        let i = usize::from(n);
        if let Some(a) = addr {
            if !self.by_addr.contains_key(a) {
                self.by_addr.insert(a.clone(), n);
            }
        }
        if let Some(id) = id {
            if self.ids[i].is_none() {
                self.ids[i] = Some(id.clone());
                self.by_id.insert(id.clone(), n);
            }
        }
        Some(n)
    }

    /// Folds one recording line (topology samples, discoveries and poll failures matter).
    pub fn push(&mut self, line: &Line) {
        let t = line.time();
        self.span = Some(match self.span {
            Some(s) => TimeSpan::new(s.start.min(t), s.end.max(t)),
            None => TimeSpan::new(t, t),
        });
        match line {
            Line::NodeDiscovered(e) => {
                self.node(Some(&e.node.addr), e.node.id.as_ref());
            }
            Line::Topology(s) => self.push_topology(s),
            Line::PollFailed(e) => {
                let kind = match e.kind {
                    FailureKind::Timeout => FaultKind::Timeout,
                    FailureKind::Connect | FailureKind::Io => FaultKind::ConnectionError,
                    _ => return,
                };
                if let Some(n) = self.node(Some(&e.node.addr), e.node.id.as_ref()) {
                    let start = Timestamp(e.t.0.saturating_sub(self.timeout_ms));
                    self.failures.push((n, TimeSpan::new(start, e.t), kind));
                }
            }
            _ => {}
        }
    }

    fn push_topology(&mut self, s: &TopologySample) {
        let reporter_id = s.view.myself.as_ref().or(s.node.id.as_ref());
        let Some(reporter) = self.node(Some(&s.node.addr), reporter_id) else {
            return;
        };
        let mut owners = vec![NO_OWNER; usize::from(SLOT_COUNT)];
        for shard in &s.view.shards {
            for n in &shard.nodes {
                let addr = if Some(&n.id) == reporter_id {
                    n.addr.as_ref().or(Some(&s.node.addr))
                } else {
                    n.addr.as_ref()
                };
                self.node(addr, Some(&n.id));
            }
            let Some(primary) = shard.primary() else {
                continue;
            };
            let Some(&p) = self.by_id.get(&primary.id) else {
                continue;
            };
            for r in &shard.slots {
                for slot in r.slots() {
                    owners[usize::from(slot.get())] = p;
                }
            }
        }
        let mig: Vec<(Slot, u16)> = s
            .view
            .migrating
            .iter()
            .filter_map(|m| self.by_id.get(&m.peer).map(|&p| (m.slot, p)))
            .collect();
        self.migrating_by_node.insert(reporter, mig);
        let mut migrating: Vec<(Slot, u16, u16)> = self
            .migrating_by_node
            .iter()
            .flat_map(|(&src, list)| list.iter().map(move |&(slot, dst)| (slot, src, dst)))
            .collect();
        migrating.sort_unstable();
        migrating.dedup_by_key(|m| m.0);
        self.push_epoch(s.t, owners, migrating);
    }

    /// Sets the layout from `t` on: `owners` gives the owner of each range (slots not listed have
    /// none), `migrating` the slots moving `(slot, source, target)`. Nodes are added as named.
    pub fn layout(
        &mut self,
        t: Timestamp,
        owners: &[(SlotRange, NodeAddr)],
        migrating: &[(Slot, NodeAddr, NodeAddr)],
    ) -> &mut Self {
        let mut table = vec![NO_OWNER; usize::from(SLOT_COUNT)];
        for (r, a) in owners {
            if let Some(n) = self.node(Some(a), None) {
                for slot in r.slots() {
                    table[usize::from(slot.get())] = n;
                }
            }
        }
        let mut mig = Vec::new();
        for (slot, src, dst) in migrating {
            if let (Some(s), Some(d)) = (self.node(Some(src), None), self.node(Some(dst), None)) {
                mig.push((*slot, s, d));
            }
        }
        mig.sort_unstable();
        mig.dedup_by_key(|m| m.0);
        self.push_epoch(t, table, mig);
        self
    }

    /// Adds a node that owns nothing yet (it answers `MOVED` for every slot).
    pub fn add_node(&mut self, addr: &NodeAddr) -> &mut Self {
        self.node(Some(addr), None);
        self
    }

    /// Adds a fault window.
    pub fn fault(&mut self, window: FaultWindow) -> &mut Self {
        if let Some(n) = self.node(Some(&window.node), None) {
            self.failures.push((n, window.span, window.kind));
        }
        self
    }

    fn push_epoch(&mut self, t: Timestamp, owners: Vec<u16>, migrating: Vec<(Slot, u16, u16)>) {
        if let Some(last) = self.epochs.last_mut() {
            if last.owners == owners && last.migrating == migrating {
                return;
            }
            if t <= last.start {
                last.ranges = ranges(&owners);
                last.owners = owners;
                last.migrating = migrating;
                return;
            }
        }
        self.epochs.push(Epoch {
            start: t,
            ranges: ranges(&owners),
            owners,
            migrating,
        });
    }

    /// The cluster. Fault windows of a node closer than one poll interval are merged.
    pub fn build(&self) -> SimCluster {
        let mut f = self.failures.clone();
        f.sort_by_key(|&(n, span, _)| (n, span.start));
        let mut faults: Vec<(u16, TimeSpan, FaultKind)> = Vec::new();
        for (n, span, kind) in f {
            match faults.last_mut() {
                Some((m, last, k))
                    if *m == n
                        && *k == kind
                        && span.start.0 <= last.end.0.saturating_add(self.interval_ms) =>
                {
                    last.end = last.end.max(span.end);
                }
                _ => faults.push((n, span, kind)),
            }
        }
        SimCluster {
            addrs: self.addrs.clone(),
            by_addr: self.by_addr.clone(),
            epochs: self.epochs.clone(),
            faults,
            ask: self.ask,
            span: self.span,
            seed: self.seed.clone(),
        }
    }
}

fn ranges(owners: &[u16]) -> Vec<(SlotRange, u16)> {
    let mut out: Vec<(SlotRange, u16)> = Vec::new();
    let mut start = 0usize;
    for i in 1..=owners.len() {
        if i == owners.len() || owners[i] != owners[start] {
            let o = owners[start];
            let range = u16::try_from(start)
                .ok()
                .zip(u16::try_from(i - 1).ok())
                .and_then(|(a, b)| SlotRange::try_from((a, b)).ok());
            if let (Some(r), true) = (range, o != NO_OWNER) {
                out.push((r, o));
            }
            start = i;
        }
    }
    out
}
