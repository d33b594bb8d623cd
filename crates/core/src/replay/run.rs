//! The replay driver.
//!
//! The driver is a small event loop over virtual time: every application command is a task (an
//! [`Execution`] of the model) that the driver polls when it is issued and again whenever what it
//! waits for is due (a reply, a lock handed over). [`Net`] keeps the clock and the queue of tasks
//! to resume. Two application shapes ([`Shape`]):
//!
//! - **lanes**: `concurrency` lanes; a command goes to a free lane and runs to its end when
//!   issued (the instant clock: only timeouts and sleeps take time), its lane busy meanwhile; a
//!   command scheduled while every lane waits is not issued.
//! - **in flight**: each command is sent at its time as a task, at most `N` in flight; exchanges
//!   take their round trip and service time, replies land in time order across tasks. While `N`
//!   are in flight the application waits; when a place frees it sends the latest command whose
//!   time has come and skips the ones before it (no burst after a stall).

use std::collections::BTreeMap;
use std::task::{Context, Poll, Waker};

use super::client::{ClientModel, Execution, Started};
use super::client_state::ClientState;
use super::cluster::SimCluster;
use super::net::{Counts, Net, TaskId};
use super::outcome::{ClientError, Outcome};
use super::report::{Outcomes, ReplayReport, Second, MAX_SECONDS, OUTCOME_BUCKET_MS};
use super::{Routed, Shape, Workload};
use crate::float;
use crate::time::Timestamp;

/// [`OUTCOME_BUCKET_MS`] buckets in a second of the timeline.
const BUCKETS_A_SECOND: usize = (1000 / OUTCOME_BUCKET_MS) as usize;

/// What the driver keeps while the tasks run: the report being filled in.
struct Recorder<'w> {
    workload: &'w Workload,
    report: ReplayReport,
    errors: BTreeMap<ClientError, u64>,
    cmd_errors: Vec<BTreeMap<ClientError, u64>>,
    start: Timestamp,
    prev: ClientState,
    wedged_since: Option<Timestamp>,
    /// Seconds of the timeline whose snapshot is set.
    snapped: usize,
    /// Issued, succeeded per command name.
    issued: Vec<(u64, u64)>,
    /// Commands that succeeded, raised, per bucket of their end ([`OUTCOME_BUCKET_MS`]).
    ended: Vec<(u64, u64)>,
}

impl<'w> Recorder<'w> {
    fn new(workload: &'w Workload, client: &dyn ClientModel) -> Recorder<'w> {
        let names = workload.names.len();
        Recorder {
            workload,
            report: ReplayReport {
                model: client.name().to_owned(),
                ..ReplayReport::default()
            },
            errors: BTreeMap::new(),
            cmd_errors: vec![BTreeMap::new(); names],
            start: workload.commands.first().map_or(Timestamp(0), |c| c.t),
            prev: client.state(),
            wedged_since: None,
            snapped: 0,
            ended: Vec::new(),
            issued: vec![(0, 0); names],
        }
    }

    /// The second of the timeline `t` falls in, opening it (and the ones before) with what the
    /// client held at the end of the seconds before.
    fn second(&mut self, t: Timestamp, client: &dyn ClientModel) -> usize {
        let second = usize::try_from(t.millis_since(self.start) / 1000).unwrap_or(usize::MAX);
        if self.report.timeline.len() <= second && second < MAX_SECONDS {
            let first = self.report.timeline.len();
            let names = self.workload.names.len();
            let start = self.start;
            self.report
                .timeline
                .extend((first..=second).map(|s| Second {
                    t: Timestamp(start.0.saturating_add(u64::try_from(s).unwrap_or(0) * 1000)),
                    calls_by_command: vec![0; names],
                    moved_by_command: vec![0; names],
                    ..Second::default()
                }));
            let snap = client.snapshot();
            for s in &mut self.report.timeline[self.snapped..second] {
                s.set_snapshot(snap);
            }
            self.snapped = second;
        }
        second
    }

    /// A command of `name` was issued in `second`.
    fn issued(&mut self, name: usize, second: usize) {
        self.report.commands += 1;
        self.issued[name].0 += 1;
        if let Some(s) = self.report.timeline.get_mut(second) {
            s.commands += 1;
        }
    }

    /// A command of `name` issued in `second` ended with `outcome` at `ended`; `t` is the
    /// moment the client's state is read as of (the issue time in lanes, else `ended`).
    fn done(
        &mut self,
        name: usize,
        second: usize,
        outcome: Outcome,
        (t, ended): (Timestamp, Timestamp),
        client: &dyn ClientModel,
    ) {
        let state = client.state();
        let ok = outcome == Outcome::Ok;
        match outcome {
            Outcome::Ok => {
                self.issued[name].1 += 1;
                self.report.succeeded += 1;
            }
            Outcome::Failed(class) => {
                self.report.failed += 1;
                *self.errors.entry(class).or_default() += 1;
                *self.cmd_errors[name].entry(class).or_default() += 1;
            }
        }
        let end = usize::try_from(ended.millis_since(self.start) / OUTCOME_BUCKET_MS)
            .unwrap_or(usize::MAX);
        if end < MAX_SECONDS * BUCKETS_A_SECOND {
            if self.ended.len() <= end {
                self.ended.resize(end + 1, (0, 0));
            }
            self.ended[end].0 += u64::from(ok);
            self.ended[end].1 += u64::from(!ok);
        }
        if let Some(s) = self.report.timeline.get_mut(second) {
            s.ok += u64::from(ok);
            s.errors += u64::from(!ok);
            s.full_reinits += state.full_reinits - self.prev.full_reinits;
            s.new_connections += state.new_connections - self.prev.new_connections;
            s.startup_nodes = state.startup_nodes;
            s.wedged = state.wedged;
        }
        match (state.wedged, self.wedged_since) {
            (true, None) => self.wedged_since = Some(t),
            (false, Some(_)) => self.wedged_since = None,
            _ => {}
        }
        self.prev = state;
    }

    /// The report, with the network's counts and the client's end state.
    fn finish(
        mut self,
        net: &Net<'_>,
        cluster: &SimCluster,
        client: &dyn ClientModel,
    ) -> ReplayReport {
        let snap = client.snapshot();
        for s in &mut self.report.timeline[self.snapped..] {
            s.set_snapshot(snap);
        }
        // As many quarters as the timeline has seconds, the last ones empty when nothing ended.
        self.ended
            .resize(self.report.timeline.len() * BUCKETS_A_SECOND, (0, 0));
        for (s, quarter) in self
            .report
            .timeline
            .iter_mut()
            .zip(self.ended.chunks(BUCKETS_A_SECOND))
        {
            s.ended_ok = quarter.iter().map(|q| q.0).sum();
            s.ended_errors = quarter.iter().map(|q| q.1).sum();
        }
        self.report.outcomes = Outcomes {
            bucket_ms: OUTCOME_BUCKET_MS,
            ok: self.ended.iter().map(|q| q.0).collect(),
            failed: self.ended.iter().map(|q| q.1).collect(),
        };
        let Counts { tally, seconds } = net.counts.take();
        for (second, counts) in seconds.into_iter().enumerate() {
            if let Some(s) = self.report.timeline.get_mut(second) {
                s.moved = counts.moved;
                s.ask = counts.ask;
                s.cluster_slots_calls = counts.cluster_slots;
                s.calls_by_command = counts.calls;
                s.moved_by_command = counts.moved_by;
            }
        }
        let mut report = self.report;
        report.held = snap;
        let state = client.state();
        report.wedged = state.wedged;
        report.wedged_since = self.wedged_since;
        report.moved = tally.moved;
        report.ask = tally.ask;
        report.full_reinits = state.full_reinits;
        report.cluster_slots_calls = state.cluster_slots_calls;
        report.new_connections = state.new_connections;
        report.startup_nodes = state.startup_nodes;
        report.client_cpu_ms = net.cpu_total_us() as f64 / 1000.0;
        report.errors = by_name(&self.errors);
        for (e, n) in &self.errors {
            *report.failures.entry(e.class).or_default() += n;
        }
        for (i, mut c) in tally.commands.into_iter().enumerate() {
            (c.issued, c.succeeded) = self.issued[i];
            c.moved_share = float::ratio(c.moved, c.calls);
            c.errors = by_name(&self.cmd_errors[i]);
            let name = &self.workload.names[i];
            report.moved_share.insert(name.clone(), c.moved_share);
            report.per_command.insert(name.clone(), c);
        }
        report.nodes = cluster
            .nodes()
            .iter()
            .zip(tally.nodes)
            .map(|(a, s)| (a.to_string(), s))
            .collect();
        report
    }
}

/// Error counts by the library's name (errors of one name and different classes together).
fn by_name(errors: &BTreeMap<ClientError, u64>) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for (e, n) in errors {
        *out.entry(e.name.to_owned()).or_default() += n;
    }
    out
}

/// A command of the workload as the driver issues it: its routing, name index and time (µs).
fn command(workload: &Workload, i: usize) -> Option<(Routed, usize, Timestamp)> {
    let wc = workload.commands.get(i)?;
    let slot = *workload
        .key_slots
        .get(usize::try_from(wc.key).unwrap_or(usize::MAX))?;
    let name = usize::from(wc.name);
    (name < workload.names.len()).then_some((Routed { slot, key: wc.key }, name, wc.t))
}

fn micros(t: Timestamp) -> u64 {
    t.0.saturating_mul(1000)
}

/// A command in flight: a model's task, or the outcome a model decided when it started, which
/// the application has at `at_us` (at its wake then, as the task's `Until` would give it).
enum Task<'a> {
    Running(Execution<'a>),
    At { outcome: Outcome, at_us: u64 },
}

/// Polls `task` once.
fn poll(task: &mut Execution<'_>) -> Poll<Outcome> {
    task.as_mut().poll(&mut Context::from_waker(Waker::noop()))
}

/// Runs `workload` against `cluster` through `client` and reports what the client did (see the
/// module doc for the two application shapes).
pub fn replay(
    cluster: &SimCluster,
    workload: &Workload,
    client: &mut dyn ClientModel,
) -> ReplayReport {
    let timed = matches!(workload.shape, Shape::InFlight(_));
    if !timed {
        client.set_concurrency(workload.concurrency.max(1));
    }
    let client: &dyn ClientModel = client;
    let net = Net::new(
        cluster,
        &workload.timing,
        timed,
        client.socket_timeout_ms(),
        workload.names.len(),
    );
    let mut rec = Recorder::new(workload, client);
    match workload.shape {
        Shape::Lanes => {
            rec.report.concurrency = workload.concurrency.max(1);
            run_lanes(&net, workload, client, &mut rec);
        }
        Shape::InFlight(cap) => {
            let cap = cap.max(1);
            rec.report.concurrency = cap;
            rec.report.in_flight = Some(cap);
            let peak = run_in_flight(&net, workload, client, &mut rec, cap);
            rec.report.peak_in_flight = Some(peak);
        }
    }
    rec.finish(&net, cluster, client)
}

/// The lanes shape: each command runs to its end when issued, on a free lane.
fn run_lanes(net: &Net<'_>, workload: &Workload, client: &dyn ClientModel, rec: &mut Recorder<'_>) {
    let lanes = usize::try_from(workload.concurrency.max(1)).unwrap_or(1);
    let mut busy_until = vec![0_u64; lanes];
    for i in 0..workload.commands.len() {
        let Some((routed, name, t)) = command(workload, i) else {
            continue;
        };
        let t_us = micros(t);
        let Some(lane) = busy_until.iter().position(|&b| b <= t_us) else {
            // Every lane still waits on a silent node: the application issues nothing now.
            rec.report.skipped_while_waiting += 1;
            continue;
        };
        let second = rec.second(t, client);
        rec.issued(name, second);
        net.enter(0, t_us, u64::MAX);
        net.set_task(0, name, second);
        let outcome = client.execute_instant(routed, net);
        // The command took the time the client waited (timeouts, sleeps): its lane is busy.
        busy_until[lane] = net.now_us();
        rec.done(name, second, outcome, (t, net.now()), client);
    }
}

/// The in-flight shape: commands as tasks, at most `cap` at once. Returns the peak in flight.
fn run_in_flight<'a>(
    net: &'a Net<'_>,
    workload: &Workload,
    client: &'a dyn ClientModel,
    rec: &mut Recorder<'_>,
    cap: u32,
) -> u32 {
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    // Running tasks by id: the execution (or the outcome it has at its wake), its command name
    // and second.
    let mut tasks: Vec<Option<(Task<'a>, usize, usize)>> = Vec::new();
    let mut free: Vec<TaskId> = Vec::new();
    let mut in_flight = 0_usize;
    let mut peak = 0_usize;
    let n = workload.commands.len();
    let mut next = 0_usize;
    // When a place last became free after all were taken: a command due before it waited for it.
    let mut room_since = 0_u64;
    loop {
        let issue_at = (in_flight < cap && next < n).then(|| micros(workload.commands[next].t));
        let wake_at = net.peek_wake();
        let issue = match (issue_at, wake_at) {
            (Some(i), Some(w)) => i <= w,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if issue {
            // The application sends at the command's time (later while the client's own work
            // holds the loop: then the commands due meanwhile go out at once). Having waited for
            // a place, it sends the latest command whose time has come and skips the ones before.
            let due = issue_at.unwrap_or(0);
            let now = net.now_us().max(due).max(net.busy_until());
            let mut last = next;
            if due < room_since {
                while last + 1 < n && micros(workload.commands[last + 1].t) <= now {
                    last += 1;
                }
            }
            rec.report.skipped_while_waiting += u64::try_from(last - next).unwrap_or(0);
            let i = last;
            next = last + 1;
            let Some((routed, name, t)) = command(workload, i) else {
                continue;
            };
            let id = free.pop().unwrap_or_else(|| {
                tasks.push(None);
                tasks.len() - 1
            });
            let second = rec.second(t, client);
            rec.issued(name, second);
            in_flight += 1;
            peak = peak.max(in_flight);
            let horizon = horizon(net, workload, next, in_flight < cap);
            net.enter(id, now, horizon);
            net.set_task(id, name, second);
            // The outcome now; else the task waits in its place.
            let ready = match client.start(routed, net) {
                Started::Running(mut task) => match poll(&mut task) {
                    Poll::Ready(outcome) => Some(outcome),
                    Poll::Pending => {
                        tasks[id] = Some((Task::Running(task), name, second));
                        None
                    }
                },
                // As its task would on its first poll: the outcome now, or at its wake.
                Started::At { outcome, at_us } => {
                    if net.arrives_now(at_us) {
                        Some(outcome)
                    } else {
                        tasks[id] = Some((Task::At { outcome, at_us }, name, second));
                        None
                    }
                }
            };
            if let Some(outcome) = ready {
                if in_flight == cap {
                    room_since = net.now_us();
                }
                in_flight -= 1;
                free.push(id);
                rec.done(name, second, outcome, (net.now(), net.now()), client);
            }
            continue;
        }
        let Some((at, id)) = net.next_wake() else {
            break;
        };
        let Some(slot) = tasks.get_mut(id) else {
            continue;
        };
        let Some((task, name, second)) = slot.as_mut() else {
            continue;
        };
        let (name, second) = (*name, *second);
        let horizon = horizon(net, workload, next, in_flight < cap);
        net.enter(id, at.max(net.busy_until()), horizon);
        let ready = match task {
            Task::Running(task) => poll(task),
            // Not before its moment (a wake meant for an earlier task of the same id).
            Task::At { outcome, at_us } if *at_us <= net.now_us() => Poll::Ready(*outcome),
            Task::At { .. } => Poll::Pending,
        };
        if let Poll::Ready(outcome) = ready {
            *slot = None;
            if in_flight == cap {
                room_since = net.now_us();
            }
            in_flight -= 1;
            free.push(id);
            rec.done(name, second, outcome, (net.now(), net.now()), client);
        }
    }
    u32::try_from(peak).unwrap_or(u32::MAX)
}

/// The next moment something else happens: a task due, or (with a place free) the next command.
fn horizon(net: &Net<'_>, workload: &Workload, next: usize, room: bool) -> u64 {
    let issue = if room {
        workload
            .commands
            .get(next)
            .map_or(u64::MAX, |c| micros(c.t))
    } else {
        u64::MAX
    };
    net.peek_wake().unwrap_or(u64::MAX).min(issue)
}
