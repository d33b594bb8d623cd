//! Hypotheses: variants of a client (model × configuration × faults) replayed against one
//! recording and ranked by how well each reproduces what the recording shows.
//!
//! The evidence ([`Evidence`]) comes from the recording's [`Metrics`](crate::metrics::Metrics): the MOVED share of the
//! business commands, cluster-wide `MOVED` per second, new connections per second, `CLUSTER
//! SLOTS`/`SHARDS` calls per second (the collector's own polls already taken out by
//! the metrics) and whether business traffic ended at about zero (what a wedged client looks
//! like). Each variant's [`ReplayReport`](crate::replay::ReplayReport) is read into the same units ([`Prediction`]), every
//! metric gets an agreement in `0..=1` and the total is their mean.
//!
//! Per client group ([`group_workloads`], [`rank_groups`]): each census group's commands are
//! replayed as their own workload at the group's rate and scored against what the recording shows
//! of those commands; a group's remap candidate comes from where its attempts land
//! ([`remap_target`]); the overall answer is each group's best variant ([`recommendation`]).
//!
//! Deterministic: the same recording, variants and seed always give the same ranking (ties keep
//! the order of [`standard_variants`]).

mod declared;
mod evidence;
mod group;
mod group_ranking;
mod grouped;
mod rank;
mod score;
mod settled;
mod variant;
mod why;

pub use evidence::{Evidence, Prediction, RATE_FLOOR, WEDGED_TAIL_SHARE};
pub use group::{
    group_workloads, remap_target, ClusterRates, CommandEvidence, GroupEvidence, GroupWorkload,
    Landing, Source, REMAP_LANDING, SETTLED_LANDING, SPREAD_SERVED_SHARE,
};
pub use group_ranking::{GroupHypotheses, GroupRanked, Grouped};
pub use grouped::replayed_rate;
pub use grouped::{group_variants, rank_groups};
pub(crate) use rank::workload;
pub use rank::{rank, rank_with_progress, ExchangeTimes, Hypotheses, HypothesisSpec, Ranked};
pub use score::{compare, rate_agreement, share_agreement, MetricScore, Value, METRICS};
pub use settled::{
    layout_change_spans, settle_ms, Settled, ALL_ON_ONE_REJECTED, PERSISTENT_REJECTION,
    SETTLED_INTERVALS,
};
pub use variant::{standard_variants, Faults, Variant, MISSED_STALL_MS};
pub use why::recommendation;
