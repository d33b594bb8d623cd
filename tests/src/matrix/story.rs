//! The story check of issue 13 on one live case: the drawn case ([`Case`]) with, in about half the
//! cases, a healthy companion beside it ([`Companion`]), run live; then `slotscope analyze` and
//! `slotscope hypotheses` on the recording, as a user would run them (no option but `--format
//! json`), judged against what the applications themselves reported ([`crate::matrix::criteria`]).
//!
//! A panic of the harness is caught and kept as the case's error, as in
//! [`crate::matrix::runner`]; every process the case started has been killed by then.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use crate::matrix::analysis::{run_json, Analysis, Hypotheses};
use crate::matrix::app::AppReport;
use crate::matrix::case::Case;
use crate::matrix::companion::Companion;
use crate::matrix::criteria::{Criterion, Judgement, Subjects};
use crate::matrix::judge::judge;
use crate::matrix::library::Library;
use crate::matrix::live::{self, Event};
use crate::matrix::panic_payload::panic_text;
use crate::matrix::truth::AppTruth;

/// The recorder's poll interval, ms ([`crate::matrix::live::INTERVAL`]): the "one poll" of criterion (a).
pub const POLL_MS: u64 = 500;

/// A drawn story case: the matrix's case and its companion, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct StoryCase {
    /// The case (every axis of the fidelity matrix).
    pub case: Case,
    /// The healthy application beside it, if drawn.
    pub companion: Option<Companion>,
}

impl StoryCase {
    /// The story case drawn from `seed` (its [`Case`] is the fidelity matrix's case of that seed).
    pub fn draw(seed: u64) -> StoryCase {
        StoryCase::draw_over(seed, &crate::matrix::case::REDIS_PY)
    }

    /// The story case drawn from `seed`, its library one of `libraries` ([`Case::draw_over`]; the
    /// companion is drawn as [`StoryCase::draw`] draws it).
    ///
    /// # Panics
    ///
    /// If `libraries` is empty.
    pub fn draw_over(seed: u64, libraries: &[Library]) -> StoryCase {
        StoryCase {
            case: Case::draw_over(seed, libraries),
            companion: Companion::draw(seed),
        }
    }
}

impl std::fmt::Display for StoryCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.case)?;
        match &self.companion {
            Some(c) => write!(f, "; {c}"),
            None => write!(f, "; no companion"),
        }
    }
}

/// What one story case came to.
#[derive(Clone, Debug)]
pub struct StoryResult {
    /// The case.
    pub case: StoryCase,
    /// The drawn application's report, if it ran.
    pub app: Option<AppReport>,
    /// The companion's report, if one ran.
    pub companion: Option<AppReport>,
    /// The applications' ground truth, the drawn one first.
    pub truths: Vec<AppTruth>,
    /// What the harness did.
    pub events: Vec<Event>,
    /// `analyze`'s answer, or why there is none.
    pub analysis: Option<Result<Analysis, String>>,
    /// `hypotheses`' answer, or why there is none.
    pub hypotheses: Option<Result<Hypotheses, String>>,
    /// One judgement a criterion, in [`Criterion::ALL`] order (empty after a harness error).
    pub judgements: Vec<Judgement>,
    /// Why the case did not get that far (a harness error).
    pub error: Option<String>,
}

impl StoryResult {
    /// The result of `case` before anything ran.
    pub fn new(case: StoryCase) -> StoryResult {
        StoryResult {
            case,
            app: None,
            companion: None,
            truths: Vec::new(),
            events: Vec::new(),
            analysis: None,
            hypotheses: None,
            judgements: Vec::new(),
            error: None,
        }
    }

    /// The judgement of `criterion`, if made.
    pub fn get(&self, criterion: Criterion) -> Option<&Judgement> {
        self.judgements.iter().find(|j| j.criterion == criterion)
    }
}

/// Runs `case`; `say` receives progress lines. With `keep`, the recording, the analysis's two
/// answers, the applications' reports and what the harness told them (`<seed>.live.json`, with
/// the companion's settings: what `scripts/story --rescore` reads) are kept there under the
/// case's seed.
pub fn run_story(case: &StoryCase, say: &dyn Fn(&str), keep: Option<&Path>) -> StoryResult {
    let mut result = StoryResult::new(case.clone());
    let run = || live::run_with(&case.case, case.companion.as_ref(), say);
    let live = match catch_unwind(AssertUnwindSafe(run)) {
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
    result.events = live.events.clone();
    result.truths.push(AppTruth::of(&live.settings, &live.app));
    if let (Some(s), Some(r)) = (&live.companion_settings, &live.companion) {
        result.truths.push(AppTruth::of(s, r));
    }
    result.app = Some(live.app.clone());
    result.companion = live.companion.clone();

    if let Some(dir) = keep {
        let seed = case.case.seed;
        let _ = std::fs::create_dir_all(dir);
        let _ = std::fs::copy(&live.recording, dir.join(format!("{seed}.jsonl.zst")));
        let _ = std::fs::write(
            dir.join(format!("{seed}.app.json")),
            live.app.raw.to_string(),
        );
        let mut kept = live.kept_json(&case.case);
        if let Some(s) = &live.companion_settings {
            kept["companion_settings"] = s.to_json();
        }
        let _ = std::fs::write(dir.join(format!("{seed}.live.json")), kept.to_string());
        if let Some(c) = &live.companion {
            let _ = std::fs::write(
                dir.join(format!("{seed}.companion.json")),
                c.raw.to_string(),
            );
        }
    }
    judge_recording(&mut result, &live.recording, say, keep);
    result
}

/// Runs `slotscope analyze` and `slotscope hypotheses` on `recording` (the current
/// `SLOTSCOPE_BIN`) and judges their answers against `result`'s truths; with `keep`, the two
/// answers are kept there under the case's seed.
pub fn judge_recording(
    result: &mut StoryResult,
    recording: &Path,
    say: &dyn Fn(&str),
    keep: Option<&Path>,
) {
    let file = recording.display().to_string();
    say("slotscope analyze");
    let analysis_json = run_json(&["analyze", &file]);
    say("slotscope hypotheses");
    let hypotheses_json = run_json(&["hypotheses", &file]);
    if let Some(dir) = keep {
        let seed = result.case.case.seed;
        for (name, v) in [
            ("analyze", &analysis_json),
            ("hypotheses", &hypotheses_json),
        ] {
            if let Ok(v) = v {
                let _ = std::fs::write(dir.join(format!("{seed}.{name}.json")), v.to_string());
            }
        }
    }
    let analysis = analysis_json.map(|v| Analysis::from_json(&v));
    let hypotheses = hypotheses_json.map(|v| Hypotheses::from_json(&v));
    result.judgements = judge(&Subjects {
        apps: &result.truths,
        analysis: &analysis,
        hypotheses: &hypotheses,
        poll_ms: POLL_MS,
        fault: result.case.case.fault,
    });
    result.analysis = Some(analysis);
    result.hypotheses = Some(hypotheses);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_poll_is_the_recorders_interval() {
        assert_eq!(format!("{POLL_MS}ms"), crate::matrix::live::INTERVAL);
    }
}
