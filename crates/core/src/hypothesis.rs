//! Hypotheses: variants of a client (model × configuration × faults) replayed against one
//! recording and ranked by how well each reproduces what the recording shows.
//!
//! The evidence ([`Evidence`]) comes from the recording's [`Metrics`]: the MOVED share of the
//! business commands, cluster-wide `MOVED` per second, new connections per second, `CLUSTER
//! SLOTS`/`SHARDS` calls per second (the collector's own polls already taken out by
//! [`Metrics`]) and whether business traffic ended at about zero (what a wedged client looks
//! like). Each variant's [`ReplayReport`] is read into the same units ([`Prediction`]), every
//! metric gets an agreement in `0..=1` and the total is their mean.
//!
//! Deterministic: the same recording, variants and seed always give the same ranking (ties keep
//! the order of [`standard_variants`]).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::float;
use crate::metrics::{is_business_command, ms_to_secs, CommandDelta, Metrics};
use crate::replay::{
    model, replay, FaultKind, FaultWindow, ModelOptions, ReplayError, ReplayReport, Shape,
    SimCluster, Timing, Workload, WorkloadSpec,
};
use crate::time::{TimeSpan, Timestamp};

/// Business traffic in the last part of a recording below this share of its mean rate looks
/// like a client that stopped (wedged).
pub const WEDGED_TAIL_SHARE: f64 = 0.05;

/// Rates below this many per second count as this many when comparing (so 0 against 0.01/s is
/// not a 100 % error).
pub const RATE_FLOOR: f64 = 0.1;

/// The tail of a recording judged for "traffic ended": its last tenth, at least 10 s.
fn tail_ms(span_ms: u64) -> u64 {
    (span_ms / 10).max(10_000).min(span_ms / 2)
}

/// What the recording shows, in the units a replay is compared in.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// The business command with most attempts (the one the workload replays), if any.
    pub command: Option<String>,
    /// Rejected ÷ (calls + rejected) of each business command over the recording.
    pub moved_share_by_command: BTreeMap<String, f64>,
    /// The same share over all business commands together (the one compared).
    pub moved_share: f64,
    /// Attempts (calls + rejected) of each business command over the recording: the workload
    /// mix a replay of it draws from.
    pub mix: BTreeMap<String, u64>,
    /// `MOVED` errors per second, all nodes.
    pub moved_per_sec: f64,
    /// Connections accepted per second, all nodes.
    pub new_connections_per_sec: f64,
    /// `CLUSTER SLOTS` + `CLUSTER SHARDS` calls per second by clients, all nodes.
    pub cluster_slots_per_sec: f64,
    /// Business traffic ended at about zero.
    pub traffic_ended: bool,
    /// Seconds the `INFO` intervals cover (first sample to last, any node).
    pub secs: f64,
}

impl Evidence {
    /// The evidence of a recording's metrics.
    pub fn from_metrics(metrics: &Metrics) -> Evidence {
        let span = metrics
            .nodes
            .iter()
            .flat_map(|n| n.intervals.iter().map(|i| i.span))
            .reduce(|a, b| TimeSpan::new(a.start.min(b.start), a.end.max(b.end)));
        let Some(span) = span else {
            return Evidence::default();
        };
        let secs = ms_to_secs(span.millis().max(1));
        let tail_start = Timestamp(span.end.0.saturating_sub(tail_ms(span.millis())));
        let mut per_cmd: BTreeMap<String, CommandDelta> = BTreeMap::new();
        let (mut moved, mut conns, mut slots) = (0u64, 0u64, 0u64);
        let (mut business, mut tail_business) = (0u64, 0u64);
        for node in &metrics.nodes {
            for i in &node.intervals {
                for (c, d) in &i.commands {
                    if is_business_command(c) {
                        let e = per_cmd.entry(c.clone()).or_default();
                        e.calls += d.calls;
                        e.rejected += d.rejected;
                    }
                }
                moved += i.error("MOVED");
                conns += i.connections_received;
                slots += i.command("cluster|slots").calls + i.command("cluster|shards").calls;
                let b = i.business().calls;
                business += b;
                if i.span.start >= tail_start {
                    tail_business += b;
                }
            }
        }
        let tail_secs = ms_to_secs(span.end.millis_since(tail_start).max(1));
        let share = |d: &CommandDelta| float::ratio(d.rejected, d.attempts());
        let (calls, rejected) = per_cmd
            .values()
            .fold((0, 0), |(c, r), d| (c + d.calls, r + d.rejected));
        Evidence {
            command: per_cmd
                .iter()
                .max_by(|a, b| a.1.attempts().cmp(&b.1.attempts()).then(b.0.cmp(a.0)))
                .map(|(c, _)| c.clone()),
            moved_share_by_command: per_cmd.iter().map(|(c, d)| (c.clone(), share(d))).collect(),
            moved_share: float::ratio(rejected, calls + rejected),
            mix: per_cmd
                .iter()
                .map(|(c, d)| (c.clone(), d.attempts()))
                .filter(|(_, n)| *n > 0)
                .collect(),
            moved_per_sec: float::from_u64(moved) / secs,
            new_connections_per_sec: float::from_u64(conns) / secs,
            cluster_slots_per_sec: float::from_u64(slots) / secs,
            traffic_ended: ended(
                float::from_u64(business) / secs,
                float::from_u64(tail_business) / tail_secs,
            ),
            secs,
        }
    }
}

fn ended(mean_rate: f64, tail_rate: f64) -> bool {
    mean_rate > 0.0 && tail_rate < WEDGED_TAIL_SHARE * mean_rate
}

/// What one replay predicts, in the units of [`Evidence`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Prediction {
    /// MOVED share of the workload's command.
    pub moved_share: f64,
    /// `MOVED` replies per second.
    pub moved_per_sec: f64,
    /// Connections opened per second.
    pub new_connections_per_sec: f64,
    /// `CLUSTER SLOTS` calls per second.
    pub cluster_slots_per_sec: f64,
    /// Successful commands ended at about zero.
    pub traffic_ended: bool,
}

impl Prediction {
    /// Reads a replay's report over `secs` seconds.
    pub fn from_report(r: &ReplayReport, secs: f64) -> Prediction {
        let secs = if secs > 0.0 { secs } else { 1.0 };
        let n = r.timeline.len();
        let tail = (n / 10).max(10).min(n / 2);
        let ok: u64 = r.timeline.iter().map(|s| s.ok).sum();
        let tail_ok: u64 = r.timeline[n - tail..].iter().map(|s| s.ok).sum();
        let per = |k: usize, v: u64| {
            float::from_u64(v) / float::from_u64(u64::try_from(k.max(1)).unwrap_or(1))
        };
        Prediction {
            moved_share: r.moved_share.values().next().copied().unwrap_or(0.0),
            moved_per_sec: float::from_u64(r.moved) / secs,
            new_connections_per_sec: float::from_u64(r.new_connections) / secs,
            cluster_slots_per_sec: float::from_u64(r.cluster_slots_calls) / secs,
            traffic_ended: tail > 0 && ended(per(n, ok), per(tail, tail_ok)),
        }
    }
}

/// A value compared: a number or a yes/no.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A rate or a share.
    Number(f64),
    /// A yes/no.
    Flag(bool),
}

/// One metric of one variant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricScore {
    /// What the recording shows.
    pub observed: Value,
    /// What the replay predicts.
    pub predicted: Value,
    /// `0..=1`, 1 for a perfect match.
    pub agreement: f64,
}

/// The metrics compared, in display order.
pub const METRICS: &[&str] = &[
    "moved_share",
    "moved_per_sec",
    "new_connections_per_sec",
    "cluster_slots_per_sec",
    "traffic_ended",
];

/// Agreement of two rates: 1 − relative error (against the larger of the two and
/// [`RATE_FLOOR`]), capped at 0.
pub fn rate_agreement(observed: f64, predicted: f64) -> f64 {
    let scale = observed.abs().max(predicted.abs()).max(RATE_FLOOR);
    (1.0 - (predicted - observed).abs() / scale).clamp(0.0, 1.0)
}

/// Agreement of two shares (`0..=1`): 1 − their absolute difference.
pub fn share_agreement(observed: f64, predicted: f64) -> f64 {
    (1.0 - (predicted - observed).abs()).clamp(0.0, 1.0)
}

/// Per-metric agreements of a prediction with the evidence (keys: [`METRICS`]). The workload
/// stands for all business traffic (its rate is the total business rate), so its MOVED share is
/// compared with the share over all business commands.
pub fn compare(e: &Evidence, p: &Prediction) -> BTreeMap<String, MetricScore> {
    let num = |o: f64, p: f64, agreement: f64| MetricScore {
        observed: Value::Number(o),
        predicted: Value::Number(p),
        agreement,
    };
    let share = e.moved_share;
    let rate = |o: f64, p: f64| num(o, p, rate_agreement(o, p));
    [
        (
            "moved_share",
            num(share, p.moved_share, share_agreement(share, p.moved_share)),
        ),
        ("moved_per_sec", rate(e.moved_per_sec, p.moved_per_sec)),
        (
            "new_connections_per_sec",
            rate(e.new_connections_per_sec, p.new_connections_per_sec),
        ),
        (
            "cluster_slots_per_sec",
            rate(e.cluster_slots_per_sec, p.cluster_slots_per_sec),
        ),
        (
            "traffic_ended",
            MetricScore {
                observed: Value::Flag(e.traffic_ended),
                predicted: Value::Flag(p.traffic_ended),
                agreement: if e.traffic_ended == p.traffic_ended {
                    1.0
                } else {
                    0.0
                },
            },
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// Which node failures a variant replays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Faults {
    /// The recording's: poll timeouts and connection errors as fault windows.
    Recorded,
    /// None: would it have happened without the failures the recording shows?
    Cleared,
    /// The recording's and one more: a failure the poller may have missed.
    Added(FaultWindow),
}

impl Faults {
    /// `recorded`, `none` or e.g. `+timeout 10.0.0.1:6379 2.0s at +20.0s` (the time from
    /// `origin`, the recording's start).
    pub fn label(&self, origin: Timestamp) -> String {
        match self {
            Faults::Recorded => "recorded".into(),
            Faults::Cleared => "none".into(),
            Faults::Added(w) => format!(
                "+{} {} {:.1}s at +{:.1}s",
                match w.kind {
                    FaultKind::Timeout => "timeout",
                    FaultKind::ConnectionError => "connection error",
                },
                w.node,
                ms_to_secs(w.span.millis()),
                ms_to_secs(w.span.start.millis_since(origin)),
            ),
        }
    }

    /// `cluster` with these faults.
    fn apply(&self, cluster: &SimCluster) -> SimCluster {
        match self {
            Faults::Recorded => cluster.clone(),
            Faults::Cleared => cluster.with_faults(&[]),
            Faults::Added(w) => {
                let mut all = cluster.faults();
                all.push(w.clone());
                cluster.with_faults(&all)
            }
        }
    }
}

/// A client variant: a model, its options and the node failures it meets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The model name.
    pub model: String,
    /// `key=value` options (see [`ModelOptions::set`]).
    pub config: BTreeMap<String, String>,
    /// The failures replayed.
    pub faults: Faults,
}

impl Variant {
    /// A variant of `model` with `config`, meeting the recorded failures.
    pub fn new(model: &str, config: &[(&str, String)]) -> Variant {
        Variant {
            model: model.to_owned(),
            config: config
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
            faults: Faults::Recorded,
        }
    }

    /// The same variant meeting `faults`.
    #[must_use]
    pub fn with_faults(mut self, faults: Faults) -> Variant {
        self.faults = faults;
        self
    }

    /// `model`, then ` key=value` for each option, then ` faults=…` unless recorded (times from
    /// `origin`).
    pub fn label(&self, origin: Timestamp) -> String {
        let mut s = self.model.clone();
        for (k, v) in &self.config {
            s.push_str(&format!(" {k}={v}"));
        }
        if self.faults != Faults::Recorded {
            s.push_str(&format!(" faults={}", self.faults.label(origin)));
        }
        s
    }
}

/// How long the missed stall of [`standard_variants`] lasts.
pub const MISSED_STALL_MS: u64 = 2_000;

/// The standard set for `cluster`: `redis-py@5.0.0` and `redis-py@8.0.0` each plain, with
/// `address_remap` to each node, with `reinitialize_steps=0` and `=1`; then the fault axis for
/// both: without the recorded failures when there are any, else with a missed
/// [`MISSED_STALL_MS`] timeout of the seed node at the first slot move; then the other
/// libraries with their defaults (Lettuce also with every adaptive refresh trigger on); then
/// `ideal`.
pub fn standard_variants(cluster: &SimCluster) -> Vec<Variant> {
    let nodes = cluster.nodes();
    let mut v = Vec::new();
    let fault = if !cluster.faults().is_empty() {
        Some(Faults::Cleared)
    } else {
        let seed = cluster.seed().or_else(|| nodes.first());
        seed.zip(cluster.changes().first()).map(|(node, &t)| {
            Faults::Added(FaultWindow {
                node: node.clone(),
                span: TimeSpan::new(t, Timestamp(t.0.saturating_add(MISSED_STALL_MS))),
                kind: FaultKind::Timeout,
            })
        })
    };
    for m in ["redis-py@5.0.0", "redis-py@8.0.0"] {
        v.push(Variant::new(m, &[]));
        for n in nodes {
            v.push(Variant::new(m, &[("address_remap", n.to_string())]));
        }
        for steps in ["0", "1"] {
            v.push(Variant::new(m, &[("reinitialize_steps", steps.to_owned())]));
        }
        if let Some(f) = &fault {
            v.push(Variant::new(m, &[]).with_faults(f.clone()));
        }
    }
    for m in [
        "redis-rs@1.8.1",
        "go-redis@9.8.0",
        "lettuce@6.3.2",
        "jedis@5.1.0",
    ] {
        v.push(Variant::new(m, &[]));
    }
    v.push(Variant::new(
        "lettuce@6.3.2",
        &[("enableAllAdaptiveRefreshTriggers", "true".to_owned())],
    ));
    v.push(Variant::new("ideal", &[]));
    v
}

/// One ranked variant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranked {
    /// The model name.
    pub model: String,
    /// Its options.
    pub config: BTreeMap<String, String>,
    /// The failures replayed (see [`Faults::label`]).
    pub faults: String,
    /// Mean agreement over [`METRICS`], `0..=1`.
    pub score: f64,
    /// Per metric.
    pub metrics: BTreeMap<String, MetricScore>,
}

/// Workload parameters shared by every variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HypothesisSpec {
    /// Commands per second.
    pub rate_per_sec: u32,
    /// Distinct keys.
    pub keys: u32,
    /// Seed of the workload (the cluster's migration coin is set by its builder).
    pub seed: u64,
    /// Commands in flight at most.
    pub concurrency: u32,
    /// `socket_timeout` of the redis-py variants that do not set their own, in milliseconds.
    /// redis-py leaves it unset (a request waits for as long as the node is silent); a replay
    /// without any wait issues every scheduled command into a stall, which no real client does.
    pub redis_py_socket_timeout_ms: Option<u64>,
    /// The span the workload runs over (`None`: the cluster's whole span). Predicted rates are
    /// per second of this span.
    pub window: Option<TimeSpan>,
    /// How the application issues commands: `concurrency` lanes, or tasks with a cap on
    /// commands in flight.
    pub shape: Shape,
    /// How long exchanges take: the round trip, and service times by command name.
    pub timing: ExchangeTimes,
}

/// Exchange times by command name (the workload's names are known only once its mix is drawn).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExchangeTimes {
    /// The round trip in microseconds (`None`: [`Timing::default`]'s).
    pub rtt_us: Option<u32>,
    /// Service time in microseconds of each command that has one.
    pub service_us: BTreeMap<String, u32>,
    /// Service time of the others (`None`: [`Timing::default`]'s).
    pub default_us: Option<u32>,
}

impl ExchangeTimes {
    /// The [`Timing`] of a workload of `names`.
    pub fn timing(&self, names: &[String]) -> Timing {
        let base = Timing::default();
        let default_us = self.default_us.unwrap_or(base.default_us);
        Timing {
            rtt_us: self.rtt_us.unwrap_or(base.rtt_us),
            service_us: names
                .iter()
                .map(|n| self.service_us.get(n).copied().unwrap_or(default_us))
                .collect(),
            default_us,
        }
    }
}

/// All hypotheses of one recording, best first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hypotheses {
    /// The command replayed.
    pub command: String,
    /// Commands per second replayed.
    pub rate_per_sec: u32,
    /// The span the workload ran over.
    pub window: TimeSpan,
    /// What the recording shows.
    pub evidence: Evidence,
    /// The variants, best first.
    pub variants: Vec<Ranked>,
}

/// Replays every variant against `cluster` and ranks them against `evidence`. The workload
/// spans `spec.window` (default: the cluster's span) with the evidence's command mix (`zadd` if
/// none).
pub fn rank(
    cluster: &SimCluster,
    evidence: &Evidence,
    variants: &[Variant],
    spec: &HypothesisSpec,
) -> Result<Hypotheses, ReplayError> {
    rank_with_progress(cluster, evidence, variants, spec, &mut |_, _| {})
}

/// [`rank`], calling `progress(i, variant)` before replaying the `i`-th variant (from 0).
pub fn rank_with_progress(
    cluster: &SimCluster,
    evidence: &Evidence,
    variants: &[Variant],
    spec: &HypothesisSpec,
    progress: &mut dyn FnMut(usize, &Variant),
) -> Result<Hypotheses, ReplayError> {
    let span = spec
        .window
        .or_else(|| cluster.span())
        .filter(|s| s.millis() > 0)
        .ok_or_else(|| ReplayError::BadWorkload("the recording holds no time span".into()))?;
    let seed_addr = cluster
        .seed()
        .or_else(|| cluster.nodes().first())
        .cloned()
        .ok_or_else(|| ReplayError::BadWorkload("the recording holds no node".into()))?;
    let command = evidence.command.clone().unwrap_or_else(|| "zadd".into());
    let workload = Workload::generate(&WorkloadSpec {
        start: span.start,
        duration_ms: span.millis(),
        rate_per_sec: spec.rate_per_sec,
        keys: spec.keys,
        key_prefix: "key".into(),
        command: command.clone(),
        seed: spec.seed,
    })?
    .with_mix(
        &evidence
            .mix
            .iter()
            .map(|(c, n)| (c.clone(), *n))
            .collect::<Vec<_>>(),
        spec.seed,
    )
    .with_concurrency(spec.concurrency);
    let workload = match spec.shape {
        Shape::Lanes => workload,
        Shape::InFlight(n) => workload.with_in_flight(n),
    };
    let timing = spec.timing.timing(&workload.names);
    let workload = workload.with_timing(timing);
    let secs = ms_to_secs(span.millis());
    // Fault labels count from the recording's start, whatever the window.
    let origin = cluster.span().map_or(span.start, |s| s.start);
    let mut ranked = Vec::with_capacity(variants.len());
    for (i, v) in variants.iter().enumerate() {
        progress(i, v);
        let mut opts = ModelOptions::new(seed_addr.clone());
        for (k, val) in &v.config {
            opts.set(k, val)?;
        }
        if v.model.starts_with("redis-py@") && !v.config.contains_key("socket_timeout") {
            opts.socket_timeout_ms = spec.redis_py_socket_timeout_ms;
        }
        let mut client = model(&v.model, opts)?;
        let report = replay(&v.faults.apply(cluster), &workload, client.as_mut());
        let metrics = compare(evidence, &Prediction::from_report(&report, secs));
        let score = metrics.values().map(|m| m.agreement).sum::<f64>()
            / float::from_u64(u64::try_from(metrics.len().max(1)).unwrap_or(1));
        ranked.push(Ranked {
            model: v.model.clone(),
            config: v.config.clone(),
            faults: v.faults.label(origin),
            score,
            metrics,
        });
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(Hypotheses {
        command,
        rate_per_sec: spec.rate_per_sec,
        window: span,
        evidence: evidence.clone(),
        variants: ranked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchange_times_follow_the_workload_names() {
        let times = ExchangeTimes {
            rtt_us: Some(900),
            service_us: [("get".to_owned(), 4)].into_iter().collect(),
            default_us: Some(30),
        };
        let t = times.timing(&["zadd".to_owned(), "get".to_owned()]);
        assert_eq!(
            (t.rtt_us, t.service_us, t.default_us),
            (900, vec![30, 4], 30)
        );
        let t = ExchangeTimes::default().timing(&["get".to_owned()]);
        let base = Timing::default();
        assert_eq!(t.rtt_us, base.rtt_us);
        assert_eq!(t.service_us, vec![base.default_us]);
    }

    #[test]
    fn agreements_are_symmetric_and_bounded() {
        assert_eq!(rate_agreement(0.0, 0.0), 1.0);
        assert_eq!(rate_agreement(10.0, 5.0), 0.5);
        assert_eq!(rate_agreement(5.0, 10.0), 0.5);
        assert!((rate_agreement(0.0, 0.01) - 0.9).abs() < 1e-9);
        assert_eq!(rate_agreement(100.0, 0.0), 0.0);
        assert!((share_agreement(0.4, 0.3) - 0.9).abs() < 1e-9);
    }

    use crate::node::NodeAddr;

    fn two_nodes(fault: bool) -> SimCluster {
        use crate::replay::SimClusterBuilder;
        use crate::slot::SlotRange;
        let (a, b): (NodeAddr, NodeAddr) =
            ("10.0.0.1:1".parse().unwrap(), "10.0.0.2:1".parse().unwrap());
        let all = SlotRange::try_from((0, 16383)).unwrap();
        let (lo, hi) = (
            SlotRange::try_from((0, 8191)).unwrap(),
            SlotRange::try_from((8192, 16383)).unwrap(),
        );
        let mut builder = SimClusterBuilder::new();
        builder.layout(Timestamp(0), &[(all, a.clone())], &[]);
        builder.add_node(&b);
        builder.layout(Timestamp(20_000), &[(lo, a.clone()), (hi, b)], &[]);
        if fault {
            builder.fault(FaultWindow {
                node: a,
                span: TimeSpan::new(Timestamp(10_000), Timestamp(12_000)),
                kind: FaultKind::Timeout,
            });
        }
        builder.build()
    }

    #[test]
    fn standard_variants_cover_each_node_and_the_fault_axis() {
        let with_fault = two_nodes(true);
        let v = standard_variants(&with_fault);
        assert_eq!(v.len(), 2 * (1 + 2 + 2 + 1) + 5 + 1);
        // Every variant names a model that exists and options it takes.
        for variant in &v {
            let mut opts = crate::replay::ModelOptions::new("10.0.0.1:1".parse().unwrap());
            for (k, val) in &variant.config {
                opts.set(k, val).unwrap();
            }
            assert!(
                crate::replay::model(&variant.model, opts).is_ok(),
                "{variant:?}"
            );
        }
        let origin = Timestamp(0);
        assert_eq!(
            v[1].label(origin),
            "redis-py@5.0.0 address_remap=10.0.0.1:1"
        );
        assert_eq!(v[5].label(origin), "redis-py@5.0.0 faults=none");
        assert_eq!(v.last().unwrap().model, "ideal");
        assert_eq!(v[5].faults.apply(&with_fault).faults(), vec![]);
        // Without recorded failures: a missed stall of the first node at the slot move.
        let v = standard_variants(&two_nodes(false));
        assert_eq!(
            v[5].label(origin),
            "redis-py@5.0.0 faults=+timeout 10.0.0.1:1 2.0s at +20.0s"
        );
        let applied = v[5].faults.apply(&two_nodes(false)).faults();
        assert_eq!(applied.len(), 1);
        assert_eq!(
            applied[0].span,
            TimeSpan::new(Timestamp(20_000), Timestamp(22_000))
        );
    }
}
