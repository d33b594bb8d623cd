//! The pre-flight check (issue 25): one fidelity-matrix case end to end. The case runs live; its
//! recording is cut where the change began (what an always-on recorder holds then); `slotscope
//! preflight` is given that recording and the plan the case carried out ([`case_plan`]), with
//! what a user knows of the application (its library and release, its timeouts, its startup
//! node, its remap, its commands in flight, the round trip it measures); its verdict for the
//! application's group is judged against what the change really did ([`real_verdict`]).
//!
//! Right when the kinds agree (wedged or not exact), and for errors and storms their durations
//! agree within 25 % or 1 s (the replay counts seconds, the application quarter seconds).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use slotscope_core::preflight::{VerdictKind, UNEXPLAINED};

use crate::collector::run_slotscope;
use crate::matrix::app::SOCKET_TIMEOUT_S;
use crate::matrix::case::Case;
use crate::matrix::live::{self, Event, LiveRun, APP_NAME};
use crate::matrix::panic_payload::panic_text;
use crate::matrix::preflight_input::{case_plan, cut_before};
use crate::matrix::preflight_truth::{real_verdict, RealVerdict};
use crate::matrix::rescore::{kept_run, read_json};
use crate::matrix::runner::keep_run;

/// How much longer than drawn the application runs before the change: a recording of the
/// cluster before a change holds its clients for a while (an always-on recorder, minutes), and an
/// application whose runtime starts slowly (the JVM) would otherwise show no traffic before a
/// change drawn 1.5 s after its start.
pub const SETTLE_MS: u64 = 4_000;

/// Durations agree within this share…
pub const DURATION_SHARE: f64 = 0.25;
/// …or this many milliseconds.
pub const DURATION_SLACK_MS: u64 = 1_000;

/// The predicted verdict of the application's group, as `preflight --format json` gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Predicted {
    /// Its kind.
    pub kind: VerdictKind,
    /// In words.
    pub headline: String,
    /// How long commands failed, ms (seconds counted whole).
    pub errors_ms: Option<u64>,
    /// How long the storm held, ms.
    pub storm_ms: Option<u64>,
    /// Commands that failed.
    pub failed: u64,
    /// Why.
    pub why: String,
}

/// What one case came to.
#[derive(Clone, Debug)]
pub struct PreflightCase {
    /// The case.
    pub case: Case,
    /// The plan given.
    pub plan: Option<Value>,
    /// What preflight said.
    pub predicted: Option<Predicted>,
    /// What happened.
    pub real: Option<RealVerdict>,
    /// Whether they agree, and if not why.
    pub miss: Option<String>,
    /// The `slotscope preflight` command asked (its cut and plan in a directory gone since).
    pub asked: Option<String>,
    /// Why the case did not get that far.
    pub error: Option<String>,
}

impl PreflightCase {
    /// `case` before anything ran.
    fn new(case: &Case) -> PreflightCase {
        PreflightCase {
            case: case.clone(),
            plan: None,
            asked: None,
            predicted: None,
            real: None,
            miss: None,
            error: None,
        }
    }

    /// `case` stopped by `error`.
    fn failed(case: &Case, error: String) -> PreflightCase {
        PreflightCase {
            error: Some(error),
            ..PreflightCase::new(case)
        }
    }

    /// Whether the verdict was right.
    pub fn right(&self) -> bool {
        self.error.is_none() && self.miss.is_none() && self.predicted.is_some()
    }

    /// When the application wedged, ms after its start, if that was before the change began: the
    /// case is then not judged (see [`RealVerdict::wedged_before_change_ms`]).
    pub fn wedged_before_change(&self) -> Option<u64> {
        self.real.as_ref()?.wedged_before_change_ms
    }
}

fn kind_of(text: &str) -> Option<VerdictKind> {
    Some(match text {
        "unaffected" => VerdictKind::Unaffected,
        "moved_burst" => VerdictKind::MovedBurst,
        "storm" => VerdictKind::Storm,
        "errors" => VerdictKind::Errors,
        "wedged" => VerdictKind::Wedged,
        _ => return None,
    })
}

/// The worst run of group `name` in `report` (preflight's JSON).
fn predicted_of(report: &Value, name: &str) -> Result<Predicted, String> {
    let group = report["groups"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["client"]["short"] == name))
        .ok_or_else(|| format!("preflight names no group {name:?}"))?;
    let worst = usize::try_from(group["worst"].as_u64().unwrap_or(0)).unwrap_or(0);
    let v = &group["runs"][worst]["verdict"];
    let secs = |s: &Value| s["secs"].as_u64().map(|n| n * 1000);
    Ok(Predicted {
        kind: kind_of(v["kind"].as_str().unwrap_or_default())
            .ok_or_else(|| format!("unknown verdict {}", v["kind"]))?,
        headline: String::new(),
        errors_ms: secs(&v["errors"]),
        storm_ms: secs(&v["storm"]),
        failed: v["figures"]["failed"].as_u64().unwrap_or(0),
        why: group["why"].as_str().unwrap_or_default().to_owned(),
    })
    .map(|mut p| {
        p.headline = match (p.kind, p.errors_ms, p.storm_ms) {
            (VerdictKind::Errors, Some(ms), _) => format!("errors of {} s", ms / 1000),
            (VerdictKind::Storm, _, Some(ms)) => format!("storm of {} s", ms / 1000),
            (k, _, _) => k.word().to_owned(),
        };
        p
    })
}

/// Whether `p` and `r` agree; the miss in words if not.
pub fn judge(p: &Predicted, r: &RealVerdict) -> Option<String> {
    let close = |a: u64, b: u64| {
        let slack = ((b as f64 * DURATION_SHARE) as u64).max(DURATION_SLACK_MS);
        a.abs_diff(b) <= slack
    };
    if p.kind != r.kind {
        return Some(format!(
            "predicted {}, real {} ({} failed, {} MOVED)",
            p.headline,
            r.headline(),
            r.failed,
            r.moved
        ));
    }
    let duration = match p.kind {
        VerdictKind::Errors => p.errors_ms.zip(r.errors_ms),
        VerdictKind::Storm => p.storm_ms.zip(r.storm_ms),
        _ => None,
    };
    match duration {
        Some((a, b)) if !close(a, b) => Some(format!(
            "{}: predicted {:.1} s, real {:.1} s",
            p.kind.word(),
            a as f64 / 1000.0,
            b as f64 / 1000.0
        )),
        _ => None,
    }
}

/// The `--assume` of the application: its release and what its user knows of its settings.
fn assumption(case: &Case, live: &LiveRun, group: &str) -> String {
    let mut a = format!(
        "{group}={},socket_timeout={SOCKET_TIMEOUT_S},startup_nodes={}",
        case.library.label(),
        live.settings.startup
    );
    for (k, v) in live.model_options() {
        a.push_str(&format!(",{k}={v}"));
    }
    if let Some(remap) = &live.settings.address_remap {
        let option = case.library.address_option().unwrap_or("address_remap");
        a.push_str(&format!(",{option}={remap}"));
    }
    a
}

/// What `preflight` answered for a case.
struct Answer {
    /// Its JSON report.
    report: Value,
    /// The plan given.
    plan: Value,
    /// When the plan started, epoch ms.
    origin_ms: u64,
    /// The census group that is the application: [`APP_NAME`], or the one group the recording
    /// shows when the census did not see the name (connections seen before their `CLIENT
    /// SETNAME` only).
    group: String,
    /// The command line asked.
    asked: String,
}

/// The one group `stderr` lists after an `--assume` that named none, if it lists one.
fn only_group(stderr: &str) -> Option<String> {
    let list = stderr.split("(groups: ").nth(1)?.rsplit_once(')')?.0;
    (!list.is_empty() && !list.contains(", ") && !list.contains('(')).then(|| list.to_owned())
}

/// The short name `preflight`'s JSON report gives the group its `*` assumption claimed.
fn unexplained_group(stdout: &[u8]) -> Option<String> {
    let report: Value = serde_json::from_slice(stdout).ok()?;
    report["groups"]
        .as_array()?
        .iter()
        .find(|g| g["client"]["chosen"] == "assumed_unexplained")
        .and_then(|g| g["client"]["short"].as_str())
        .map(str::to_owned)
}

/// Runs `preflight` on the cut of `live` for `case`.
fn predict(case: &Case, live: &LiveRun, dir: &Path) -> Result<Answer, String> {
    let plan = case_plan(case, live)?;
    let cut = dir.join("before.jsonl");
    cut_before(&live.recording, plan.origin_ms, &cut)?;
    let plan_file = dir.join("plan.json");
    std::fs::write(&plan_file, plan.plan.to_string()).map_err(|e| e.to_string())?;
    let lead = plan.origin_ms.saturating_sub(live.app.started_ms).max(1);
    let tail = live
        .app
        .issuing_ended_ms
        .saturating_sub(plan.last_end_ms)
        .max(1);
    let mut args: Vec<String> = vec![
        "preflight".into(),
        cut.display().to_string(),
        "--plan".into(),
        plan_file.display().to_string(),
        "--format".into(),
        "json".into(),
        "--assume".into(),
        assumption(case, live, APP_NAME),
        "--in-flight".into(),
        case.in_flight.to_string(),
        "--keys".into(),
        case.keys.to_string(),
        "--lead".into(),
        format!("{lead}ms"),
        "--tail".into(),
        format!("{tail}ms"),
    ];
    if let Some(ms) = live.app.round_trip_ms() {
        args.push("--rtt-ms".into());
        args.push(format!("{:.3}", ms.clamp(0.001, 60_000.0)));
    }
    let run = |args: &[String]| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        run_slotscope(&refs)
    };
    let mut group = APP_NAME.to_owned();
    let mut o = run(&args);
    if !o.status.success() {
        let stderr = String::from_utf8_lossy(&o.stderr);
        // The one group the refusal lists; else, when no census group ran the business commands
        // and none is the application's (a client failing everything from its start can slip
        // between the polls), the commands no group was seen running, as a user would assume.
        let fallback = only_group(stderr.trim()).or_else(|| {
            stderr
                .contains(&format!("`{UNEXPLAINED}` names"))
                .then(|| UNEXPLAINED.to_owned())
        });
        if let Some(g) = fallback {
            if let Some(i) = args.iter().position(|a| a == "--assume") {
                args[i + 1] = assumption(case, live, &g);
            }
            o = run(&args);
            group = if g == UNEXPLAINED {
                unexplained_group(&o.stdout).unwrap_or_default()
            } else {
                g
            };
        }
    }
    if !o.status.success() {
        return Err(format!(
            "slotscope {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    let report: Value = serde_json::from_slice(&o.stdout)
        .map_err(|e| format!("preflight --format json is not JSON: {e}"))?;
    Ok(Answer {
        report,
        plan: plan.plan,
        origin_ms: plan.origin_ms,
        group,
        asked: format!("slotscope {}", args.join(" ")),
    })
}

/// Runs `case`; `say` receives progress lines. With `keep`, the run is kept as the fidelity
/// matrix keeps it, with `<seed>.events.json` (what the harness did, the nodes' addresses: what
/// [`rescore_preflight`] needs), `<seed>.plan.json` and `<seed>.preflight.json` beside it.
pub fn run_preflight_case(case: &Case, say: &dyn Fn(&str), keep: Option<&Path>) -> PreflightCase {
    let case = &settled(case);
    let live = match catch_unwind(AssertUnwindSafe(|| live::run(case, say))) {
        Ok(Ok(live)) => live,
        Ok(Err(e)) => return PreflightCase::failed(case, format!("live run: {e}")),
        Err(p) => {
            return PreflightCase::failed(
                case,
                format!("live run panicked: {}", panic_text(p.as_ref())),
            )
        }
    };
    if let Some(dir) = keep {
        let stem = case.seed.to_string();
        keep_run(dir, &stem, case, &live);
        let events: Vec<Value> = live
            .events
            .iter()
            .map(|e| json!({"began_ms": e.began_ms, "at_ms": e.at_ms, "what": e.what}))
            .collect();
        let kept = json!({"events": events, "nodes": live.nodes});
        let _ = std::fs::write(dir.join(format!("{stem}.events.json")), kept.to_string());
    }
    judge_run(case, &live, keep)
}

/// `case` with [`SETTLE_MS`] more before its first change (and as much more schedule).
pub fn settled(case: &Case) -> Case {
    let secs = u32::try_from(SETTLE_MS / 1000).unwrap_or(0);
    Case {
        first_event_ms: case.first_event_ms + SETTLE_MS,
        duration_s: case.duration_s + secs,
        ..case.clone()
    }
}

/// The kept case `seed` of `dir` (kept by [`run_preflight_case`]) asked of `preflight` and
/// judged again, no live run.
pub fn rescore_preflight(dir: &Path, seed: u64) -> PreflightCase {
    let stem = seed.to_string();
    let kept = kept_run(dir, &stem).and_then(|(mut live, libraries)| {
        let v = read_json(&dir.join(format!("{stem}.events.json")))?;
        live.events = v["events"]
            .as_array()
            .ok_or("no events")?
            .iter()
            .map(|e| Event {
                began_ms: e["began_ms"].as_u64().unwrap_or(0),
                at_ms: e["at_ms"].as_u64().unwrap_or(0),
                what: e["what"].as_str().unwrap_or_default().to_owned(),
            })
            .collect();
        live.nodes = v["nodes"]
            .as_array()
            .ok_or("no nodes")?
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect();
        Ok((live, libraries))
    });
    match kept {
        Ok((live, libraries)) => {
            judge_run(&settled(&Case::draw_over(seed, &libraries)), &live, None)
        }
        Err(e) => PreflightCase::failed(&Case::draw(seed), format!("kept case: {e}")),
    }
}

/// `preflight` asked of `live`'s run of `case`, and judged.
fn judge_run(case: &Case, live: &LiveRun, keep: Option<&Path>) -> PreflightCase {
    let mut result = PreflightCase::new(case);
    let stem = case.seed.to_string();
    let dir: PathBuf = live.dir.path().to_path_buf();
    let Answer {
        report,
        plan,
        origin_ms: origin,
        group,
        asked,
    } = match predict(case, live, &dir) {
        Ok(x) => x,
        Err(e) => return PreflightCase::failed(case, format!("preflight: {e}")),
    };
    if let Some(dir) = keep {
        let _ = std::fs::write(dir.join(format!("{stem}.plan.json")), plan.to_string());
        let _ = std::fs::write(
            dir.join(format!("{stem}.preflight.json")),
            report.to_string(),
        );
    }
    result.plan = Some(plan);
    result.asked = Some(asked);
    let predicted = match predicted_of(&report, &group) {
        Ok(p) => p,
        Err(e) => return PreflightCase::failed(case, e),
    };
    match real_verdict(&live.app, &live.recording, case.command, origin) {
        Ok(real) => {
            result.miss = judge(&predicted, &real);
            result.real = Some(real);
        }
        Err(e) => result.error = Some(format!("real verdict: {e}")),
    }
    result.predicted = Some(predicted);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(kind: VerdictKind, errors_ms: Option<u64>) -> RealVerdict {
        RealVerdict {
            kind,
            errors_ms,
            errors_from_ms: Some(0),
            storm_ms: None,
            failed: 3,
            moved: 1,
            app_wedged: kind == VerdictKind::Wedged,
            wedged_before_change_ms: None,
        }
    }

    fn predicted(kind: VerdictKind, errors_ms: Option<u64>) -> Predicted {
        Predicted {
            kind,
            headline: kind.word().to_owned(),
            errors_ms,
            storm_ms: None,
            failed: 3,
            why: String::new(),
        }
    }

    #[test]
    fn the_one_group_a_refusal_lists_is_read_off_it() {
        let says = |groups: &str| {
            format!("error: --assume names group `matrix-app`, which the recording does not hold (groups: {groups})")
        };
        assert_eq!(
            only_group(&says("host 127.0.0.1")),
            Some("host 127.0.0.1".into())
        );
        assert_eq!(
            only_group(&format!(
                "{}; `*` names the commands no census group was seen running",
                says("host 127.0.0.1")
            )),
            Some("host 127.0.0.1".into())
        );
        assert_eq!(only_group(&says("a, b")), None);
        assert_eq!(only_group(&says("")), None);
        assert_eq!(
            only_group(&says("all business traffic (no client census)")),
            None
        );
        assert_eq!(only_group("error: plan step 0: …"), None);
    }

    #[test]
    fn kinds_must_agree_and_durations_within_a_quarter_or_a_second() {
        let e = VerdictKind::Errors;
        assert_eq!(
            judge(&predicted(e, Some(4_000)), &real(e, Some(4_750))),
            None
        );
        assert_eq!(judge(&predicted(e, Some(1_000)), &real(e, Some(250))), None);
        assert!(judge(&predicted(e, Some(8_000)), &real(e, Some(4_000))).is_some());
        let miss = judge(&predicted(VerdictKind::Wedged, None), &real(e, Some(4_000)));
        assert!(miss.unwrap().contains("predicted wedged"));
        let b = VerdictKind::MovedBurst;
        assert_eq!(judge(&predicted(b, None), &real(b, None)), None);
    }
}
