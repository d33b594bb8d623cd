//! `slotscope record`: discovers the cluster from one seed, polls every node concurrently each
//! interval, follows the topology (new nodes are polled from the next round on, nodes that leave are
//! recorded as gone), and writes everything to a sink.
//!
//! Each node has its own task and connection, and each poll its own timeout, so one slow or dead
//! node never delays the samples of the others: lines are written as replies arrive. Which nodes
//! are polled, and when one counts as gone, is decided by [`Membership`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use slotscope_core::client_delta::ClientListWriter;
use slotscope_core::recording::{
    End, EndReason, FailureKind, Header, InfoSample, Line, PollFailed, PollRound, RecordOptions,
    TopologySample,
};
use slotscope_core::topology::TopologyView;
use slotscope_core::NodeAddr;
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior};

use crate::node::connection::ConnectOptions;
use crate::progress::{Figures, Progress};
use crate::record::clock::now;
use crate::record::membership::{Change, Membership};
use crate::record::poll::{Poller, Sample, StepFailure};
use crate::store::sink::{what_failed, Salvaged, Sink};

/// What `record` needs.
#[derive(Clone, Debug)]
pub struct RecordConfig {
    /// Where discovery starts.
    pub seed: NodeAddr,
    /// Time between polls.
    pub interval: Duration,
    /// Time after which a node's poll is abandoned.
    pub timeout: Duration,
    /// Stop after this long; `None` runs until a signal.
    pub duration: Option<Duration>,
    /// How to connect and log in.
    pub connect: ConnectOptions,
    /// Take `CLIENT LIST` every this many polls.
    pub client_list_every: u32,
    /// Ask a node's whole topology at the latest every this many polls (sooner when its `CLUSTER
    /// INFO` says it changed; see [`crate::record::topology_watch`]).
    pub topology_every: u32,
    /// Consecutive failed polls after which a node is recorded as unreachable.
    pub gone_after: u32,
}

/// Why recording could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The seed could not be polled at start.
    #[error("cannot discover the cluster from {seed}: {reason}")]
    Seed {
        /// The seed address.
        seed: NodeAddr,
        /// Why.
        reason: String,
    },
    /// Writing the recording failed.
    #[error("writing the recording: {0}")]
    Write(#[from] std::io::Error),
    /// Writing the recording failed and recording stopped; the file was ended at its last
    /// complete round if it could be (`kept` rounds).
    #[error("{}", stopped(source, *kept))]
    Stopped {
        /// The write's error.
        source: std::io::Error,
        /// What became of the file (the current one of an always-on recording); `None` if it
        /// could not be ended (it is then read as cut short at its last flush).
        kept: Option<Salvaged>,
    },
}

fn stopped(source: &std::io::Error, kept: Option<Salvaged>) -> String {
    let what = what_failed(source);
    match kept {
        Some(Salvaged::Removed) => format!(
            "{what} ({source}): recording stopped; nothing of the file being started had \
             reached the disk, and it was removed (an always-on recording's earlier files are \
             complete)"
        ),
        Some(Salvaged::Ended(rounds)) => format!(
            "{what} ({source}): recording stopped; the file keeps its {rounds} complete rounds and \
             an end line saying it stopped on an error"
        ),
        None => format!(
            "{what} ({source}): recording stopped; the file keeps what reached the disk before, \
             without an end line (read as cut short)"
        ),
    }
}

/// What a finished recording holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordStats {
    /// Figures at the end.
    pub figures: Figures,
    /// Why it ended.
    pub reason: EndReason,
}

/// A polled node's task, the last topology it reported (recorded again only when it changes, and
/// carried forward over the polls that do not ask it) and its client list as the file has it
/// (later ones are written as changes to it).
struct NodeTask {
    /// One message per round: `true` asks the whole topology whatever `CLUSTER INFO` says.
    tx: mpsc::Sender<bool>,
    last_view: Option<TopologyView>,
    /// The next round asks the whole topology (the first round of a new file).
    ask_topology: bool,
    clients: ClientListWriter,
}

struct Report {
    addr: NodeAddr,
    sample: Sample,
}

fn spawn_node(
    addr: NodeAddr,
    cfg: &RecordConfig,
    reports: mpsc::Sender<Report>,
) -> mpsc::Sender<bool> {
    let (tx, mut rx) = mpsc::channel::<bool>(2);
    let mut poller = Poller::new(addr.clone(), cfg.connect.clone(), cfg.client_list_every)
        .with_topology_every(cfg.topology_every);
    let timeout = cfg.timeout;
    tokio::spawn(async move {
        while let Some(ask_topology) = rx.recv().await {
            if ask_topology {
                poller.ask_topology();
            }
            let sample = match tokio::time::timeout(timeout, poller.poll()).await {
                Ok(s) => s,
                Err(_) => {
                    poller.reset();
                    Sample {
                        t: Some(now()),
                        failures: vec![StepFailure {
                            step: "poll".into(),
                            kind: FailureKind::Timeout,
                            error: format!("no reply within {} ms", timeout.as_millis()),
                        }],
                        ..Sample::default()
                    }
                }
            };
            let report = Report {
                addr: poller.addr().clone(),
                sample,
            };
            if reports.send(report).await.is_err() {
                break;
            }
        }
    });
    tx
}

/// The header of a recording made with `cfg`.
pub fn header(cfg: &RecordConfig, started: slotscope_core::Timestamp) -> Header {
    Header {
        schema: slotscope_core::recording::SCHEMA_VERSION,
        collector: format!("slotscope {}", env!("CARGO_PKG_VERSION")),
        seed: cfg.seed.clone(),
        started,
        options: RecordOptions {
            interval_ms: millis(cfg.interval),
            timeout_ms: millis(cfg.timeout),
            duration_ms: cfg.duration.map(millis),
            tls: cfg.connect.tls.is_some(),
            user: cfg.connect.user.clone(),
            auth: cfg.connect.password.is_some(),
            client_list_every: cfg.client_list_every,
            topology_every: Some(cfg.topology_every),
        },
        source: None,
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Records until the duration passes or `stop` resolves (a signal). The sink is finished in
/// every case where writing still works; should a write fail (a full disk), the file is cut back
/// to its last complete round and ended there ([`Sink::salvage`]).
pub async fn record(
    cfg: RecordConfig,
    mut sink: Box<dyn Sink>,
    progress: &mut Progress,
    stop: impl std::future::Future<Output = ()>,
) -> Result<RecordStats, RecordError> {
    let mut figures = Figures::default();
    match rounds(cfg, &mut *sink, progress, stop, &mut figures).await {
        Ok(reason) => {
            sink.finish()?;
            Ok(RecordStats { figures, reason })
        }
        Err(RecordError::Write(source)) => Err(RecordError::Stopped {
            source,
            kept: sink.salvage(now(), EndReason::Error).ok(),
        }),
        Err(e) => Err(e),
    }
}

/// The recording itself: discovery, then poll rounds until the end, whose end line is written
/// and flushed (the caller completes the file).
async fn rounds(
    cfg: RecordConfig,
    sink: &mut dyn Sink,
    progress: &mut Progress,
    stop: impl std::future::Future<Output = ()>,
    figures: &mut Figures,
) -> Result<EndReason, RecordError> {
    tokio::pin!(stop);
    let started = now();
    // Discovery: one poll of the seed, outside the recording.
    let mut seed_poller = Poller::new(cfg.seed.clone(), cfg.connect.clone(), u32::MAX);
    let seed_sample =
        tokio::time::timeout(cfg.timeout.max(Duration::from_secs(2)), seed_poller.poll())
            .await
            .unwrap_or_else(|_| Sample {
                failures: vec![StepFailure {
                    step: "poll".into(),
                    kind: FailureKind::Timeout,
                    error: "no reply".into(),
                }],
                ..Sample::default()
            });
    drop(seed_poller);
    let Some(seed_view) = seed_sample.view else {
        let tls = cfg.connect.tls.is_some();
        let reason = seed_sample.failures.first().map_or_else(
            || "no topology in the reply".to_owned(),
            |f| {
                // The error text names its step already.
                if !tls && matches!(f.kind, FailureKind::Io | FailureKind::Timeout) {
                    format!("{} (if this is a TLS port, add --tls)", f.error)
                } else {
                    f.error.clone()
                }
            },
        );
        return Err(RecordError::Seed {
            seed: cfg.seed.clone(),
            reason,
        });
    };

    sink.write_line(&Line::Header(header(&cfg, started)))?;
    let (report_tx, mut report_rx) = mpsc::channel::<Report>(256);
    let mut nodes: BTreeMap<NodeAddr, NodeTask> = BTreeMap::new();
    let t0 = now();
    let (mut membership, initial) = Membership::start(
        &cfg.seed,
        cfg.connect.tls.is_some(),
        cfg.gone_after,
        &seed_view,
    );
    apply(&mut *sink, &cfg, &mut nodes, initial, t0, &report_tx)?;
    sink.flush()?;

    let deadline = cfg.duration.map(|d| Instant::now() + d);
    let mut ticker = tokio::time::interval(cfg.interval);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut round: u64 = 0;
    // The first round of the file being written: each file of an always-on recording numbers
    // its rounds from 0, as a recording of its own.
    let mut file_first_round: u64 = 0;
    let reason = 'rounds: loop {
        let tick = tokio::select! {
            t = ticker.tick() => t,
            () = &mut stop => break 'rounds EndReason::Signal,
        };
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break EndReason::Duration;
        }
        let round_start = now();
        let round_clock = Instant::now();
        let polled: Vec<NodeAddr> = nodes.keys().cloned().collect();
        let mut pending: BTreeSet<NodeAddr> = BTreeSet::new();
        for addr in &polled {
            let Some(task) = nodes.get_mut(addr) else {
                continue;
            };
            if task.tx.try_send(task.ask_topology).is_ok() {
                task.ask_topology = false;
                pending.insert(addr.clone());
            } else {
                // Still busy with the previous poll: that counts as a timeout of this one.
                let node = membership.node_ref(addr);
                sink.write_line(&Line::PollFailed(PollFailed {
                    t: now(),
                    node,
                    step: "poll".into(),
                    kind: FailureKind::Timeout,
                    error: "previous poll still running".into(),
                }))?;
                figures.failures += 1;
            }
        }
        // Every node's poll ends by its own timeout; the round never outlasts the interval, so
        // the next tick is never missed because of a slow node.
        let round_deadline = Instant::now()
            + (cfg.timeout + Duration::from_millis(50)).min(cfg.interval.mul_f64(0.95));
        let mut views: Vec<(NodeAddr, TopologyView)> = Vec::new();
        let (mut ok, mut failed) = (0u32, 0u32);
        let mut interrupted = false;
        while !pending.is_empty() {
            let report = tokio::select! {
                r = report_rx.recv() => r,
                _ = tokio::time::sleep_until(round_deadline) => None,
                _ = &mut stop => { interrupted = true; None }
            };
            let Some(report) = report else { break };
            if !pending.remove(&report.addr) {
                continue;
            }
            let Some(task) = nodes.get_mut(&report.addr) else {
                continue;
            };
            let good = write_sample(
                &mut *sink,
                &report.addr,
                task,
                &mut membership,
                report.sample,
                &mut views,
            )?;
            if good {
                ok += 1;
                figures.samples += 1;
            } else {
                failed += 1;
                figures.failures += 1;
            }
            if let Some(change) = membership.polled(&report.addr, good) {
                sink.write_line(&change.line(now()))?;
            }
        }
        // Starts polling nodes that appeared in any view; stops polling nodes that left.
        let changes = membership.topology(&views);
        apply(&mut *sink, &cfg, &mut nodes, changes, now(), &report_tx)?;
        sink.flush()?;
        // Written last, so its time covers all the round's work: a round that took the whole
        // interval or more (the next tick is then skipped, the ticks stay on their grid) says so.
        sink.write_line(&Line::PollRound(PollRound {
            t: round_start,
            elapsed_ms: millis(round_clock.elapsed()),
            round: round - file_first_round,
            nodes: u32::try_from(polled.len()).unwrap_or(u32::MAX),
            ok,
            failed,
        }))?;
        round += 1;
        // A period that ends with the recording's duration is not begun again: no file holds
        // only a header and an end line.
        let last_round = deadline.is_some_and(|d| tick + cfg.interval >= d);
        if sink.period_over(now()) && !interrupted && !last_round {
            // The period of an always-on recording ended: this file is complete, the next one
            // starts with its own header and the state now; its first round asks every node's
            // topology again (and INFO, as every round does), so it stands alone.
            sink.write_line(&Line::End(End {
                t: now(),
                reason: EndReason::Rotated,
                rounds: round - file_first_round,
            }))?;
            let t = now();
            sink.next_period(t)?;
            sink.write_line(&Line::Header(header(&cfg, t)))?;
            for line in membership.restate(&cfg.seed, t) {
                sink.write_line(&line)?;
            }
            for task in nodes.values_mut() {
                task.last_view = None;
                task.ask_topology = true;
                task.clients.clear();
            }
            file_first_round = round;
            sink.flush()?;
        }
        figures.rounds = round;
        figures.nodes = membership.len();
        figures.down = membership.unreachable();
        figures.bytes = sink.bytes_written();
        progress.update(figures);
        if interrupted {
            break EndReason::Signal;
        }
    };
    sink.write_line(&Line::End(End {
        t: now(),
        reason,
        rounds: round - file_first_round,
    }))?;
    drop(nodes);
    sink.flush()?;
    Ok(reason)
}

/// Writes the lines of one node's sample; returns whether the poll succeeded.
fn write_sample(
    sink: &mut dyn Sink,
    addr: &NodeAddr,
    task: &mut NodeTask,
    membership: &mut Membership,
    sample: Sample,
    views: &mut Vec<(NodeAddr, TopologyView)>,
) -> std::io::Result<bool> {
    let t = sample.t.unwrap_or_else(now);
    let good = sample.is_ok();
    if let Some(me) = sample.view.as_ref().and_then(|v| v.myself.clone()) {
        membership.identify(addr, me);
    }
    let node = membership.node_ref(addr);
    for f in &sample.failures {
        sink.write_line(&Line::PollFailed(PollFailed {
            t,
            node: node.clone(),
            step: f.step.clone(),
            kind: f.kind,
            error: f.error.clone(),
        }))?;
    }
    if let Some(view) = sample.view {
        if task.last_view.as_ref() != Some(&view) {
            sink.write_line(&Line::Topology(TopologySample {
                t,
                node: node.clone(),
                view: view.clone(),
            }))?;
        }
        views.push((addr.clone(), view.clone()));
        task.last_view = Some(view);
    } else if let Some(view) = task.last_view.as_ref().filter(|_| good) {
        // Not asked this poll: the node answered, and holds the view it last reported.
        views.push((addr.clone(), view.clone()));
    }
    if let Some(info) = sample.info {
        sink.write_line(&Line::Info(InfoSample {
            t,
            node: node.clone(),
            latency_us: sample.latency_us,
            info,
        }))?;
    }
    if let Some(clients) = sample.clients {
        sink.write_line(&task.clients.line_for(t, node, clients))?;
    }
    Ok(good)
}

/// Records membership changes at `t` and acts on them: starts polling the nodes that joined, stops
/// polling those that left.
fn apply(
    sink: &mut dyn Sink,
    cfg: &RecordConfig,
    nodes: &mut BTreeMap<NodeAddr, NodeTask>,
    changes: Vec<Change>,
    t: slotscope_core::Timestamp,
    reports: &mpsc::Sender<Report>,
) -> std::io::Result<()> {
    for change in changes {
        sink.write_line(&change.line(t))?;
        match change {
            Change::Joined { node, .. } => {
                let tx = spawn_node(node.addr.clone(), cfg, reports.clone());
                nodes.insert(
                    node.addr,
                    NodeTask {
                        tx,
                        last_view: None,
                        ask_topology: false,
                        clients: ClientListWriter::default(),
                    },
                );
            }
            Change::Left(node) => {
                nodes.remove(&node.addr);
            }
            Change::Unreachable(_) | Change::Recovered(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use slotscope_core::Timestamp;

    use super::*;
    use crate::node::scripted_server::{old_server_reply, scripted_server};

    /// Keeps the lines; the `slow`-th flush takes `pause` (a disk that stalls once).
    struct SlowSink {
        lines: Arc<Mutex<Vec<Line>>>,
        flushes: u32,
        slow: u32,
        pause: Duration,
    }

    impl Sink for SlowSink {
        fn write_line(&mut self, line: &Line) -> std::io::Result<()> {
            self.lines.lock().unwrap().push(line.clone());
            Ok(())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.flushes += 1;
            if self.flushes == self.slow {
                std::thread::sleep(self.pause);
            }
            Ok(())
        }
        fn finish(self: Box<Self>) -> std::io::Result<()> {
            Ok(())
        }
        fn bytes_written(&self) -> u64 {
            0
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_round_that_overruns_says_so_and_the_rounds_stay_on_their_grid() {
        let (seed, _) = scripted_server(old_server_reply).await;
        let interval = Duration::from_millis(200);
        let cfg = RecordConfig {
            seed,
            interval,
            timeout: Duration::from_millis(100),
            duration: Some(Duration::from_millis(1500)),
            connect: ConnectOptions {
                tls: None,
                user: None,
                password: None,
            },
            client_list_every: 1,
            topology_every: 10,
            gone_after: 3,
        };
        let lines = Arc::new(Mutex::new(Vec::new()));
        // Flush 1 is at the start, flush n + 2 ends round n: round 2 stalls for 1.5 intervals.
        let sink = SlowSink {
            lines: lines.clone(),
            flushes: 0,
            slow: 4,
            pause: Duration::from_millis(300),
        };
        let stats = record(
            cfg,
            Box::new(sink),
            &mut Progress::disabled(),
            std::future::pending(),
        )
        .await
        .unwrap();
        assert_eq!(stats.reason, EndReason::Duration);
        let rounds: Vec<PollRound> = lines
            .lock()
            .unwrap()
            .iter()
            .filter_map(|l| match l {
                Line::PollRound(r) => Some(r.clone()),
                _ => None,
            })
            .collect();
        let elapsed: Vec<u64> = rounds.iter().map(|r| r.elapsed_ms).collect();
        assert!(
            elapsed[2] >= 300,
            "the stalled round is recorded with its length: {elapsed:?}"
        );
        assert!(
            elapsed.iter().enumerate().all(|(i, &e)| i == 2 || e < 200),
            "{elapsed:?}"
        );
        // The tick the stall swallowed fires late, once, when the stall ends; the next ones are
        // back on the grid of the first: no drift.
        let t: Vec<Timestamp> = rounds.iter().map(|r| r.t).collect();
        let offsets: Vec<u64> = t.iter().map(|x| x.millis_since(t[0])).collect();
        let on_grid = |ms: u64| ms.abs_diff((ms + 100) / 200 * 200) <= 40;
        assert!(offsets[3] >= 600, "late after the stall: {offsets:?}");
        assert!(
            offsets[..3]
                .iter()
                .chain(&offsets[4..])
                .all(|&ms| on_grid(ms)),
            "off the grid: {offsets:?}"
        );
        assert!(offsets.len() >= 7, "{offsets:?}");
        let numbers: Vec<u64> = rounds.iter().map(|r| r.round).collect();
        assert_eq!(numbers, (0..rounds.len() as u64).collect::<Vec<_>>());
    }
}
