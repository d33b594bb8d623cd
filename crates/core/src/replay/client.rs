//! What a client library model is: the [`ClientModel`] trait, the [`Transport`] it talks through
//! and what it reports ([`ClientState`], [`ClientSnapshot`]).

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;

use super::Routed;
use crate::node::NodeAddr;
use crate::slot::SlotRange;
use crate::time::Timestamp;
use crate::timeline::{NodeIdx, SlotTable};

use super::cluster::Reply;
use super::net::Net;
use super::outcome::{ClientError, Outcome};

/// What a [`SyncModel`](super::SyncModel) can ask the (simulated) cluster; the driver knows the
/// time and the command.
pub trait Transport {
    /// The virtual time of the current command (for models with timers: periodic refresh, rate
    /// limits on refreshes).
    fn now(&self) -> Timestamp;
    /// Waits `ms` (a backoff, a lock held by another task): later exchanges happen that much
    /// later, and the application's lane stays busy. A timeout reply has already cost the
    /// model's `socket_timeout` this way.
    fn sleep(&mut self, ms: u64);
    /// Ends work the client did in the background (a lazy reload, a scheduled refresh): the
    /// command goes on at `t`, its time before that work, as it did not wait for it (never
    /// earlier than the command's start).
    fn resume_at(&mut self, t: Timestamp);
    /// Sends the current command for `cmd` to `to` (after `ASKING` when `asking`).
    fn send(&mut self, to: &NodeAddr, cmd: Routed, asking: bool) -> Reply;
    /// Sends `CLUSTER SLOTS` to `to`.
    fn cluster_slots(&mut self, to: &NodeAddr) -> Result<Vec<(SlotRange, NodeAddr)>, Reply>;
}

/// A client's state, sampled after each command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClientState {
    /// Entries of `nodes_manager.startup_nodes`.
    pub startup_nodes: usize,
    /// True when the client needs a re-initialisation and has no startup node left: every
    /// later command fails, forever.
    pub wedged: bool,
    /// Successful full initialisations so far (one `CLUSTER SLOTS` answer each).
    pub full_reinits: u64,
    /// `CLUSTER SLOTS` calls sent so far (including failed ones).
    pub cluster_slots_calls: u64,
    /// Connections opened so far.
    pub new_connections: u64,
}

/// What a client holds at one moment, sampled once per second of a replay (it takes a pass over
/// the slot table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClientSnapshot {
    /// Connections open now.
    pub open_connections: u64,
    /// Distinct nodes the slot table points to.
    pub table_nodes: usize,
    /// Slots the table gives to the node it names most (16384 when a table has collapsed onto
    /// one address; about 16384 ÷ shards when healthy).
    pub top_node_slots: usize,
    /// Slots the table has no node for.
    pub unmapped_slots: usize,
}

impl ClientSnapshot {
    /// The snapshot of a slot table and a count of open connections.
    pub fn of_table(table: &SlotTable, open_connections: u64) -> ClientSnapshot {
        let mut counts: Vec<(NodeIdx, usize)> = Vec::new();
        let mut unmapped = 0;
        for run in table.as_slice().chunk_by(|a, b| a == b) {
            match run[0] {
                None => unmapped += run.len(),
                Some(n) => match counts.iter_mut().find(|c| c.0 == n) {
                    Some(c) => c.1 += run.len(),
                    None => counts.push((n, run.len())),
                },
            }
        }
        ClientSnapshot {
            open_connections,
            table_nodes: counts.len(),
            top_node_slots: counts.iter().map(|c| c.1).max().unwrap_or(0),
            unmapped_slots: unmapped,
        }
    }
}

/// The numbers `number` gives `addrs`, in order, each once: a model's seed list. An address it
/// cannot number (past 65,535 addresses) is left out.
pub fn numbered_once(
    addrs: &[NodeAddr],
    mut number: impl FnMut(&NodeAddr) -> Option<NodeIdx>,
) -> Vec<NodeIdx> {
    let mut out: Vec<NodeIdx> = Vec::with_capacity(addrs.len());
    for n in addrs.iter().filter_map(&mut number) {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// A running command of a model: completes with its outcome (see [`ClientModel::execute`]).
pub type Execution<'a> = Pin<Box<dyn Future<Output = Outcome> + 'a>>;

/// A client library's routing state machine, shared by the application's commands in flight.
///
/// The state lives behind `&self` (interior mutability): several commands run at once, each an
/// [`Execution`] that awaits its exchanges on the [`Net`], so what a reply does to the client
/// lands when the reply arrives and the others see it from then on.
pub trait ClientModel {
    /// The model's name, e.g. `redis-py@5.0.0`.
    fn name(&self) -> &str;
    /// Runs one application command on `cmd`'s key through `net`.
    fn execute<'a>(&'a self, cmd: Routed, net: &'a Net<'_>) -> Execution<'a>;
    /// Runs one application command to its end at once (the instant clock of the lanes, where
    /// nothing waits for another task). The default runs [`execute`](Self::execute); a model
    /// can run the same code without boxing it.
    fn execute_instant(&self, cmd: Routed, net: &Net<'_>) -> Outcome {
        net.block_on(self.execute(cmd, net).as_mut())
            .unwrap_or(Outcome::Failed(ClientError::UNFINISHED))
    }
    /// The client's state now.
    fn state(&self) -> ClientState;
    /// What it holds now: open connections and a summary of its slot table.
    fn snapshot(&self) -> ClientSnapshot;
    /// `socket_timeout` in milliseconds: how long a request waits on a silent node before it fails
    /// with a timeout. `None`: waiting is not modelled in the instant clock, and in the timed one
    /// a request waits until the node answers.
    fn socket_timeout_ms(&self) -> Option<u64> {
        None
    }
    /// Told once before the first command, in the lanes mode only: how many commands the
    /// application has in flight at most. Models with connection pools size them by it (with
    /// commands in flight the pools grow by themselves).
    fn set_concurrency(&mut self, _in_flight: u32) {}
}
