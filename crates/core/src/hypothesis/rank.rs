//! Ranking variants replayed with one workload against one evidence.

use std::collections::BTreeMap;

use serde::Serialize;

use super::evidence::{Evidence, Prediction};
use super::score::{compare, MetricScore};
use super::variant::Variant;
use crate::float;
use crate::metrics::ms_to_secs;
use crate::node::NodeAddr;
use crate::replay::{
    model, replay_majority, ModelOptions, ReplayError, ReplayReport, Shape, SimCluster, Timing,
    Workload, WorkloadSpec,
};
use crate::time::TimeSpan;

/// One ranked variant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranked {
    /// The model name.
    pub model: String,
    /// Its options.
    pub config: BTreeMap<String, String>,
    /// The failures replayed (see [`Faults::label`](crate::hypothesis::Faults::label)).
    pub faults: String,
    /// Mean agreement over the scored metrics, `0..=1`.
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
    let span = replay_span(cluster, spec)?;
    let seed_addr = seed_addr(cluster)?;
    let command = evidence.command.clone().unwrap_or_else(|| "zadd".into());
    let mix: Vec<(String, u64)> = evidence.mix.iter().map(|(c, n)| (c.clone(), *n)).collect();
    let workload = workload(span, &command, &mix, spec.rate_per_sec, spec)?;
    let secs = ms_to_secs(span.millis());
    // Fault labels count from the recording's start, whatever the window.
    let origin = cluster.span().map_or(span.start, |s| s.start);
    let mut ranked = Vec::with_capacity(variants.len());
    for (i, v) in variants.iter().enumerate() {
        progress(i, v);
        let report = replay_variant(cluster, &workload, v, spec, &seed_addr)?;
        let metrics = compare(evidence, &Prediction::from_report(&report, secs));
        let score = mean(metrics.values().map(|m| m.agreement));
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

/// The span the workloads run over: `spec.window`, else the cluster's span.
pub(super) fn replay_span(
    cluster: &SimCluster,
    spec: &HypothesisSpec,
) -> Result<TimeSpan, ReplayError> {
    spec.window
        .or_else(|| cluster.span())
        .filter(|s| s.millis() > 0)
        .ok_or_else(|| ReplayError::BadWorkload("the recording holds no time span".into()))
}

/// The address every variant starts from: the recording's seed, else its first node.
pub(super) fn seed_addr(cluster: &SimCluster) -> Result<NodeAddr, ReplayError> {
    cluster
        .seed()
        .or_else(|| cluster.nodes().first())
        .cloned()
        .ok_or_else(|| ReplayError::BadWorkload("the recording holds no node".into()))
}

/// The mean of `values` (0 for none).
pub(super) fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0u64), |(s, n), v| (s + v, n + 1));
    sum / float::from_u64(n.max(1))
}

/// The workload of `spec` over `span` at `rate` commands per second: `command`, or `mix` drawn
/// by weight when it has any.
pub(crate) fn workload(
    span: TimeSpan,
    command: &str,
    mix: &[(String, u64)],
    rate: u32,
    spec: &HypothesisSpec,
) -> Result<Workload, ReplayError> {
    let workload = Workload::generate(&WorkloadSpec {
        start: span.start,
        duration_ms: span.millis(),
        rate_per_sec: rate,
        keys: spec.keys,
        key_prefix: "key".into(),
        command: command.to_owned(),
        seed: spec.seed,
    })?
    .with_mix(mix, spec.seed)
    .with_concurrency(spec.concurrency);
    let workload = match spec.shape {
        Shape::Lanes => workload,
        Shape::InFlight(n) => workload.with_in_flight(n),
    };
    let timing = spec.timing.timing(&workload.names);
    Ok(workload.with_timing(timing))
}

/// Replays `workload` through variant `v` against `cluster` (with `v`'s faults), at every
/// moment of the recording's uncertain kill and failure windows as `slotscope replay` does
/// ([`replay_over_moments`]).
pub(super) fn replay_variant(
    cluster: &SimCluster,
    workload: &Workload,
    v: &Variant,
    spec: &HypothesisSpec,
    seed_addr: &NodeAddr,
) -> Result<ReplayReport, ReplayError> {
    let mut opts = ModelOptions::new(seed_addr.clone());
    for (k, val) in &v.config {
        opts.set(k, val)?;
    }
    if v.model.starts_with("redis-py@") && !v.config.contains_key("socket_timeout") {
        opts.socket_timeout_ms = spec.redis_py_socket_timeout_ms;
    }
    replay_majority(&v.faults.apply(cluster), workload, || {
        model(&v.model, opts.clone())
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
}
