//! What a recording shows ([`Evidence`]) and what one replay predicts ([`Prediction`]), in the
//! units they are compared in.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::float;
use crate::metrics::{is_business_command, ms_to_secs, CommandDelta, Metrics};
use crate::replay::ReplayReport;
use crate::time::{TimeSpan, Timestamp};

/// Business traffic in the last part of a recording below this share of its mean rate looks
/// like a client that stopped (wedged).
pub const WEDGED_TAIL_SHARE: f64 = 0.05;

/// Rates below this many per second count as this many when comparing (so 0 against 0.01/s is
/// not a 100 % error).
pub const RATE_FLOOR: f64 = 0.1;

/// The tail of a recording judged for "traffic ended": its last tenth, at least 10 s.
pub(super) fn tail_ms(span_ms: u64) -> u64 {
    (span_ms / 10).max(10_000).min(span_ms / 2)
}

/// What the recording shows, in the units a replay is compared in.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// The business command with most attempts (the one the workload replays), if any.
    pub command: Option<String>,
    /// Rejected ÷ (calls + rejected) of each business command over the recording.
    pub moved_share_by_command: BTreeMap<String, f64>,
    /// The same share over all business commands together (the one compared).
    pub moved_share: f64,
    /// Attempts (calls + rejected) of each business command over the recording: the workload
    /// mix a replay of it draws from.
    pub mix: BTreeMap<String, u64>,
    /// `MOVED` errors per second, all nodes.
    pub moved_per_sec: f64,
    /// Connections accepted per second, all nodes.
    pub new_connections_per_sec: f64,
    /// `CLUSTER SLOTS` + `CLUSTER SHARDS` calls per second by clients, all nodes.
    pub cluster_slots_per_sec: f64,
    /// Business traffic ended at about zero.
    pub traffic_ended: bool,
    /// Seconds the `INFO` intervals cover (first sample to last, any node).
    pub secs: f64,
}

impl Evidence {
    /// The evidence of a recording's metrics.
    pub fn from_metrics(metrics: &Metrics) -> Evidence {
        let span = metrics
            .nodes
            .iter()
            .flat_map(|n| n.intervals.iter().map(|i| i.span))
            .reduce(|a, b| TimeSpan::new(a.start.min(b.start), a.end.max(b.end)));
        let Some(span) = span else {
            return Evidence::default();
        };
        let secs = ms_to_secs(span.millis().max(1));
        let tail_start = Timestamp(span.end.0.saturating_sub(tail_ms(span.millis())));
        let mut per_cmd: BTreeMap<String, CommandDelta> = BTreeMap::new();
        let (mut moved, mut conns, mut slots) = (0u64, 0u64, 0u64);
        let (mut business, mut tail_business) = (0u64, 0u64);
        for node in &metrics.nodes {
            for i in &node.intervals {
                for (c, d) in &i.commands {
                    if is_business_command(c) {
                        let e = per_cmd.entry(c.clone()).or_default();
                        e.calls += d.calls;
                        e.rejected += d.rejected;
                    }
                }
                moved += i.error("MOVED");
                conns += i.connections_received;
                slots += i.command("cluster|slots").calls + i.command("cluster|shards").calls;
                let b = i.business().calls;
                business += b;
                if i.span.start >= tail_start {
                    tail_business += b;
                }
            }
        }
        let tail_secs = ms_to_secs(span.end.millis_since(tail_start).max(1));
        let share = |d: &CommandDelta| float::ratio(d.rejected, d.attempts());
        let (calls, rejected) = per_cmd
            .values()
            .fold((0, 0), |(c, r), d| (c + d.calls, r + d.rejected));
        Evidence {
            command: per_cmd
                .iter()
                .max_by(|a, b| a.1.attempts().cmp(&b.1.attempts()).then(b.0.cmp(a.0)))
                .map(|(c, _)| c.clone()),
            moved_share_by_command: per_cmd.iter().map(|(c, d)| (c.clone(), share(d))).collect(),
            moved_share: float::ratio(rejected, calls + rejected),
            mix: per_cmd
                .iter()
                .map(|(c, d)| (c.clone(), d.attempts()))
                .filter(|(_, n)| *n > 0)
                .collect(),
            moved_per_sec: float::from_u64(moved) / secs,
            new_connections_per_sec: float::from_u64(conns) / secs,
            cluster_slots_per_sec: float::from_u64(slots) / secs,
            traffic_ended: ended(
                float::from_u64(business) / secs,
                float::from_u64(tail_business) / tail_secs,
            ),
            secs,
        }
    }
}

/// Whether a tail rate of `tail_rate` against a mean of `mean_rate` looks like traffic that ended.
pub(super) fn ended(mean_rate: f64, tail_rate: f64) -> bool {
    mean_rate > 0.0 && tail_rate < WEDGED_TAIL_SHARE * mean_rate
}

/// What one replay predicts, in the units of [`Evidence`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Prediction {
    /// MOVED share of the workload's command.
    pub moved_share: f64,
    /// `MOVED` replies per second.
    pub moved_per_sec: f64,
    /// Connections opened per second.
    pub new_connections_per_sec: f64,
    /// `CLUSTER SLOTS` calls per second.
    pub cluster_slots_per_sec: f64,
    /// Successful commands ended at about zero.
    pub traffic_ended: bool,
}

impl Prediction {
    /// Reads a replay's report over `secs` seconds.
    pub fn from_report(r: &ReplayReport, secs: f64) -> Prediction {
        let secs = if secs > 0.0 { secs } else { 1.0 };
        let n = r.timeline.len();
        let tail = (n / 10).max(10).min(n / 2);
        let ok: u64 = r.timeline.iter().map(|s| s.ok).sum();
        let tail_ok: u64 = r.timeline[n - tail..].iter().map(|s| s.ok).sum();
        let per = |k: usize, v: u64| {
            float::from_u64(v) / float::from_u64(u64::try_from(k.max(1)).unwrap_or(1))
        };
        Prediction {
            moved_share: r.moved_share.values().next().copied().unwrap_or(0.0),
            moved_per_sec: float::from_u64(r.moved) / secs,
            new_connections_per_sec: float::from_u64(r.new_connections) / secs,
            cluster_slots_per_sec: float::from_u64(r.cluster_slots_calls) / secs,
            traffic_ended: tail > 0 && ended(per(n, ok), per(tail, tail_ok)),
        }
    }
}
