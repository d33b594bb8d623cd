//! Hypotheses per client group: each group's workload is replayed through its own variants (the
//! groups are different processes: they replay independently) and scored against its own
//! evidence, command by command; the overall answer is the best variant of each group.
//!
//! A group is scored on what its commands show — the MOVED share of each command (weighted by
//! its attempts), its commands' rejections per second, whether its traffic ended — and on the
//! cluster-wide rates no counter splits by client (new connections and `CLUSTER SLOTS` per
//! second): there a group's share is what the other groups' best variants leave of the observed
//! rate, and the error is measured against the cluster-wide rate. Bests and shares are settled
//! in a few rounds (first on the group's own metrics alone).

use std::collections::BTreeMap;

use super::declared::Declared;
use super::evidence::{Prediction, RATE_FLOOR};
use super::group::{ClusterRates, GroupEvidence, GroupWorkload, Source};
use super::group_ranking::{GroupHypotheses, GroupRanked, Grouped};
use super::rank::{mean, replay_span, replay_variant, seed_addr, workload, HypothesisSpec};
use super::score::{rate_agreement, share_agreement, MetricScore, Value};
use super::variant::{standard_variants, Variant};
use super::why::{recommendation, why};
use crate::metrics::ms_to_secs;
use crate::node::NodeAddr;
use crate::replay::{covers, ReplayError, SimCluster};

/// Rounds settling each group's share of the cluster-wide rates.
const ROUNDS: usize = 3;

/// The variants of a group: [`standard_variants`] with `address_remap` only to the group's remap
/// target when its traffic shows one, to no node when a census group's traffic shows none (a
/// remap sends every command's first attempt to one node), and to every node for a workload that
/// is not one group's.
pub fn group_variants(cluster: &SimCluster, g: &GroupWorkload) -> Vec<Variant> {
    let target = g.remap_target.as_ref().map(ToString::to_string);
    standard_variants(cluster)
        .into_iter()
        .filter(|v| match (v.config.get("address_remap"), &target) {
            (None, _) => true,
            (Some(to), Some(t)) => to == t,
            (Some(_), None) => g.source != Source::Census,
        })
        .collect()
}

/// What a replay of one group predicts.
struct Predicted {
    variant: Variant,
    general: Prediction,
    /// MOVED share per command.
    by_command: BTreeMap<String, f64>,
}

/// The metrics a group's own counters show.
fn own_metrics(
    e: &GroupEvidence,
    p: &Predicted,
) -> (BTreeMap<String, MetricScore>, BTreeMap<String, MetricScore>) {
    let num = |o: f64, p: f64, agreement: f64| MetricScore {
        observed: Value::Number(o),
        predicted: Value::Number(p),
        agreement,
    };
    let by_command: BTreeMap<String, MetricScore> = e
        .by_command
        .iter()
        .map(|(c, ce)| {
            let predicted = p.by_command.get(c).copied().unwrap_or(0.0);
            (
                c.clone(),
                num(
                    ce.moved_share,
                    predicted,
                    share_agreement(ce.moved_share, predicted),
                ),
            )
        })
        .collect();
    let weights: Vec<f64> = e
        .by_command
        .values()
        .map(|c| c.calls + c.rejected)
        .collect();
    let total: f64 = weights.iter().sum();
    let weighted = |f: &dyn Fn(&MetricScore) -> f64| {
        if total > 0.0 {
            by_command
                .values()
                .zip(&weights)
                .map(|(m, w)| f(m) * w)
                .sum::<f64>()
                / total
        } else {
            mean(by_command.values().map(f))
        }
    };
    let value = |m: &MetricScore| match m.predicted {
        Value::Number(x) => x,
        Value::Flag(_) => 0.0,
    };
    let mut m = BTreeMap::new();
    m.insert(
        "moved_share".to_owned(),
        num(e.moved_share, weighted(&value), weighted(&|m| m.agreement)),
    );
    m.insert(
        "moved_per_sec".to_owned(),
        num(
            e.moved_per_sec,
            p.general.moved_per_sec,
            rate_agreement(e.moved_per_sec, p.general.moved_per_sec),
        ),
    );
    m.insert(
        "traffic_ended".to_owned(),
        MetricScore {
            observed: Value::Flag(e.traffic_ended),
            predicted: Value::Flag(p.general.traffic_ended),
            agreement: if e.traffic_ended == p.general.traffic_ended {
                1.0
            } else {
                0.0
            },
        },
    );
    (m, by_command)
}

/// Agreement of a group's predicted share of a cluster-wide rate with what the other groups
/// leave of it: the error against the cluster-wide rate.
fn shared_metric(total: f64, others: f64, predicted: f64) -> MetricScore {
    let left = (total - others).max(0.0);
    let scale = total.max(predicted).max(left).max(RATE_FLOOR);
    MetricScore {
        observed: Value::Number(left),
        predicted: Value::Number(predicted),
        agreement: (1.0 - (predicted - left).abs() / scale).clamp(0.0, 1.0),
    }
}

/// Replays every group's variants and ranks them (see the module's notes). `progress(group,
/// variant index, variant count, variant)` is called before each replay.
pub fn rank_groups(
    cluster: &SimCluster,
    workloads: &[GroupWorkload],
    rates: &ClusterRates,
    spec: &HypothesisSpec,
    progress: &mut dyn FnMut(&GroupWorkload, usize, usize, &Variant),
) -> Result<Grouped, ReplayError> {
    let span = replay_span(cluster, spec)?;
    let seed_addr: NodeAddr = seed_addr(cluster)?;
    let secs = ms_to_secs(span.millis());
    let origin = cluster.span().map_or(span.start, |s| s.start);
    // Every replay first.
    let mut predicted: Vec<Vec<Predicted>> = Vec::with_capacity(workloads.len());
    for g in workloads {
        let mix: Vec<(String, u64)> = g
            .evidence
            .by_command
            .iter()
            .map(|(c, e)| (c.clone(), weight(e.calls + e.rejected)))
            .collect();
        let command = g.commands.first().cloned().unwrap_or_else(|| "zadd".into());
        let w = workload(span, &command, &mix, replayed_rate(g.rate_per_sec), spec)?;
        let variants = group_variants(cluster, g);
        let mut out = Vec::with_capacity(variants.len());
        for (i, v) in variants.iter().enumerate() {
            progress(g, i, variants.len(), v);
            let report = replay_variant(cluster, &w, v, spec, &seed_addr)?;
            out.push(Predicted {
                variant: v.clone(),
                general: Prediction::from_report(&report, secs),
                by_command: report
                    .per_command
                    .iter()
                    .map(|(c, s)| (c.clone(), s.moved_share))
                    .collect(),
            });
        }
        predicted.push(out);
    }
    // Round 0: each group's best on its own metrics; then its share of the cluster-wide rates.
    let own: Vec<Vec<_>> = workloads
        .iter()
        .zip(&predicted)
        .map(|(g, ps)| ps.iter().map(|p| own_metrics(&g.evidence, p)).collect())
        .collect();
    let mut best: Vec<usize> = own
        .iter()
        .map(|scores| {
            argmax(
                scores
                    .iter()
                    .map(|(m, _)| mean(m.values().map(|s| s.agreement))),
            )
        })
        .collect();
    let mut scored: Vec<Vec<(f64, BTreeMap<String, MetricScore>)>> = Vec::new();
    for _ in 0..ROUNDS {
        scored = (0..workloads.len())
            .map(|g| {
                let others = |f: &dyn Fn(&Prediction) -> f64| -> f64 {
                    (0..workloads.len())
                        .filter(|&h| h != g)
                        .filter_map(|h| predicted[h].get(best[h]))
                        .map(|p| f(&p.general))
                        .sum()
                };
                let conns = others(&|p| p.new_connections_per_sec);
                let slots = others(&|p| p.cluster_slots_per_sec);
                predicted[g]
                    .iter()
                    .zip(&own[g])
                    .map(|(p, (m, _))| {
                        let mut m = m.clone();
                        m.insert(
                            "new_connections_per_sec".into(),
                            shared_metric(
                                rates.new_connections_per_sec,
                                conns,
                                p.general.new_connections_per_sec,
                            ),
                        );
                        m.insert(
                            "cluster_slots_per_sec".into(),
                            shared_metric(
                                rates.cluster_slots_per_sec,
                                slots,
                                p.general.cluster_slots_per_sec,
                            ),
                        );
                        (mean(m.values().map(|s| s.agreement)), m)
                    })
                    .collect()
            })
            .collect();
        let next: Vec<usize> = scored
            .iter()
            .map(|s| argmax(s.iter().map(|(score, _)| *score)))
            .collect();
        if next == best {
            break;
        }
        best = next;
    }
    let groups: Vec<GroupHypotheses> = workloads
        .iter()
        .enumerate()
        .map(|(g, w)| {
            let mut ranked: Vec<GroupRanked> = predicted[g]
                .iter()
                .zip(&scored[g])
                .zip(&own[g])
                .map(|((p, (score, metrics)), (_, by_command))| GroupRanked {
                    label: p.variant.label(origin),
                    model: p.variant.model.clone(),
                    covers: covers(&p.variant.model).map(|c| c.range.to_owned()),
                    remap: p.variant.config.get("address_remap").cloned(),
                    config: p.variant.config.clone(),
                    faults: p.variant.faults.label(origin),
                    score: *score,
                    metrics: metrics.clone(),
                    by_command: by_command.clone(),
                    why: String::new(),
                })
                .collect();
            let remap_target = w.remap_target.as_ref().map(ToString::to_string);
            let declared = Declared {
                model: w.declared_model.as_deref(),
                library: w.declared_library.as_deref(),
                candidates: &w.candidate_libraries,
                remap: remap_target.as_deref(),
            };
            order(&mut ranked, declared);
            for i in 0..ranked.len() {
                ranked[i].why = why(&ranked, i, declared);
            }
            GroupHypotheses {
                group: w.group.clone(),
                short: w.short.clone(),
                source: w.source,
                commands: w.commands.clone(),
                rate_per_sec: w.rate_per_sec,
                replayed_rate_per_sec: replayed_rate(w.rate_per_sec),
                attempts_per_sec: w.attempts_per_sec,
                remap_target: w.remap_target.as_ref().map(ToString::to_string),
                landing: w.landing.clone(),
                declared_model: w.declared_model.clone(),
                declared_library: w.declared_library.clone(),
                candidate_libraries: w.candidate_libraries.clone(),
                evidence: w.evidence.clone(),
                ranked,
            }
        })
        .collect();
    Ok(Grouped {
        recommendation: recommendation(&groups),
        groups,
        cluster: rates.clone(),
    })
}

/// Best first: the variants of the model covering the release the group reports, then those of
/// its library (`CLIENT SETINFO` names the library and its version, or its rejection's
/// fingerprint the library or the libraries it leaves: direct evidence the replay's scores do
/// not outweigh; among them the scores choose); within those, the variants remapping to the node
/// the group's traffic lands on as a remap sends it (every command's first attempt on one node
/// that rejects the slots it does not own: evidence of the remap whether or not the replay
/// wedges as the client did within the window); then by score to a tenth of a percent, then
/// the order of the variants.
fn order(ranked: &mut [GroupRanked], declared: Declared<'_>) {
    // Scores are in 0..=1: the rounded value fits.
    #[allow(clippy::cast_possible_truncation)]
    let key = |r: &GroupRanked| {
        (
            declared.agreement(&r.model),
            declared.lands(r.remap.as_deref()),
            (r.score * 1000.0).round() as i64,
        )
    };
    ranked.sort_by_key(|r| std::cmp::Reverse(key(r)));
}

/// The index of the largest value (the first of equals; 0 for none).
fn argmax(values: impl Iterator<Item = f64>) -> usize {
    let mut best: Option<(usize, f64)> = None;
    for (i, v) in values.enumerate() {
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    best.map_or(0, |(i, _)| i)
}

/// A mix weight: attempts rounded, at least 1.
fn weight(x: f64) -> u64 {
    // Non-negative and far below 2^52.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = x.round().max(1.0) as u64;
    n
}

/// The rate replayed: rounded, at least 1 per second.
/// A group's rate as the replay takes it: whole commands a second, at least 1.
pub fn replayed_rate(rate: f64) -> u32 {
    // Clamped into u32's range first.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = rate.round().clamp(1.0, f64::from(u32::MAX)) as u32;
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_rate_is_what_the_others_leave() {
        let m = shared_metric(20.0, 5.0, 15.0);
        assert_eq!(m.observed, Value::Number(15.0));
        assert_eq!(m.agreement, 1.0);
        // Others over-explain: nothing left, a small prediction costs little against the total.
        let m = shared_metric(20.0, 25.0, 1.0);
        assert_eq!(m.observed, Value::Number(0.0));
        assert!((m.agreement - 0.95).abs() < 1e-9);
        assert_eq!(argmax([0.1, 0.3, 0.3].into_iter()), 1);
        assert_eq!(replayed_rate(0.2), 1);
        assert_eq!(weight(2.6), 3);
    }
}
