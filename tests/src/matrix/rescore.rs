//! The cases a draw kept (`--keep DIR`) replayed again through the current model, with no live
//! run (`scripts/fidelity --rescore DIR`): how a model change fares on live runs already made.
//! Each kept case is `<seed>.jsonl.zst` (the recording), `<seed>.app.json` (the application's
//! report) and `<seed>.live.json` (what the harness knew: the settings, when the fault began,
//! the case's library, from which the seed draws the same case again, and the CPU costs timed
//! before it, [`crate::matrix::calibration`]); a second live run
//! (`--twice`) is `<seed>.again.*`.

use std::path::Path;

use serde_json::Value;

use crate::matrix::app::{AppReport, AppSettings};
use crate::matrix::calibration;
use crate::matrix::case::Case;
use crate::matrix::library::Library;
use crate::matrix::live::LiveRun;
use crate::matrix::replay::replay;
use crate::matrix::runner::CaseResult;

pub(crate) fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The kept run `<dir>/<stem>.*` as a [`LiveRun`], and its case's library.
pub(crate) fn kept_run(dir: &Path, stem: &str) -> Result<(LiveRun, Vec<Library>), String> {
    let live = read_json(&dir.join(format!("{stem}.live.json")))?;
    let app = AppReport::from_json(read_json(&dir.join(format!("{stem}.app.json")))?)?;
    let settings = AppSettings::from_json(&live["settings"])
        .ok_or_else(|| format!("{stem}.live.json: no settings"))?;
    // A case draws its library with one number whatever the list: drawn over its own library
    // alone, its seed gives the same case.
    let libraries = Library::parse(live["library"].as_str().unwrap_or_default())?;
    let run = LiveRun {
        dir: tempfile::tempdir().map_err(|e| e.to_string())?,
        recording: dir.join(format!("{stem}.jsonl.zst")),
        recording_started_ms: live["recording_started_ms"].as_u64().unwrap_or(0),
        settings,
        app,
        events: Vec::new(),
        companion_settings: None,
        companion: None,
        fault_started_ms: live["fault_started_ms"].as_u64(),
        nodes: Vec::new(),
        machine_options: calibration::from_json(&live["machine_options"]),
    };
    Ok((run, libraries))
}

/// The case seeds kept in `dir` (every `<seed>.live.json`), in order.
pub fn kept_seeds(dir: &Path) -> Vec<u64> {
    let mut seeds: Vec<u64> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".live.json")?.parse().ok()
        })
        .collect();
    seeds.sort_unstable();
    seeds
}

/// The kept case `seed` of `dir` replayed again and compared, with its second live run when
/// one was kept.
pub fn rescore(dir: &Path, seed: u64) -> CaseResult {
    let stem = seed.to_string();
    let (live, libraries) = match kept_run(dir, &stem) {
        Ok(k) => k,
        Err(e) => {
            let mut r = CaseResult::new(Case::draw(seed));
            r.error = Some(format!("kept case: {e}"));
            return r;
        }
    };
    let case = Case::draw_over(seed, &libraries);
    let mut result = CaseResult::new(case.clone());
    result.app = Some(live.app.clone());
    result.recording_started_ms = live.recording_started_ms;
    result.take_replay(replay(&case, &live), &live);
    if let Ok((second, _)) = kept_run(dir, &format!("{stem}.again")) {
        result.judge_again(&live, &second);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_settings_read_back_and_only_kept_cases_are_listed() {
        use serde_json::json;
        let case = Case::draw(11);
        let settings = AppSettings {
            startup: "127.0.0.1:7000".into(),
            rate: 300,
            in_flight: 12,
            duration_s: 9,
            keys: 500,
            key_prefix: None,
            command: case.command.to_owned(),
            address_remap: Some("127.0.0.1:7000".into()),
            socket_timeout_s: 0.5,
            connect_timeout_s: 0.5,
            client_name: "matrix-app".into(),
            seed: 4,
        };
        assert_eq!(
            AppSettings::from_json(&settings.to_json()),
            Some(settings.clone())
        );
        assert_eq!(AppSettings::from_json(&json!({"startup": "x"})), None);
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "12.live.json",
            "3.live.json",
            "12.again.live.json",
            "7.app.json",
        ] {
            std::fs::write(dir.path().join(name), "{}").unwrap();
        }
        assert_eq!(kept_seeds(dir.path()), [3, 12]);
        // A kept case without its report is an error of that case, not of the draw.
        let r = rescore(dir.path(), 12);
        assert!(
            r.error.as_deref().unwrap().starts_with("kept case:"),
            "{:?}",
            r.error
        );
    }
}
