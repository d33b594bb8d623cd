//! Building the simulated cluster: a recording's lines folded into slot layouts, fault windows
//! (their edges placed where the polls leave them, `fault_edges.rs`) and kills, or layouts and
//! windows given explicitly (a planned change's).

use std::collections::BTreeMap;

use super::{AskPolicy, FaultKind, FaultWindow, SimCluster, DOWN_PAST_END_MS};
use crate::metrics::Metrics;
use crate::node::NodeAddr;
use crate::recording::{FailureKind, Header, Line};
use crate::replay::fault_edges::{end_window, place_edges, start_window, Edge, NextAnswer, Side};
use crate::replay::kills::{moments_at, KillTrack, KILL_COMMAND};
use crate::replay::replicas::ReplicaTrack;
use crate::slot::{Slot, SlotRange};
use crate::time::{TimeSpan, Timestamp};
use crate::timeline::{ClusterTimeline, Migrating, NodeIdx, SlotTable};

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
    /// ([`key_layout`](crate::replay::key_layout)). Returns whether it did (not when the
    /// recording has topology, nodes or a time span).
    pub fn assume_layout_from_keys(&mut self, metrics: &Metrics) -> bool {
        if !self.timeline.states().is_empty() {
            return false;
        }
        let keys: Vec<(NodeAddr, u64)> = metrics
            .nodes
            .iter()
            .map(|n| (n.addr.clone(), n.intervals.first().map_or(0, |i| i.keys)))
            .collect();
        let layout = crate::replay::key_layout(&keys);
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
