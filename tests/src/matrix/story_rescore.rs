//! The story cases a draw kept (`scripts/story --keep DIR`) judged again by the current
//! `slotscope analyze` and `hypotheses`, with no live run (`scripts/story --rescore DIR`): how an
//! analysis change fares on live runs already made. Each kept case is `<seed>.jsonl.zst`, the
//! applications' reports (`<seed>.app.json`, `<seed>.companion.json`) and `<seed>.live.json`
//! (what they were told, the companion's settings among it, and the case's library, from which
//! the seed draws the same case again).

use std::path::Path;

use serde_json::Value;

use crate::matrix::app::{AppReport, AppSettings};
use crate::matrix::library::Library;
use crate::matrix::story::{judge_recording, StoryCase, StoryResult};
use crate::matrix::truth::AppTruth;

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The kept story case `seed` of `dir` judged again; `say` receives progress lines.
pub fn rescore_story(dir: &Path, seed: u64, say: &dyn Fn(&str)) -> StoryResult {
    let mut result = StoryResult::new(StoryCase::draw(seed));
    if let Err(e) = fill(&mut result, dir, seed) {
        result.error = Some(format!("kept case: {e}"));
        return result;
    }
    judge_recording(
        &mut result,
        &dir.join(format!("{seed}.jsonl.zst")),
        say,
        None,
    );
    result
}

/// The case, the reports and the truths of the kept case `seed`.
fn fill(result: &mut StoryResult, dir: &Path, seed: u64) -> Result<(), String> {
    let live = read_json(&dir.join(format!("{seed}.live.json")))?;
    // A case draws its library with one number whatever the list: drawn over its own library
    // alone, its seed gives the same case.
    let libraries = Library::parse(live["library"].as_str().unwrap_or_default())?;
    result.case = StoryCase::draw_over(seed, &libraries);
    let settings = AppSettings::from_json(&live["settings"])
        .ok_or_else(|| format!("{seed}.live.json: no settings"))?;
    let app = AppReport::from_json(read_json(&dir.join(format!("{seed}.app.json")))?)?;
    result.truths.push(AppTruth::of(&settings, &app));
    result.app = Some(app);
    if result.case.companion.is_some() {
        let s = AppSettings::from_json(&live["companion_settings"])
            .ok_or_else(|| format!("{seed}.live.json: no companion settings"))?;
        let c = AppReport::from_json(read_json(&dir.join(format!("{seed}.companion.json")))?)?;
        result.truths.push(AppTruth::of(&s, &c));
        result.companion = Some(c);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_case_without_its_settings_is_an_error_of_that_case() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("5.live.json"), "{\"library\": \"jedis\"}").unwrap();
        let r = rescore_story(dir.path(), 5, &|_| {});
        let e = r.error.unwrap();
        assert!(e.contains("no settings"), "{e}");
        assert_eq!(r.case.case.library, Library::Jedis);
        let missing = rescore_story(dir.path(), 6, &|_| {});
        assert!(missing.error.unwrap().starts_with("kept case:"));
    }
}
