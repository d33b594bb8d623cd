//! Agreement of a prediction with the evidence, metric by metric.

use std::collections::BTreeMap;

use serde::Serialize;

use super::evidence::{Evidence, Prediction, RATE_FLOOR};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreements_are_symmetric_and_bounded() {
        assert_eq!(rate_agreement(0.0, 0.0), 1.0);
        assert_eq!(rate_agreement(10.0, 5.0), 0.5);
        assert_eq!(rate_agreement(5.0, 10.0), 0.5);
        assert!((rate_agreement(0.0, 0.01) - 0.9).abs() < 1e-9);
        assert_eq!(rate_agreement(100.0, 0.0), 0.0);
        assert!((share_agreement(0.4, 0.3) - 0.9).abs() < 1e-9);
    }
}
