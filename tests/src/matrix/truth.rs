//! The ground truth of the story check: what each application of a live case went through, read
//! from its own report (never from the recording the analysis reads).
//!
//! - **Hurt**: it ended wedged, or at least [`HURT_MIN_FAILED`] commands failed and they were at
//!   least [`HURT_SHARE`] of the commands that ended in the [`HURT_WINDOW_MS`] from its first
//!   error, or from its first error to the end (the contract's `outcomes` buckets; a bucket that
//!   overlaps the window counts whole).
//! - **Healthy**: no command failed, MOVED replies were under [`STORM_SHARE`] of the replies to
//!   its command (no MOVED storm), and under [`PAUSE_SKIP_SHARE`] of its schedule was skipped
//!   (no pause: a client whose commands all waited on a stalled node skips what came due
//!   meanwhile; from the servers it looks like one whose commands failed, only its timeout differs).
//! - **Neither**: a few errors, a MOVED storm without errors, or a pause without errors: criteria
//!   (a) and (b) do not apply to it.
//!
//! The moment a hurt application's story is judged against is its first error, unless that error
//! began no failure of the stated levels (a few client-side exceptions at start-up, 1 % of its
//! commands, seconds before a node is killed; its own 250 ms bucket failing under that share, or
//! a burst over within that bucket, the next one failing under it; the application wedged or
//! not): then it is the onset, the first outcomes bucket
//! failing at [`HURT_SHARE`] itself from which the next [`HURT_WINDOW_MS`] have the stated
//! levels, and the commands failing in it were issued when the report's `failed_issued` says
//! (the earliest issue of the commands that failed in each bucket), or, in a report without it,
//! at most one socket timeout before the bucket began.

use crate::matrix::app::{AppReport, AppSettings};

/// The window after the first error in which the failed share is measured, ms.
pub const HURT_WINDOW_MS: u64 = 2000;
/// The failed share over that window from which an application is hurt: one command in ten.
pub const HURT_SHARE: f64 = 0.1;
/// The failures over that window from which an application is hurt (one failed command is not an
/// incident).
pub const HURT_MIN_FAILED: u64 = 3;
/// The MOVED share (MOVED ÷ replies to its command) from which a run without errors is a MOVED
/// storm, not healthy.
pub const STORM_SHARE: f64 = 0.05;

/// The share of its schedule an application without errors may skip and still be healthy.
pub const PAUSE_SKIP_SHARE: f64 = 0.05;

/// What an application went through.
#[derive(Clone, Debug, PartialEq)]
pub enum Health {
    /// Hurt, and why (in words).
    Hurt(String),
    /// No failure, no MOVED storm.
    Healthy,
    /// Neither hurt nor healthy, and why.
    Neither(String),
}

impl Health {
    /// `hurt`, `healthy` or `neither`.
    pub fn name(&self) -> &'static str {
        match self {
            Health::Hurt(_) => "hurt",
            Health::Healthy => "healthy",
            Health::Neither(_) => "neither",
        }
    }
}

/// One application of a case, and what it went through.
#[derive(Clone, Debug, PartialEq)]
pub struct AppTruth {
    /// Its `CLIENT SETNAME`.
    pub name: String,
    /// Its command.
    pub command: String,
    /// Its library (`client` of the contract: `redis-py`, `go-redis`, …).
    pub library: String,
    /// Its library release (as it reported it).
    pub version: String,
    /// Its `address_remap` target, if any.
    pub remap: Option<String>,
    /// Hurt, healthy or neither.
    pub health: Health,
    /// When its first command raised, epoch ms; for a first error that began no failure, the end
    /// of the onset's bucket (see the module's text).
    pub first_error_ms: Option<u64>,
    /// When that command was issued, epoch ms (the moment the servers last saw it; a timeout
    /// raises one socket timeout later); the first error's moment when not reported; for an
    /// onset, its bucket's start less one socket timeout.
    pub first_error_issued_ms: Option<u64>,
    /// What `first_error_ms` is: "first error", or "failure onset" when the first error began
    /// no failure.
    pub moment_name: &'static str,
    /// Whether it ended wedged.
    pub wedged: bool,
    /// MOVED ÷ replies to its command (`None` without a reply).
    pub moved_share: Option<f64>,
}

impl AppTruth {
    /// The truth of the application told `settings` that reported `report`.
    pub fn of(settings: &AppSettings, report: &AppReport) -> AppTruth {
        let cmd = settings.command.as_str();
        let calls = report.calls(cmd);
        let moved_share = (calls > 0).then(|| report.moved(cmd) as f64 / calls as f64);
        let (health, onset) = health(report, moved_share);
        let timeout_ms =
            (settings.socket_timeout_s.max(settings.connect_timeout_s) * 1000.0) as u64;
        let (first_error_ms, first_error_issued_ms) = match &onset {
            // When the commands failing in the onset's bucket were issued: as the report says
            // (a command that hung on a dead node, retried, was issued seconds before it
            // failed), else at most one socket timeout before the bucket began.
            Some(o) => (
                Some(o.bucket_end_ms),
                Some(
                    report
                        .failed_issued_between(o.bucket_start_ms, o.bucket_end_ms)
                        .unwrap_or(o.bucket_start_ms.saturating_sub(timeout_ms))
                        .min(o.bucket_start_ms),
                ),
            ),
            None => (
                report.first_error_ms,
                report.first_error_issued_ms.or(report.first_error_ms),
            ),
        };
        AppTruth {
            name: settings.client_name.clone(),
            command: settings.command.clone(),
            library: report.client.clone(),
            version: report.version.clone(),
            remap: settings.address_remap.clone(),
            health,
            first_error_ms,
            first_error_issued_ms,
            moment_name: if onset.is_some() {
                "failure onset"
            } else {
                "first error"
            },
            wedged: report.wedged,
            moved_share,
        }
    }

    /// Whether it was hurt.
    pub fn is_hurt(&self) -> bool {
        matches!(self.health, Health::Hurt(_))
    }

    /// Whether it was healthy.
    pub fn is_healthy(&self) -> bool {
        self.health == Health::Healthy
    }
}

/// The outcomes bucket a failure began in, when the first error began none.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Onset {
    /// Its start, epoch ms.
    bucket_start_ms: u64,
    /// Its end, epoch ms.
    bucket_end_ms: u64,
}

/// Whether `failed` of `ok + failed` commands are a failure of the stated levels.
fn failing(ok: u64, failed: u64) -> bool {
    failed >= HURT_MIN_FAILED && failed as f64 / (ok + failed).max(1) as f64 >= HURT_SHARE
}

/// The first outcomes bucket from `from_ms` on that fails at [`HURT_SHARE`] itself and from which
/// the next [`HURT_WINDOW_MS`] are failing.
fn onset(r: &AppReport, from_ms: u64) -> Option<Onset> {
    let width = r.outcome_bucket_ms()?;
    let first = from_ms.saturating_sub(r.started_ms) / width;
    let last = r.ended_ms.saturating_sub(r.started_ms) / width;
    (first..=last).find_map(|b| {
        let start = r.started_ms + b * width;
        let (ok_here, failed_here) = r.ended_between(start, start + width)?;
        let here = failed_here as f64 / (ok_here + failed_here).max(1) as f64;
        let (ok, failed) = r.ended_between(start, start + HURT_WINDOW_MS)?;
        (failed_here > 0 && here >= HURT_SHARE && failing(ok, failed)).then_some(Onset {
            bucket_start_ms: start,
            bucket_end_ms: start + width,
        })
    })
}

/// The onset of the failure when the first error began none itself: its 250 ms bucket does not
/// fail at [`HURT_SHARE`] (a few client-side exceptions at start-up among many successes), or
/// it does but the burst is over within it, the next bucket in which any command ended failing
/// under that share (a burst of client-side exceptions at start-up, all at once among many
/// commands in flight). A bucket in which no command ended says nothing: a client whose every
/// permit waits on a dead node's retries ends nothing for a while, and is not over its failure.
fn late_onset(r: &AppReport, first: u64) -> Option<Onset> {
    let width = r.outcome_bucket_ms()?;
    let bucket = r.started_ms + first.saturating_sub(r.started_ms) / width * width;
    let share = |from: u64| {
        let (ok, failed) = r.ended_between(from, from + width)?;
        Some((ok + failed > 0).then(|| failed as f64 / (ok + failed) as f64))
    };
    if share(bucket)?.is_some_and(|s| s >= HURT_SHARE) {
        // The next bucket that ended anything within the window, if one did.
        let next = (1..HURT_WINDOW_MS / width)
            .map(|i| share(bucket + i * width))
            .find_map(|s| s.flatten());
        if next.is_none_or(|s| s >= HURT_SHARE) {
            return None;
        }
    }
    onset(r, bucket + width)
}

/// Hurt, said in `what`, judged from `onset` when there is one (and then saying how long after the
/// first error, at `first`, the failure began).
fn hurt_from(what: String, first: u64, onset: Option<Onset>) -> (Health, Option<Onset>) {
    let what = match &onset {
        Some(o) => format!(
            "{what}; failing from +{} ms after the first error",
            o.bucket_start_ms.saturating_sub(first)
        ),
        None => what,
    };
    (Health::Hurt(what), onset)
}

fn health(r: &AppReport, moved_share: Option<f64>) -> (Health, Option<Onset>) {
    if r.wedged {
        return match r.first_error_ms {
            Some(first) => hurt_from("wedged".to_owned(), first, late_onset(r, first)),
            None => (Health::Hurt("wedged".to_owned()), None),
        };
    }
    if r.failed == 0 {
        let scheduled = r.issued + r.skipped;
        let skipped = r.skipped as f64 / scheduled.max(1) as f64;
        let h = match moved_share {
            Some(s) if s >= STORM_SHARE => Health::Neither(format!(
                "no failure, but a MOVED storm ({:.1} % of replies)",
                100.0 * s
            )),
            _ if skipped >= PAUSE_SKIP_SHARE => Health::Neither(format!(
                "no failure, but {} of {scheduled} scheduled commands skipped while every \
                 permit waited ({:.0} %: a pause)",
                r.skipped,
                100.0 * skipped
            )),
            _ => Health::Healthy,
        };
        return (h, None);
    }
    let Some(first) = r.first_error_ms else {
        let why = format!("{} failed, but the report has no first_error_ms", r.failed);
        return (Health::Neither(why), None);
    };
    let Some((ok, failed)) = r.ended_between(first, first + HURT_WINDOW_MS) else {
        let why = format!(
            "{} failed, but the report has no outcomes buckets",
            r.failed
        );
        return (Health::Neither(why), None);
    };
    let share = failed as f64 / (ok + failed).max(1) as f64;
    // And from the first error to the end: a fault that lasts (a killed node) may fail fewer in
    // its first seconds than later.
    let (ok_all, failed_all) = r.ended_between(first, u64::MAX / 2).unwrap_or((ok, failed));
    let share_all = failed_all as f64 / (ok_all + failed_all).max(1) as f64;
    let what = format!(
        "{failed} of {} commands failed in the {} s from the first error ({:.0} %), {failed_all} of \
         {} to the end ({:.0} %)",
        ok + failed,
        HURT_WINDOW_MS / 1000,
        100.0 * share,
        ok_all + failed_all,
        100.0 * share_all
    );
    if failing(ok, failed) {
        // The window fails, but perhaps only from later in it: a first error alone among
        // successes in its bucket began nothing.
        hurt_from(what, first, late_onset(r, first))
    } else if failing(ok_all, failed_all) {
        // The first error began no failure: judge the story against the failure's onset.
        hurt_from(what, first, onset(r, first))
    } else {
        (Health::Neither(what), None)
    }
}

#[cfg(test)]
impl AppTruth {
    /// A healthy application `matrix-app` of `library` at `version` sending `zadd`: the tests'
    /// subject.
    pub(crate) fn healthy_for_test(library: &str, version: &str) -> AppTruth {
        AppTruth {
            name: "matrix-app".into(),
            command: "zadd".into(),
            library: library.into(),
            version: version.into(),
            remap: None,
            health: Health::Healthy,
            first_error_ms: None,
            first_error_issued_ms: None,
            moment_name: "first error",
            wedged: false,
            moved_share: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(failed: u64, wedged: bool, ok: &[u64], bad: &[u64], moved: u64) -> AppReport {
        skipping(failed, wedged, ok, bad, moved, 0)
    }

    fn skipping(
        failed: u64,
        wedged: bool,
        ok: &[u64],
        bad: &[u64],
        moved: u64,
        skipped: u64,
    ) -> AppReport {
        AppReport::from_json(json!({
            "client": "redis-py", "version": "5.0.0", "issued": 100 + failed,
            "succeeded": 100, "failed": failed, "skipped": skipped, "initializations": 1,
            "cluster_slots_calls": 1, "new_connections": 1, "wedged": wedged,
            "first_error_ms": (failed > 0).then_some(10_500u64),
            "outcomes": {"bucket_ms": 250, "ok": ok, "failed": bad},
            "calls": {"zadd": 100}, "moved": {"zadd": moved},
            "started_ms": 10_000u64, "issuing_ended_ms": 20_000u64, "ended_ms": 20_100u64
        }))
        .expect("a report")
    }

    fn settings() -> AppSettings {
        AppSettings {
            startup: "127.0.0.1:1".into(),
            rate: 100,
            in_flight: 1,
            duration_s: 10,
            keys: 10,
            key_prefix: None,
            command: "zadd".into(),
            address_remap: None,
            socket_timeout_s: 0.5,
            connect_timeout_s: 0.5,
            client_name: "matrix-app".into(),
            seed: 1,
        }
    }

    #[test]
    fn hurt_healthy_and_neither_follow_the_stated_levels() {
        let s = settings();
        // Buckets 2.. are the window [10 500, 12 500): 8 buckets of 250 ms.
        let t = AppTruth::of(
            &s,
            &report(4, false, &[5, 5, 2, 2, 2, 2], &[0, 0, 1, 1, 1, 1], 0),
        );
        assert!(t.is_hurt(), "{t:?}");
        let t = AppTruth::of(
            &s,
            &report(
                4,
                false,
                &[5, 5, 9, 9, 9, 9, 9, 9, 9, 9, 0, 0, 1, 1],
                &[0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
                0,
            ),
        );
        assert_eq!(t.health.name(), "neither", "{t:?}");
        assert!(AppTruth::of(&s, &report(0, false, &[9], &[0], 1)).is_healthy());
        let storm = AppTruth::of(&s, &report(0, false, &[9], &[0], 6));
        assert_eq!(storm.health.name(), "neither");
        assert!(AppTruth::of(&s, &report(1, true, &[], &[], 0)).is_hurt());
        // Few failures in the first 2 s, many after (a node killed for good): hurt.
        let lasting = AppTruth::of(
            &s,
            &report(
                12,
                false,
                &[9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 2, 2, 2, 2],
                &[0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 3, 3, 2],
                0,
            ),
        );
        assert!(lasting.is_hurt(), "{lasting:?}");
        // Its story is judged from the onset: the bucket [12 250, 12 500) from which the next
        // 2 s fail 11 of 29 (buckets 9.. are the window; the first error at 10 500 began none).
        assert_eq!(lasting.first_error_ms, Some(12_500), "{lasting:?}");
        assert_eq!(lasting.first_error_issued_ms, Some(11_750), "{lasting:?}");
        // Wedged, but its first error was alone among 19 successes in its bucket (a start-up
        // exception): judged from the bucket [11 500, 11 750) where the failure began.
        let wedged = AppTruth::of(
            &s,
            &report(
                37,
                true,
                &[9, 9, 19, 9, 9, 9, 0, 0, 0, 0],
                &[0, 0, 1, 0, 0, 0, 9, 9, 9, 9],
                0,
            ),
        );
        assert!(wedged.is_hurt(), "{wedged:?}");
        assert_eq!(wedged.first_error_ms, Some(11_750), "{wedged:?}");
        assert_eq!(wedged.first_error_issued_ms, Some(11_000), "{wedged:?}");
        // A burst of start-up exceptions over within its bucket (9 of 29, then none), a node
        // killed a second later within the first error's 2 s: judged from the kill's bucket
        // [11 500, 11 750) (`scripts/story` case 7946396524640107675).
        let burst = AppTruth::of(
            &s,
            &report(
                90,
                false,
                &[9, 9, 20, 20, 20, 20, 0, 0, 0, 0, 0, 0],
                &[0, 0, 9, 0, 0, 1, 20, 20, 20, 20, 20, 20],
                0,
            ),
        );
        assert!(burst.is_hurt(), "{burst:?}");
        assert_eq!(burst.first_error_ms, Some(11_750), "{burst:?}");
        // …but a burst that goes on into the next bucket began the failure.
        let on = AppTruth::of(
            &s,
            &report(
                90,
                false,
                &[9, 9, 20, 20, 20, 20, 0, 0, 0, 0, 0, 0],
                &[0, 0, 9, 9, 0, 1, 20, 20, 20, 20, 20, 20],
                0,
            ),
        );
        assert_eq!(on.first_error_ms, Some(10_500), "{on:?}");
        // The onset's failing commands were issued when the report says: one that hung on a
        // dead node, retried, was issued 1.65 s before its bucket (and a report without the
        // figure keeps the one socket timeout).
        let mut raw = report(
            12,
            false,
            &[9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 2, 2, 2, 2],
            &[0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 3, 3, 2],
            0,
        )
        .raw;
        let issued: Vec<serde_json::Value> = (0..14)
            .map(|b| match b {
                9 => json!(10_600u64),
                10.. => json!(12_000u64),
                _ => serde_json::Value::Null,
            })
            .collect();
        raw["outcomes"]["failed_issued"] = json!(issued);
        let hung = AppTruth::of(&s, &AppReport::from_json(raw).expect("a report"));
        assert_eq!(hung.first_error_ms, Some(12_500), "{hung:?}");
        assert_eq!(hung.first_error_issued_ms, Some(10_600), "{hung:?}");
        // One permit, every command retried against a killed node for half a second: buckets in
        // which nothing ended are no recovery, the first error began the failure (`scripts/story`
        // case 15383694640158856829, whose companion was judged from a bucket 259 ms later).
        let blocked = AppTruth::of(
            &s,
            &report(
                4,
                false,
                &[60, 56, 0, 0, 0, 0, 0, 0, 2, 0],
                &[0, 0, 1, 0, 1, 0, 1, 0, 1, 0],
                0,
            ),
        );
        assert!(blocked.is_hurt(), "{blocked:?}");
        assert_eq!(blocked.first_error_ms, Some(10_500), "{blocked:?}");
        // A first error that began a failure is the moment itself.
        let at_once = AppTruth::of(
            &s,
            &report(4, false, &[5, 5, 2, 2, 2, 2], &[0, 0, 1, 1, 1, 1], 0),
        );
        assert_eq!(at_once.first_error_ms, Some(10_500), "{at_once:?}");
        // No error, but a third of the schedule skipped while it waited: a pause, not healthy.
        let paused = AppTruth::of(&s, &skipping(0, false, &[9], &[0], 0, 50));
        assert_eq!(paused.health.name(), "neither", "{paused:?}");
        assert!(AppTruth::of(&s, &skipping(0, false, &[9], &[0], 0, 2)).is_healthy());
    }
}
