//! The instrumented application (`tests/scenarios/app.py` for redis-py, `apps/` for the other
//! libraries: [`Library`]), run as a separate program, and the one JSON line it reports: the
//! plug-in contract of docs/FIDELITY.md ("The application contract").

use std::time::Duration;

use serde_json::{json, Value};

use crate::matrix::library::Library;
use crate::program::Program;

/// The application's socket and connect timeouts, seconds.
pub const SOCKET_TIMEOUT_S: f64 = 0.5;

/// What the application is told (the contract's settings object).
#[derive(Clone, Debug, PartialEq)]
pub struct AppSettings {
    /// The startup node, `host:port`.
    pub startup: String,
    /// Commands scheduled per second.
    pub rate: u32,
    /// Commands in flight at most.
    pub in_flight: u32,
    /// Seconds commands are scheduled.
    pub duration_s: u32,
    /// Distinct keys `key:{0}` …
    pub keys: u32,
    /// The keys' prefix instead of `key` (optional in the contract; `None` leaves it out).
    pub key_prefix: Option<String>,
    /// The command.
    pub command: String,
    /// `host:port` every address maps to, if any.
    pub address_remap: Option<String>,
    /// Socket timeout, seconds.
    pub socket_timeout_s: f64,
    /// Connect timeout, seconds.
    pub connect_timeout_s: f64,
    /// `CLIENT SETNAME` of the application's connections.
    pub client_name: String,
    /// Seed of the key draw.
    pub seed: u64,
}

impl AppSettings {
    /// The settings [`to_json`](Self::to_json) wrote (none when a field is missing).
    pub fn from_json(v: &Value) -> Option<AppSettings> {
        let n = |k: &str| v[k].as_u64().and_then(|x| u32::try_from(x).ok());
        Some(AppSettings {
            startup: v["startup"].as_str()?.to_owned(),
            rate: n("rate")?,
            in_flight: n("in_flight")?,
            duration_s: n("duration_s")?,
            keys: n("keys")?,
            key_prefix: v["key_prefix"].as_str().map(str::to_owned),
            command: v["command"].as_str()?.to_owned(),
            address_remap: v["address_remap"].as_str().map(str::to_owned),
            socket_timeout_s: v["socket_timeout_s"].as_f64()?,
            connect_timeout_s: v["connect_timeout_s"].as_f64()?,
            client_name: v["client_name"].as_str()?.to_owned(),
            seed: v["seed"].as_u64()?,
        })
    }

    /// The settings as the one JSON argument the application takes.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "startup": self.startup,
            "rate": self.rate,
            "in_flight": self.in_flight,
            "duration_s": self.duration_s,
            "keys": self.keys,
            "command": self.command,
            "address_remap": self.address_remap,
            "socket_timeout_s": self.socket_timeout_s,
            "connect_timeout_s": self.connect_timeout_s,
            "client_name": self.client_name,
            "seed": self.seed,
        });
        if let Some(p) = &self.key_prefix {
            v["key_prefix"] = json!(p);
        }
        v
    }
}

/// A running application.
#[derive(Debug)]
pub struct App {
    client: Program,
}

impl App {
    /// Starts `library`'s application with `settings`; it is given its duration plus 30 s to
    /// report.
    ///
    /// # Panics
    ///
    /// If its app is not installed (the message says to run `scripts/setup`) or cannot start.
    pub fn start(library: Library, settings: &AppSettings) -> App {
        let limit = Duration::from_secs(u64::from(settings.duration_s) + 30);
        let command = library
            .command(&settings.to_json().to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        App {
            client: Program::start(format!("the {} app", library.label()), command, limit),
        }
    }

    /// Asks the application to end its schedule now (SIGTERM to its PID); it then drains and
    /// reports.
    pub fn terminate(&self) {
        self.client.terminate();
    }

    /// Waits for the application's report.
    ///
    /// # Errors
    ///
    /// If it failed or printed no report in the contract's shape (the error carries its stderr).
    pub fn finish(self) -> Result<AppReport, String> {
        let out = self.client.wait();
        if !out.status.success() {
            return Err(format!(
                "application exited with {}\n--- stderr ---\n{}",
                out.status, out.stderr
            ));
        }
        let line = out.stdout.lines().last().unwrap_or_default();
        let v: Value = serde_json::from_str(line).map_err(|e| {
            format!(
                "application report is not JSON ({e}): {line:?}\n--- stderr ---\n{}",
                out.stderr
            )
        })?;
        AppReport::from_json(v)
    }
}

/// The application's report (the contract's output line).
#[derive(Clone, Debug, PartialEq)]
pub struct AppReport {
    /// The whole line.
    pub raw: Value,
    /// Library name.
    pub client: String,
    /// Library release.
    pub version: String,
    /// Commands issued.
    pub issued: u64,
    /// Commands that returned.
    pub succeeded: u64,
    /// Commands that raised.
    pub failed: u64,
    /// Commands skipped (their time passed while every permit was taken).
    pub skipped: u64,
    /// Initialisations started.
    pub initializations: u64,
    /// `CLUSTER SLOTS` sent.
    pub cluster_slots_calls: u64,
    /// Connections opened.
    pub new_connections: u64,
    /// Whether the client ended wedged.
    pub wedged: bool,
    /// Since when, epoch ms.
    pub wedged_since_ms: Option<u64>,
    /// When the first command raised, epoch ms (optional in the contract; none when no command
    /// raised or the program does not report it).
    pub first_error_ms: Option<u64>,
    /// When the command that raised first was issued, epoch ms (optional in the contract): a
    /// command that times out raises one socket timeout after the servers last saw it.
    pub first_error_issued_ms: Option<u64>,
    /// Median time from a command's start to its success, milliseconds (optional in the
    /// contract; none without a success).
    pub latency_p50_ms: Option<f64>,
    /// Median exchange with one node that got a reply, milliseconds (optional in the contract).
    pub exchange_p50_ms: Option<f64>,
    /// When commands started being scheduled, epoch ms.
    pub started_ms: u64,
    /// When the schedule ended (no command issued after), epoch ms.
    pub issuing_ended_ms: u64,
    /// When the application ended (commands in flight drained), epoch ms.
    pub ended_ms: u64,
}

fn field(v: &Value, name: &str) -> Result<u64, String> {
    v[name]
        .as_u64()
        .ok_or_else(|| format!("application report has no count {name:?}: {v}"))
}

impl AppReport {
    /// Reads the contract's fields out of `v`.
    ///
    /// # Errors
    ///
    /// If a required field is missing.
    pub fn from_json(v: Value) -> Result<AppReport, String> {
        Ok(AppReport {
            client: v["client"].as_str().unwrap_or("?").to_owned(),
            version: v["version"].as_str().unwrap_or("?").to_owned(),
            issued: field(&v, "issued")?,
            succeeded: field(&v, "succeeded")?,
            failed: field(&v, "failed")?,
            skipped: field(&v, "skipped")?,
            initializations: field(&v, "initializations")?,
            cluster_slots_calls: field(&v, "cluster_slots_calls")?,
            new_connections: field(&v, "new_connections")?,
            wedged: v["wedged"]
                .as_bool()
                .ok_or_else(|| format!("application report has no wedged: {v}"))?,
            wedged_since_ms: v["wedged_since_ms"].as_u64(),
            first_error_ms: v["first_error_ms"].as_u64(),
            first_error_issued_ms: v["first_error_issued_ms"].as_u64(),
            latency_p50_ms: v["latency_p50_ms"].as_f64(),
            exchange_p50_ms: v["exchange_p50_ms"].as_f64(),
            started_ms: field(&v, "started_ms")?,
            issuing_ended_ms: field(&v, "issuing_ended_ms")?,
            ended_ms: field(&v, "ended_ms")?,
            raw: v,
        })
    }

    /// Replies received for `command` (success, MOVED, ASK or another error reply).
    pub fn calls(&self, command: &str) -> u64 {
        self.raw["calls"][command].as_u64().unwrap_or(0)
    }

    /// The round trip the replay is given (`--rtt-ms`): the quiet one the application measured
    /// before it started (`rtt_ms`, reported by an app whose model charges its client's own
    /// loop, redis-py's), else its median exchange with a node (the loop's waits included), else
    /// its median command latency, as a user gives what they observe.
    pub fn round_trip_ms(&self) -> Option<f64> {
        self.raw["rtt_ms"]
            .as_f64()
            .or(self.exchange_p50_ms)
            .or(self.latency_p50_ms)
    }

    /// MOVED replies to `command`.
    pub fn moved(&self, command: &str) -> u64 {
        self.raw["moved"][command].as_u64().unwrap_or(0)
    }

    /// ASK replies to `command`.
    pub fn ask(&self, command: &str) -> u64 {
        self.raw["ask"][command].as_u64().unwrap_or(0)
    }

    /// Error replies to `command` other than MOVED and ASK (`CLUSTERDOWN`, `TRYAGAIN`, …).
    pub fn error_replies(&self, command: &str) -> u64 {
        self.raw["error_replies"][command].as_u64().unwrap_or(0)
    }

    /// Commands that ended (succeeded, failed) from `from_ms` (inclusive) to `to_ms` (exclusive),
    /// epoch ms, read from the optional `outcomes` buckets: every bucket that overlaps the window
    /// counts whole. `None` when the program reports no buckets.
    pub fn ended_between(&self, from_ms: u64, to_ms: u64) -> Option<(u64, u64)> {
        let o = &self.raw["outcomes"];
        let width = self.outcome_bucket_ms()?;
        let ok = o["ok"].as_array()?;
        let failed = o["failed"].as_array()?;
        let first = from_ms.saturating_sub(self.started_ms) / width;
        let last = to_ms.saturating_sub(self.started_ms).saturating_sub(1) / width;
        let sum = |v: &[Value]| -> u64 {
            v.iter()
                .enumerate()
                .filter(|(i, _)| (first..=last).contains(&(*i as u64)))
                .map(|(_, n)| n.as_u64().unwrap_or(0))
                .sum()
        };
        Some((sum(ok), sum(failed)))
    }

    /// When the earliest-issued of the commands that ended failing in `[from_ms, to_ms)` was
    /// issued, epoch ms (`outcomes.failed_issued`; `None` when the report has none there).
    pub fn failed_issued_between(&self, from_ms: u64, to_ms: u64) -> Option<u64> {
        let width = self.outcome_bucket_ms()?;
        let issued = self.raw["outcomes"]["failed_issued"].as_array()?;
        let first = from_ms.saturating_sub(self.started_ms) / width;
        let last = to_ms.saturating_sub(self.started_ms).saturating_sub(1) / width;
        issued
            .iter()
            .enumerate()
            .filter(|(i, _)| (first..=last).contains(&(*i as u64)))
            .filter_map(|(_, v)| v.as_u64())
            .min()
    }

    /// The width of the `outcomes` buckets, ms (`None` without them).
    pub fn outcome_bucket_ms(&self) -> Option<u64> {
        self.raw["outcomes"]["bucket_ms"]
            .as_u64()
            .filter(|&w| w > 0)
    }

    /// Exceptions the application saw, by class.
    pub fn errors(&self) -> Vec<(String, u64)> {
        self.raw["errors"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The scheduling rate the application achieved: commands issued or skipped per second of
    /// its schedule (below the asked rate when the machine could not keep up).
    pub fn achieved_rate(&self) -> u32 {
        let ms = self.issuing_ended_ms.saturating_sub(self.started_ms).max(1);
        let per_s = (self.issued + self.skipped) as f64 * 1000.0 / ms as f64;
        // A rate is at least 1 and far below u32::MAX.
        (per_s.round().max(1.0)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(extra: &[(&str, Value)]) -> AppReport {
        let mut v = json!({
            "client": "redis-py", "version": "8.1.0", "issued": 10, "succeeded": 10,
            "failed": 0, "skipped": 0, "initializations": 1, "cluster_slots_calls": 1,
            "new_connections": 3, "wedged": false, "started_ms": 1, "issuing_ended_ms": 2,
            "ended_ms": 3
        });
        for (k, x) in extra {
            v[*k] = x.clone();
        }
        AppReport::from_json(v).expect("a report in the contract's shape")
    }

    #[test]
    fn the_replay_gets_the_quiet_round_trip_when_the_app_measured_one() {
        let loaded = [
            ("exchange_p50_ms", json!(5.4)),
            ("latency_p50_ms", json!(47.0)),
        ];
        assert_eq!(report(&loaded).round_trip_ms(), Some(5.4));
        let mut quiet = loaded.to_vec();
        quiet.push(("rtt_ms", json!(0.06)));
        assert_eq!(report(&quiet).round_trip_ms(), Some(0.06));
        assert_eq!(
            report(&[("latency_p50_ms", json!(0.9))]).round_trip_ms(),
            Some(0.9)
        );
        assert_eq!(report(&[]).round_trip_ms(), None);
    }
}
