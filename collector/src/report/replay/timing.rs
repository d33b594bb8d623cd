//! How long a replayed exchange takes: the network round trip (`--rtt-ms`) and each command's
//! service time, from `--service-us` or from what the recording's `INFO commandstats` show.

use slotscope_core::float;
use slotscope_core::metrics::{CommandDelta, Metrics};
use slotscope_core::replay::{Timing, DEFAULT_RTT_US, DEFAULT_SERVICE_US};

/// Where a command's service time came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceSource {
    /// `--service-us`.
    Option,
    /// The median `usec / calls` of the command over the recording's `INFO` intervals, all nodes.
    Commandstats,
    /// Nothing recorded: the default.
    Default,
}

impl ServiceSource {
    /// The name shown in reports.
    pub fn name(self) -> &'static str {
        match self {
            ServiceSource::Option => "option",
            ServiceSource::Commandstats => "commandstats",
            ServiceSource::Default => "default",
        }
    }
}

/// The timing of a replay and where each command's service time came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimingChoice {
    /// The timing given to the workload.
    pub timing: Timing,
    /// Each command with its service time (µs) and its source, in the workload's name order.
    pub service: Vec<(String, u32, ServiceSource)>,
}

impl TimingChoice {
    /// The exchange times a hypothesis or a pre-flight gives its workloads.
    pub fn exchange_times(&self) -> slotscope_core::hypothesis::ExchangeTimes {
        slotscope_core::hypothesis::ExchangeTimes {
            rtt_us: Some(self.timing.rtt_us),
            service_us: self
                .service
                .iter()
                .map(|(n, us, _)| (n.clone(), *us))
                .collect(),
            default_us: Some(self.timing.default_us),
        }
    }
}

/// The median over every node's `INFO` intervals of `usec / calls` for `cmd` (intervals where it
/// ran), in whole microseconds (at least 1).
pub fn median_usec_per_call(metrics: &Metrics, cmd: &str) -> Option<u32> {
    median_per_call(
        metrics
            .nodes
            .iter()
            .flat_map(|n| n.intervals.iter())
            .filter_map(|i| i.commands.get(cmd)),
    )
}

/// The median of `usec / calls` over `deltas` with calls, in whole microseconds (at least 1).
fn median_per_call<'a>(deltas: impl Iterator<Item = &'a CommandDelta>) -> Option<u32> {
    let mut per_call: Vec<f64> = deltas
        .filter(|d| d.calls > 0)
        .map(|d| float::from_u64(d.usec) / float::from_u64(d.calls))
        .collect();
    if per_call.is_empty() {
        return None;
    }
    per_call.sort_by(f64::total_cmp);
    let mid = per_call.len() / 2;
    let median = if per_call.len().is_multiple_of(2) {
        (per_call[mid - 1] + per_call[mid]) / 2.0
    } else {
        per_call[mid]
    };
    // A usec_per_call is far below u32::MAX; the clamp keeps the conversion exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let us = median.round().clamp(1.0, f64::from(u32::MAX)) as u32;
    Some(us)
}

/// The timing of a workload of `names`: round trip `rtt_us` (default [`DEFAULT_RTT_US`]); each
/// command's service time `service_us` when given, else its median `usec_per_call` in the
/// recording, else [`DEFAULT_SERVICE_US`].
pub fn choose(
    names: &[String],
    metrics: &Metrics,
    rtt_us: Option<u32>,
    service_us: Option<u32>,
) -> TimingChoice {
    choose_with(
        names,
        &|n| median_usec_per_call(metrics, n),
        rtt_us,
        service_us,
    )
}

/// [`choose`] with the recorded service time of a command given by `recorded`.
fn choose_with(
    names: &[String],
    recorded: &dyn Fn(&str) -> Option<u32>,
    rtt_us: Option<u32>,
    service_us: Option<u32>,
) -> TimingChoice {
    let service: Vec<(String, u32, ServiceSource)> = names
        .iter()
        .map(|n| match service_us {
            Some(us) => (n.clone(), us, ServiceSource::Option),
            None => match recorded(n) {
                Some(us) => (n.clone(), us, ServiceSource::Commandstats),
                None => (n.clone(), DEFAULT_SERVICE_US, ServiceSource::Default),
            },
        })
        .collect();
    TimingChoice {
        timing: Timing {
            rtt_us: rtt_us.unwrap_or(DEFAULT_RTT_US),
            service_us: service.iter().map(|s| s.1).collect(),
            default_us: service_us.unwrap_or(DEFAULT_SERVICE_US),
        },
        service,
    }
}

impl TimingChoice {
    /// `round trip 250 µs; service zadd 12 µs (commandstats), get 3 µs (default)`.
    pub fn text(&self) -> String {
        let service: Vec<String> = self
            .service
            .iter()
            .map(|(n, us, src)| format!("{n} {us} µs ({})", src.name()))
            .collect();
        format!(
            "round trip {} µs; service {}",
            self.timing.rtt_us,
            service.join(", ")
        )
    }

    /// The timing as JSON: `rtt_us`, `default_service_us`, `service` (per command `us` and
    /// `source`).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "rtt_us": self.timing.rtt_us,
            "default_service_us": self.timing.default_us,
            "service": self.service.iter().map(|(n, us, src)| serde_json::json!({
                "command": n, "us": us, "source": src.name(),
            })).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(calls: u64, usec: u64) -> CommandDelta {
        CommandDelta {
            calls,
            usec,
            ..CommandDelta::default()
        }
    }

    #[test]
    fn the_median_of_usec_per_call_ignores_a_stalled_interval() {
        let d = [
            delta(100, 1000),
            delta(100, 1200),
            delta(10, 50_000),
            delta(0, 0),
        ];
        assert_eq!(median_per_call(d.iter()), Some(12));
        assert_eq!(median_per_call(d[..2].iter()), Some(11));
        assert_eq!(median_per_call(d[3..].iter()), None);
        assert_eq!(median_per_call([delta(1000, 100)].iter()), Some(1));
        assert_eq!(median_usec_per_call(&Metrics::default(), "zadd"), None);
    }

    #[test]
    fn service_times_come_from_the_option_then_commandstats_then_the_default() {
        let recorded = |n: &str| (n == "zadd").then_some(7);
        let names = vec!["zadd".to_owned(), "get".to_owned()];
        let c = choose_with(&names, &recorded, None, None);
        assert_eq!(c.timing.rtt_us, DEFAULT_RTT_US);
        assert_eq!(c.timing.service_us, vec![7, DEFAULT_SERVICE_US]);
        assert_eq!(c.service[0].2, ServiceSource::Commandstats);
        assert_eq!(c.service[1].2, ServiceSource::Default);
        assert!(
            c.text().contains("zadd 7 µs (commandstats)"),
            "{}",
            c.text()
        );
        let c = choose_with(&names, &recorded, Some(1500), Some(40));
        assert_eq!(c.timing.rtt_us, 1500);
        assert_eq!(c.timing.service_us, vec![40, 40]);
        assert_eq!(c.timing.default_us, 40);
        assert_eq!(c.json()["service"][1]["source"], "option");
    }
}
