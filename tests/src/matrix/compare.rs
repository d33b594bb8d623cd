//! The comparison of one case: what the real application reported against what the model
//! replayed, metric by metric, each against the target, with a likely cause for a miss
//! where the figures tell one.
//!
//! Targets (issue 12): wedged / not wedged identical; MOVED share (MOVED ÷ replies received, the
//! application's command) within 5 points; full re-initialisations (`CLUSTER SLOTS` sent) within
//! 25 %; new connections within 25 % (of the real figure; a real 0 is met by a model 0 only).

use std::fmt::Write as _;

use serde_json::Value;

use crate::matrix::app::AppReport;
use crate::matrix::case::{Case, RecordStart};
use crate::matrix::timing;

/// MOVED share target, percentage points.
pub const MOVED_POINTS: f64 = 5.0;
/// Re-initialisation and new-connection target, relative to the real figure.
pub const COUNT_REL: f64 = 0.25;

/// A compared metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    /// Wedged or not at the end.
    Wedged,
    /// MOVED ÷ replies of the application's command.
    MovedShare,
    /// `CLUSTER SLOTS` sent.
    Reinits,
    /// Connections opened.
    NewConnections,
    /// From the fault (or, without one, the schedule's start) to the first failed command.
    FirstFailure,
    /// From the fault (or the schedule's start) to recovery: after the last failed command, with
    /// successes after it ([`timing`]).
    Recovery,
}

impl Metric {
    /// Every metric, in table order.
    pub const ALL: [Metric; 6] = [
        Metric::Wedged,
        Metric::MovedShare,
        Metric::Reinits,
        Metric::NewConnections,
        Metric::FirstFailure,
        Metric::Recovery,
    ];

    /// Its name in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Wedged => "wedged",
            Metric::MovedShare => "MOVED share",
            Metric::Reinits => "re-initialisations (CLUSTER SLOTS)",
            Metric::NewConnections => "new connections",
            Metric::FirstFailure => "to first failure",
            Metric::Recovery => "to recovery",
        }
    }

    /// Its target, in words.
    pub fn target(self) -> &'static str {
        match self {
            Metric::Wedged => "identical",
            Metric::MovedShare => "within 5 points",
            Metric::Reinits | Metric::NewConnections => "within 25 %",
            Metric::FirstFailure | Metric::Recovery => "within 1 s or 25 %",
        }
    }

    /// The share of cases the issue wants within the target.
    pub fn wanted_share(self) -> f64 {
        match self {
            Metric::Wedged => 0.95,
            Metric::MovedShare => 0.90,
            Metric::Reinits | Metric::NewConnections | Metric::FirstFailure | Metric::Recovery => {
                0.80
            }
        }
    }
}

/// One metric of one case.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Which.
    pub metric: Metric,
    /// The real figure, in words.
    pub real: String,
    /// The model's, in words.
    pub model: String,
    /// Whether the target was met.
    pub met: bool,
    /// A likely cause of a miss, where the figures tell one.
    pub cause: Option<String>,
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// MOVED ÷ replies, percent (0 without replies).
pub fn share(moved: u64, calls: u64) -> f64 {
    if calls == 0 {
        0.0
    } else {
        100.0 * moved as f64 / calls as f64
    }
}

/// Whether the MOVED share of `other` (MOVED, replies) is within [`MOVED_POINTS`] of `real`'s; a
/// share of no replies is no share, so one side without a reply is a miss.
pub fn moved_within(real: (u64, u64), other: (u64, u64)) -> bool {
    let one_sided = (real.1 == 0) != (other.1 == 0);
    !one_sided && (share(real.0, real.1) - share(other.0, other.1)).abs() <= MOVED_POINTS
}

/// Whether `model` is within [`COUNT_REL`] of `real`.
pub fn count_within(real: u64, model: u64) -> bool {
    (model as f64 - real as f64).abs() <= COUNT_REL * real as f64
}

fn relative(real: u64, model: u64) -> String {
    if real == 0 {
        return if model == 0 {
            "±0 %".into()
        } else {
            "—".into()
        };
    }
    format!(
        "{:+.0} %",
        100.0 * (model as f64 - real as f64) / real as f64
    )
}

fn secs_after(ms: u64, start_ms: u64) -> String {
    format!("{:+.1} s", (ms as f64 - start_ms as f64) / 1000.0)
}

/// Causes that concern every metric of the case.
fn common_causes(
    case: &Case,
    app: &AppReport,
    replay: &Value,
    fallbacks: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    let whole = fallbacks.iter().any(|f| f.contains("whole recording"));
    if whole && case.record_start == RecordStart::BeforeSlots {
        let early = replay["wedged_since"]
            .as_u64()
            .is_some_and(|w| w < app.started_ms);
        out.push(if early {
            "replay ran from the recording's start, before slot assignment (no --from), and \
             wedged there"
                .to_owned()
        } else {
            "replay ran from the recording's start, before slot assignment (no --from)".to_owned()
        });
    }
    // Exceptions whose counts differ between the real run and the model, the largest first.
    let mut classes: Vec<(String, u64, u64)> = app
        .errors()
        .into_iter()
        .map(|(k, n)| {
            let m = u(&replay["errors"][k.as_str()]);
            (k, n, m)
        })
        .collect();
    if let Some(model_errors) = replay["errors"].as_object() {
        for (k, v) in model_errors {
            if !classes.iter().any(|(c, _, _)| c == k) {
                classes.push((k.clone(), 0, u(v)));
            }
        }
    }
    classes.retain(|(_, r, m)| !count_within(*r, *m));
    classes.sort_by_key(|(_, r, m)| std::cmp::Reverse((*r).max(*m)));
    for (class, r, m) in classes.into_iter().take(3) {
        out.push(format!("{class}: real {r}, model {m}"));
    }
    let (model_issued, model_skipped) =
        (u(&replay["commands"]), u(&replay["skipped_while_waiting"]));
    if !count_within(app.issued, model_issued) {
        out.push(format!(
            "model issued {model_issued} commands, real {} (skipped: model {model_skipped}, real {})",
            app.issued, app.skipped
        ));
    }
    // The application's CPU time (the library's work and its own) beside the client work the
    // model charged, where both are known: a model whose client is idler than the real one
    // reacts faster to what it meets.
    if let (Some(real), Some(model)) =
        (app.raw["cpu_ms"].as_f64(), replay["client_cpu_ms"].as_f64())
    {
        if model > 0.0 && (model - real).abs() > COUNT_REL * real {
            out.push(format!(
                "client CPU: real {:.1} s, model {:.1} s",
                real / 1000.0,
                model / 1000.0
            ));
        }
    }
    if fallbacks.iter().any(|f| f.contains("--concurrency")) && case.in_flight > 1 {
        out.push("replayed as lanes (no --in-flight)".to_owned());
    }
    out
}

fn with_common(specific: String, common: &[String]) -> Option<String> {
    let mut s = specific;
    for c in common {
        if !s.is_empty() {
            s.push_str("; ");
        }
        s.push_str(c);
    }
    Some(s)
}

/// How long every command must have failed before the schedule ended for an application to
/// call itself wedged (`WEDGE_MIN_MS` of `apps/java`, `WEDGED_MIN_MS` of `apps/node`,
/// `wedgedMinMS` of `apps/go-redis`).
pub const WEDGED_MIN_MS: u64 = 1000;

/// The contract's outcome rule applied to a replay: the start of the second from which every
/// command the model issued failed (none succeeded in it or after it, one failed), when that is
/// at least [`WEDGED_MIN_MS`] before `ended_ms` (the schedule's end, epoch ms). The replay's
/// timeline counts outcomes by the second a command was issued, the applications by when it
/// ended, in 250 ms buckets: the moment can differ by up to a second.
///
/// Commands that never ended count as failed in the second they were issued, as the
/// applications count a command their drain gave up on from its issue: when the last successes'
/// second has failures and the application could issue nothing in the seconds after it (every
/// place in flight held by a command that never ended), the client failed from the next second.
pub fn failing_since(replay: &Value, ended_ms: u64) -> Option<u64> {
    let seconds = replay["timeline"].as_array()?;
    let last_ok = seconds.iter().rposition(|s| u(&s["ok"]) > 0);
    let from = last_ok.map_or(0, |i| i + 1);
    let first_failed = seconds[from..]
        .iter()
        .position(|s| u(&s["errors"]) > 0)
        .map(|i| from + i);
    let blocked_until = first_failed.unwrap_or(seconds.len());
    let hung = last_ok.is_some_and(|i| u(&seconds[i]["errors"]) > 0)
        && from < blocked_until
        && seconds[from..blocked_until]
            .iter()
            .all(|s| s.get("commands").is_some() && u(&s["commands"]) == 0);
    let at = if hung { from } else { first_failed? };
    let since = seconds[at]["t"].as_u64()?;
    (since.saturating_add(WEDGED_MIN_MS) <= ended_ms).then_some(since)
}

/// Compares every metric of one case; `fault_ms` is when its fault began (epoch ms, none
/// without one).
pub fn compare(
    case: &Case,
    app: &AppReport,
    replay: &Value,
    fallbacks: &[String],
    fault_ms: Option<u64>,
) -> Vec<Comparison> {
    let common = common_causes(case, app, replay, fallbacks);
    let cmd = case.command;
    let mut out = Vec::new();

    // Wedged, by the rule the application applies: the model's own state for redis-py (whose
    // app reports "no startup node left"), the outcomes for the others.
    let (model_wedged, model_since) = if case.library.wedged_by_outcomes() {
        let since = failing_since(replay, app.issuing_ended_ms);
        (since.is_some(), since)
    } else {
        (
            replay["wedged"].as_bool().unwrap_or(false),
            replay["wedged_since"].as_u64(),
        )
    };
    let real_text = match app.wedged_since_ms {
        Some(t) if app.wedged => format!("yes, at {}", secs_after(t, app.started_ms)),
        _ if app.wedged => "yes".to_owned(),
        _ => "no".to_owned(),
    };
    let model_text = match model_since {
        Some(t) if model_wedged => format!("yes, at {}", secs_after(t, app.started_ms)),
        _ if model_wedged => "yes".to_owned(),
        _ => "no".to_owned(),
    };
    let met = model_wedged == app.wedged;
    let cause = (!met).then(|| {
        let specific = if app.wedged {
            format!(
                "model not wedged, real wedged at {}",
                real_text.trim_start_matches("yes, at ")
            )
        } else {
            format!(
                "model wedged at {}, real not wedged",
                model_text.trim_start_matches("yes, at ")
            )
        };
        with_common(specific, &common)
    });
    out.push(Comparison {
        metric: Metric::Wedged,
        real: real_text,
        model: model_text,
        met,
        cause: cause.flatten(),
    });

    // MOVED share.
    let (rm, rc) = (app.moved(cmd), app.calls(cmd));
    let st = &replay["per_command"][cmd];
    let (mm, mc) = (u(&st["moved"]), u(&st["calls"]));
    let (rs, ms) = (share(rm, rc), share(mm, mc));
    let one_sided = (rc == 0) != (mc == 0);
    let met = moved_within((rm, rc), (mm, mc));
    let specific = if one_sided {
        format!(
            "{} no reply to {cmd}",
            if mc == 0 { "model had" } else { "real had" }
        )
    } else {
        format!("MOVED share {:+.2} points off", ms - rs)
    };
    out.push(Comparison {
        metric: Metric::MovedShare,
        real: format!("{rs:.2} % ({rm} / {rc})"),
        model: format!("{ms:.2} % ({mm} / {mc})"),
        met,
        cause: if met {
            None
        } else {
            with_common(specific, &common)
        },
    });

    // Re-initialisations and new connections.
    for (metric, real, model) in [
        (
            Metric::Reinits,
            app.cluster_slots_calls,
            u(&replay["cluster_slots_calls"]),
        ),
        (
            Metric::NewConnections,
            app.new_connections,
            u(&replay["new_connections"]),
        ),
    ] {
        let met = count_within(real, model);
        let mut specific = format!("model {} ({model} vs {real})", relative(real, model));
        if metric == Metric::Reinits && app.wedged != model_wedged {
            let _ = write!(specific, "; wedged differs");
        }
        out.push(Comparison {
            metric,
            real: real.to_string(),
            model: format!("{model} ({})", relative(real, model)),
            met,
            cause: if met {
                None
            } else {
                with_common(specific, &common)
            },
        });
    }

    // When failures began and ended, after the fault.
    let from = fault_ms.unwrap_or(app.started_ms);
    // The application read at the replay's width: its own where the replay reports quarter
    // seconds, else on the replay's seconds.
    let real = match timing::model_grid(replay) {
        Some((grid, width)) if !timing::model_has_outcomes(replay) => {
            timing::app_onset_on(app, from, grid, width)
        }
        _ => timing::app_onset(app, from),
    }
    .unwrap_or_default();
    let model = timing::model_onset(replay, from).unwrap_or_default();
    let after = |t: Option<u64>| t.map(|t| t.saturating_sub(from));
    for (metric, r, m) in [
        (
            Metric::FirstFailure,
            after(real.first_failure_ms),
            after(model.first_failure_ms),
        ),
        (
            Metric::Recovery,
            after(real.recovered_ms),
            after(model.recovered_ms),
        ),
    ] {
        let met = timing::delay_within(r, m);
        let mut specific = format!(
            "real {}, model {}",
            timing::delay_text(r),
            timing::delay_text(m)
        );
        if app.wedged != model_wedged {
            let _ = write!(specific, "; wedged differs");
        }
        out.push(Comparison {
            metric,
            real: timing::delay_text(r),
            model: timing::delay_text(m),
            met,
            cause: if met {
                None
            } else {
                with_common(specific, &common)
            },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn app(wedged_since: Option<u64>) -> AppReport {
        AppReport::from_json(json!({
            "client": "redis-py", "version": "5.0.0", "issued": 1000, "succeeded": 100,
            "failed": 900, "skipped": 0, "initializations": 2, "cluster_slots_calls": 10,
            "new_connections": 40, "wedged": wedged_since.is_some(),
            "wedged_since_ms": wedged_since, "started_ms": 10_000, "issuing_ended_ms": 20_000,
            "ended_ms": 20_100, "errors": {"RedisClusterException": 900},
            "moved": {"zadd": 10}, "calls": {"zadd": 200}
        }))
        .expect("a report in the contract's shape")
    }

    #[test]
    fn a_wedged_real_run_against_a_model_that_is_not_misses_with_its_cause() {
        let case = Case::draw(3);
        let replay = json!({
            "wedged": false, "commands": 1000, "cluster_slots_calls": 12,
            "new_connections": 60, "errors": {},
            "per_command": {"zadd": {"moved": 30, "calls": 1000}}
        });
        let c = compare(&case, &app(Some(11_400)), &replay, &[], None);
        let w = &c[0];
        assert_eq!(w.metric, Metric::Wedged);
        assert!(!w.met);
        let cause = w.cause.as_deref().unwrap();
        assert!(cause.contains("real wedged at +1.4 s"), "{cause}");
        assert!(
            cause.contains("RedisClusterException: real 900, model 0"),
            "{cause}"
        );
        // 5 % real against 3 % model: within 5 points.
        assert!(c[1].met, "{:?}", c[1]);
        // 10 against 12 CLUSTER SLOTS: within 25 %; 40 against 60 connections: not.
        assert!(c[2].met, "{:?}", c[2]);
        assert!(!c[3].met, "{:?}", c[3]);
        assert!(c[3].cause.as_deref().unwrap().contains("+50 %"));
    }

    #[test]
    fn the_outcome_rule_finds_the_second_after_the_last_success() {
        let second = |t: u64, ok: u64, errors: u64| json!({"t": t, "ok": ok, "errors": errors});
        let replay = json!({"timeline": [
            second(10_000, 5, 1), second(11_000, 0, 3), second(12_000, 2, 0),
            second(13_000, 0, 0), second(14_000, 0, 4), second(15_000, 0, 4)
        ]});
        // The last success is in 12 s; the first failure after it in 14 s.
        assert_eq!(failing_since(&replay, 16_000), Some(14_000));
        assert_eq!(failing_since(&replay, 15_000), Some(14_000));
        // Less than a second of failures before the end: not wedged.
        assert_eq!(failing_since(&replay, 14_999), None);
        // A success in the last second: not wedged.
        let mut ok_at_end = replay.clone();
        ok_at_end["timeline"][5]["ok"] = json!(1);
        assert_eq!(failing_since(&ok_at_end, 16_000), None);
        // Nothing ever succeeded: from the first failure.
        let never = json!({"timeline": [second(10_000, 0, 0), second(11_000, 0, 2)]});
        assert_eq!(failing_since(&never, 20_000), Some(11_000));
        assert_eq!(failing_since(&json!({}), 20_000), None);
    }

    #[test]
    fn commands_that_never_ended_fail_from_the_second_after_the_last_successes() {
        // The last successes' second also issued commands that never ended (failed there, by
        // the second of issue); every place in flight held, nothing was issued after it, and one
        // late command failed at the end: failing from the second after the successes.
        let second = |t: u64, commands: u64, ok: u64, errors: u64| json!({"t": t, "commands": commands, "ok": ok, "errors": errors});
        let replay = json!({"timeline": [
            second(10_000, 5, 5, 0), second(11_000, 7, 3, 4), second(12_000, 0, 0, 0),
            second(13_000, 0, 0, 0), second(14_000, 1, 0, 1)
        ]});
        assert_eq!(failing_since(&replay, 14_800), Some(12_000));
        // A second after the successes in which commands were issued and none failed: the
        // client was not blocked, the first failure after it counts.
        let mut issued = replay.clone();
        issued["timeline"][2] = second(12_000, 3, 0, 0);
        assert_eq!(failing_since(&issued, 15_100), Some(14_000));
        assert_eq!(failing_since(&issued, 14_800), None);
        // No failure in the successes' second: nothing hung there.
        let mut clean = replay.clone();
        clean["timeline"][1] = second(11_000, 7, 7, 0);
        assert_eq!(failing_since(&clean, 14_800), None);
    }

    #[test]
    fn a_model_without_replies_misses_the_moved_share() {
        let case = Case::draw(3);
        let replay = json!({
            "wedged": true, "wedged_since": 9_000, "commands": 1000,
            "cluster_slots_calls": 10, "new_connections": 40, "errors": {},
            "per_command": {"zadd": {"moved": 0, "calls": 0}}
        });
        let c = compare(&case, &app(Some(11_400)), &replay, &[], None);
        assert!(c[0].met, "both wedged");
        assert_eq!(c[0].model, "yes, at -1.0 s");
        assert!(!c[1].met, "{:?}", c[1]);
        assert!(c[1]
            .cause
            .as_deref()
            .unwrap()
            .starts_with("model had no reply"));
    }

    #[test]
    fn counts_within_a_quarter_of_the_real_figure() {
        assert!(count_within(100, 125));
        assert!(count_within(100, 75));
        assert!(!count_within(100, 126));
        assert!(count_within(0, 0));
        assert!(!count_within(0, 1));
        assert!(!count_within(1, 2));
    }
}
