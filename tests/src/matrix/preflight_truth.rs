//! What the change really did to the application, in the terms of a pre-flight verdict: wedged
//! (the application says so, or every command that ended from some moment on failed, as the
//! replay's rule has it), errors (its commands that ended failing, from its `outcomes` buckets,
//! first to last, in whole seconds as the replay counts them; a blip of failures is not, as for
//! the prediction), a storm (the servers' `MOVED` share of the business commands at half
//! or more for 2 s or more, from the recording's `INFO commandstats`), a `MOVED` burst (the
//! library received `MOVED`), or unaffected; all over the window from the plan's start to the end
//! of the application's schedule.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use slotscope_core::metrics::Metrics;
use slotscope_core::preflight::{is_blip, VerdictKind, STORM_MIN_SECS, STORM_SHARE, WEDGED_MIN_MS};
use slotscope_core::reader::RecordingReader;

use crate::matrix::app::AppReport;

/// The recording's intervals are bucketed at this width to find a storm.
const BUCKET_MS: u64 = 500;

/// The real verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct RealVerdict {
    /// The most harmful kind seen.
    pub kind: VerdictKind,
    /// How long commands failed, the seconds from the first failed bucket's to the last's, ms
    /// (none without a failure).
    pub errors_ms: Option<u64>,
    /// When they began, ms from the plan's start.
    pub errors_from_ms: Option<u64>,
    /// How long the storm held, ms (none without one).
    pub storm_ms: Option<u64>,
    /// Commands that failed in the window.
    pub failed: u64,
    /// `MOVED` the library received (the whole run).
    pub moved: u64,
    /// Whether the application said it ended wedged (by its own rule: redis-py's app, no startup
    /// node left; the others, every command failing to the end).
    pub app_wedged: bool,
    /// When the application said it wedged, if before the change began: ms from its start. Not
    /// the change's doing (a redis-py 5.0.0 client under `address_remap` can lose its one startup
    /// node to its first resets), so a pre-flight of the change is not judged on it.
    pub wedged_before_change_ms: Option<u64>,
}

impl RealVerdict {
    /// The verdict in a few words, as the report writes a predicted one.
    pub fn headline(&self) -> String {
        let secs = |ms: u64| format!("{:.1} s", ms as f64 / 1000.0);
        match (self.kind, self.errors_ms, self.storm_ms) {
            (VerdictKind::Errors, Some(ms), _) => format!("errors of {}", secs(ms)),
            (VerdictKind::Storm, _, Some(ms)) => format!("storm of {}", secs(ms)),
            (k, _, _) => k.word().to_owned(),
        }
    }
}

/// The real verdict of `app` from `origin_ms` to the end of its schedule, the storm read from
/// the recording `full`.
///
/// # Errors
///
/// If the application reported no `outcomes` buckets or the recording cannot be read.
pub fn real_verdict(
    app: &AppReport,
    full: &Path,
    command: &str,
    origin_ms: u64,
) -> Result<RealVerdict, String> {
    let width = app
        .outcome_bucket_ms()
        .ok_or("the application reports no outcomes buckets")?;
    let failed: Vec<u64> = app.raw["outcomes"]["failed"]
        .as_array()
        .ok_or("no outcomes.failed")?
        .iter()
        .map(|v| v.as_u64().unwrap_or(0))
        .collect();
    let first_bucket = origin_ms.saturating_sub(app.started_ms) / width;
    let last_bucket = app.issuing_ended_ms.saturating_sub(app.started_ms) / width;
    let in_window: Vec<(u64, u64)> = failed
        .iter()
        .enumerate()
        .map(|(i, n)| (i as u64, *n))
        .filter(|(i, n)| *n > 0 && (first_bucket..=last_bucket).contains(i))
        .collect();
    // In whole seconds from the change's start, as the replay counts them (its seconds begin at
    // the plan's start): a failure anywhere in a second counts the second.
    let second_of =
        |ms_into_run: u64| (app.started_ms + ms_into_run).saturating_sub(origin_ms) / 1000;
    let errors_ms = match (in_window.first(), in_window.last()) {
        (Some((a, _)), Some((b, _))) => {
            let (first, last) = (second_of(a * width), second_of(b * width + width - 1));
            Some((last - first + 1) * 1000)
        }
        _ => None,
    };
    let errors_from_ms = in_window
        .first()
        .map(|(a, _)| (app.started_ms + a * width).saturating_sub(origin_ms));
    let storm_ms = storm(full, origin_ms, app.issuing_ended_ms)?;
    let moved = app.moved(command);
    let failed_n: u64 = in_window.iter().map(|(_, n)| n).sum();
    let oks: Vec<u64> = app.raw["outcomes"]["ok"]
        .as_array()
        .ok_or("no outcomes.ok")?
        .iter()
        .map(|v| v.as_u64().unwrap_or(0))
        .collect();
    let ok: u64 = oks
        .iter()
        .enumerate()
        .filter(|(i, _)| (first_bucket..=last_bucket).contains(&(*i as u64)))
        .map(|(_, n)| n)
        .sum();
    // The replay's rule too: every command that ended from some moment on failed, that moment at
    // least [`WEDGED_MIN_MS`] before the schedule's end (what a library that keeps its seeds
    // shows; redis-py's application says "wedged" only with no startup node left).
    let last_ok = oks.iter().rposition(|&n| n > 0).map(|i| i as u64);
    let failing_to_end = in_window
        .iter()
        .find(|(i, _)| last_ok.is_none_or(|k| *i > k))
        .is_some_and(|(i, _)| app.started_ms + i * width + WEDGED_MIN_MS <= app.issuing_ended_ms);
    let kind = if app.wedged || failing_to_end {
        VerdictKind::Wedged
    } else if errors_ms.is_some_and(|ms| !is_blip(failed_n, failed_n + ok, ms)) {
        VerdictKind::Errors
    } else if storm_ms.is_some() {
        VerdictKind::Storm
    } else if moved > 0 {
        VerdictKind::MovedBurst
    } else {
        VerdictKind::Unaffected
    };
    Ok(RealVerdict {
        kind,
        errors_ms,
        errors_from_ms,
        storm_ms,
        failed: failed_n,
        moved,
        app_wedged: app.wedged,
        wedged_before_change_ms: app
            .wedged_since_ms
            .filter(|&w| app.wedged && w < origin_ms)
            .map(|w| w.saturating_sub(app.started_ms)),
    })
}

/// The storm the recording shows in `[from_ms, to_ms)`: the span from the first to the last
/// bucket of every run of buckets whose business `MOVED` share (rejected ÷ attempts, all nodes)
/// is at least [`STORM_SHARE`], runs of at least [`STORM_MIN_SECS`].
fn storm(full: &Path, from_ms: u64, to_ms: u64) -> Result<Option<u64>, String> {
    let file = File::open(full).map_err(|e| format!("{}: {e}", full.display()))?;
    let mut reader = RecordingReader::detect(BufReader::new(file)).map_err(|e| e.to_string())?;
    reader.header().map_err(|e| e.to_string())?;
    let mut metrics = Metrics::default();
    for item in reader.by_ref() {
        let (_, line) = item.map_err(|e| e.to_string())?;
        metrics.push(&line);
    }
    // (rejected, attempts) per bucket, by each interval's end.
    let mut buckets: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for n in &metrics.nodes {
        for i in &n.intervals {
            let end = i.span.end.0;
            if end < from_ms || end >= to_ms {
                continue;
            }
            let b = i.business();
            let e = buckets.entry((end - from_ms) / BUCKET_MS).or_default();
            e.0 += b.rejected;
            e.1 += b.attempts();
        }
    }
    let stormy: Vec<u64> = buckets
        .iter()
        .filter(|(_, (r, a))| *a > 0 && *r as f64 / *a as f64 >= STORM_SHARE)
        .map(|(k, _)| *k)
        .collect();
    let need = (STORM_MIN_SECS as u64 * 1000).div_ceil(BUCKET_MS);
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for k in stormy {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == k => *end = k,
            _ => runs.push((k, k)),
        }
    }
    let long: Vec<&(u64, u64)> = runs.iter().filter(|(a, b)| b - a + 1 >= need).collect();
    Ok(match (long.first(), long.last()) {
        (Some((a, _)), Some((_, b))) => Some((b - a + 1) * BUCKET_MS),
        _ => None,
    })
}
