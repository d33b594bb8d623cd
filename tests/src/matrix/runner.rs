//! One case end to end: run live, replay, compare. A panic of the harness (a server that does not
//! start, a cluster command refused) is caught and kept as the case's error, so that a long draw
//! goes on; every process the case started has been killed by then (their handles drop while
//! the panic unwinds).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use serde_json::Value;

use crate::matrix::app::AppReport;
use crate::matrix::case::Case;
use crate::matrix::compare::{compare, Comparison, Metric};
use crate::matrix::live::{self, Event, LiveRun};
use crate::matrix::panic_payload::panic_text;
use crate::matrix::repeat::compare_live;
use crate::matrix::replay::{replay, Replayed};

/// What one case came to.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// What the application reported, if it ran.
    pub app: Option<AppReport>,
    /// When the recorder started, epoch ms.
    pub recording_started_ms: u64,
    /// What the harness did.
    pub events: Vec<Event>,
    /// The replay's arguments, if it ran.
    pub replay_args: Vec<String>,
    /// The replay's report, if it ran.
    pub model: Option<Value>,
    /// The replay's fallbacks (see [`crate::matrix::replay`]).
    pub fallbacks: Vec<String>,
    /// One comparison a metric, if the case got that far.
    pub comparisons: Vec<Comparison>,
    /// Why the case did not get that far.
    pub error: Option<String>,
    /// Run twice ([`run_case_twice`]): the second live run against the first, by the same
    /// targets ([`compare_live`]); empty when the case ran once.
    pub again: Vec<Comparison>,
    /// Run twice: the model (replaying the first run's recording) against the second live run.
    pub model_again: Vec<Comparison>,
    /// Run twice: why the second run did not get that far.
    pub again_error: Option<String>,
}

impl CaseResult {
    /// `case` before anything ran.
    pub fn new(case: Case) -> CaseResult {
        CaseResult {
            case,
            app: None,
            recording_started_ms: 0,
            events: Vec::new(),
            replay_args: Vec::new(),
            model: None,
            fallbacks: Vec::new(),
            comparisons: Vec::new(),
            error: None,
            again: Vec::new(),
            model_again: Vec::new(),
            again_error: None,
        }
    }

    /// The replay of `live` (the case's first run), compared with it; or why it failed.
    pub fn take_replay(&mut self, replayed: Result<Replayed, String>, live: &LiveRun) {
        match replayed {
            Ok(r) => {
                self.comparisons = compare(
                    &self.case,
                    &live.app,
                    &r.report,
                    &r.fallbacks,
                    live.fault_started_ms,
                );
                self.replay_args = r.args;
                self.fallbacks = r.fallbacks;
                self.model = Some(r.report);
            }
            Err(e) => self.error = Some(format!("replay: {e}")),
        }
    }

    /// The case's `second` live run judged against its `first` ([`compare_live`]), and the
    /// model (replaying the first) against it.
    pub fn judge_again(&mut self, first: &LiveRun, second: &LiveRun) {
        self.again = compare_live(
            &self.case,
            &first.app,
            first.fault_started_ms,
            &second.app,
            second.fault_started_ms,
        );
        if let Some(model) = &self.model {
            self.model_again = compare(
                &self.case,
                &second.app,
                model,
                &self.fallbacks,
                second.fault_started_ms,
            );
        }
    }

    /// The comparison of `metric`, if made.
    pub fn get(&self, metric: Metric) -> Option<&Comparison> {
        self.comparisons.iter().find(|c| c.metric == metric)
    }
}

/// Runs `case`; `say` receives progress lines. With `keep`, the recording and the application's
/// report are copied there as `<seed>.jsonl.zst` and `<seed>.app.json`.
pub fn run_case(case: &Case, say: &dyn Fn(&str), keep: Option<&Path>) -> CaseResult {
    run(case, say, keep, false)
}

/// [`run_case`], then the same case live once more (not replayed; kept as `<seed>.again.*`),
/// judged against the first run ([`CaseResult::again`]) and the model against it
/// ([`CaseResult::model_again`]).
pub fn run_case_twice(case: &Case, say: &dyn Fn(&str), keep: Option<&Path>) -> CaseResult {
    run(case, say, keep, true)
}

/// Keeps `live`'s recording, application report and what the harness knew in `dir` as
/// `<stem>.jsonl.zst`, `<stem>.app.json` and `<stem>.live.json` (what `--rescore` reads).
pub(crate) fn keep_run(dir: &Path, stem: &str, case: &Case, live: &live::LiveRun) {
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(
        dir.join(format!("{stem}.live.json")),
        live.kept_json(case).to_string(),
    );
    let _ = std::fs::copy(&live.recording, dir.join(format!("{stem}.jsonl.zst")));
    let _ = std::fs::write(
        dir.join(format!("{stem}.app.json")),
        live.app.raw.to_string(),
    );
}

fn run(case: &Case, say: &dyn Fn(&str), keep: Option<&Path>, twice: bool) -> CaseResult {
    let mut result = CaseResult::new(case.clone());
    let live = match catch_unwind(AssertUnwindSafe(|| live::run(case, say))) {
        Ok(Ok(live)) => live,
        Ok(Err(e)) => {
            result.error = Some(format!("live run: {e}"));
            return result;
        }
        Err(p) => {
            result.error = Some(format!("live run panicked: {}", panic_text(p.as_ref())));
            return result;
        }
    };
    result.app = Some(live.app.clone());
    result.recording_started_ms = live.recording_started_ms;
    result.events = live.events.clone();
    if let Some(dir) = keep {
        keep_run(dir, &case.seed.to_string(), case, &live);
    }
    match catch_unwind(AssertUnwindSafe(|| replay(case, &live))) {
        Ok(replayed) => result.take_replay(replayed, &live),
        Err(p) => result.error = Some(format!("replay panicked: {}", panic_text(p.as_ref()))),
    }
    if twice && result.error.is_none() {
        say("the same case live again");
        match catch_unwind(AssertUnwindSafe(|| live::run(case, say))) {
            Ok(Ok(second)) => {
                if let Some(dir) = keep {
                    keep_run(dir, &format!("{}.again", case.seed), case, &second);
                }
                result.judge_again(&live, &second);
            }
            Ok(Err(e)) => result.again_error = Some(format!("second live run: {e}")),
            Err(p) => {
                result.again_error = Some(format!(
                    "second live run panicked: {}",
                    panic_text(p.as_ref())
                ));
            }
        }
    }
    result
}
