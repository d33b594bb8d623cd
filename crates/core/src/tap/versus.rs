//! The client's view beside the servers': per command, what the tapped client sent and how often
//! it was redirected, next to the servers' `commandstats` for the same command (which count every
//! client).

use serde::{Deserialize, Serialize};

use crate::float;
use crate::metrics::{CommandDelta, Metrics};
use crate::tap::summary::TapSummary;
use crate::time::{TimeSpan, Timestamp};

/// One command as the tapped client saw it and as the servers counted it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Versus {
    /// The command (subcommands as `cluster slots`).
    pub cmd: String,
    /// Commands the client sent.
    pub sent: u64,
    /// `MOVED` replies it got.
    pub moved: u64,
    /// `ASK` replies it got.
    pub ask: u64,
    /// Other errors, `TRYAGAIN`, `CLUSTERDOWN` and closed connections.
    pub errors: u64,
    /// `MOVED ÷ sent`, as the client saw it.
    pub client_moved_share: f64,
    /// The servers' counters for the command summed over every node and the whole recording
    /// (`None` without `INFO` samples).
    pub server: Option<CommandDelta>,
}

impl Versus {
    /// `rejected_calls ÷ (calls + rejected_calls)` over every node: the servers' share, which
    /// counts every client (`None` without samples or attempts).
    pub fn server_share(&self) -> Option<f64> {
        let d = self.server?;
        let attempts = d.attempts();
        (attempts > 0).then(|| float::from_u64(d.rejected) / float::from_u64(attempts))
    }
}

/// Every command of `tap` beside the servers' counters in `metrics` over `span` (the recording's).
pub fn versus(tap: &TapSummary, metrics: &Metrics, span: Option<TimeSpan>) -> Vec<Versus> {
    if tap.per_command.is_empty() {
        // No tap in the recording: nothing to set the servers' counts beside.
        return Vec::new();
    }
    let span = span.unwrap_or_else(|| TimeSpan::new(Timestamp(0), Timestamp(u64::MAX)));
    // Intervals count when they end inside; the last one ends at the span's end.
    let everything = TimeSpan::new(span.start, Timestamp(span.end.0.saturating_add(1)));
    let totals: Vec<_> = metrics
        .nodes
        .iter()
        .map(|n| n.total_in(everything))
        .collect();
    tap.per_command
        .iter()
        .map(|(cmd, c)| {
            // commandstats names subcommands `cluster|slots`.
            let stat = cmd.replace(' ', "|");
            let server = (!totals.is_empty()).then(|| {
                let mut d = CommandDelta::default();
                for x in totals.iter().filter_map(|t| t.commands.get(&stat)) {
                    d.add(x);
                }
                d
            });
            Versus {
                cmd: cmd.clone(),
                sent: c.sent,
                moved: c.moved,
                ask: c.ask,
                errors: c.errors + c.try_again + c.cluster_down + c.closed,
                client_moved_share: c.moved_share(),
                server,
            }
        })
        .collect()
}
