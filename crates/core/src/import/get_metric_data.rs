//! The JSON of `aws cloudwatch get-metric-data` as typed structs, fields named as the AWS CLI
//! names them: the queries given to `--metric-data-queries` ([`MetricDataQuery`]) and the pages it
//! prints ([`Output`]). What they mean for a recording is [`super::cloudwatch`]'s.
//!
//! Fields the reader checks itself (to say which query or result lacks them) are `Option`s;
//! fields it does not use are skipped.

use std::fmt;

use serde::Deserialize;

/// The queries file in its object form: `{"MetricDataQueries": [...]}`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(
    rename_all = "PascalCase",
    expecting = "a list of queries or {\"MetricDataQueries\": [...]}"
)]
pub struct Queries {
    /// `MetricDataQueries`.
    pub metric_data_queries: Option<Vec<MetricDataQuery>>,
}

/// One `MetricDataQuery`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricDataQuery {
    /// `Id`: ties the results to the query.
    pub id: Option<String>,
    /// `MetricStat`; none for a math expression.
    pub metric_stat: Option<MetricStat>,
    /// `Period`, in seconds, when given beside `MetricStat` rather than in it.
    pub period: Option<u64>,
}

/// A query's `MetricStat`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricStat {
    /// `Metric`.
    pub metric: Option<Metric>,
    /// `Period`, in seconds.
    pub period: Option<u64>,
    /// `Stat` (`Sum`, `Average`, `Maximum`, …).
    pub stat: Option<String>,
}

/// A `MetricStat`'s `Metric`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Metric {
    /// `MetricName` (`NewConnections`).
    pub metric_name: Option<String>,
    /// `Dimensions` (`CacheClusterId`, `CacheNodeId`).
    pub dimensions: Option<Vec<Dimension>>,
}

impl Metric {
    /// The value of the dimension `name`, if the metric has it.
    pub fn dimension(&self, name: &str) -> Option<&str> {
        self.dimensions
            .iter()
            .flatten()
            .find(|d| d.name == name)
            .map(|d| d.value.as_str())
    }
}

/// One of a metric's `Dimensions`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Dimension {
    /// `Name`.
    pub name: String,
    /// `Value`.
    pub value: String,
}

/// One page of output.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Output {
    /// `MetricDataResults`.
    pub metric_data_results: Option<Vec<MetricDataResult>>,
    /// `NextToken`, when more pages follow.
    pub next_token: Option<String>,
}

/// One `MetricDataResult`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricDataResult {
    /// `Id`: the query's.
    pub id: Option<String>,
    /// `Timestamps`: the start of each datapoint's period.
    pub timestamps: Option<Vec<Time>>,
    /// `Values`, one per timestamp.
    pub values: Option<Vec<f64>>,
    /// `StatusCode` (`Complete` when absent).
    pub status_code: Option<StatusCode>,
    /// `Messages`.
    pub messages: Option<Vec<Message>>,
}

/// A timestamp as the AWS CLI prints it (ISO 8601 text), or seconds since the epoch.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(
    untagged,
    expecting = "a timestamp that is neither ISO 8601 text nor seconds since the epoch"
)]
pub enum Time {
    /// `2025-03-14T05:12:00+00:00`.
    Text(String),
    /// `1741929120`.
    Seconds(f64),
}

/// A result's `StatusCode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum StatusCode {
    /// Every datapoint of the time range asked is there.
    #[default]
    Complete,
    /// More datapoints follow on a later page (asked with its `NextToken`).
    PartialData,
    /// CloudWatch failed.
    InternalError,
    /// Not allowed to read the metric.
    Forbidden,
}

impl fmt::Display for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StatusCode::Complete => "Complete",
            StatusCode::PartialData => "PartialData",
            StatusCode::InternalError => "InternalError",
            StatusCode::Forbidden => "Forbidden",
        })
    }
}

/// One of a result's `Messages`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Message {
    /// `Code`.
    pub code: Option<String>,
    /// `Value`: the text.
    pub value: Option<String>,
}
