//! Models written as one synchronous call per command ([`SyncModel`]), run by the event-driven
//! engine through [`Sequential`]: the whole command runs when it is sent, its exchanges taking
//! the network's time one after another, and its task stays in flight (holding its place under
//! the application's cap) until the last reply arrives.
//!
//! What such a model cannot show: another command in flight seeing the client before this one's
//! replies arrived (its effects count from when it was sent), and a reset closing connections
//! that other commands use. Every library's model but redis-py's runs this way (redis-rs,
//! go-redis, Lettuce, Jedis, ioredis, node-redis, GLIDE); their libraries refresh in the
//! background or under a lock that serialises the commands that meet a redirect, so the
//! difference is the timing of a refresh, not whether it happens.
//!
//! A model may cut a command's run at its library's timers ([`SyncModel::start`] and
//! [`SyncModel::resume`], [`Step::Paused`]): on the timed clock the commands sent before the
//! timer fires then run first, and the command goes on from there (ioredis's `DelayQueue`).

use std::cell::RefCell;

use super::client::{ClientModel, Execution, Started, Transport};
use super::client_state::{ClientSnapshot, ClientState};
use super::cluster::Reply;
use super::net::Net;
use super::outcome::Outcome;
use super::Routed;
use crate::node::NodeAddr;
use crate::slot::SlotRange;
use crate::time::Timestamp;

/// Where a command's run stands at the end of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// It ended so.
    Done(Outcome),
    /// It waits for a timer of the library's, until the model's clock at the end of the step:
    /// resumed then by [`SyncModel::resume`] with this ticket.
    Paused(u64),
}

/// A client library's routing state machine, one synchronous call per command.
pub trait SyncModel {
    /// The model's name, e.g. `jedis@5.1.0`.
    fn name(&self) -> &str;
    /// Runs one application command on `cmd`'s key through `net`.
    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome;
    /// Runs one application command until it ends or waits for a timer (`Step::Paused`,
    /// the model's clock left at the timer). By default it runs whole.
    fn start(&mut self, cmd: Routed, net: &mut dyn Transport) -> Step {
        Step::Done(self.execute(cmd, net))
    }
    /// Goes on with the command paused with `ticket`, the clock at its timer.
    fn resume(&mut self, _ticket: u64, _net: &mut dyn Transport) -> Step {
        Step::Done(Outcome::Failed(super::outcome::ClientError::UNFINISHED))
    }
    /// The client's state now.
    fn state(&self) -> ClientState;
    /// What it holds now: open connections and a summary of its slot table.
    fn snapshot(&self) -> ClientSnapshot;
    /// `socket_timeout` in milliseconds (see [`ClientModel::socket_timeout_ms`]).
    fn socket_timeout_ms(&self) -> Option<u64> {
        None
    }
    /// See [`ClientModel::set_concurrency`].
    fn set_concurrency(&mut self, _in_flight: u32) {}
}

/// The runs of a model's commands paused at its timers, by ticket ([`Step::Paused`]); a place
/// freed by a resume is taken again.
pub(crate) struct Parked<T>(Vec<Option<T>>);

impl<T> Parked<T> {
    /// None parked.
    pub(crate) fn new() -> Parked<T> {
        Parked(Vec::new())
    }

    /// Keeps `run` until its resume: the pause that says so.
    pub(crate) fn park(&mut self, run: T) -> Step {
        let place = match self.0.iter().position(Option::is_none) {
            Some(i) => {
                self.0[i] = Some(run);
                i
            }
            None => {
                self.0.push(Some(run));
                self.0.len() - 1
            }
        };
        Step::Paused(u64::try_from(place).unwrap_or(u64::MAX))
    }

    /// The run parked with `ticket`, taken back (`None`: no such ticket).
    pub(crate) fn take(&mut self, ticket: u64) -> Option<T> {
        let i = usize::try_from(ticket).ok()?;
        self.0.get_mut(i).and_then(Option::take)
    }
}

/// Runs one command of `model` to its end through its steps, each pause waited out at once: the
/// `execute` of a model that cuts its commands at timers.
pub(crate) fn run_whole<M: SyncModel + ?Sized>(
    model: &mut M,
    cmd: Routed,
    net: &mut dyn Transport,
) -> Outcome {
    let mut step = model.start(cmd, net);
    loop {
        match step {
            Step::Done(outcome) => return outcome,
            Step::Paused(ticket) => step = model.resume(ticket, net),
        }
    }
}

/// A [`SyncModel`] as a [`ClientModel`].
pub struct Sequential<M> {
    name: String,
    model: RefCell<M>,
}

impl<M: SyncModel> Sequential<M> {
    /// Wraps `model`.
    pub fn new(model: M) -> Sequential<M> {
        Sequential {
            name: model.name().to_owned(),
            model: RefCell::new(model),
        }
    }
}

/// The network as a synchronous model sees it: its own clock, moved by each exchange.
struct Local<'n, 'a> {
    net: &'n Net<'a>,
    now_us: u64,
    start_us: u64,
}

impl Transport for Local<'_, '_> {
    fn now(&self) -> Timestamp {
        Timestamp(self.now_us / 1000)
    }

    fn now_us(&self) -> u64 {
        self.now_us
    }

    fn sleep(&mut self, ms: u64) {
        self.now_us = self.now_us.saturating_add(ms.saturating_mul(1000));
    }

    fn sleep_us(&mut self, us: u64) {
        self.now_us = self.now_us.saturating_add(us);
    }

    fn resume_at_us(&mut self, us: u64) {
        self.now_us = us.max(self.start_us);
    }

    fn send(&mut self, to: &NodeAddr, cmd: Routed, asking: bool) -> Reply {
        self.net.set_now(self.now_us);
        let (at, reply) = self.net.send(to, cmd, asking).into_parts();
        self.now_us = at;
        reply
    }

    fn cluster_slots(&mut self, to: &NodeAddr) -> Result<Vec<(SlotRange, NodeAddr)>, Reply> {
        self.net.set_now(self.now_us);
        let (at, answer) = self.net.cluster_slots(to).into_parts();
        self.now_us = at;
        answer
    }

    fn probe(&mut self, to: &NodeAddr) -> Result<(), Reply> {
        self.net.set_now(self.now_us);
        let (_, answer) = self
            .net
            .keyless_to(self.net.node_index(to), true)
            .into_parts();
        answer
    }

    fn handshake(&mut self, to: &NodeAddr) -> Result<(), Reply> {
        self.net.set_now(self.now_us);
        let node = self.net.node_index(to);
        let (at, answer) = self.net.keyless_to(node, true).into_parts();
        self.now_us = at;
        answer
    }

    fn cluster_members(&self) -> Vec<NodeAddr> {
        self.net.set_now(self.now_us);
        self.net.cluster_members()
    }

    fn listed_replicas(&self, owners: &[NodeAddr]) -> Vec<(NodeAddr, NodeAddr)> {
        self.net.set_now(self.now_us);
        self.net.listed_replicas(owners)
    }

    fn has_kills(&self) -> bool {
        self.net.has_kills()
    }

    fn killed(&self, to: &NodeAddr, since: Timestamp) -> bool {
        self.net.has_kills()
            && self.net.node_index(to).is_some_and(|n| {
                self.net
                    .killed(n, since.0.saturating_mul(1000), self.now_us)
            })
    }
}

impl<M: SyncModel> Sequential<M> {
    /// Runs one step of a command (`step`) on the model's own clock from now: where it stands
    /// and the moment the step ends; the shared clock stays at the start (the timed clock
    /// delivers the outcome, or resumes the command, then).
    fn decide(
        &self,
        net: &Net<'_>,
        step: impl FnOnce(&mut M, &mut dyn Transport) -> Step,
    ) -> (Step, u64) {
        let start_us = net.now_us();
        let mut local = Local {
            net,
            now_us: start_us,
            start_us,
        };
        let step = step(&mut self.model.borrow_mut(), &mut local);
        let end = local.now_us;
        net.set_now(start_us);
        (step, end)
    }

    /// The rest of a command whose step ended at `end` so: each pause waited out on the shared
    /// clock (the commands due meanwhile run first), then resumed.
    async fn finish(&self, mut step: Step, mut end: u64, net: &Net<'_>) -> Outcome {
        loop {
            net.until(end).await;
            match step {
                Step::Done(outcome) => return outcome,
                Step::Paused(ticket) => {
                    (step, end) = self.decide(net, |m, local| m.resume(ticket, local));
                }
            }
        }
    }
}

impl<M: SyncModel> ClientModel for Sequential<M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn execute<'a>(&'a self, cmd: Routed, net: &'a Net<'_>) -> Execution<'a> {
        let (step, end) = self.decide(net, |m, local| m.start(cmd, local));
        Box::pin(self.finish(step, end, net))
    }

    fn start<'a>(&'a self, cmd: Routed, net: &'a Net<'_>) -> Started<'a> {
        match self.decide(net, |m, local| m.start(cmd, local)) {
            (Step::Done(outcome), at_us) => Started::At { outcome, at_us },
            (step, end) => Started::Running(Box::pin(self.finish(step, end, net))),
        }
    }

    fn execute_instant(&self, cmd: Routed, net: &Net<'_>) -> Outcome {
        let (mut step, mut end) = self.decide(net, |m, local| m.start(cmd, local));
        loop {
            net.set_now(end);
            match step {
                Step::Done(outcome) => return outcome,
                Step::Paused(ticket) => {
                    (step, end) = self.decide(net, |m, local| m.resume(ticket, local));
                }
            }
        }
    }

    fn state(&self) -> ClientState {
        self.model.borrow().state()
    }

    fn snapshot(&self) -> ClientSnapshot {
        self.model.borrow().snapshot()
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.model.borrow().socket_timeout_ms()
    }

    fn set_concurrency(&mut self, in_flight: u32) {
        self.model.get_mut().set_concurrency(in_flight);
    }
}

/// `model` as a boxed [`ClientModel`] (what a model's `build` returns).
pub(super) fn boxed<M: SyncModel + 'static>(model: M) -> Box<dyn ClientModel> {
    Box::new(Sequential::new(model))
}
