//! What ranking the variants of every client group gives: each group's variants, best first,
//! and the best of each group in one line.

use std::collections::BTreeMap;

use serde::Serialize;

use super::group::{ClusterRates, GroupEvidence, Landing, Source};
use super::score::MetricScore;

/// One ranked variant of one group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupRanked {
    /// Model, options and faults: `redis-py@8.0.0 address_remap=10.0.0.1:7000`.
    pub label: String,
    /// The model name.
    pub model: String,
    /// The releases the model covers (`None` for `ideal`).
    pub covers: Option<String>,
    /// The `address_remap` target, if the variant remaps.
    pub remap: Option<String>,
    /// Its options.
    pub config: BTreeMap<String, String>,
    /// The failures replayed (see [`Faults::label`](super::Faults::label)).
    pub faults: String,
    /// Mean agreement over the metrics, `0..=1`.
    pub score: f64,
    /// Per metric ([`METRICS`](super::METRICS)).
    pub metrics: BTreeMap<String, MetricScore>,
    /// The MOVED share of each of the group's commands.
    pub by_command: BTreeMap<String, MetricScore>,
    /// Why it ranks where it does: the metrics that agree and what sets it above the next one.
    pub why: String,
}

/// The ranking of one group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupHypotheses {
    /// The census group's label (see [`GroupWorkload::group`](super::GroupWorkload::group)).
    pub group: String,
    /// How reports name it briefly.
    pub short: String,
    /// Where its commands come from.
    pub source: Source,
    /// Its commands.
    pub commands: Vec<String>,
    /// Commands per second it issues (see [`GroupWorkload::rate_per_sec`](super::GroupWorkload::rate_per_sec)).
    pub rate_per_sec: f64,
    /// Commands per second replayed (the rate rounded, at least 1).
    pub replayed_rate_per_sec: u32,
    /// Attempts per second over the window.
    pub attempts_per_sec: f64,
    /// The remap candidate its traffic shows.
    pub remap_target: Option<String>,
    /// Where its attempts land.
    pub landing: Vec<Landing>,
    /// The model its reported release resolves to.
    pub declared_model: Option<String>,
    /// The library it runs by its `lib-name` or its `CLIENT SETINFO` rejection fingerprint.
    pub declared_library: Option<String>,
    /// The libraries its fingerprint leaves when it names more than one (see
    /// [`GroupWorkload::candidate_libraries`](super::GroupWorkload::candidate_libraries)).
    pub candidate_libraries: Vec<String>,
    /// What the recording shows of it.
    pub evidence: GroupEvidence,
    /// Its variants, best first.
    pub ranked: Vec<GroupRanked>,
}

/// Every group's ranking.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Grouped {
    /// Per group, in the order of the workloads.
    pub groups: Vec<GroupHypotheses>,
    /// The cluster-wide rates shared between groups.
    pub cluster: ClusterRates,
    /// The best variant of each group in one line (see [`recommendation`](super::recommendation)).
    pub recommendation: String,
}
