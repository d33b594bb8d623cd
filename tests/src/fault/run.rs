//! One fault's recording: a 3-master Redis cluster, its third node behind a [`FaultProxy`] (its
//! announced port is the proxy's, so the recorder polls it through it), `slotscope record` at a
//! 500 ms interval with a 300 ms timeout (the crowded node: the defaults, a 1 s interval and a
//! timeout of 4/5 of it, a 5,000-entry `CLIENT LIST` costing a debug build's recorder about
//! 500 ms, a release build's 130 ms, and the server tens of ms more on a busy machine); healthy
//! for a while, then the fault for a while, then healthy again; the recorder's resident memory
//! sampled throughout. Then the recording is judged.

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use slotscope_core::recording::{Discovery, GoneReason, Line};
use slotscope_core::{NodeAddr, Timestamp};

use crate::cluster::{Cluster, ClusterOptions};
use crate::collector::{Recorder, Recording};
use crate::fault::proxy::{FaultProxy, Mode};
use crate::fault::Fault;
use crate::kind::ServerKind;
use crate::memory::rss_kib;

/// The recorder's poll interval (the crowded node's: [`CROWDED_INTERVAL`]).
pub const INTERVAL: Duration = Duration::from_millis(500);

/// The poll interval with 5,000 connections on a node: the default.
pub const CROWDED_INTERVAL: Duration = Duration::from_secs(1);

pub(crate) fn interval_of(fault: Fault) -> Duration {
    if fault == Fault::ManyConnections {
        CROWDED_INTERVAL
    } else {
        INTERVAL
    }
}

/// How long each phase lasts: healthy, the fault, healthy again.
pub const PHASE: Duration = Duration::from_secs(5);

/// The password of the cluster of [`Fault::PasswordRotated`].
const PASSWORD: &str = "fault-test-secret";

/// How one fault went.
#[derive(Clone, Debug, Default)]
pub struct FaultOutcome {
    /// Poll rounds recorded.
    pub rounds: usize,
    /// The longest round, in ms.
    pub longest_round_ms: u64,
    /// The longest gap between two samples of a healthy node, in ms.
    pub healthy_gap_ms: u64,
    /// The faulty node's failures during the fault, by kind.
    pub failures: BTreeMap<String, usize>,
    /// How long after the fault ended the faulty node's first sample came, in ms.
    pub recovered_after_ms: Option<u64>,
    /// The recorder's resident memory when the fault began, at most during it and after, and at
    /// the end, in KiB.
    pub rss_kib: (u64, u64, u64),
    /// The faulty node's most connected clients in a sample (for the crowded node).
    pub most_clients: u64,
    /// Broken promises.
    pub problems: Vec<String>,
}

/// The wall clock as a recording's timestamp.
pub(crate) fn now() -> Timestamp {
    Timestamp(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    )
}

/// Sleeps `d`, sampling the recorder's memory every 250 ms; the largest sample.
pub(crate) fn watch(pid: u32, d: Duration) -> u64 {
    let end = Instant::now() + d;
    let mut most = 0;
    while Instant::now() < end {
        most = most.max(rss_kib(pid));
        std::thread::sleep(Duration::from_millis(250));
    }
    most
}

/// Records through `fault` (not a TLS one: [`crate::fault::tls`]) and judges the recording;
/// `kind` is the server.
pub fn run(fault: Fault, kind: ServerKind) -> Result<FaultOutcome, String> {
    let opts = if fault == Fault::PasswordRotated {
        ClusterOptions::with_password(PASSWORD)
    } else {
        ClusterOptions::default()
    };
    let cluster = Cluster::start(kind, 3, opts);
    let mut proxy = FaultProxy::start(cluster.node(2).port()).map_err(|e| e.to_string())?;
    let faulty = NodeAddr::new("127.0.0.1", proxy.port()).ok_or("an address")?;
    // The node announces the proxy's port: every node's topology then lists it there.
    let mut c2 = cluster.client(2);
    c2.cmd_ok(&[
        "CONFIG",
        "SET",
        "cluster-announce-port",
        &proxy.port().to_string(),
    ])
    .map_err(|e| format!("cluster-announce-port: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let nodes = cluster
            .client(0)
            .cmd_text(&["CLUSTER", "NODES"])
            .unwrap_or_default();
        if nodes.contains(&format!("127.0.0.1:{}@", proxy.port())) {
            break;
        }
        if Instant::now() > deadline {
            return Err("the seed never learned the proxied port".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let dir = tempfile::TempDir::new().map_err(|e| e.to_string())?;
    let out = dir.path().join("fault.jsonl");
    let seed = cluster.seed().to_string();
    let env: Vec<(&str, &str)> = if fault == Fault::PasswordRotated {
        vec![("SLOTSCOPE_PASSWORD", PASSWORD)]
    } else {
        Vec::new()
    };
    let interval = format!("{}ms", interval_of(fault).as_millis());
    let mut args = vec!["--seed", &seed, "--interval", &interval, "--quiet"];
    if fault != Fault::ManyConnections {
        args.extend(["--timeout", "300ms"]);
    }
    let rec = Recorder::start(&out, &args, &env);
    let pid = rec.pid();
    watch(pid, PHASE);
    let rss_before = rss_kib(pid);
    let fault_start = now();
    let mut crowd: Vec<TcpStream> = Vec::new();
    match fault {
        Fault::Partition => proxy.set(Mode::Partition),
        Fault::Silent => proxy.set(Mode::Silent),
        Fault::HalfThenClose => proxy.set(Mode::HalfThenClose),
        Fault::Slow => proxy.set(Mode::Slow),
        Fault::PasswordRotated => {
            c2.cmd_ok(&["CONFIG", "SET", "requirepass", "rotated-secret"])
                .map_err(|e| format!("requirepass: {e}"))?;
            // The recorder's open connection is logged in already: it must log in again.
            c2.cmd(&["CLIENT", "KILL", "TYPE", "normal"])
                .map_err(|e| format!("CLIENT KILL: {e}"))?;
        }
        Fault::TlsExpired | Fault::TlsWrongHost => {
            return Err(format!("{fault} is run on a TLS cluster (fault::tls)"));
        }
        Fault::ManyConnections => {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], cluster.node(2).port()));
            for _ in 0..5_000 {
                match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
                    Ok(s) => crowd.push(s),
                    Err(e) => return Err(format!("connection {}: {e}", crowd.len())),
                }
            }
        }
    }
    let rss_most = watch(pid, PHASE);
    let fault_end = now();
    match fault {
        Fault::PasswordRotated => {
            c2.cmd_ok(&["CONFIG", "SET", "requirepass", PASSWORD])
                .map_err(|e| format!("requirepass: {e}"))?;
        }
        Fault::ManyConnections => crowd.clear(),
        _ => proxy.set(Mode::Pass),
    }
    let (recording, mut outcome) = recover(rec, &out, rss_before, rss_most);
    judge(
        &recording,
        fault,
        &faulty,
        fault_start,
        fault_end,
        &mut outcome,
    );
    Ok(outcome)
}

/// The fault's end: the recorder watched for a phase more, stopped with SIGTERM and its
/// recording read back; the outcome so far (its memory, `before` the fault and at most `most`
/// during it, and how it ended).
pub(crate) fn recover(
    rec: Recorder,
    out: &Path,
    before: u64,
    most: u64,
) -> (Recording, FaultOutcome) {
    let pid = rec.pid();
    let most = most.max(watch(pid, PHASE));
    let end = rss_kib(pid);
    rec.terminate();
    let o = rec.wait(Duration::from_secs(30));
    let mut outcome = FaultOutcome {
        rss_kib: (before, most, end),
        ..FaultOutcome::default()
    };
    if !o.status.success() {
        outcome.problems.push(format!(
            "the recorder ended with {}: {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    (Recording::read(out), outcome)
}

/// Judges the recording of `fault` on node `faulty` between `start` and `end` into `o`.
pub(crate) fn judge(
    r: &Recording,
    fault: Fault,
    faulty: &NodeAddr,
    start: Timestamp,
    end: Timestamp,
    o: &mut FaultOutcome,
) {
    let interval = u64::try_from(interval_of(fault).as_millis()).unwrap_or(500);
    let mut samples: BTreeMap<NodeAddr, Vec<Timestamp>> = BTreeMap::new();
    for line in &r.lines {
        match line {
            Line::PollRound(p) => {
                o.rounds += 1;
                o.longest_round_ms = o.longest_round_ms.max(p.elapsed_ms);
            }
            Line::Info(s) => {
                samples.entry(s.node.addr.clone()).or_default().push(s.t);
                if s.node.addr == *faulty {
                    let clients = s.info.get_u64("clients", "connected_clients").unwrap_or(0);
                    o.most_clients = o.most_clients.max(clients);
                }
            }
            Line::PollFailed(f) if f.node.addr == *faulty && f.t >= start => {
                *o.failures.entry(format!("{:?}", f.kind)).or_default() += 1;
            }
            _ => {}
        }
    }
    if o.longest_round_ms > interval {
        o.problems.push(format!(
            "a round took {} ms, more than the {interval} ms interval",
            o.longest_round_ms
        ));
    }
    for (addr, times) in &samples {
        if addr == faulty {
            continue;
        }
        let gap = times
            .windows(2)
            .map(|w| w[1].millis_since(w[0]))
            .max()
            .unwrap_or(0);
        o.healthy_gap_ms = o.healthy_gap_ms.max(gap);
    }
    if samples.len() < 3 {
        o.problems.push(format!(
            "{} nodes sampled, not 3: {:?}",
            samples.len(),
            samples.keys()
        ));
    }
    // A healthy node's samples come every interval; one late by the round's jitter is fine.
    if o.healthy_gap_ms > interval * 3 / 2 + 100 {
        o.problems.push(format!(
            "a healthy node went {} ms without a sample",
            o.healthy_gap_ms
        ));
    }
    let expected = fault.recorded_as();
    let during: usize = o.failures.values().sum();
    if expected.is_empty() {
        if fault == Fault::ManyConnections && o.most_clients < 5_000 {
            o.problems.push(format!(
                "the crowded node's samples show at most {} clients",
                o.most_clients
            ));
        }
    } else if !expected
        .iter()
        .any(|k| o.failures.contains_key(&format!("{k:?}")))
    {
        o.problems.push(format!(
            "the node's failures during the fault are {:?}, none of {expected:?} ({during} in all)",
            o.failures
        ));
    }
    let allowed = fault.may_also_show();
    let unexpected: Vec<&String> = o
        .failures
        .keys()
        .filter(|k| {
            !expected
                .iter()
                .chain(allowed)
                .any(|e| format!("{e:?}") == **k)
        })
        .collect();
    if !unexpected.is_empty() {
        o.problems.push(format!(
            "failures of other kinds during the fault: {:?}",
            o.failures
        ));
    }
    // A fault that fails every poll for seconds: the node is recorded unreachable (after 3
    // failed polls), then recovered once it answers.
    if !expected.is_empty() {
        let gone = r.lines.iter().any(|l| {
            matches!(l, Line::NodeGone(g) if g.node.addr == *faulty
                && g.reason == GoneReason::Unreachable && g.t >= start)
        });
        let back = r.lines.iter().any(|l| {
            matches!(l, Line::NodeDiscovered(d) if d.node.addr == *faulty
                && d.via == Discovery::Recovered && d.t >= end)
        });
        if !gone || !back {
            o.problems.push(format!(
                "the node was {} recorded unreachable and {} recorded recovered",
                if gone { "" } else { "not" },
                if back { "" } else { "not" }
            ));
        }
    }
    let resumed = samples
        .get(faulty)
        .and_then(|t| t.iter().find(|t| **t > end))
        .map(|t| t.millis_since(end));
    o.recovered_after_ms = resumed;
    match resumed {
        Some(ms) if ms <= 3_000 => {}
        Some(ms) => o.problems.push(format!(
            "the node's samples resumed {ms} ms after the fault ended"
        )),
        None => o
            .problems
            .push("the node's samples never resumed after the fault".into()),
    }
    // Bounded: a peak while a 5,000-entry CLIENT LIST is parsed (each entry a map of its
    // fields), nothing kept once the fault is over.
    let peak = o.rss_kib.1.saturating_sub(o.rss_kib.0);
    let limit = if fault == Fault::ManyConnections {
        96
    } else {
        16
    } * 1024;
    if peak > limit {
        o.problems.push(format!(
            "the recorder's memory grew by {peak} KiB during the fault (at most {limit})"
        ));
    }
    // What the allocator keeps of that peak is not handed back at once.
    let kept = o.rss_kib.2.saturating_sub(o.rss_kib.0);
    let kept_limit = if fault == Fault::ManyConnections {
        48
    } else {
        16
    } * 1024;
    if kept > kept_limit {
        o.problems.push(format!(
            "the recorder kept {kept} KiB more after the fault than before it (at most {kept_limit})"
        ));
    }
}
