//! What a planned change does to one client, read off its replay: the [`Verdict`] (unaffected, a
//! `MOVED` burst, a storm, errors, wedged until restarted), how long, from when in the plan, and
//! the figures behind it. Only the seconds from the plan's start count: the lead-in before it is
//! the client settling (its first initialisation and connections). Failures and successes count
//! in the second they reach the application (a command that times out fails a timeout after it
//! was issued), as an application sees them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::float;
use crate::replay::{ReplayReport, Second};
use crate::time::Timestamp;

/// A `MOVED` share at least this high in a second is a storm's second.
pub const STORM_SHARE: f64 = 0.5;
/// Consecutive storm seconds that make a storm (as the analysis' `redirect_storm`: 2 s).
pub const STORM_MIN_SECS: usize = 2;
/// Failures at most this share of the commands, within one second, are a blip: counted in the
/// figures, not the verdict (a failover's one unlucky command is beyond what a replay can
/// promise, and a verdict that flips on it says nothing of the change).
pub const BLIP_SHARE: f64 = 0.005;
/// The most whole seconds a blip's failures may touch: a second of real time not aligned with
/// the seconds counted touches two of them.
pub const BLIP_MAX_MS: u64 = 2_000;

/// How long every command must have failed before the run ended for a client that does not say
/// so itself to be wedged (the fidelity matrix's outcome rule: 1 s).
pub const WEDGED_MIN_MS: u64 = 1_000;

/// The kinds of verdict, from the least harm to the most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// No failed command and no `MOVED`.
    Unaffected,
    /// Some `MOVED` replies, followed, nothing failed.
    MovedBurst,
    /// A `MOVED` share of half or more held 2 s or more (the analysis' `redirect_storm`).
    Storm,
    /// Commands failed.
    Errors,
    /// Every command fails from some moment to the end: the client needs a restart.
    Wedged,
}

impl VerdictKind {
    /// The kind in a few words.
    pub fn word(self) -> &'static str {
        match self {
            VerdictKind::Unaffected => "unaffected",
            VerdictKind::MovedBurst => "MOVED burst",
            VerdictKind::Storm => "storm",
            VerdictKind::Errors => "errors",
            VerdictKind::Wedged => "wedged until restarted",
        }
    }
}

/// A stretch of seconds of the run, milliseconds from the plan's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stretch {
    /// The start of its first second.
    pub from_ms: i64,
    /// Seconds from its first to its last, both counted.
    pub secs: u64,
    /// Whether it lasts to the run's last second.
    pub to_end: bool,
}

/// The figures behind a verdict, over the seconds from the plan's start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Commands issued.
    pub commands: u64,
    /// Of which failed.
    pub failed: u64,
    /// The failures by the library's names.
    pub errors: BTreeMap<String, u64>,
    /// `MOVED` replies ÷ attempts that reached a server.
    pub moved_share: f64,
    /// The highest share of a second.
    pub peak_moved_share: f64,
    /// Full initialisations (topology refreshes).
    pub refreshes: u64,
    /// Connections opened.
    pub new_connections: u64,
    /// The most opened in one second.
    pub peak_new_connections_per_sec: u64,
}

/// What a planned change does to one client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The most harmful kind seen.
    pub kind: VerdictKind,
    /// The stretch of that kind (none when unaffected).
    pub stretch: Option<Stretch>,
    /// The stretch with failed commands, if any.
    pub errors: Option<Stretch>,
    /// The storm, if any.
    pub storm: Option<Stretch>,
    /// The seconds with `MOVED` replies, if any.
    pub moved: Option<Stretch>,
    /// The figures.
    pub figures: Figures,
}

impl Verdict {
    /// The verdict of `report`, a replay whose plan started at `origin`.
    pub fn of(report: &ReplayReport, origin: Timestamp) -> Verdict {
        let seconds: Vec<&Second> = report.timeline.iter().filter(|s| s.t >= origin).collect();
        let last = seconds.len().saturating_sub(1);
        let stretch = |idx: &[usize]| -> Option<Stretch> {
            let (first, end) = (*idx.first()?, *idx.last()?);
            Some(Stretch {
                from_ms: ms_from(seconds[first].t, origin),
                secs: (end - first + 1) as u64,
                to_end: end == last,
            })
        };
        let errors: Vec<usize> = indices(&seconds, |s| s.ended_errors > 0);
        let moved: Vec<usize> = indices(&seconds, |s| s.moved > 0);
        let stormy = indices(&seconds, |s| share(s.moved, calls(s)) >= STORM_SHARE);
        let storm = storm_span(&stormy);
        let figures = figures(report, &seconds);
        let (figures_failed, figures_commands) = (figures.failed, figures.commands);
        let wedged = wedged_since(report, &seconds);
        let errors = stretch(&errors);
        let storm = storm.and_then(|run| stretch(&run));
        let moved = stretch(&moved);
        let (kind, main) = if let Some(since) = wedged {
            let from = seconds.iter().position(|s| s.t >= since).unwrap_or(last);
            (
                VerdictKind::Wedged,
                Some(Stretch {
                    from_ms: ms_from(since.max(origin), origin),
                    secs: (last - from + 1) as u64,
                    to_end: true,
                }),
            )
        } else if errors.is_some_and(|e| !is_blip(figures_failed, figures_commands, e.secs * 1000))
        {
            (VerdictKind::Errors, errors)
        } else if storm.is_some() {
            (VerdictKind::Storm, storm)
        } else if moved.is_some() {
            (VerdictKind::MovedBurst, moved)
        } else {
            (VerdictKind::Unaffected, None)
        };
        Verdict {
            kind,
            stretch: main,
            errors,
            storm,
            moved,
            figures,
        }
    }

    /// The verdict in a few words: `errors for 4 s`, `wedged until restarted`.
    pub fn headline(&self) -> String {
        match (self.kind, self.stretch) {
            (VerdictKind::Unaffected, _) | (VerdictKind::Wedged, _) | (_, None) => {
                self.kind.word().to_owned()
            }
            (kind, Some(s)) if s.to_end => format!("{} to the end", kind.word()),
            (kind, Some(s)) => format!("{} of {} s", kind.word(), s.secs),
        }
    }
}

/// Whether `failed` of `commands`, in `ms` of whole seconds, are a blip ([`BLIP_SHARE`], within
/// [`BLIP_MAX_MS`]).
pub fn is_blip(failed: u64, commands: u64, ms: u64) -> bool {
    ms <= BLIP_MAX_MS && float::from_u64(failed) <= BLIP_SHARE * float::from_u64(commands)
}

/// The moment every command the client issued from then on failed (none succeeded then or
/// after), when the client itself says it is wedged or that lasted at least [`WEDGED_MIN_MS`]
/// before the run's end. A command counts in the second it ended and in the second it was
/// issued: one that waits past the run's end (its permit held by the commands before it, each
/// retrying a dead node) still says whether the client served it.
fn wedged_since(report: &ReplayReport, seconds: &[&Second]) -> Option<Timestamp> {
    if report.wedged {
        return report.wedged_since.or_else(|| seconds.first().map(|s| s.t));
    }
    let last_ok = seconds.iter().rposition(|s| s.ended_ok > 0 || s.ok > 0);
    let from = last_ok.map_or(0, |i| i + 1);
    let first_failed = seconds
        .get(from..)?
        .iter()
        .find(|s| s.ended_errors > 0 || s.errors > 0)?;
    let end = seconds.last()?.t.0 + 1_000;
    (first_failed.t.0 + WEDGED_MIN_MS <= end).then_some(first_failed.t)
}

fn figures(report: &ReplayReport, seconds: &[&Second]) -> Figures {
    let sum = |f: &dyn Fn(&Second) -> u64| seconds.iter().map(|s| f(s)).sum::<u64>();
    let attempts = sum(&calls);
    let moved = sum(&|s| s.moved);
    let peak_moved_share = seconds
        .iter()
        .map(|s| share(s.moved, calls(s)))
        .fold(0.0, f64::max);
    Figures {
        commands: sum(&|s| s.commands),
        failed: sum(&|s| s.ended_errors),
        errors: report.errors.clone(),
        moved_share: share(moved, attempts),
        peak_moved_share,
        refreshes: sum(&|s| s.full_reinits),
        new_connections: sum(&|s| s.new_connections),
        peak_new_connections_per_sec: seconds.iter().map(|s| s.new_connections).max().unwrap_or(0),
    }
}

/// Attempts that reached a server in a second (every command's).
fn calls(s: &Second) -> u64 {
    s.calls_by_command.iter().sum()
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        float::ratio(part, whole)
    }
}

fn indices(seconds: &[&Second], f: impl Fn(&Second) -> bool) -> Vec<usize> {
    seconds
        .iter()
        .enumerate()
        .filter(|(_, s)| f(s))
        .map(|(i, _)| i)
        .collect()
}

/// The first and last index of every run of at least [`STORM_MIN_SECS`] consecutive indices,
/// from the first such run's start to the last one's end.
fn storm_span(idx: &[usize]) -> Option<Vec<usize>> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &i in idx {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == i => *end = i,
            _ => runs.push((i, i)),
        }
    }
    let long: Vec<&(usize, usize)> = runs
        .iter()
        .filter(|(a, b)| b - a + 1 >= STORM_MIN_SECS)
        .collect();
    Some(vec![long.first()?.0, long.last()?.1])
}

fn ms_from(t: Timestamp, origin: Timestamp) -> i64 {
    i64::try_from(t.0).unwrap_or(i64::MAX) - i64::try_from(origin.0).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(t: u64, ok: u64, errors: u64, moved: u64, calls: u64) -> Second {
        Second {
            t: Timestamp(t),
            commands: ok + errors,
            ok,
            errors,
            ended_ok: ok,
            ended_errors: errors,
            moved,
            calls_by_command: vec![calls],
            ..Second::default()
        }
    }

    fn report(seconds: Vec<Second>) -> ReplayReport {
        ReplayReport {
            timeline: seconds,
            ..ReplayReport::default()
        }
    }

    #[test]
    fn seconds_before_the_plan_do_not_count() {
        // The lead-in's first initialisation met MOVED; the plan's seconds are clean.
        let r = report(vec![
            second(0, 5, 0, 3, 8),
            second(1_000, 10, 0, 0, 10),
            second(2_000, 10, 0, 0, 10),
        ]);
        let v = Verdict::of(&r, Timestamp(1_000));
        assert_eq!(v.kind, VerdictKind::Unaffected);
        assert_eq!(v.headline(), "unaffected");
        assert_eq!(v.figures.commands, 20);
    }

    #[test]
    fn a_short_moved_burst_and_a_held_storm_are_told_apart() {
        let burst = report(vec![
            second(0, 10, 0, 0, 10),
            second(1_000, 10, 0, 2, 12),
            second(2_000, 10, 0, 1, 11),
            second(3_000, 10, 0, 0, 10),
        ]);
        let v = Verdict::of(&burst, Timestamp(0));
        assert_eq!(v.kind, VerdictKind::MovedBurst);
        assert_eq!(v.headline(), "MOVED burst of 2 s");
        assert_eq!(v.stretch.unwrap().from_ms, 1_000);
        let storm = report(vec![
            second(0, 10, 0, 0, 10),
            second(1_000, 10, 0, 10, 20),
            second(2_000, 10, 0, 12, 22),
            second(3_000, 10, 0, 11, 21),
            second(4_000, 10, 0, 0, 10),
        ]);
        let v = Verdict::of(&storm, Timestamp(0));
        assert_eq!(v.kind, VerdictKind::Storm);
        assert_eq!(v.headline(), "storm of 3 s");
        assert!((v.figures.peak_moved_share - 12.0 / 22.0).abs() < 1e-9);
        // One stormy second alone is a burst.
        let one = report(vec![second(0, 10, 0, 10, 20), second(1_000, 10, 0, 0, 10)]);
        assert_eq!(
            Verdict::of(&one, Timestamp(0)).kind,
            VerdictKind::MovedBurst
        );
    }

    #[test]
    fn failures_that_end_are_errors_and_failures_to_the_end_a_wedge() {
        let errors = report(vec![
            second(0, 10, 0, 0, 10),
            second(1_000, 4, 6, 0, 10),
            second(2_000, 10, 0, 0, 10),
        ]);
        let v = Verdict::of(&errors, Timestamp(0));
        assert_eq!(v.kind, VerdictKind::Errors);
        assert_eq!(v.headline(), "errors of 1 s");
        assert_eq!(v.figures.failed, 6);
        let wedged = report(vec![
            second(0, 10, 0, 0, 10),
            second(1_000, 2, 8, 0, 10),
            second(2_000, 0, 10, 0, 0),
            second(3_000, 0, 10, 0, 0),
        ]);
        let v = Verdict::of(&wedged, Timestamp(0));
        assert_eq!(v.kind, VerdictKind::Wedged);
        assert_eq!(v.stretch.unwrap().from_ms, 2_000);
        // One failure among a thousand commands in one second: a blip, the MOVED decide.
        let mut seconds: Vec<Second> = (0..10).map(|k| second(k * 1_000, 100, 0, 0, 100)).collect();
        seconds[4] = second(4_000, 99, 1, 3, 103);
        let v = Verdict::of(&report(seconds), Timestamp(0));
        assert_eq!(v.kind, VerdictKind::MovedBurst);
        assert_eq!(v.figures.failed, 1);
        assert!(v.errors.is_some());
        // Some slots unserved to the end while others are served: errors to the end.
        let partial = report(vec![second(0, 10, 0, 0, 10), second(1_000, 5, 5, 0, 5)]);
        let v = Verdict::of(&partial, Timestamp(0));
        assert_eq!(v.kind, VerdictKind::Errors);
        assert_eq!(v.headline(), "errors to the end");
        // A client that says so itself (redis-py: no startup node left).
        let mut said = report(vec![second(0, 10, 0, 0, 10), second(1_000, 3, 7, 0, 3)]);
        said.wedged = true;
        said.wedged_since = Some(Timestamp(1_200));
        let v = Verdict::of(&said, Timestamp(0));
        assert_eq!(v.kind, VerdictKind::Wedged);
        assert_eq!(v.stretch.unwrap().from_ms, 1_200);
    }

    #[test]
    fn a_blip_split_by_a_seconds_edge_is_still_a_blip() {
        // Four timeouts of a thousand commands, two before a second's edge and two after.
        let mut seconds: Vec<Second> = (0..6).map(|k| second(k * 1_000, 500, 0, 0, 500)).collect();
        seconds[2] = second(2_000, 498, 2, 0, 500);
        seconds[3] = second(3_000, 498, 2, 3, 503);
        let v = Verdict::of(&report(seconds.clone()), Timestamp(0));
        assert_eq!(v.kind, VerdictKind::MovedBurst);
        assert_eq!(v.figures.failed, 4);
        // Over three seconds they are errors.
        seconds[4] = second(4_000, 499, 1, 0, 500);
        let v = Verdict::of(&report(seconds), Timestamp(0));
        assert_eq!(v.kind, VerdictKind::Errors);
    }

    #[test]
    fn commands_that_fail_only_after_the_run_still_wedge_it() {
        // From 2 s every command issued fails, but each only after the run's end (its permit
        // waited behind retries against a dead node): nothing ends in the run after 1 s.
        let mut seconds = vec![second(0, 10, 0, 0, 10), second(1_000, 10, 0, 0, 10)];
        for t in [2_000, 3_000, 4_000] {
            seconds.push(Second {
                t: Timestamp(t),
                commands: 3,
                errors: 3,
                ..Second::default()
            });
        }
        let v = Verdict::of(&report(seconds.clone()), Timestamp(0));
        assert_eq!(v.kind, VerdictKind::Wedged);
        assert_eq!(v.stretch.unwrap().from_ms, 2_000);
        // One of them served late: the client is slow, not wedged.
        seconds[4].ok = 1;
        let v = Verdict::of(&report(seconds), Timestamp(0));
        assert_ne!(v.kind, VerdictKind::Wedged);
    }
}
