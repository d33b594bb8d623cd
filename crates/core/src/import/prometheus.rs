//! Prometheus HTTP API responses (`/api/v1/query_range`, and `/api/v1/query` for one instant):
//!
//! ```text
//! {"status":"success","data":{"resultType":"matrix","result":[
//!   {"metric":{"__name__":"redis_commands_total","cmd":"get","instance":"…"},
//!    "values":[[1796160349,"12"],[1796160350,"40"]]}]}}
//! ```
//!
//! A `"status":"error"` body, text that is not JSON (a page cut short), or another shape is an
//! error naming what was read.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::time::Timestamp;

use super::{parse_value, ImportError, Series};

/// The series of one query response; `what` names it in errors (a file or the query).
///
/// # Errors
///
/// When the body is not JSON, says `"status":"error"`, or is not a matrix or vector result.
pub fn parse_response(what: &str, body: &str) -> Result<Vec<Series>, ImportError> {
    let v: Value = serde_json::from_str(body).map_err(|e| ImportError::NotJson {
        what: what.to_owned(),
        detail: e.to_string(),
    })?;
    let shape = |detail: &str| ImportError::Shape {
        what: what.to_owned(),
        detail: detail.to_owned(),
    };
    match v.get("status").and_then(Value::as_str) {
        Some("success") => {}
        Some("error") => {
            return Err(ImportError::ApiError {
                what: what.to_owned(),
                error_type: v["errorType"].as_str().unwrap_or("?").to_owned(),
                error: v["error"].as_str().unwrap_or("?").to_owned(),
            })
        }
        _ => return Err(shape("no \"status\":\"success\"")),
    }
    let data = v.get("data").ok_or_else(|| shape("no \"data\""))?;
    let kind = data["resultType"].as_str().unwrap_or("");
    if kind != "matrix" && kind != "vector" {
        return Err(shape(&format!(
            "resultType {kind:?}, expected \"matrix\" (query_range) or \"vector\""
        )));
    }
    let result = data["result"]
        .as_array()
        .ok_or_else(|| shape("\"data.result\" is not a list"))?;
    let mut out = Vec::with_capacity(result.len());
    for r in result {
        let mut labels: BTreeMap<String, String> = r["metric"]
            .as_object()
            .ok_or_else(|| shape("a result without \"metric\""))?
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
            .collect();
        let name = labels.remove("__name__").unwrap_or_default();
        let pairs: Vec<&Value> = if kind == "matrix" {
            r["values"]
                .as_array()
                .ok_or_else(|| shape("a matrix result without \"values\""))?
                .iter()
                .collect()
        } else {
            vec![&r["value"]]
        };
        let mut points = Vec::with_capacity(pairs.len());
        for p in pairs {
            let t = p[0]
                .as_f64()
                .ok_or_else(|| shape("a point without a time"))?;
            let x = p[1]
                .as_str()
                .and_then(parse_value)
                .ok_or_else(|| shape("a point without a value string"))?;
            if !(t.is_finite() && t >= 0.0) {
                return Err(shape("a point with a negative time"));
            }
            // Seconds with millisecond decimals; rounding to the millisecond is exact enough.
            points.push((Timestamp(super::to_count(t * 1000.0)), x));
        }
        out.push(Series {
            name,
            labels,
            points,
        });
    }
    Ok(out)
}
