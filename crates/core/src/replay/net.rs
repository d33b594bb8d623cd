//! The simulated network a model talks through: the virtual clock, the exchanges with the
//! simulated cluster and how long they take, what every node received, and the waits of a task.
//!
//! Every exchange is answered when it is sent (the server's state at the moment the command
//! reaches it) and *delivered* later: [`Net::send`] returns a [`Delivery`], a future that
//! completes when the reply arrives. A model `await`s it, so everything it does with the reply
//! (a slot patch, a reset, a popped startup node) happens at the reply's time, and other commands
//! in flight meanwhile see the client as it was.
//!
//! Two clocks:
//!
//! - **timed** ([`Shape::InFlight`](super::Shape::InFlight)): an exchange takes the round trip
//!   plus the command's service time ([`Timing`]); a silent node answers when it resumes, or the
//!   request fails after `socket_timeout`; a refused connection fails after one round trip.
//! - **instant** ([`Shape::Lanes`](super::Shape::Lanes)): exchanges take no time, a timeout costs
//!   `socket_timeout` (0 when not modelled), and a delivery never waits for another task: a
//!   command runs to its end when issued.
//!
//! Time inside is in microseconds; the cluster is asked in milliseconds.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::cluster::{Answer, FaultKind, Reply, SimCluster};
use super::report::{CommandStats, NodeStats};
use super::wakes::Wakes;
use super::{Routed, Timing};
use crate::node::NodeAddr;
use crate::slot::SlotRange;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

pub use super::wakes::TaskId;
pub use delivery::{Delivery, Parked, Until};

mod delivery;

/// Addresses the network remembers; beyond, it looks them up every time.
const SEEN_MAX: usize = 64;

/// What the cluster received, counted as the servers count it.
#[derive(Clone, Debug, Default)]
pub(super) struct Tally {
    /// Per node (cluster numbering).
    pub(super) nodes: Vec<NodeStats>,
    /// Per workload command name.
    pub(super) commands: Vec<CommandStats>,
    /// `MOVED` replies, all nodes.
    pub(super) moved: u64,
    /// `ASK` replies, all nodes.
    pub(super) ask: u64,
    /// `CLUSTER SLOTS` calls, all nodes.
    pub(super) cluster_slots: u64,
}

/// What the commands issued in one second of the timeline sent.
#[derive(Clone, Debug, Default)]
pub(super) struct SecondTally {
    /// `MOVED` replies.
    pub(super) moved: u64,
    /// `ASK` replies.
    pub(super) ask: u64,
    /// `CLUSTER SLOTS` calls.
    pub(super) cluster_slots: u64,
    /// Attempts that reached a server, per command name.
    pub(super) calls: Vec<u64>,
    /// `MOVED` replies per command name.
    pub(super) moved_by: Vec<u64>,
}

/// Round trips a new connection takes before its first command: TCP's handshake, then the
/// pipelined `CLIENT SETINFO` pair every redis-py from 5.0.0 sends (`on_connect`, 5.0.0
/// `redis/asyncio/connection.py` l. 356–366).
const CONNECT_ROUND_TRIPS: u64 = 2;

/// Seconds of counts kept (as many as the replay's timeline).
const SECONDS_MAX: usize = 1_000_000;

/// The simulated network and clock of one replay.
pub struct Net<'a> {
    cluster: &'a SimCluster,
    timing: &'a Timing,
    timed: bool,
    /// `socket_timeout` in microseconds (`None`: not modelled / wait for the node).
    timeout_us: Option<u64>,
    now: Cell<u64>,
    /// Until when the client's own work holds its event loop (timed clock): nothing else of the
    /// client runs before.
    busy_until: Cell<u64>,
    /// The client's own work so far, in microseconds (the sum of every [`Net::cpu`]).
    cpu_total: Cell<u64>,
    /// The time of the next event of another task or of the application: a delivery before it
    /// completes without yielding.
    horizon: Cell<u64>,
    task: Cell<TaskId>,
    /// The workload command name and the second of the timeline of every task.
    tasks: RefCell<Vec<(usize, usize)>>,
    /// The running task's command name.
    name: Cell<usize>,
    /// The running task's second of the timeline.
    second: Cell<usize>,
    /// Tasks to resume.
    wakes: RefCell<Wakes>,
    seen: RefCell<Vec<(NodeAddr, Option<NodeIdx>)>>,
    pub(super) counts: RefCell<Counts>,
}

/// What the network counted: in all, and per second of the timeline.
#[derive(Debug, Default)]
pub(super) struct Counts {
    /// In all.
    pub(super) tally: Tally,
    /// Per second of the timeline, what the commands issued in it sent.
    pub(super) seconds: Vec<SecondTally>,
}

/// Microseconds as the millisecond they fall in.
fn ms(us: u64) -> Timestamp {
    Timestamp(us / 1000)
}

impl<'a> Net<'a> {
    /// A network over `cluster` with `names` workload command names; `timed` as the module doc
    /// says; `socket_timeout_ms` is the model's.
    pub(super) fn new(
        cluster: &'a SimCluster,
        timing: &'a Timing,
        timed: bool,
        socket_timeout_ms: Option<u64>,
        names: usize,
    ) -> Net<'a> {
        Net {
            cluster,
            timing,
            timed,
            timeout_us: socket_timeout_ms.map(|t| t.saturating_mul(1000)),
            now: Cell::new(0),
            busy_until: Cell::new(0),
            cpu_total: Cell::new(0),
            horizon: Cell::new(u64::MAX),
            task: Cell::new(0),
            tasks: RefCell::new(Vec::new()),
            name: Cell::new(0),
            second: Cell::new(0),
            wakes: RefCell::new(Wakes::default()),
            seen: RefCell::new(Vec::new()),
            counts: RefCell::new(Counts {
                tally: Tally {
                    nodes: vec![NodeStats::default(); cluster.nodes().len()],
                    commands: vec![CommandStats::default(); names],
                    ..Tally::default()
                },
                seconds: Vec::new(),
            }),
        }
    }

    /// The virtual time now.
    pub fn now(&self) -> Timestamp {
        ms(self.now.get())
    }

    /// The nodes the cluster lists now, as `CLUSTER NODES` would (see
    /// [`SimCluster::members`]): a model that reads that answer takes them with the exchange that
    /// stands for it.
    pub fn cluster_members(&self) -> Vec<NodeAddr> {
        self.cluster.members(self.now()).cloned().collect()
    }

    /// The replicas a `CLUSTER SLOTS` answer now lists beside `owners` (see
    /// [`SimCluster::listed_replicas`]).
    pub fn listed_replicas(&self, owners: &[NodeAddr]) -> Vec<(NodeAddr, NodeAddr)> {
        (self.cluster.listed_replicas(self.now(), owners))
            .map(|(r, p)| (r.clone(), p.clone()))
            .collect()
    }

    /// The slot-node entries of a `CLUSTER SLOTS` answer now (see
    /// [`SimCluster::answer_entries`]): what a slot cache built from it walks.
    pub fn answer_entries(&self) -> u64 {
        self.cluster.answer_entries(self.now())
    }

    /// The virtual time now, in microseconds.
    pub fn now_us(&self) -> u64 {
        self.now.get()
    }

    /// Whether exchanges take time and commands overlap (see the module doc).
    pub fn timed(&self) -> bool {
        self.timed
    }

    /// The task running now.
    pub fn task(&self) -> TaskId {
        self.task.get()
    }

    /// Sets the clock, the running task and the horizon (the driver, before polling a task).
    pub(super) fn enter(&self, task: TaskId, now_us: u64, horizon_us: u64) {
        if self.task.get() != task {
            self.task.set(task);
            let (name, second) = self.tasks.borrow().get(task).copied().unwrap_or((0, 0));
            self.name.set(name);
            self.second.set(second);
        }
        self.now.set(now_us);
        self.horizon.set(horizon_us);
    }

    /// Moves the clock to `now_us` (a synchronous model's own clock, see
    /// [`Sequential`](super::Sequential)).
    pub(super) fn set_now(&self, now_us: u64) {
        self.now.set(now_us);
    }

    /// Records `task`'s command name and second of the timeline (the driver, when it issues the
    /// command).
    pub(super) fn set_task(&self, task: TaskId, name: usize, second: usize) {
        self.task.set(task);
        self.name.set(name);
        self.second.set(second);
        if self.timed {
            let mut tasks = self.tasks.borrow_mut();
            if tasks.len() <= task {
                tasks.resize(task + 1, (0, 0));
            }
            tasks[task] = (name, second);
        }
    }

    /// The counts of `second` (opened on first use; `None` past the timeline's end).
    fn second_mut(
        seconds: &mut Vec<SecondTally>,
        second: usize,
        names: usize,
    ) -> Option<&mut SecondTally> {
        if second >= SECONDS_MAX {
            return None;
        }
        if seconds.len() <= second {
            seconds.resize_with(second + 1, || SecondTally {
                calls: vec![0; names],
                moved_by: vec![0; names],
                ..SecondTally::default()
            });
        }
        seconds.get_mut(second)
    }

    /// The next task to resume and when, removed from the queue.
    pub(super) fn next_wake(&self) -> Option<(u64, TaskId)> {
        self.wakes.borrow_mut().pop()
    }

    /// When the next task resumes.
    pub(super) fn peek_wake(&self) -> Option<u64> {
        self.wakes.borrow().peek()
    }

    /// Whether what the current task waits for, due at `at_us`, is there now: at once when that
    /// is not later than now, or when nothing else happens before it (the clock then moves to
    /// it); otherwise the task is resumed at `at_us` and this is `false`.
    #[inline]
    pub(super) fn arrives_now(&self, at_us: u64) -> bool {
        if at_us <= self.now.get() {
            return true;
        }
        if !self.timed || at_us < self.horizon.get() {
            self.now.set(at_us);
            return true;
        }
        self.wake(self.task.get(), at_us);
        false
    }

    /// Resumes `task` at `at_us` (a lock released, a delivery due).
    pub fn wake(&self, task: TaskId, at_us: u64) {
        self.wakes.borrow_mut().push(at_us, task);
        if at_us < self.horizon.get() {
            self.horizon.set(at_us);
        }
    }

    /// Runs `task` to its end in the instant clock: resumes it whenever it waits (which the
    /// instant clock's futures never make it do) until it completes; `None` if it waits on
    /// nothing that will come.
    pub fn block_on<T>(&self, mut task: Pin<&mut dyn Future<Output = T>>) -> Option<T> {
        let task_id = self.task.get();
        loop {
            if let Poll::Ready(o) = task.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                return Some(o);
            }
            match self.next_wake() {
                Some((at, _)) => self.enter(task_id, at, u64::MAX),
                None => return None,
            }
        }
    }

    /// A future that completes at `at_us` (at once if that is not later than now).
    pub fn until(&self, at_us: u64) -> Until<'_, 'a> {
        Until {
            net: self,
            at_us,
            queued: false,
        }
    }

    /// The client's own work of `us` microseconds, holding its event loop (timed clock; the
    /// instant clock takes no time for it): the task goes on after it, and every other event of
    /// the client waits for its end.
    pub fn cpu(&self, us: u64) -> Until<'_, 'a> {
        if !self.timed {
            return self.until(self.now.get());
        }
        let end = self.now.get().max(self.busy_until.get()).saturating_add(us);
        self.busy_until.set(end);
        self.cpu_total.set(self.cpu_total.get().saturating_add(us));
        self.until(end)
    }

    /// The client's own work so far ([`Net::cpu`]), in microseconds.
    pub(super) fn cpu_total_us(&self) -> u64 {
        self.cpu_total.get()
    }

    /// Until when the client's event loop is held by its own work.
    pub(super) fn busy_until(&self) -> u64 {
        self.busy_until.get()
    }

    /// Waits `ms` milliseconds (a backoff, a sleep of the library).
    pub fn sleep(&self, ms: u64) -> Until<'_, 'a> {
        self.until(self.now.get().saturating_add(ms.saturating_mul(1000)))
    }

    /// A future that completes when another task [`wake`](Self::wake)s this one (a lock's
    /// waiter); in the instant clock it completes at once.
    pub fn parked(&self) -> Parked<'_, 'a> {
        Parked {
            net: self,
            first: true,
        }
    }

    fn index(&self, addr: &NodeAddr) -> Option<NodeIdx> {
        let mut seen = self.seen.borrow_mut();
        if let Some((_, i)) = seen.iter().find(|(a, _)| a == addr) {
            return *i;
        }
        let i = self.cluster.node_index(addr);
        if seen.len() < SEEN_MAX {
            seen.push((addr.clone(), i));
        }
        i
    }

    /// When an exchange sent now to a node that is silent until `end` is delivered, and whether
    /// it is then a timeout: the node answers when it resumes, unless `socket_timeout` runs out
    /// first.
    fn silent(&self, end: Timestamp, service_us: u64) -> (u64, bool) {
        let now = self.now.get();
        let half = u64::from(self.timing.rtt_us / 2);
        let answered = end.0.saturating_mul(1000).saturating_add(half + service_us);
        match self.timeout_us {
            Some(t) if now.saturating_add(t) < answered => (now.saturating_add(t), true),
            _ => (answered, false),
        }
    }

    fn service_us(&self, name: usize) -> u64 {
        u64::from(
            self.timing
                .service_us
                .get(name)
                .copied()
                .unwrap_or(self.timing.default_us),
        )
    }

    /// Sends the running task's command for `cmd` to `to` (after `ASKING` when `asking`): the
    /// node's answer, counted as the server counts it, delivered when the reply arrives.
    pub fn send(&self, to: &NodeAddr, cmd: Routed, asking: bool) -> Delivery<'_, 'a, Reply> {
        let d = self.send_to(self.index(to), cmd, asking, false);
        Delivery {
            until: d.until,
            value: d.value.map(|a| self.cluster.reply_of(a)),
        }
    }

    /// The cluster's number of the node at `addr` (`None`: no node there; a send to it is a
    /// connection error).
    pub fn node_index(&self, addr: &NodeAddr) -> Option<NodeIdx> {
        self.index(addr)
    }

    /// The address of the cluster's node `n`.
    pub fn addr(&self, n: NodeIdx) -> Option<&NodeAddr> {
        self.cluster.addr(n)
    }

    /// Whether someone closed the clients' connections of the cluster's node `n` after `since`
    /// (µs) and by `until` (µs): a connection to it open since then is closed
    /// ([`SimCluster::killed`]).
    #[inline]
    pub fn killed(&self, n: NodeIdx, since_us: u64, until_us: u64) -> bool {
        self.cluster.has_kills() && self.cluster.killed(n, ms(since_us), ms(until_us)).is_some()
    }

    /// Whether the recording shows anyone closing clients' connections at all.
    #[inline]
    pub fn has_kills(&self) -> bool {
        self.cluster.has_kills()
    }

    /// How long opening a connection takes before its first command: the TCP handshake and the
    /// client's `CLIENT SETINFO` round trip (0 in the instant clock).
    pub fn connect_us(&self) -> u64 {
        if self.timed {
            u64::from(self.timing.rtt_us) * CONNECT_ROUND_TRIPS
        } else {
            0
        }
    }

    /// When a command sent now goes out (timed clock): a new connection's handshake
    /// (`connect`), and ASKING, are round trips of their own first.
    fn start_us(&self, connect: bool, asking: bool) -> u64 {
        let opening = if connect { self.connect_us() } else { 0 };
        let asked = if asking {
            u64::from(self.timing.rtt_us)
        } else {
            0
        };
        self.now.get() + opening + asked
    }

    /// Whether a connection opened now to the cluster's node `node` would be refused (no node at
    /// its address, or the node refusing connections when the command would arrive): the timed
    /// clock's answer to [`send_to`](Self::send_to) with `connect` (and `asking`) would then be
    /// a connection error.
    pub fn refuses(&self, node: Option<NodeIdx>, asking: bool) -> bool {
        let Some(n) = node else {
            return true;
        };
        let arrive = self.start_us(true, asking) + u64::from(self.timing.rtt_us / 2);
        matches!(
            self.cluster.fault_until(ms(arrive), n),
            Some((FaultKind::ConnectionError, _))
        )
    }

    /// [`send`](Self::send) to the cluster's node `node` (from [`node_index`](Self::node_index)),
    /// the answer naming nodes by the cluster's numbers; `connect`: the connection opens first
    /// ([`connect_us`](Self::connect_us)).
    pub fn send_to(
        &self,
        node: Option<NodeIdx>,
        cmd: Routed,
        asking: bool,
        connect: bool,
    ) -> Delivery<'_, 'a, Answer> {
        let name = self.name.get();
        let now = self.now.get();
        let (answer, at) = if self.timed {
            let rtt = u64::from(self.timing.rtt_us);
            let start = self.start_us(connect, asking);
            let service = self.service_us(name);
            let arrive = start + rtt / 2;
            match node.and_then(|n| self.cluster.fault_until(ms(arrive), n)) {
                Some((FaultKind::Timeout, end)) => {
                    let (at, timed_out) = self.silent(end, service);
                    if timed_out {
                        (Answer::Timeout, at)
                    } else {
                        (self.cluster.answer_idx(end, node, cmd, asking), at)
                    }
                }
                _ => {
                    let answer = self.cluster.answer_idx(ms(arrive), node, cmd, asking);
                    let at = match answer {
                        Answer::ConnectionError => now + rtt,
                        _ => start + rtt + service,
                    };
                    (answer, at)
                }
            }
        } else {
            let answer = self.cluster.answer_idx(ms(now), node, cmd, asking);
            let wait = match answer {
                Answer::Timeout => self.timeout_us.unwrap_or(0),
                _ => 0,
            };
            (answer, now.saturating_add(wait))
        };
        self.count(node, name, answer);
        Delivery {
            until: self.until(at),
            value: Some(answer),
        }
    }

    /// Adds one exchange's answer to the tallies.
    fn count(&self, node: Option<NodeIdx>, name: usize, answer: Answer) {
        self.tally(node, name, answer, |x, by| *x += by);
    }

    /// Takes back the count of a reply the client never read: the connection it was coming on
    /// was closed while the command waited (a reset under commands in flight). What the real
    /// applications count are the replies their library reads, so an exchange whose reply was
    /// lost is not one of their calls, MOVED or not. The running task's own command.
    pub fn unread(&self, node: Option<NodeIdx>, answer: Answer) {
        self.tally(node, self.name.get(), answer, |x, by| {
            *x = x.saturating_sub(by);
        });
    }

    /// Applies `step` with each tally's share of one exchange's answer (0 or 1) to that tally;
    /// generic, so that adding (every exchange) costs no branch on the direction.
    #[inline]
    fn tally(
        &self,
        node: Option<NodeIdx>,
        name: usize,
        answer: Answer,
        step: impl Fn(&mut u64, u64),
    ) {
        let reached = u64::from(!matches!(answer, Answer::ConnectionError | Answer::Timeout));
        let moved = u64::from(matches!(answer, Answer::Moved { .. }));
        let ask = u64::from(matches!(answer, Answer::Ask { .. }));
        let ok = u64::from(answer == Answer::Ok);
        let mut counts = self.counts.borrow_mut();
        let Counts { tally, seconds } = &mut *counts;
        if let Some(n) = node.and_then(|n| tally.nodes.get_mut(n.index())) {
            step(&mut n.calls, reached);
            step(&mut n.failed, 1 - reached);
            step(&mut n.ok, ok);
            step(&mut n.moved, moved);
            step(&mut n.ask, ask);
        }
        if let Some(c) = tally.commands.get_mut(name) {
            step(&mut c.calls, reached);
            step(&mut c.moved, moved);
            step(&mut c.ask, ask);
        }
        step(&mut tally.moved, moved);
        step(&mut tally.ask, ask);
        let names = tally.commands.len();
        if let Some(s) = Self::second_mut(seconds, self.second.get(), names) {
            step(&mut s.moved, moved);
            step(&mut s.ask, ask);
            if let Some(c) = s.calls.get_mut(name) {
                step(c, reached);
            }
            if let Some(m) = s.moved_by.get_mut(name) {
                step(m, moved);
            }
        }
    }

    /// Sends `CLUSTER SLOTS` to `to`: owner ranges with addresses, or the failure, delivered when
    /// the reply arrives.
    pub fn cluster_slots(
        &self,
        to: &NodeAddr,
    ) -> Delivery<'_, 'a, Result<Vec<(SlotRange, NodeAddr)>, Reply>> {
        let d = self.cluster_slots_to(self.index(to), false);
        Delivery {
            until: d.until,
            value: d.value.map(|answer| {
                answer.map(|ranges| {
                    ranges
                        .iter()
                        .filter_map(|&(r, n)| Some((r, self.cluster.addr(n)?.clone())))
                        .collect()
                })
            }),
        }
    }

    /// [`cluster_slots`](Self::cluster_slots) of the cluster's node `node`, the owners by the
    /// cluster's numbers.
    pub fn cluster_slots_to(
        &self,
        node: Option<NodeIdx>,
        connect: bool,
    ) -> Delivery<'_, 'a, Result<&'a [(SlotRange, NodeIdx)], Reply>> {
        {
            let mut counts = self.counts.borrow_mut();
            let Counts { tally, seconds } = &mut *counts;
            tally.cluster_slots += 1;
            if let Some(n) = node.and_then(|n| tally.nodes.get_mut(n.index())) {
                n.cluster_slots += 1;
            }
            let names = tally.commands.len();
            if let Some(s) = Self::second_mut(seconds, self.second.get(), names) {
                s.cluster_slots += 1;
            }
        }
        let cluster: &'a SimCluster = self.cluster;
        let (answered, at) = self.keyless(node, connect);
        Delivery {
            until: self.until(at),
            value: Some(answered.and_then(|t| cluster.cluster_slots_idx(t, node))),
        }
    }

    /// A command without a key (`COMMAND`) to the cluster's node `node`: `Ok` or the failure,
    /// delivered when the reply arrives (not counted among the workload's commands).
    pub fn keyless_to(
        &self,
        node: Option<NodeIdx>,
        connect: bool,
    ) -> Delivery<'_, 'a, Result<(), Reply>> {
        let (answered, at) = self.keyless(node, connect);
        Delivery {
            until: self.until(at),
            value: Some(answered.map(|_| ())),
        }
    }

    /// When a keyless exchange sent now to `node` is answered (the moment the node's state is
    /// read) or how it fails, and when its reply arrives.
    fn keyless(&self, node: Option<NodeIdx>, connect: bool) -> (Result<Timestamp, Reply>, u64) {
        let cluster = self.cluster;
        let now = self.now.get();
        let Some(n) = node else {
            let rtt = if self.timed {
                u64::from(self.timing.rtt_us)
            } else {
                0
            };
            return (Err(Reply::ConnectionError), now + rtt);
        };
        if !self.timed {
            return match cluster.fault_until(ms(now), n) {
                Some((FaultKind::Timeout, _)) => (
                    Err(Reply::Timeout),
                    now.saturating_add(self.timeout_us.unwrap_or(0)),
                ),
                Some((FaultKind::ConnectionError, _)) => (Err(Reply::ConnectionError), now),
                None => (Ok(ms(now)), now),
            };
        }
        let rtt = u64::from(self.timing.rtt_us);
        let service = u64::from(self.timing.default_us);
        let start = now + if connect { self.connect_us() } else { 0 };
        let arrive = ms(start + rtt / 2);
        match cluster.fault_until(arrive, n) {
            Some((FaultKind::Timeout, end)) => {
                let (at, timed_out) = self.silent(end, service);
                if timed_out {
                    (Err(Reply::Timeout), at)
                } else {
                    (Ok(end), at)
                }
            }
            Some((FaultKind::ConnectionError, _)) => (Err(Reply::ConnectionError), now + rtt),
            None => (Ok(arrive), start + rtt + service),
        }
    }
}
