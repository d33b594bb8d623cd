//! The simulated cluster: the slot layouts of a [`ClusterTimeline`] and fault windows, answering
//! routed commands at virtual times.

use std::collections::BTreeMap;

use serde::Serialize;

use super::fault_edges::{end_window, place_edges, start_window, Edge, NextAnswer, Side};
use super::kills::{first_kill, moments_at, KillTrack, KILL_COMMAND};
use super::replicas::{answer_entries, Listed, ReplicaTrack};
use super::{mix64, Routed};
use crate::metrics::Metrics;
use crate::node::NodeAddr;
use crate::recording::{FailureKind, Header, Line};
use crate::redirect::Redirect;
use crate::slot::{Slot, SlotRange};
use crate::time::{TimeSpan, Timestamp};
use crate::timeline::{ClusterState, ClusterTimeline, Migrating, NodeIdx, NodeTable, SlotTable};

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

/// A fault window taken from a `poll_failed` line, with the window it began in and the node's
/// next answer (`fault_edges.rs`).
#[derive(Clone, Copy, Debug)]
struct Polled {
    node: NodeIdx,
    span: TimeSpan,
    kind: FaultKind,
    began: (Timestamp, Timestamp),
    next: Option<NextAnswer>,
}

/// Builds a [`SimCluster`]: from a recording's lines ([`push`](Self::push)), folded into a
/// [`ClusterTimeline`] whose states are the cluster's layouts, or from explicit layouts
/// ([`layout`](Self::layout)) and fault windows ([`fault`](Self::fault)).
///
/// `poll_failed` timeouts and connection failures become fault windows `[t - timeout, t]` of that
/// node, merged when less than one poll interval apart, their edges then moved to the middle of
/// the windows the node's answers leave them (`fault_edges.rs`); a rise of a node's `CLIENT
/// KILL` count between two `INFO` samples, a kill of its clients' connections (`kills.rs`).
#[derive(Clone, Debug)]
pub struct SimClusterBuilder {
    timeline: ClusterTimeline,
    failures: Vec<(NodeIdx, TimeSpan, FaultKind)>,
    /// The fault windows of the recording's `poll_failed` lines (kept apart from the explicit
    /// ones: a node still failing at the recording's end stays down, see [`Self::build`]).
    polled: Vec<Polled>,
    /// When each node last answered a poll (an `INFO` or topology sample).
    answered: BTreeMap<NodeIdx, Timestamp>,
    /// Each node's last failure (index into `polled`) not yet followed by an answer.
    unanswered: BTreeMap<NodeIdx, usize>,
    /// The slowest `INFO` answer of each node that did not follow a failure (µs).
    slowest: BTreeMap<NodeIdx, u64>,
    kills: KillTrack,
    ask: AskPolicy,
    interval_ms: u64,
    timeout_ms: u64,
    span: Option<TimeSpan>,
    seed: Option<NodeAddr>,
    /// When each node of the timeline was first known (see [`SimCluster::members`]).
    joined: Vec<Timestamp>,
    replicas: ReplicaTrack,
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
            timeline: ClusterTimeline::new(),
            failures: Vec::new(),
            polled: Vec::new(),
            answered: BTreeMap::new(),
            unanswered: BTreeMap::new(),
            slowest: BTreeMap::new(),
            kills: KillTrack::default(),
            ask: AskPolicy::KeyCoin { seed: 0 },
            interval_ms: 1000,
            timeout_ms: 800,
            span: None,
            seed: None,
            joined: Vec::new(),
            replicas: ReplicaTrack::default(),
        }
    }

    /// Records `t` as the time the nodes numbered since the last call were first known.
    fn stamp(&mut self, t: Timestamp) {
        let n = self.timeline.nodes().len();
        if self.joined.len() < n {
            self.joined.resize(n, t);
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

    /// Folds one recording line (topology samples, discoveries, poll failures and the
    /// `CLIENT KILL` counts of `INFO` samples matter).
    pub fn push(&mut self, line: &Line) {
        let t = line.time();
        self.span = Some(match self.span {
            Some(s) => TimeSpan::new(s.start.min(t), s.end.max(t)),
            None => TimeSpan::new(t, t),
        });
        self.timeline.push(line);
        self.stamp(t);
        if let Line::Info(s) = line {
            if let Some(n) = self.timeline.nodes().find_addr(&s.node.addr) {
                let count = s.info.commandstats.get(KILL_COMMAND).map_or(0, |c| c.calls);
                self.kills.sample(n, s.t, count);
                self.note_answer(n, s.t, Some(s.latency_us));
            }
        }
        if let Line::Topology(s) = line {
            self.replicas.view(s.t);
            if let Some(n) = self.timeline.nodes().find_addr(&s.node.addr) {
                self.note_answer(n, s.t, None);
            }
        }
        if let Line::PollFailed(e) = line {
            let kind = match e.kind {
                FailureKind::Timeout => FaultKind::Timeout,
                FailureKind::Connect | FailureKind::Io => FaultKind::ConnectionError,
                _ => return,
            };
            if let Some(n) = self.timeline.nodes().find_addr(&e.node.addr) {
                let start = Timestamp(e.t.0.saturating_sub(self.timeout_ms));
                let began = start_window(
                    e.kind,
                    e.t,
                    self.timeout_ms,
                    self.interval_ms,
                    self.answered.get(&n).copied(),
                );
                self.unanswered.insert(n, self.polled.len());
                self.polled.push(Polled {
                    node: n,
                    span: TimeSpan::new(start, e.t),
                    kind,
                    began,
                    next: None,
                });
            }
        }
    }

    /// Node `n` answered a poll at `t`; an `INFO` (`latency_us` known) is the next answer of its
    /// last failure if one waits for it, else a healthy answer. (A topology sample's wait is not
    /// known: the `INFO` of the same round tells whether the node kept it waiting.)
    fn note_answer(&mut self, n: NodeIdx, t: Timestamp, latency_us: Option<u64>) {
        self.answered.insert(n, t);
        let Some(latency_us) = latency_us else {
            return;
        };
        match self.unanswered.remove(&n) {
            Some(i) => self.polled[i].next = Some(NextAnswer { t, latency_us }),
            None => {
                let slowest = self.slowest.entry(n).or_insert(0);
                *slowest = (*slowest).max(latency_us);
            }
        }
    }

    /// Sets the layout from `t` on: `owners` gives the owner of each range (slots not listed have
    /// none), `migrating` the slots moving `(slot, source, target)`. Nodes are added as named.
    pub fn layout(
        &mut self,
        t: Timestamp,
        owners: &[(SlotRange, NodeAddr)],
        migrating: &[(Slot, NodeAddr, NodeAddr)],
    ) -> &mut Self {
        let mut table = SlotTable::new();
        for (r, a) in owners {
            if let Ok((n, _)) = self.timeline.nodes_mut().intern_addr(a) {
                table.fill(*r, Some(n));
            }
        }
        let mut mig = Vec::new();
        for (slot, src, dst) in migrating {
            let nodes = self.timeline.nodes_mut();
            if let (Ok((from, _)), Ok((to, _))) = (nodes.intern_addr(src), nodes.intern_addr(dst)) {
                mig.push(Migrating {
                    slot: *slot,
                    from,
                    to,
                });
            }
        }
        self.timeline.set_state(t, table, mig);
        self.stamp(t);
        self
    }

    /// From `t` on (until the next call), the replicas are `pairs`, `(replica, primary)`; nodes
    /// are added as named.
    pub fn replicas(&mut self, t: Timestamp, pairs: &[(NodeAddr, NodeAddr)]) -> &mut Self {
        let mut set = Vec::new();
        for (r, p) in pairs {
            let nodes = self.timeline.nodes_mut();
            if let (Ok((r, _)), Ok((p, _))) = (nodes.intern_addr(r), nodes.intern_addr(p)) {
                set.push((r, p));
            }
        }
        self.replicas.set(t, set);
        self.stamp(t);
        self
    }

    /// For a recording with no topology at all (one imported from metrics): lays the slots out
    /// from the recording's start as the keys `metrics` shows at each node's first sample say
    /// ([`key_layout`](super::key_layout)). Returns whether it did (not when the recording has
    /// topology, nodes or a time span).
    pub fn assume_layout_from_keys(&mut self, metrics: &Metrics) -> bool {
        if !self.timeline.states().is_empty() {
            return false;
        }
        let keys: Vec<(NodeAddr, u64)> = metrics
            .nodes
            .iter()
            .map(|n| (n.addr.clone(), n.intervals.first().map_or(0, |i| i.keys)))
            .collect();
        let layout = super::key_layout(&keys);
        match self.span {
            Some(span) if !layout.is_empty() => {
                self.layout(span.start, &layout, &[]);
                true
            }
            _ => false,
        }
    }

    /// Sets the span the cluster is simulated over and the address clients first contact (a
    /// cluster built from layouts rather than a recording: a planned change's).
    pub fn frame(&mut self, span: TimeSpan, seed: NodeAddr) -> &mut Self {
        self.span = Some(span);
        self.seed = Some(seed);
        self
    }

    /// Adds a node that owns nothing yet (it answers `MOVED` for every slot).
    pub fn add_node(&mut self, addr: &NodeAddr) -> &mut Self {
        // A full table (65,535 nodes) leaves the node out: it then answers as an address no node
        // has (a connection error).
        let _ = self.timeline.nodes_mut().intern_addr(addr);
        self.stamp(Timestamp(0));
        self
    }

    /// Adds a fault window.
    pub fn fault(&mut self, window: FaultWindow) -> &mut Self {
        if let Ok((n, _)) = self.timeline.nodes_mut().intern_addr(&window.node) {
            self.failures.push((n, window.span, window.kind));
        }
        self.stamp(Timestamp(0));
        self
    }

    /// Adds a kill of the clients' connections of the node at `node` at `t` (as a `CLIENT KILL`
    /// a recording shows).
    pub fn kill(&mut self, node: &NodeAddr, t: Timestamp) -> &mut Self {
        if let Ok((n, _)) = self.timeline.nodes_mut().intern_addr(node) {
            self.kills.add(n, t);
        }
        self.stamp(Timestamp(0));
        self
    }

    /// The timeline folded so far.
    pub fn timeline(&self) -> &ClusterTimeline {
        &self.timeline
    }

    /// The cluster. Fault windows of a node closer than one poll interval are merged. A node
    /// whose last poll failed (no sample of it after its last failure) is down past the
    /// recording's end: the last thing known of it is that it does not answer, and a command the
    /// replay still sends after the end (its retries, its wait for a permit) meets it so. A
    /// window taken from the polls starts in the middle of the window its first failure began in
    /// and ends in the middle of the one its last failure ended in (`fault_edges.rs`).
    pub fn build(&self) -> SimCluster {
        // Each window with the poll failure it came from, if any.
        let mut f: Vec<(NodeIdx, TimeSpan, FaultKind, Option<&Polled>)> = self
            .failures
            .iter()
            .map(|&(n, s, k)| (n, s, k, None))
            .collect();
        let mut last: BTreeMap<NodeIdx, usize> = BTreeMap::new();
        for (i, p) in self.polled.iter().enumerate() {
            if last
                .get(&p.node)
                .is_none_or(|&j| self.polled[j].span.end <= p.span.end)
            {
                last.insert(p.node, i);
            }
        }
        let end = self.span.map_or(Timestamp(0), |s| s.end);
        for (i, p) in self.polled.iter().enumerate() {
            let n = p.node;
            // No answer after the last failure was seen.
            let still_down =
                last.get(&n) == Some(&i) && self.answered.get(&n).is_none_or(|&t| t < p.span.end);
            let span = if still_down {
                TimeSpan::new(
                    p.span.start,
                    Timestamp(end.0.max(p.span.end.0).saturating_add(DOWN_PAST_END_MS)),
                )
            } else {
                p.span
            };
            f.push((n, span, p.kind, Some(p)));
        }
        f.sort_by_key(|&(n, span, _, _)| (n, span.start));
        // Each merged window with the poll failures it began and ended with.
        struct Run<'p> {
            fault: (NodeIdx, TimeSpan, FaultKind),
            began: Option<&'p Polled>,
            ended: Option<&'p Polled>,
        }
        let mut runs: Vec<Run> = Vec::new();
        for (n, span, kind, p) in f {
            match runs.last_mut() {
                Some(run)
                    if run.fault.0 == n
                        && run.fault.2 == kind
                        && span.start.0 <= run.fault.1.end.0.saturating_add(self.interval_ms) =>
                {
                    let last = &mut run.fault.1;
                    if span.end >= last.end {
                        run.ended = p;
                    }
                    last.end = last.end.max(span.end);
                }
                _ => runs.push(Run {
                    fault: (n, span, kind),
                    began: p,
                    ended: p,
                }),
            }
        }
        let mut faults = Vec::with_capacity(runs.len());
        let mut edges = Vec::new();
        for (i, run) in runs.into_iter().enumerate() {
            if let Some(p) = run.began {
                let (from, to) = p.began;
                edges.push(Edge {
                    fault: i,
                    side: Side::Start,
                    from,
                    to,
                });
            }
            // A window down past the recording's end has no answer after it.
            if let Some((p, next)) = run.ended.and_then(|p| Some((p, p.next?))) {
                let slowest = self.slowest.get(&run.fault.0).copied().unwrap_or(0);
                let (from, to) = end_window(p.span.end, next, slowest);
                edges.push(Edge {
                    fault: i,
                    side: Side::End,
                    from,
                    to,
                });
            }
            faults.push(run.fault);
        }
        place_edges(&mut faults, &edges, 0, 1);
        let table = self.timeline.nodes().clone();
        let kill_windows = self.kills.windows();
        let mut joined = self.joined.clone();
        joined.resize(table.len(), Timestamp(0));
        SimCluster {
            joined,
            addrs: table.addrs(),
            table,
            states: self.timeline.states().to_vec(),
            faults,
            edges,
            kills: moments_at(&kill_windows, 0, 1),
            kill_windows,
            ask: self.ask,
            span: self.span,
            seed: self.seed.clone(),
            replicas: self.replicas.listed(&self.timeline),
        }
    }
}
