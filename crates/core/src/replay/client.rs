//! What a client library model is: the [`ClientModel`] trait and the [`Transport`] it talks
//! through; what it reports of itself is a [`ClientState`] and a [`ClientSnapshot`].

use std::future::Future;
use std::pin::Pin;

use super::Routed;
use crate::node::NodeAddr;
use crate::slot::SlotRange;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

use super::client_state::{ClientSnapshot, ClientState};
use super::cluster::Reply;
use super::net::Net;
use super::outcome::{ClientError, Outcome};

/// What a [`SyncModel`](super::SyncModel) can ask the (simulated) cluster; the driver knows the
/// time and the command.
pub trait Transport {
    /// The virtual time of the current command (for models with timers: periodic refresh, rate
    /// limits on refreshes).
    fn now(&self) -> Timestamp;
    /// The same in microseconds (for a model that tells apart exchanges within a millisecond:
    /// which of its pooled connections are still in use).
    fn now_us(&self) -> u64;
    /// Waits `ms` (a backoff, a lock held by another task): later exchanges happen that much
    /// later, and the application's lane stays busy. A timeout reply has already cost the
    /// model's `socket_timeout` this way.
    fn sleep(&mut self, ms: u64);
    /// Waits `us` microseconds (see [`sleep`](Self::sleep)), or spends them on the client's own
    /// work (parsing an answer, rebuilding its slot cache); by default whole milliseconds,
    /// rounded up.
    fn sleep_us(&mut self, us: u64) {
        self.sleep(us.div_ceil(1000));
    }
    /// Ends work the client did in the background (a lazy reload, a scheduled refresh): the
    /// command goes on at `us` microseconds, its time before that work, as it did not wait for
    /// it (never earlier than the command's start). Save the time to go back to with
    /// [`now_us`](Self::now_us): a time in whole milliseconds drops up to one of the command's.
    fn resume_at_us(&mut self, us: u64);
    /// Goes on at the millisecond `t` (see [`resume_at_us`](Self::resume_at_us)): for a
    /// deadline counted in milliseconds (a timeout, a timer).
    fn resume_at(&mut self, t: Timestamp) {
        self.resume_at_us(t.0.saturating_mul(1000));
    }
    /// Sends the current command for `cmd` to `to` (after `ASKING` when `asking`).
    fn send(&mut self, to: &NodeAddr, cmd: Routed, asking: bool) -> Reply;
    /// Sends `CLUSTER SLOTS` to `to`.
    fn cluster_slots(&mut self, to: &NodeAddr) -> Result<Vec<(SlotRange, NodeAddr)>, Reply>;
    /// A connection attempt to `to` (connect, then a keyless command such as `PING`) made by the
    /// client's background work: `Ok` if the node would answer it now, else how it fails. The
    /// command's clock does not move, and nothing is counted among the workload's commands.
    fn probe(&mut self, to: &NodeAddr) -> Result<(), Reply>;
    /// Opens a connection to `to` (TCP and the client's handshake) and sends no command of the
    /// workload: `Ok` when the node took it, else how it failed (a library that reconnects in
    /// the background, or connects eagerly, without a command to send).
    fn handshake(&mut self, to: &NodeAddr) -> Result<(), Reply>;
    /// The nodes the cluster lists now (`CLUSTER NODES`: masters without slots and replicas
    /// included), for a model whose topology query is `CLUSTER NODES`; it reads them with the
    /// answer of a [`cluster_slots`](Self::cluster_slots) exchange, which stands for that query.
    fn cluster_members(&self) -> Vec<NodeAddr>;
    /// The replicas a `CLUSTER SLOTS` answer now lists beside the slot owners `owners`, each
    /// with the owner it is listed under, `(replica, owner)` (read with the answer of a
    /// [`cluster_slots`](Self::cluster_slots) exchange, whose pairs name only the owners).
    fn listed_replicas(&self, owners: &[NodeAddr]) -> Vec<(NodeAddr, NodeAddr)>;
    /// Whether someone closed the clients' connections of the node at `to` after `since` and by
    /// now (a `CLIENT KILL` the recording shows, `kills.rs`): a connection to it open since
    /// `since` was closed. None by default.
    fn killed(&self, _to: &NodeAddr, _since: Timestamp) -> bool {
        false
    }
    /// Whether [`killed`](Self::killed) can be true at all (the recording shows some `CLIENT
    /// KILL`): a model skips its look for closed connections when it cannot. `true` by default.
    fn has_kills(&self) -> bool {
        true
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

/// A command a model has started ([`ClientModel::start`]).
pub enum Started<'a> {
    /// It runs on: the driver polls it whenever what it waits for is due.
    Running(Execution<'a>),
    /// It was decided at once (a synchronous model runs a command to its end when it starts):
    /// its outcome, which the application has at `at_us`.
    At {
        /// What the command came to.
        outcome: Outcome,
        /// When the application has it (µs of the virtual clock).
        at_us: u64,
    },
}

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
    /// Starts one application command (the timed clock): by default its
    /// [`execute`](Self::execute)'s task; a model that decides a command when it starts gives
    /// the outcome and its moment instead, and the driver keeps no task for it.
    fn start<'a>(&'a self, cmd: Routed, net: &'a Net<'_>) -> Started<'a> {
        Started::Running(self.execute(cmd, net))
    }
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
