//! The same case run live a second time (`scripts/fidelity --twice`): how far the real library
//! repeats itself. The second run is judged against the first by the very targets the model is
//! judged by ([`compare`](crate::matrix::compare)), so a metric the real library does not repeat
//! within target on the same case is one no model can meet there either: the draw's floor.

use std::fmt::Write as _;

use crate::matrix::app::AppReport;
use crate::matrix::case::Case;
use crate::matrix::compare::{count_within, moved_within, share, Comparison, Metric};
use crate::matrix::timing;

/// A live run's figures that the targets compare.
struct Figures {
    wedged: bool,
    moved: (u64, u64),
    reinits: u64,
    new_connections: u64,
    first_failure: Option<u64>,
    recovery: Option<u64>,
}

impl Figures {
    /// `app`'s figures, its delays from `fault_ms` (none: from its schedule's start).
    fn of(case: &Case, app: &AppReport, fault_ms: Option<u64>) -> Figures {
        let from = fault_ms.unwrap_or(app.started_ms);
        let onset = timing::app_onset(app, from).unwrap_or_default();
        let after = |t: Option<u64>| t.map(|t| t.saturating_sub(from));
        Figures {
            wedged: app.wedged,
            moved: (app.moved(case.command), app.calls(case.command)),
            reinits: app.cluster_slots_calls,
            new_connections: app.new_connections,
            first_failure: after(onset.first_failure_ms),
            recovery: after(onset.recovered_ms),
        }
    }
}

fn wedged_text(w: bool) -> String {
    if w { "yes" } else { "no" }.to_owned()
}

fn moved_text((moved, calls): (u64, u64)) -> String {
    format!("{:.2} % ({moved} / {calls})", share(moved, calls))
}

/// The second live run of `case` against its first, metric by metric (in the
/// [`Comparison`]s, `real` is the first run and `model` the second); each run's delays count from
/// its own fault (`*_fault_ms`, none without one).
pub fn compare_live(
    case: &Case,
    first: &AppReport,
    first_fault_ms: Option<u64>,
    second: &AppReport,
    second_fault_ms: Option<u64>,
) -> Vec<Comparison> {
    let a = Figures::of(case, first, first_fault_ms);
    let b = Figures::of(case, second, second_fault_ms);
    let entry = |metric, real: String, again: String, met: bool| Comparison {
        metric,
        cause: (!met)
            .then(|| format!("the real library did not repeat itself ({real} then {again})")),
        real,
        model: again,
        met,
    };
    vec![
        entry(
            Metric::Wedged,
            wedged_text(a.wedged),
            wedged_text(b.wedged),
            a.wedged == b.wedged,
        ),
        entry(
            Metric::MovedShare,
            moved_text(a.moved),
            moved_text(b.moved),
            moved_within(a.moved, b.moved),
        ),
        entry(
            Metric::Reinits,
            a.reinits.to_string(),
            b.reinits.to_string(),
            count_within(a.reinits, b.reinits),
        ),
        entry(
            Metric::NewConnections,
            a.new_connections.to_string(),
            b.new_connections.to_string(),
            count_within(a.new_connections, b.new_connections),
        ),
        entry(
            Metric::FirstFailure,
            timing::delay_text(a.first_failure),
            timing::delay_text(b.first_failure),
            timing::delay_within(a.first_failure, b.first_failure),
        ),
        entry(
            Metric::Recovery,
            timing::delay_text(a.recovery),
            timing::delay_text(b.recovery),
            timing::delay_within(a.recovery, b.recovery),
        ),
    ]
}

/// One metric over the cases run twice: how often the real library repeated itself within
/// target, and how the model fared on the cases where it did and where it did not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Floor {
    /// Cases run twice with this metric compared both ways.
    pub cases: usize,
    /// Of those, the second live run within target of the first.
    pub repeated: usize,
    /// Of the repeated ones, the model within target of the first run.
    pub model_where_repeated: usize,
    /// Of the ones not repeated, the model within target of the first run.
    pub model_where_not: usize,
    /// The model within target of the first run or of the second.
    pub model_of_either: usize,
}

/// The [`Floor`] of `metric` over `(model against the first run, second run against the first,
/// model against the second run)` per case.
pub fn floor<'a>(
    cases: impl Iterator<Item = (&'a [Comparison], &'a [Comparison], &'a [Comparison])>,
    metric: Metric,
) -> Floor {
    let mut f = Floor::default();
    let met = |cs: &[Comparison]| cs.iter().find(|c| c.metric == metric).map(|c| c.met);
    for (model, again, model_again) in cases {
        let (Some(m), Some(r)) = (met(model), met(again)) else {
            continue;
        };
        f.cases += 1;
        if r {
            f.repeated += 1;
            f.model_where_repeated += usize::from(m);
        } else {
            f.model_where_not += usize::from(m);
        }
        f.model_of_either += usize::from(m || met(model_again).unwrap_or(false));
    }
    f
}

impl Floor {
    /// Its cells in the report's table: repeated, model where repeated, model where not, model
    /// within target of either run.
    pub fn cells(&self) -> String {
        let cell = |w: usize, of: usize| {
            if of == 0 {
                "—".to_owned()
            } else {
                format!("{w}/{of} ({:.0} %)", 100.0 * w as f64 / of as f64)
            }
        };
        let mut s = String::new();
        let _ = write!(
            s,
            "{} | {} | {} | {}",
            cell(self.repeated, self.cases),
            cell(self.model_where_repeated, self.repeated),
            cell(self.model_where_not, self.cases - self.repeated),
            cell(self.model_of_either, self.cases)
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn app(moved: u64, reinits: u64, conns: u64, wedged: bool, failed: [u64; 4]) -> AppReport {
        AppReport::from_json(json!({
            "client": "redis-py", "version": "8.1.0", "issued": 1000, "succeeded": 900,
            "failed": 100, "skipped": 0, "initializations": reinits,
            "cluster_slots_calls": reinits, "new_connections": conns, "wedged": wedged,
            "started_ms": 10_000, "issuing_ended_ms": 11_000, "ended_ms": 11_100,
            "errors": {}, "moved": {"zadd": moved}, "calls": {"zadd": 1000},
            "outcomes": {"bucket_ms": 250, "ok": [10, 10, 10, 10], "failed": failed}
        }))
        .expect("a report in the contract's shape")
    }

    #[test]
    fn a_second_run_is_judged_against_the_first_by_the_models_targets() {
        let mut case = Case::draw(3);
        case.command = "zadd";
        let first = app(100, 10, 40, false, [0, 5, 0, 0]);
        // Not wedged then wedged, 10 % then 14 % MOVED (within 5 points), 10 then 12 refreshes
        // (within 25 %), 40 then 60 connections (not), the first failure 0.25 s then 0.5 s after
        // the start (within 1 s), recovery at 0.5 s then 0.75 s.
        let second = app(140, 12, 60, true, [0, 0, 5, 0]);
        let c = compare_live(&case, &first, None, &second, None);
        let met: Vec<bool> = c.iter().map(|c| c.met).collect();
        assert_eq!(met, [false, true, true, false, true, true], "{c:?}");
        assert_eq!(c[1].real, "10.00 % (100 / 1000)");
        assert_eq!(c[1].model, "14.00 % (140 / 1000)");
        assert!(c[3].cause.as_deref().unwrap().contains("40 then 60"));
        // Against itself, everything repeats.
        assert!(compare_live(&case, &first, None, &first, None)
            .iter()
            .all(|c| c.met));
    }

    #[test]
    fn the_floor_splits_the_models_hits_by_whether_the_library_repeated() {
        let c = |met: bool| {
            vec![Comparison {
                metric: Metric::Reinits,
                real: String::new(),
                model: String::new(),
                met,
                cause: None,
            }]
        };
        let (hit, miss) = (c(true), c(false));
        let cases = [
            (&hit, &hit, &miss),  // repeated, model met
            (&miss, &hit, &miss), // repeated, model missed
            (&miss, &miss, &hit), // not repeated, model met the second run only
            (&hit, &miss, &miss), // not repeated, model met the first run
        ];
        let f = floor(
            cases
                .iter()
                .map(|(m, a, b)| (m.as_slice(), a.as_slice(), b.as_slice())),
            Metric::Reinits,
        );
        assert_eq!(
            f,
            Floor {
                cases: 4,
                repeated: 2,
                model_where_repeated: 1,
                model_where_not: 1,
                model_of_either: 3
            }
        );
        assert_eq!(
            f.cells(),
            "2/4 (50 %) | 1/2 (50 %) | 1/2 (50 %) | 3/4 (75 %)"
        );
        assert_eq!(
            floor(
                cases.iter().map(|_| (&[][..], &[][..], &[][..])),
                Metric::Wedged
            ),
            Floor::default()
        );
    }
}
