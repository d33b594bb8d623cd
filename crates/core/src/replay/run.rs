//! The replay driver and its report.

use std::collections::BTreeMap;

use serde::Serialize;

use super::client::{ClientModel, ClientSnapshot, ErrorClass, Outcome, Transport};
use super::cluster::{Reply, SimCluster};
use super::{Routed, Workload};
use crate::float;
use crate::node::NodeAddr;
use crate::redirect::Redirect;
use crate::slot::SlotRange;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

/// What one node received, in collector units (as `INFO commandstats` / `errorstats` count).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NodeStats {
    /// Commands that reached the node (served or rejected), `CLUSTER SLOTS` excluded.
    pub calls: u64,
    /// Of which served.
    pub ok: u64,
    /// Of which rejected with `MOVED`.
    pub moved: u64,
    /// Of which rejected with `ASK`.
    pub ask: u64,
    /// Attempts that met a connection error or a timeout.
    pub failed: u64,
    /// `CLUSTER SLOTS` calls.
    pub cluster_slots: u64,
}

/// One command's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CommandStats {
    /// Commands the application issued.
    pub issued: u64,
    /// Of which succeeded.
    pub succeeded: u64,
    /// Attempts that reached a server (served or rejected).
    pub calls: u64,
    /// `MOVED` replies.
    pub moved: u64,
    /// `ASK` replies.
    pub ask: u64,
    /// `moved / calls` (0 without calls): the share `INFO commandstats` would show rejected.
    pub moved_share: f64,
    /// Exceptions the application saw, by class.
    pub errors: BTreeMap<String, u64>,
}

/// One second of the replay.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Second {
    /// Start of the second.
    pub t: Timestamp,
    /// Commands issued.
    pub commands: u64,
    /// Commands of the workload not issued because the client was waiting out a timeout (only
    /// with `socket_timeout` set).
    pub skipped_while_waiting: u64,
    /// Commands that succeeded.
    pub ok: u64,
    /// Commands that raised.
    pub errors: u64,
    /// `MOVED` replies.
    pub moved: u64,
    /// `ASK` replies.
    pub ask: u64,
    /// Full initialisations.
    pub full_reinits: u64,
    /// Connections opened.
    pub new_connections: u64,
    /// Startup nodes at the end of the second.
    pub startup_nodes: usize,
    /// Whether the client was wedged at the end of the second.
    pub wedged: bool,
    /// Connections open at the end of the second.
    pub open_connections: u64,
    /// Distinct nodes the client's slot table pointed to at the end of the second.
    pub table_nodes: usize,
    /// Slots the client's table gave to the node it named most, at the end of the second.
    pub top_node_slots: usize,
    /// Slots the client's table had no node for at the end of the second.
    pub unmapped_slots: usize,
}

impl Second {
    fn set_snapshot(&mut self, s: ClientSnapshot) {
        self.open_connections = s.open_connections;
        self.table_nodes = s.table_nodes;
        self.top_node_slots = s.top_node_slots;
        self.unmapped_slots = s.unmapped_slots;
    }
}

/// A replay's timeline is cut after this many seconds (about 11.5 days).
const MAX_SECONDS: usize = 1_000_000;

/// The result of a replay.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReplayReport {
    /// The client model.
    pub model: String,
    /// Commands in flight at most (the workload's concurrency).
    pub concurrency: u32,
    /// Whether the client ended wedged (no startup node left, re-initialisation pending).
    pub wedged: bool,
    /// When it became wedged for good, if it did.
    pub wedged_since: Option<Timestamp>,
    /// Commands issued.
    pub commands: u64,
    /// Commands of the workload not issued because the client was waiting out a timeout (only
    /// with `socket_timeout` set).
    pub skipped_while_waiting: u64,
    /// Commands that succeeded.
    pub succeeded: u64,
    /// Commands that raised.
    pub failed: u64,
    /// `MOVED` replies, all nodes.
    pub moved: u64,
    /// `ASK` replies, all nodes.
    pub ask: u64,
    /// MOVED share per command (`moved / calls`).
    pub moved_share: BTreeMap<String, f64>,
    /// Exceptions the application saw, by class.
    pub errors: BTreeMap<String, u64>,
    /// Successful full initialisations (each one `CLUSTER SLOTS` answer).
    pub full_reinits: u64,
    /// `CLUSTER SLOTS` calls, failed ones included.
    pub cluster_slots_calls: u64,
    /// Connections opened.
    pub new_connections: u64,
    /// Startup nodes at the end.
    pub startup_nodes: usize,
    /// What the client held at the end: open connections, its slot table's nodes.
    pub held: ClientSnapshot,
    /// Per node address.
    pub nodes: BTreeMap<String, NodeStats>,
    /// Per command name.
    pub per_command: BTreeMap<String, CommandStats>,
    /// Per second from the first command.
    pub timeline: Vec<Second>,
}

struct Wire<'a> {
    cluster: &'a SimCluster,
    now: Timestamp,
    name: usize,
    nodes: Vec<NodeStats>,
    commands: Vec<CommandStats>,
    moved: u64,
    ask: u64,
    /// What a timeout costs: the client's `socket_timeout` (0 when not modelled).
    timeout_ms: u64,
    /// When the current command was issued.
    start: Timestamp,
    /// Addresses looked up and their indices (at most [`SEEN_MAX`]).
    seen: Vec<(NodeAddr, Option<NodeIdx>)>,
}

/// Addresses [`Wire`] remembers; beyond, it looks them up every time.
const SEEN_MAX: usize = 64;

impl Wire<'_> {
    /// The cluster's index of the node at `addr`, remembering every address asked (a client
    /// talks to a handful of addresses over and over).
    fn index(&mut self, addr: &NodeAddr) -> Option<NodeIdx> {
        if let Some((_, i)) = self
            .seen
            .iter()
            .find(|(a, _)| a.port() == addr.port() && a.host() == addr.host())
        {
            return *i;
        }
        let i = self.cluster.node_index(addr);
        if self.seen.len() < SEEN_MAX {
            self.seen.push((addr.clone(), i));
        }
        i
    }

    fn node(&mut self, i: Option<NodeIdx>) -> Option<&mut NodeStats> {
        self.nodes.get_mut(i?.index())
    }
}

impl Transport for Wire<'_> {
    fn now(&self) -> Timestamp {
        self.now
    }

    fn sleep(&mut self, ms: u64) {
        self.now = Timestamp(self.now.0.saturating_add(ms));
    }

    fn resume_at(&mut self, t: Timestamp) {
        self.now = t.max(self.start);
    }

    fn send(&mut self, to: &NodeAddr, cmd: Routed, asking: bool) -> Reply {
        let i = self.index(to);
        let reply = self.cluster.answer_at(self.now, i, cmd, asking);
        if reply == Reply::Timeout {
            self.sleep(self.timeout_ms);
        }
        let reached = !matches!(reply, Reply::ConnectionError | Reply::Timeout);
        let (moved, ask) = (
            matches!(reply, Reply::Redirect(Redirect::Moved { .. })),
            matches!(reply, Reply::Redirect(Redirect::Ask { .. })),
        );
        if let Some(n) = self.node(i) {
            if reached {
                n.calls += 1;
            } else {
                n.failed += 1;
            }
            n.ok += u64::from(reply == Reply::Ok);
            n.moved += u64::from(moved);
            n.ask += u64::from(ask);
        }
        let c = &mut self.commands[self.name];
        c.calls += u64::from(reached);
        c.moved += u64::from(moved);
        c.ask += u64::from(ask);
        self.moved += u64::from(moved);
        self.ask += u64::from(ask);
        reply
    }

    fn cluster_slots(&mut self, to: &NodeAddr) -> Result<Vec<(SlotRange, NodeAddr)>, Reply> {
        let i = self.index(to);
        if let Some(n) = self.node(i) {
            n.cluster_slots += 1;
        }
        let answer = self.cluster.cluster_slots(self.now, to);
        if matches!(answer, Err(Reply::Timeout)) {
            self.sleep(self.timeout_ms);
        }
        answer
    }
}

/// Runs `workload` against `cluster` through `client`, in one plain loop over the commands.
///
/// Commands take no virtual time except waiting: every timeout costs the model's
/// `socket_timeout`, and a model may sleep ([`Transport::sleep`]); later exchanges of the same
/// command are answered at the later time. The application has `workload.concurrency` lanes (tasks
/// or threads sharing the client): a command goes to a free lane, keeps it busy while it waits,
/// and a command scheduled while every lane waits is not issued (`skipped_while_waiting`). The
/// client's state is shared by all lanes; commands run one after another in the order issued.
pub fn replay(
    cluster: &SimCluster,
    workload: &Workload,
    client: &mut dyn ClientModel,
) -> ReplayReport {
    let mut wire = Wire {
        cluster,
        now: Timestamp(0),
        name: 0,
        nodes: vec![NodeStats::default(); cluster.nodes().len()],
        commands: vec![CommandStats::default(); workload.names.len()],
        moved: 0,
        ask: 0,
        timeout_ms: client.socket_timeout_ms().unwrap_or(0),
        start: Timestamp(0),
        seen: Vec::new(),
    };
    let lanes = usize::try_from(workload.concurrency.max(1)).unwrap_or(1);
    client.set_concurrency(workload.concurrency.max(1));
    let mut busy_until = vec![Timestamp(0); lanes];
    let mut report = ReplayReport {
        model: client.name().to_owned(),
        concurrency: workload.concurrency.max(1),
        ..ReplayReport::default()
    };
    let mut errors: BTreeMap<ErrorClass, u64> = BTreeMap::new();
    let mut cmd_errors: Vec<BTreeMap<ErrorClass, u64>> =
        vec![BTreeMap::new(); workload.names.len()];
    let start = workload.commands.first().map_or(Timestamp(0), |c| c.t);
    let mut prev = client.state();
    let mut wedged_since = None;
    // Seconds of the timeline whose snapshot is set.
    let mut snapped = 0;
    for wc in &workload.commands {
        let Some(&slot) = workload
            .key_slots
            .get(usize::try_from(wc.key).unwrap_or(usize::MAX))
        else {
            continue;
        };
        let name = usize::from(wc.name);
        if name >= wire.commands.len() {
            continue;
        }
        let Some(lane) = busy_until.iter().position(|&b| b <= wc.t) else {
            // Every lane still waits on a silent node: the application issues nothing now.
            report.skipped_while_waiting += 1;
            continue;
        };
        let second = usize::try_from(wc.t.millis_since(start) / 1000).unwrap_or(usize::MAX);
        if report.timeline.len() <= second && second < MAX_SECONDS {
            // A new second: what the client held at the end of the seconds before it.
            let first = report.timeline.len();
            report.timeline.extend((first..=second).map(|s| Second {
                t: Timestamp(start.0.saturating_add(u64::try_from(s).unwrap_or(0) * 1000)),
                ..Second::default()
            }));
            let snap = client.snapshot();
            for s in &mut report.timeline[snapped..second] {
                s.set_snapshot(snap);
            }
            snapped = second;
        }
        wire.now = wc.t;
        wire.start = wc.t;
        wire.name = name;
        let (moved0, ask0) = (wire.moved, wire.ask);
        let outcome = client.execute(Routed { slot, key: wc.key }, &mut wire);
        // The command took the time the client waited (timeouts, sleeps): its lane is busy.
        busy_until[lane] = wire.now;
        let state = client.state();
        let c = &mut wire.commands[name];
        c.issued += 1;
        report.commands += 1;
        let ok = outcome == Outcome::Ok;
        match outcome {
            Outcome::Ok => {
                c.succeeded += 1;
                report.succeeded += 1;
            }
            Outcome::Failed(class) => {
                report.failed += 1;
                *errors.entry(class).or_default() += 1;
                *cmd_errors[name].entry(class).or_default() += 1;
            }
        }
        if let Some(s) = report.timeline.get_mut(second) {
            s.commands += 1;
            s.ok += u64::from(ok);
            s.errors += u64::from(!ok);
            s.moved += wire.moved - moved0;
            s.ask += wire.ask - ask0;
            s.full_reinits += state.full_reinits - prev.full_reinits;
            s.new_connections += state.new_connections - prev.new_connections;
            s.startup_nodes = state.startup_nodes;
            s.wedged = state.wedged;
        }
        match (state.wedged, wedged_since) {
            (true, None) => wedged_since = Some(wc.t),
            (false, Some(_)) => wedged_since = None,
            _ => {}
        }
        prev = state;
    }
    let snap = client.snapshot();
    for s in &mut report.timeline[snapped..] {
        s.set_snapshot(snap);
    }
    report.held = snap;
    let state = client.state();
    report.wedged = state.wedged;
    report.wedged_since = wedged_since;
    report.moved = wire.moved;
    report.ask = wire.ask;
    report.full_reinits = state.full_reinits;
    report.cluster_slots_calls = state.cluster_slots_calls;
    report.new_connections = state.new_connections;
    report.startup_nodes = state.startup_nodes;
    report.errors = errors
        .into_iter()
        .map(|(k, v)| (client.error_name(k).to_owned(), v))
        .collect();
    for (i, mut c) in wire.commands.into_iter().enumerate() {
        c.moved_share = float::ratio(c.moved, c.calls);
        c.errors = cmd_errors[i]
            .iter()
            .map(|(k, v)| (client.error_name(*k).to_owned(), *v))
            .collect();
        report
            .moved_share
            .insert(workload.names[i].clone(), c.moved_share);
        report.per_command.insert(workload.names[i].clone(), c);
    }
    report.nodes = cluster
        .nodes()
        .iter()
        .zip(wire.nodes)
        .map(|(a, s)| (a.to_string(), s))
        .collect();
    report
}
