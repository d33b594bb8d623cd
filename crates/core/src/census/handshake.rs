//! A client group's connect counters and the `CLIENT SETINFO` rejection fingerprint they show
//! (see [`fingerprint`](crate::fingerprint)).

use super::group::ClientGroup;
use crate::fingerprint::{setinfo_rejection, Candidate, HandshakeCounts};
use crate::metrics::Metrics;
use crate::time::{TimeSpan, Timestamp};

/// The connect counters of the intervals around `g`'s sightings (from two polls before its first
/// to one after its last) on the nodes it was seen on.
pub fn handshake_counts(metrics: &Metrics, g: &ClientGroup, interval_ms: u64) -> HandshakeCounts {
    let window = TimeSpan::new(
        Timestamp(g.first_seen.0.saturating_sub(2 * interval_ms)),
        Timestamp(g.last_seen.0 + interval_ms),
    );
    let mut c = HandshakeCounts {
        named: g.key.name.is_some(),
        ..HandshakeCounts::default()
    };
    for node in metrics.nodes.iter().filter(|n| g.nodes.contains(&n.addr)) {
        for iv in node.ending_in(window) {
            c.connections += iv.connections_received;
            c.err += iv.error("ERR");
            c.hello += iv.command("hello").attempts();
            c.setinfo += iv.command("client|setinfo").attempts();
            c.setname += iv.command("client|setname").attempts();
        }
    }
    c
}

/// The candidates of `g`'s `CLIENT SETINFO` rejection fingerprint; empty without one.
pub fn candidates(metrics: &Metrics, g: &ClientGroup, interval_ms: u64) -> Vec<Candidate> {
    setinfo_rejection(&handshake_counts(metrics, g, interval_ms), None)
        .map(|r| r.candidates)
        .unwrap_or_default()
}

/// The libraries (distinct `lib-name`s, in [`SETINFO_SENDERS`](crate::fingerprint::SETINFO_SENDERS) order) whose versions fit `g`'s
/// `CLIENT SETINFO` rejection fingerprint; empty without one.
pub fn libraries(metrics: &Metrics, g: &ClientGroup, interval_ms: u64) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for c in candidates(metrics, g, interval_ms) {
        if !out.contains(&c.lib_name) {
            out.push(c.lib_name);
        }
    }
    out
}

/// The one library every candidate of `g`'s rejection fingerprint is a version of (`redis-py`
/// for "redis-py 5.0–7.4"), if the fingerprint is there and names one library.
pub fn one_library(metrics: &Metrics, g: &ClientGroup, interval_ms: u64) -> Option<&'static str> {
    match libraries(metrics, g, interval_ms).as_slice() {
        [one] => Some(one),
        _ => None,
    }
}
