//! A wedged incident client's own report (the `incident1` scenario scripts' JSON: a `timeline` of
//! successes and errors per 100 ms, `last_ok_ms`, `first_error_ms`) set against the analysis's
//! finding that its group stopped: the level it fell from is the rate the client wrote at, and the
//! moment lies between its last success and its first error, give or take a poll.

use serde_json::Value;

/// A count in a report, 0 when absent.
fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// The client's successes per second while it ran: the median of its 100 ms buckets with any.
///
/// # Panics
///
/// If the report has no `timeline` or no bucket with a success.
pub fn running_rate(client: &Value) -> f64 {
    let mut running: Vec<f64> = client["timeline"]
        .as_array()
        .expect("a timeline")
        .iter()
        .filter(|b| u(&b[1]) > 0)
        .map(|b| u(&b[1]) as f64 * 10.0)
        .collect();
    running.sort_by(f64::total_cmp);
    *running
        .get(running.len() / 2)
        .expect("a bucket with a success")
}

/// Asserts that `stop` (a `client_group_lost` finding in the analysis's JSON) fell from the rate
/// the client wrote at (within 10 %) at a moment between its last success and its first error,
/// give or take `poll_ms`.
///
/// # Panics
///
/// When either does not hold, with both sides in the message.
pub fn assert_stop_matches(stop: &Value, client: &Value, poll_ms: u64) {
    let before = stop["numbers"]["commands_per_sec_before"]
        .as_f64()
        .expect("commands_per_sec_before");
    let rate = running_rate(client);
    assert!(
        (before - rate).abs() <= 0.1 * before.max(rate),
        "the group fell from {before:.1}/s, the client wrote {rate:.1}/s while it ran"
    );
    let at = u(&stop["span"]["start"]);
    let (last_ok, first_error) = (u(&client["last_ok_ms"]), u(&client["first_error_ms"]));
    assert!(
        at + poll_ms >= last_ok && at <= first_error + poll_ms,
        "stopped at {at}, last success {last_ok}, first error {first_error}"
    );
}
