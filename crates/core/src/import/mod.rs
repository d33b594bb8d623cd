//! Recordings made from metrics a team already keeps: redis_exporter's series, read from a
//! Prometheus `query_range` response ([`prometheus`]) or from saved scrapes in the Prometheus text
//! format or OpenMetrics ([`exposition`]), turned into the recording's `info` lines
//! ([`conversion`]); CloudWatch's ElastiCache metrics ([`cloudwatch`]) are first made into series
//! of the same names; so that [`crate::metrics`] derives the same per-interval deltas, counter resets
//! included, as from a recording the collector made.
//!
//! Pure code: the caller reads the files or asks the HTTP API and hands the text over.

use std::collections::BTreeMap;

use crate::time::Timestamp;

pub mod client_details;
pub mod cloudwatch;
pub mod conversion;
pub mod exposition;
pub mod get_metric_data;
pub mod prometheus;

pub use conversion::{convert, Conversion, Gap, SourceInfo};

/// One time series: a metric name, its labels (without `__name__`) and its points in time order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The metric name (`redis_commands_total`).
    pub name: String,
    /// Its labels (`cmd`, `instance`, `addr`, …).
    pub labels: BTreeMap<String, String>,
    /// `(time, value)` pairs.
    pub points: Vec<(Timestamp, f64)>,
}

/// Why metrics could not be read or turned into a recording.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// The text is not JSON, or JSON cut short (a partial page).
    #[error("{what} is not complete JSON ({detail}): a partial or cut-short response?")]
    NotJson {
        /// What was read (a file name or a query).
        what: String,
        /// The JSON error.
        detail: String,
    },
    /// The API answered `"status":"error"`.
    #[error("{what}: Prometheus answered status \"error\" ({error_type}): {error}")]
    ApiError {
        /// What was read.
        what: String,
        /// `errorType`.
        error_type: String,
        /// `error`.
        error: String,
    },
    /// The JSON does not have the shape of a `query_range` response.
    #[error("{what}: not a Prometheus query response: {detail}")]
    Shape {
        /// What was read.
        what: String,
        /// What is wrong.
        detail: String,
    },
    /// A line of an exposition text could not be parsed.
    #[error("{what} line {line}: {detail}")]
    Exposition {
        /// What was read.
        what: String,
        /// Line number, from 1.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// A series names no node (no `addr` or `instance` label) or one that is not `HOST:PORT`.
    #[error("{detail}")]
    Node {
        /// What is wrong.
        detail: String,
    },
    /// CloudWatch `get-metric-data` output or its queries that cannot be used.
    #[error("{what}: {detail}")]
    CloudWatch {
        /// What was read.
        what: String,
        /// What is wrong.
        detail: String,
    },
    /// Nothing usable: no redis_exporter series with points.
    #[error("no redis_exporter series with points (redis_commands_total, redis_connected_clients, …) in {what}")]
    Empty {
        /// What was read.
        what: String,
    },
}

/// Parses a float as Prometheus writes one (`1.8978e+06`, `+Inf`, `NaN`).
pub(crate) fn parse_value(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

/// A count reported as a float (Prometheus stores every value as one), rounded to the nearest
/// integer; negative and non-finite values give 0.
pub(crate) fn to_count(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        // In range: `as` saturates at u64::MAX, and the value is rounded first.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = x.round() as u64;
        n
    } else {
        0
    }
}

/// Joins the series that have the same name and labels (pages of one query, or one series over
/// several files or scrapes) into one, points in time order, one point per time (the last read
/// wins).
pub fn merge(series: Vec<Series>) -> Vec<Series> {
    let mut by_key: BTreeMap<(String, BTreeMap<String, String>), BTreeMap<Timestamp, f64>> =
        BTreeMap::new();
    for s in series {
        by_key
            .entry((s.name, s.labels))
            .or_default()
            .extend(s.points);
    }
    by_key
        .into_iter()
        .map(|((name, labels), points)| Series {
            name,
            labels,
            points: points.into_iter().collect(),
        })
        .collect()
}
