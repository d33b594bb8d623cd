//! The case replayed: `slotscope replay` of the case's recording through the model of the
//! application's library, with the application's settings.
//!
//! The replay's options follow what the binary offers (read from `slotscope replay --help`):
//! `--in-flight N` where it exists, else `--concurrency N` (lanes, capped at
//! [`CONCURRENCY_CAP`]); `--from`/`--to` (the application's run, epoch ms) where they exist, else
//! the whole recording; the application's exact release (`redis-py@8.1.0`) and, if the binary
//! refuses it, the model it has for that line (`redis-py@8.0.0`). Each fallback taken is listed in
//! [`Replayed::fallbacks`].

use std::process::Output;
use std::sync::OnceLock;

use serde_json::Value;
use slotscope_core::Timestamp;

use crate::collector::run_slotscope;
use crate::matrix::app::SOCKET_TIMEOUT_S;
use crate::matrix::case::Case;
use crate::matrix::library::Library;
use crate::matrix::live::LiveRun;

/// `--concurrency` used for a larger cap on commands in flight when the binary has no
/// `--in-flight` (its lanes cost a task each in the replay, and none of them is a real task).
pub const CONCURRENCY_CAP: u32 = 64;

/// How the application's run is given to `--from`/`--to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Window {
    /// Epoch milliseconds.
    EpochMs,
    /// RFC 3339 (`2026-12-01T17:40:14.123Z`).
    Rfc3339,
    /// Not given: the whole recording.
    Whole,
}

impl Window {
    fn format(self, ms: u64) -> String {
        match self {
            Window::Rfc3339 => Timestamp(ms).to_rfc3339(),
            Window::EpochMs | Window::Whole => ms.to_string(),
        }
    }
}

/// What the binary's `replay` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// `--in-flight N`.
    pub in_flight: bool,
    /// `--from`/`--to`.
    pub window: bool,
    /// `--rtt-ms`.
    pub rtt: bool,
}

/// The binary's capabilities, read once from `slotscope replay --help`.
pub fn capabilities() -> Capabilities {
    static CAPS: OnceLock<Capabilities> = OnceLock::new();
    *CAPS.get_or_init(|| {
        let o = run_slotscope(&["replay", "--help"]);
        let help = String::from_utf8_lossy(&o.stdout);
        Capabilities {
            in_flight: help.contains("--in-flight"),
            window: help.contains("--from") && help.contains("--to"),
            rtt: help.contains("--rtt-ms"),
        }
    })
}

/// A replay that ran.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The arguments it ran with (after `slotscope`).
    pub args: Vec<String>,
    /// Its `--format json` report.
    pub report: Value,
    /// The fallbacks taken, in words.
    pub fallbacks: Vec<String>,
}

/// The exact model for `case`, then the one of its release line the binary may have instead.
fn models(case: &Case) -> Vec<String> {
    let exact = case.model();
    let line = match (case.library, case.library.version().split('.').next()) {
        (Library::RedisPy(_), Some("8")) => "redis-py@8.0.0".to_owned(),
        (Library::RedisPy(_), Some("5")) => "redis-py@5.0.0".to_owned(),
        _ => exact.clone(),
    };
    if line == exact {
        vec![exact]
    } else {
        vec![exact, line]
    }
}

fn args_for(
    case: &Case,
    live: &LiveRun,
    model: &str,
    caps: Capabilities,
    window: Window,
) -> (Vec<String>, Vec<String>) {
    let mut fallbacks = Vec::new();
    let rate = live.app.achieved_rate();
    let mut a: Vec<String> = vec![
        "replay".into(),
        live.recording.display().to_string(),
        "--model".into(),
        model.into(),
        "--rate".into(),
        rate.to_string(),
        "--keys".into(),
        case.keys.to_string(),
        "--command".into(),
        case.command.into(),
        "--format".into(),
        "json".into(),
        "--set".into(),
        format!("startup_nodes={}", live.settings.startup),
        "--set".into(),
        format!("socket_timeout={SOCKET_TIMEOUT_S}"),
    ];
    if let Some(option) = case.library.connect_timeout_option() {
        let ms = (live.settings.connect_timeout_s * 1000.0).round();
        a.push("--set".into());
        a.push(format!("{option}={ms}"));
    }
    // What the library resolved that its model takes (go-redis's `PoolSize`, 5 per CPU of the
    // application's machine) and its CPU costs timed on that machine before the case: given as
    // a user gives their configuration.
    for (k, v) in live.model_options() {
        a.push("--set".into());
        a.push(format!("{k}={v}"));
    }
    if let Some(remap) = &live.settings.address_remap {
        // The model's own option for it, by the library's name (`hostAndPortMapper`, …).
        let option = case.library.address_option().unwrap_or("address_remap");
        a.push("--set".into());
        a.push(format!("{option}={remap}"));
    }
    if caps.in_flight {
        a.push("--in-flight".into());
        a.push(case.in_flight.to_string());
        let rtt = live.app.round_trip_ms();
        if let (true, Some(ms)) = (caps.rtt, rtt) {
            a.push("--rtt-ms".into());
            a.push(format!("{:.3}", ms.clamp(0.0, 60_000.0)));
        }
    } else {
        let lanes = case.in_flight.min(CONCURRENCY_CAP);
        a.push("--concurrency".into());
        a.push(lanes.to_string());
        fallbacks.push(format!(
            "no --in-flight: --concurrency {lanes} (lanes) for {} in flight",
            case.in_flight
        ));
    }
    if window != Window::Whole {
        a.push("--from".into());
        a.push(window.format(live.app.started_ms));
        a.push("--to".into());
        a.push(window.format(live.app.issuing_ended_ms));
    }
    (a, fallbacks)
}

fn run(args: &[String]) -> Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run_slotscope(&refs)
}

/// Replays `live`'s recording for `case`.
///
/// # Errors
///
/// If every variant of the replay failed (the error carries the last stderr).
pub fn replay(case: &Case, live: &LiveRun) -> Result<Replayed, String> {
    let caps = capabilities();
    let mut last_error = String::new();
    let windows: &[Window] = if caps.window {
        &[Window::EpochMs, Window::Rfc3339, Window::Whole]
    } else {
        &[Window::Whole]
    };
    for model in models(case) {
        for &window in windows {
            let (args, mut fallbacks) = args_for(case, live, &model, caps, window);
            let o = run(&args);
            if !o.status.success() {
                last_error = format!(
                    "slotscope {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                continue;
            }
            let report: Value = serde_json::from_slice(&o.stdout)
                .map_err(|e| format!("replay --format json is not JSON: {e}"))?;
            if model != case.model() {
                fallbacks.push(format!("{} refused: replayed {model}", case.model()));
            }
            if window == Window::Whole {
                fallbacks.push(if caps.window {
                    "--from/--to refused: the whole recording".to_owned()
                } else {
                    "no --from/--to: the whole recording".to_owned()
                });
            }
            return Ok(Replayed {
                args,
                report,
                fallbacks,
            });
        }
    }
    Err(last_error)
}
