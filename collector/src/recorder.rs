//! `slotscope record`: discovers the cluster from one seed, polls every node concurrently each
//! interval, follows the topology (new nodes are polled from the next round on, nodes that leave are
//! recorded as gone), and writes everything to a sink.
//!
//! Each node has its own task and connection, and each poll its own timeout, so one slow or dead
//! node never delays the samples of the others: lines are written as replies arrive.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use slotscope_core::recording::{
    ClientListSample, Discovery, End, EndReason, FailureKind, GoneReason, Header, InfoSample, Line,
    NodeDiscovered, NodeGone, PollFailed, PollRound, RecordOptions, TopologySample,
};
use slotscope_core::topology::TopologyView;
use slotscope_core::{NodeAddr, NodeId, NodeRef};
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior};

use crate::clock::now;
use crate::connection::ConnectOptions;
use crate::poll::{Poller, Sample, StepFailure};
use crate::progress::{Figures, Progress};
use crate::sink::Sink;

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
}

/// What a finished recording holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordStats {
    /// Figures at the end.
    pub figures: Figures,
    /// Why it ended.
    pub reason: EndReason,
}

struct NodeTask {
    tx: mpsc::Sender<u64>,
    id: Option<NodeId>,
    failures_in_row: u32,
    unreachable: bool,
    last_view: Option<TopologyView>,
}

struct Report {
    addr: NodeAddr,
    sample: Sample,
}

fn spawn_node(
    addr: NodeAddr,
    cfg: &RecordConfig,
    reports: mpsc::Sender<Report>,
) -> mpsc::Sender<u64> {
    let (tx, mut rx) = mpsc::channel::<u64>(2);
    let mut poller = Poller::new(addr.clone(), cfg.connect.clone(), cfg.client_list_every);
    let timeout = cfg.timeout;
    tokio::spawn(async move {
        while rx.recv().await.is_some() {
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
        },
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Records until the duration passes or `stop` resolves (a signal). The sink is finished in
/// every case where writing still works.
pub async fn record(
    cfg: RecordConfig,
    mut sink: Box<dyn Sink>,
    progress: &mut Progress,
    stop: impl std::future::Future<Output = ()>,
) -> Result<RecordStats, RecordError> {
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
    let mut figures = Figures::default();
    let t0 = now();
    let addressing = Addressing::new(&cfg, &seed_view);
    let mut initial = addressing.targets(&seed_view);
    if initial.is_empty() {
        initial.push((cfg.seed.clone(), None));
    }
    for (addr, id) in initial {
        let via = if addr == cfg.seed {
            Discovery::Seed
        } else {
            Discovery::Topology {
                from: cfg.seed.clone(),
            }
        };
        sink.write_line(&Line::NodeDiscovered(NodeDiscovered {
            t: t0,
            node: NodeRef {
                addr: addr.clone(),
                id: id.clone(),
            },
            via,
        }))?;
        let tx = spawn_node(addr.clone(), &cfg, report_tx.clone());
        nodes.insert(
            addr,
            NodeTask {
                tx,
                id,
                failures_in_row: 0,
                unreachable: false,
                last_view: None,
            },
        );
    }
    sink.flush()?;

    let deadline = cfg.duration.map(|d| Instant::now() + d);
    let mut ticker = tokio::time::interval(cfg.interval);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut round: u64 = 0;
    let reason = 'rounds: loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = &mut stop => break 'rounds EndReason::Signal,
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break EndReason::Duration;
        }
        let round_start = now();
        let round_clock = Instant::now();
        let polled: Vec<NodeAddr> = nodes.keys().cloned().collect();
        let mut pending: BTreeSet<NodeAddr> = BTreeSet::new();
        for addr in &polled {
            let task = &nodes[addr];
            if task.tx.try_send(round).is_ok() {
                pending.insert(addr.clone());
            } else {
                // Still busy with the previous poll: that counts as a timeout of this one.
                let node = node_ref(addr, task);
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
            let good = write_sample(&mut *sink, &report.addr, task, report.sample, &mut views)?;
            if good {
                ok += 1;
                figures.samples += 1;
            } else {
                failed += 1;
                figures.failures += 1;
            }
            if let Some(line) = reachability(&report.addr, task, good, cfg.gone_after) {
                sink.write_line(&line)?;
            }
        }
        sink.write_line(&Line::PollRound(PollRound {
            t: round_start,
            elapsed_ms: millis(round_clock.elapsed()),
            round,
            nodes: u32::try_from(polled.len()).unwrap_or(u32::MAX),
            ok,
            failed,
        }))?;
        round += 1;

        follow_topology(
            &mut *sink,
            &cfg,
            &addressing,
            &mut nodes,
            &views,
            &report_tx,
        )?;
        sink.flush()?;
        figures.rounds = round;
        figures.nodes = nodes.len();
        figures.down = nodes.values().filter(|n| n.unreachable).count();
        figures.bytes = sink.bytes_written();
        progress.update(&figures);
        if interrupted {
            break EndReason::Signal;
        }
    };
    sink.write_line(&Line::End(End {
        t: now(),
        reason,
        rounds: round,
    }))?;
    drop(nodes);
    sink.finish()?;
    Ok(RecordStats { figures, reason })
}

fn node_ref(addr: &NodeAddr, task: &NodeTask) -> NodeRef {
    NodeRef {
        addr: addr.clone(),
        id: task.id.clone(),
    }
}

/// Writes the lines of one node's sample; returns whether the poll succeeded.
fn write_sample(
    sink: &mut dyn Sink,
    addr: &NodeAddr,
    task: &mut NodeTask,
    sample: Sample,
    views: &mut Vec<(NodeAddr, TopologyView)>,
) -> std::io::Result<bool> {
    let t = sample.t.unwrap_or_else(now);
    let good = sample.is_ok();
    if let Some(me) = sample.view.as_ref().and_then(|v| v.myself.clone()) {
        task.id = Some(me);
    }
    let node = node_ref(addr, task);
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
        sink.write_line(&Line::ClientList(ClientListSample { t, node, clients }))?;
    }
    Ok(good)
}

/// Tracks consecutive failures; returns the line to write when a node becomes unreachable or
/// recovers.
fn reachability(addr: &NodeAddr, task: &mut NodeTask, good: bool, gone_after: u32) -> Option<Line> {
    if good {
        task.failures_in_row = 0;
        if task.unreachable {
            task.unreachable = false;
            return Some(Line::NodeDiscovered(NodeDiscovered {
                t: now(),
                node: node_ref(addr, task),
                via: Discovery::Recovered,
            }));
        }
        return None;
    }
    task.failures_in_row += 1;
    if !task.unreachable && task.failures_in_row >= gone_after.max(1) {
        task.unreachable = true;
        return Some(Line::NodeGone(NodeGone {
            t: now(),
            node: node_ref(addr, task),
            reason: GoneReason::Unreachable,
        }));
    }
    None
}

/// Starts polling nodes that appeared in any view; stops polling nodes that no other node lists.
fn follow_topology(
    sink: &mut dyn Sink,
    cfg: &RecordConfig,
    addressing: &Addressing,
    nodes: &mut BTreeMap<NodeAddr, NodeTask>,
    views: &[(NodeAddr, TopologyView)],
    reports: &mpsc::Sender<Report>,
) -> std::io::Result<()> {
    let t = now();
    let listed: Vec<(&NodeAddr, Vec<Target>)> = views
        .iter()
        .map(|(reporter, view)| (reporter, addressing.targets(view)))
        .collect();
    for (reporter, targets) in &listed {
        for (addr, id) in targets {
            if nodes.contains_key(addr) {
                continue;
            }
            sink.write_line(&Line::NodeDiscovered(NodeDiscovered {
                t,
                node: NodeRef {
                    addr: addr.clone(),
                    id: id.clone(),
                },
                via: Discovery::Topology {
                    from: (*reporter).clone(),
                },
            }))?;
            let tx = spawn_node(addr.clone(), cfg, reports.clone());
            nodes.insert(
                addr.clone(),
                NodeTask {
                    tx,
                    id: id.clone(),
                    failures_in_row: 0,
                    unreachable: false,
                    last_view: None,
                },
            );
        }
    }
    // A node has left when other nodes answered and none of them lists it any more.
    let gone: Vec<NodeAddr> = nodes
        .keys()
        .filter(|addr| {
            let mut others = listed.iter().filter(|(r, _)| r != addr).peekable();
            others.peek().is_some()
                && others.all(|(_, targets)| targets.iter().all(|(a, _)| a != *addr))
        })
        .cloned()
        .collect();
    for addr in gone {
        if let Some(task) = nodes.remove(&addr) {
            sink.write_line(&Line::NodeGone(NodeGone {
                t,
                node: node_ref(&addr, &task),
                reason: GoneReason::LeftTopology,
            }))?;
        }
    }
    Ok(())
}

/// A node to poll: its address and, when known, its id.
type Target = (NodeAddr, Option<NodeId>);

/// Which address each node of a view is polled at.
///
/// A node is polled at the address the cluster reports for it (its TLS port with `--tls`), except
/// the node that answered the seed when the seed is an IP address it does not report: that node is
/// polled at the seed, which is known to work (NAT, `cluster-announce-*`, or a TLS port the
/// cluster does not announce, as with `tls-cluster no`).
struct Addressing {
    tls: bool,
    seed_alias: Option<(NodeId, NodeAddr)>,
}

impl Addressing {
    fn new(cfg: &RecordConfig, seed_view: &TopologyView) -> Addressing {
        let tls = cfg.connect.tls.is_some();
        let seed_is_ip = cfg.seed.host().parse::<std::net::IpAddr>().is_ok();
        let seed_alias = seed_view
            .myself
            .as_ref()
            .filter(|_| seed_is_ip)
            .and_then(|me| seed_view.node(me))
            .filter(|n| n.poll_addr(tls).as_ref() != Some(&cfg.seed))
            .map(|n| (n.id.clone(), cfg.seed.clone()));
        Addressing { tls, seed_alias }
    }

    /// The pollable nodes of `view` with the address to poll each at, sorted by address.
    fn targets(&self, view: &TopologyView) -> Vec<Target> {
        let mut out: Vec<Target> = view
            .nodes()
            .filter(|n| !n.has_flag("handshake") && !n.has_flag("noaddr"))
            .filter_map(|n| {
                let addr = match &self.seed_alias {
                    Some((id, seed)) if *id == n.id => Some(seed.clone()),
                    _ => n.poll_addr(self.tls),
                }?;
                Some((addr, Some(n.id.clone())))
            })
            .collect();
        out.sort();
        out.dedup_by(|a, b| a.0 == b.0);
        out
    }
}
