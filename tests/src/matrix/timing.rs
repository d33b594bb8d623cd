//! When a fault shows in the outcomes, real and replayed (issue 24's time targets): from the
//! fault to the first failed command, and from the fault to recovery (the moment after which
//! no command failed and some succeeded, up to the schedule's end).
//!
//! The application counts outcomes by when each command ended, in `outcomes.bucket_ms` buckets
//! (250 ms); the replay the same way (its `outcomes`, 250 ms from its first command). A moment
//! is a bucket's start; the two grids differ by less than a bucket. A binary from before the
//! replay's `outcomes` counted by the second each command ended (`ended_ok`, `ended_errors`;
//! older still: by the second it was issued, `ok`, `errors`): against those the application's
//! buckets are first summed into the replay's seconds ([`app_onset_on`]), since read at 250 ms
//! against 1 s the replay's first failure came up to 750 ms early and its recovery up to 750 ms
//! late by the bucketing alone. The target is within 1 s or 25 % of the real delay, whichever
//! is larger.

use serde_json::Value;

use crate::matrix::app::AppReport;

/// The smallest tolerance, ms.
pub const WITHIN_MS: u64 = 1000;
/// The relative tolerance, of the real delay.
pub const WITHIN_REL: f64 = 0.25;

/// When failures began and ended, epoch ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Onset {
    /// The start of the first bucket at or after the reference (the fault) with a failed
    /// command; none when none failed.
    pub first_failure_ms: Option<u64>,
    /// The start of the bucket after the last one with a failed command, when a command
    /// succeeded from there on; none when no command failed, or when failures lasted to the end.
    pub recovered_ms: Option<u64>,
}

/// Outcome buckets: (start ms, succeeded, failed), in order.
type Buckets = Vec<(u64, u64, u64)>;

/// The onset in `buckets` of width `width` after `from_ms`.
fn onset(buckets: &Buckets, width: u64, from_ms: u64) -> Onset {
    // A bucket that ends after the reference can hold a command the fault failed.
    let after: Vec<&(u64, u64, u64)> = buckets
        .iter()
        .filter(|(t, _, _)| t + width > from_ms)
        .collect();
    let Some(first) = after.iter().position(|(_, _, failed)| *failed > 0) else {
        return Onset::default();
    };
    let last = after
        .iter()
        .rposition(|(_, _, failed)| *failed > 0)
        .unwrap_or(first);
    let recovered = after[last + 1..]
        .iter()
        .any(|(_, ok, _)| *ok > 0)
        .then(|| after[last].0 + width);
    Onset {
        first_failure_ms: Some(after[first].0),
        recovered_ms: recovered,
    }
}

/// An `outcomes` object (`{"bucket_ms", "ok": [..], "failed": [..]}`, the applications' and the
/// replay's shape) as buckets from `start_ms`, and their width (none when it is not one).
fn outcome_buckets(o: &Value, start_ms: u64) -> Option<(Buckets, u64)> {
    let width = o["bucket_ms"].as_u64().filter(|&w| w > 0)?;
    let ok = o["ok"].as_array()?;
    let failed = o["failed"].as_array()?;
    let buckets = (0u64..)
        .zip(ok.iter().zip(failed))
        .map(|(i, (k, f))| {
            (
                start_ms + i * width,
                k.as_u64().unwrap_or(0),
                f.as_u64().unwrap_or(0),
            )
        })
        .collect();
    Some((buckets, width))
}

/// The application's onset after `from_ms` (none without `outcomes` buckets).
pub fn app_onset(app: &AppReport, from_ms: u64) -> Option<Onset> {
    let (buckets, width) = outcome_buckets(&app.raw["outcomes"], app.started_ms)?;
    Some(onset(&buckets, width, from_ms))
}

/// The application's onset after `from_ms` on a coarser grid: its buckets summed into buckets of
/// `width` ms (a multiple of its own) that start at `grid_ms` plus a whole number of widths, each
/// of its buckets into the one its start falls in (none without `outcomes` buckets). With the
/// replay's grid ([`model_grid`]), the application and the replay are read alike.
pub fn app_onset_on(app: &AppReport, from_ms: u64, grid_ms: u64, width: u64) -> Option<Onset> {
    let (own, own_width) = outcome_buckets(&app.raw["outcomes"], app.started_ms)?;
    let width = width.max(own_width).max(1);
    let mut buckets: Buckets = Vec::new();
    for (start, k, f) in own {
        // The grid's bucket that holds `start` (grids reach back before `grid_ms` too).
        let steps = (i128::from(start) - i128::from(grid_ms)).div_euclid(i128::from(width));
        let Ok(at) = u64::try_from(i128::from(grid_ms) + steps * i128::from(width)) else {
            continue;
        };
        match buckets.last_mut() {
            Some(last) if last.0 == at => {
                last.1 += k;
                last.2 += f;
            }
            _ => buckets.push((at, k, f)),
        }
    }
    Some(onset(&buckets, width, from_ms))
}

/// The replay's grid: where its timeline's seconds start, and their width (none without a
/// timeline).
pub fn model_grid(replay: &Value) -> Option<(u64, u64)> {
    Some((replay["timeline"].as_array()?.first()?["t"].as_u64()?, 1000))
}

/// The replay's onset after `from_ms`: from its quarter seconds (`outcomes`, the
/// applications' buckets) where it reports them, else from its per-second `timeline`, by when
/// each command ended where the replay reports it (none without either).
pub fn model_onset(replay: &Value, from_ms: u64) -> Option<Onset> {
    let seconds = replay["timeline"].as_array()?;
    if let Some(start) = seconds.first().and_then(|s| s["t"].as_u64()) {
        if let Some((buckets, width)) = outcome_buckets(&replay["outcomes"], start) {
            return Some(onset(&buckets, width, from_ms));
        }
    }
    let by_end = seconds.iter().all(|s| s["ended_ok"].is_u64());
    let (ok, errors) = if by_end {
        ("ended_ok", "ended_errors")
    } else {
        ("ok", "errors")
    };
    let buckets: Buckets = seconds
        .iter()
        .filter_map(|s| {
            Some((
                s["t"].as_u64()?,
                s[ok].as_u64().unwrap_or(0),
                s[errors].as_u64().unwrap_or(0),
            ))
        })
        .collect();
    Some(onset(&buckets, 1000, from_ms))
}

/// Whether the replay reports its outcomes by quarter second (`outcomes`), as the applications
/// do: then the two are read at the same width; else the application is read on the replay's
/// seconds ([`app_onset_on`]).
pub fn model_has_outcomes(replay: &Value) -> bool {
    replay["outcomes"]["bucket_ms"]
        .as_u64()
        .is_some_and(|w| w > 0)
}

/// Whether a model's delay (ms after the reference) meets the real one: both none, or within
/// [`WITHIN_MS`] or [`WITHIN_REL`] of it.
pub fn delay_within(real: Option<u64>, model: Option<u64>) -> bool {
    match (real, model) {
        (None, None) => true,
        (Some(r), Some(m)) => {
            let tolerance = WITHIN_MS.max((WITHIN_REL * r as f64).round() as u64);
            r.abs_diff(m) <= tolerance
        }
        _ => false,
    }
}

/// A delay in words: `+1.5 s`, or `none`.
pub fn delay_text(delay: Option<u64>) -> String {
    delay.map_or_else(
        || "none".to_owned(),
        |d| format!("+{:.1} s", d as f64 / 1000.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn failures_begin_at_the_first_failed_bucket_and_end_after_the_last() {
        let b: Buckets = vec![
            (0, 5, 0),
            (250, 5, 0),
            (500, 1, 3),
            (750, 0, 4),
            (1000, 2, 1),
            (1250, 4, 0),
            (1500, 5, 0),
        ];
        let o = onset(&b, 250, 400);
        assert_eq!(o.first_failure_ms, Some(500));
        assert_eq!(o.recovered_ms, Some(1250));
        // Failures to the end: not recovered.
        let to_end: Buckets = vec![(0, 5, 0), (250, 0, 2), (500, 0, 3)];
        assert_eq!(
            onset(&to_end, 250, 0),
            Onset {
                first_failure_ms: Some(250),
                recovered_ms: None
            }
        );
        // Failures before the reference do not count; none after: no onset.
        assert_eq!(onset(&to_end, 250, 1000), Onset::default());
    }

    #[test]
    fn the_replay_timeline_is_read_by_the_second() {
        let replay = json!({"timeline": [
            {"t": 10_000, "ok": 9, "errors": 0},
            {"t": 11_000, "ok": 2, "errors": 7},
            {"t": 12_000, "ok": 9, "errors": 0}
        ]});
        let o = model_onset(&replay, 10_500).unwrap();
        assert_eq!(o.first_failure_ms, Some(11_000));
        assert_eq!(o.recovered_ms, Some(12_000));
        assert!(model_onset(&json!({}), 0).is_none());
        // With the seconds commands ended in, those are read: the failures issued in 11 s
        // raised in 12 s.
        let by_end = json!({"timeline": [
            {"t": 10_000, "ok": 9, "errors": 0, "ended_ok": 9, "ended_errors": 0},
            {"t": 11_000, "ok": 2, "errors": 7, "ended_ok": 2, "ended_errors": 0},
            {"t": 12_000, "ok": 9, "errors": 0, "ended_ok": 9, "ended_errors": 7},
            {"t": 13_000, "ok": 9, "errors": 0, "ended_ok": 9, "ended_errors": 0}
        ]});
        let o = model_onset(&by_end, 10_500).unwrap();
        assert_eq!(o.first_failure_ms, Some(12_000));
        assert_eq!(o.recovered_ms, Some(13_000));
        assert!(!model_has_outcomes(&by_end));
        // With quarter seconds, those are read: failures ended from 12.25 s to 12.5 s.
        let mut quarters = by_end.clone();
        quarters["outcomes"] = json!({"bucket_ms": 250,
            "ok":     [2, 2, 3, 2, 1, 1, 0, 0, 2, 2, 3, 2, 2, 2, 3, 2],
            "failed": [0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 3, 0, 0, 0, 0, 0]});
        assert!(model_has_outcomes(&quarters));
        let o = model_onset(&quarters, 10_500).unwrap();
        assert_eq!(o.first_failure_ms, Some(12_250));
        assert_eq!(o.recovered_ms, Some(12_750));
    }

    #[test]
    fn the_application_is_read_on_the_replay_grid() {
        // Failures from 10.5 s to 11.25 s, in 250 ms buckets from 10 s.
        let app = AppReport::from_json(json!({
            "issued": 52, "succeeded": 46, "failed": 6, "skipped": 0, "initializations": 1,
            "cluster_slots_calls": 1, "new_connections": 3, "wedged": false,
            "started_ms": 10_000, "issuing_ended_ms": 13_000, "ended_ms": 13_000,
            "outcomes": {"bucket_ms": 250,
                "ok":     [5, 5, 1, 0, 0, 5, 5, 5, 5, 5, 5, 5],
                "failed": [0, 0, 2, 3, 1, 0, 0, 0, 0, 0, 0, 0]}
        }))
        .unwrap();
        let fine = app_onset(&app, 10_000).unwrap();
        assert_eq!(fine.first_failure_ms, Some(10_500));
        assert_eq!(fine.recovered_ms, Some(11_250));
        // On a replay's seconds from 9.6 s: 9.6, 10.6 and 11.6 s; the failures' buckets start
        // at 10.5 (in 9.6), 10.75 and 11.0 (in 10.6).
        let coarse = app_onset_on(&app, 10_000, 9_600, 1000).unwrap();
        assert_eq!(coarse.first_failure_ms, Some(9_600));
        assert_eq!(coarse.recovered_ms, Some(11_600));
        // On a grid that starts after the application: reached back to.
        let back = app_onset_on(&app, 10_000, 13_000, 1000).unwrap();
        assert_eq!(back.first_failure_ms, Some(10_000));
        assert_eq!(back.recovered_ms, Some(12_000));
        // A grid as fine as the application's own: as read alone.
        assert_eq!(app_onset_on(&app, 10_000, 10_000, 250), Some(fine));
        assert_eq!(
            model_grid(&json!({"timeline": [{"t": 9_600}, {"t": 10_600}]})),
            Some((9_600, 1000))
        );
        assert_eq!(model_grid(&json!({"timeline": []})), None);
    }

    #[test]
    fn a_delay_is_met_within_a_second_or_a_quarter() {
        assert!(delay_within(None, None));
        assert!(!delay_within(Some(500), None));
        assert!(delay_within(Some(500), Some(1400)));
        assert!(!delay_within(Some(500), Some(1600)));
        assert!(delay_within(Some(8000), Some(10_000)));
        assert!(!delay_within(Some(8000), Some(10_100)));
    }
}
