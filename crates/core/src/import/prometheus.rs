//! Prometheus HTTP API responses (`/api/v1/query_range`, and `/api/v1/query` for one instant):
//!
//! ```text
//! {"status":"success","data":{"resultType":"matrix","result":[
//!   {"metric":{"__name__":"redis_commands_total","cmd":"get","instance":"…"},
//!    "values":[[1796160349,"12"],[1796160350,"40"]]}]}}
//! ```
//!
//! Read into [`Response`]. A `"status":"error"` body, text that is not JSON (a page cut short),
//! or another shape is an error naming what was read and, for a shape, what was wrong where.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::error::Category;

use crate::time::Timestamp;

use super::{parse_value, to_count, ImportError, Series};

/// A query response.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// `status`.
    pub status: Option<Status>,
    /// `data`, with `"status":"success"`.
    pub data: Option<Data>,
    /// `errorType` (`bad_data`, `timeout`, …), with `"status":"error"`.
    pub error_type: Option<String>,
    /// `error`: what went wrong, with `"status":"error"`.
    pub error: Option<String>,
}

/// A response's `status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The query ran: `data` holds its result.
    Success,
    /// It did not: `errorType` and `error` say why.
    Error,
}

/// A response's `data`, by its `resultType`; `result` holds the series.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "resultType", content = "result", rename_all = "lowercase")]
pub enum Data {
    /// `query_range`: series of points.
    Matrix(Vec<RangeSeries>),
    /// `query`: one point per series.
    Vector(Vec<InstantSample>),
    /// A scalar result (not read).
    Scalar(serde::de::IgnoredAny),
    /// A string result (not read).
    String(serde::de::IgnoredAny),
}

impl Data {
    /// The `resultType`.
    pub fn result_type(&self) -> &'static str {
        match self {
            Data::Matrix(_) => "matrix",
            Data::Vector(_) => "vector",
            Data::Scalar(_) => "scalar",
            Data::String(_) => "string",
        }
    }
}

/// One series of a matrix.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct RangeSeries {
    /// Its labels, `__name__` among them.
    pub metric: BTreeMap<String, String>,
    /// Its points.
    pub values: Vec<Point>,
}

/// One series of a vector.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct InstantSample {
    /// Its labels, `__name__` among them.
    pub metric: BTreeMap<String, String>,
    /// Its one point.
    pub value: Point,
}

/// A point as Prometheus writes it: `[seconds since the epoch, "value"]` (the value is a string,
/// so that `+Inf` and `NaN` fit).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Point(pub f64, pub String);

/// The series of one query response; `what` names it in errors (a file or the query).
///
/// # Errors
///
/// When the body is not JSON, says `"status":"error"`, or is not a matrix or vector result.
pub fn parse_response(what: &str, body: &str) -> Result<Vec<Series>, ImportError> {
    let shape = |detail: String| ImportError::Shape {
        what: what.to_owned(),
        detail,
    };
    let response: Response = serde_json::from_str(body).map_err(|e| match e.classify() {
        Category::Data => shape(e.to_string()),
        Category::Io | Category::Syntax | Category::Eof => ImportError::NotJson {
            what: what.to_owned(),
            detail: e.to_string(),
        },
    })?;
    match response.status {
        Some(Status::Success) => {}
        Some(Status::Error) => {
            return Err(ImportError::ApiError {
                what: what.to_owned(),
                error_type: response.error_type.unwrap_or_else(|| "?".to_owned()),
                error: response.error.unwrap_or_else(|| "?".to_owned()),
            })
        }
        None => return Err(shape("no \"status\":\"success\"".to_owned())),
    }
    let data = response
        .data
        .ok_or_else(|| shape("no \"data\"".to_owned()))?;
    let results: Vec<(BTreeMap<String, String>, Vec<Point>)> = match data {
        Data::Matrix(series) => series.into_iter().map(|s| (s.metric, s.values)).collect(),
        Data::Vector(samples) => samples
            .into_iter()
            .map(|s| (s.metric, vec![s.value]))
            .collect(),
        other => {
            return Err(shape(format!(
                "resultType {:?}, expected \"matrix\" (query_range) or \"vector\"",
                other.result_type()
            )))
        }
    };
    let mut out = Vec::with_capacity(results.len());
    for (mut labels, pairs) in results {
        let name = labels.remove("__name__").unwrap_or_default();
        let mut points = Vec::with_capacity(pairs.len());
        for Point(t, x) in pairs {
            let x = parse_value(&x).ok_or_else(|| {
                shape(format!(
                    "a point without a value string: {x:?} in series {name}"
                ))
            })?;
            if !(t.is_finite() && t >= 0.0) {
                return Err(shape(format!(
                    "a point with a negative time: {t} in series {name}"
                )));
            }
            // Seconds with millisecond decimals; rounding to the millisecond is exact enough.
            points.push((Timestamp(to_count(t * 1000.0)), x));
        }
        out.push(Series {
            name,
            labels,
            points,
        });
    }
    Ok(out)
}
