//! How far a load is: what the status line says at each stage, and when a recording still
//! loading is shown as far as it is read (plain data and rules, tested natively).

/// Lines the reader's worker reads per call: some 60 ms of a day-long recording's lines in
/// Chromium, so the status line's share moves smoothly and a superseded load stops soon.
pub const STEP_LINES: u32 = 10_000;
/// A recording still loading after this long is shown as far as it is read…
pub const PREVIEW_AFTER_MS: f64 = 600.0;
/// …unless this share of it is read already (the rest will not take long).
pub const PREVIEW_BEFORE: f64 = 0.6;

/// What `#status` shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Status {
    /// The text.
    pub text: String,
    /// Whether it reports an error.
    pub error: bool,
}

/// `share` (0..=1) as a whole percentage, rounded down.
fn percent(share: f64) -> u32 {
    // 0..=100 by the clamp.
    (share.clamp(0.0, 1.0) * 100.0).floor() as u32
}

impl Status {
    fn info(text: String) -> Status {
        Status { text, error: false }
    }

    /// Before the first byte: "Loading NAME …".
    pub fn started(name: &str) -> Status {
        Status::info(format!("Loading {name} …"))
    }

    /// Parsing, `share` of it read; `previewed`: the part read so far is shown.
    pub fn reading(name: &str, share: f64, previewed: bool) -> Status {
        let showing = if previewed {
            " (showing the part read so far)"
        } else {
            ""
        };
        Status::info(format!("Loading {name} … {} %{showing}", percent(share)))
    }

    /// Parsing, `share` of it read, its overview shown (`buckets_per_pair`: how many polls each
    /// pair of the overview's points stands for).
    pub fn reading_behind_overview(name: &str, share: f64, buckets_per_pair: u64) -> Status {
        let reduced = if buckets_per_pair > 1 {
            format!(", each pair of points the least and the most of {buckets_per_pair} polls")
        } else {
            String::new()
        };
        Status::info(format!(
            "Loading {name} … {} % (showing its overview{reduced}; zoom detail and what-if when loaded)",
            percent(share)
        ))
    }

    /// Building the tracks and the analysis, `share` of it done.
    pub fn analysing(name: &str, share: f64) -> Status {
        Status::info(format!("Analysing {name} … {} %", percent(share)))
    }

    /// Done: how many lines and findings the recording has.
    pub fn loaded(name: &str, lines: u64, findings: usize) -> Status {
        Status::info(format!("Loaded {name}: {lines} lines, {findings} findings"))
    }

    /// The load failed with `message`.
    pub fn failed(name: &str, message: &str) -> Status {
        Status {
            text: format!("Could not load {name}: {message}"),
            error: true,
        }
    }
}

/// Whether to show the part read so far now: not shown yet, less than [`PREVIEW_BEFORE`] of the
/// recording read, and [`PREVIEW_AFTER_MS`] or more since the load began.
pub fn preview_due(previewed: bool, share: f64, elapsed_ms: f64) -> bool {
    !previewed && share < PREVIEW_BEFORE && elapsed_ms >= PREVIEW_AFTER_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_texts_name_the_recording_and_the_share_done() {
        let name = "demo/incident1.jsonl.zst";
        assert_eq!(
            Status::started(name).text,
            "Loading demo/incident1.jsonl.zst …"
        );
        assert_eq!(
            Status::reading(name, 0.427, false).text,
            "Loading demo/incident1.jsonl.zst … 42 %"
        );
        assert_eq!(
            Status::reading(name, 0.5, true).text,
            "Loading demo/incident1.jsonl.zst … 50 % (showing the part read so far)"
        );
        assert_eq!(
            Status::analysing(name, 1.5).text,
            "Analysing demo/incident1.jsonl.zst … 100 %"
        );
        assert_eq!(
            Status::loaded(name, 1200, 3).text,
            "Loaded demo/incident1.jsonl.zst: 1200 lines, 3 findings"
        );
        let failed = Status::failed(name, "HTTP 404 Not Found");
        assert_eq!(
            failed.text,
            "Could not load demo/incident1.jsonl.zst: HTTP 404 Not Found"
        );
        assert!(failed.error);
        assert!(!Status::loaded(name, 1, 0).error);
    }

    #[test]
    fn a_slow_load_previews_once_unless_mostly_read() {
        assert!(!preview_due(false, 0.1, 599.0), "not yet");
        assert!(preview_due(false, 0.1, 600.0));
        assert!(!preview_due(true, 0.1, 5_000.0), "only once");
        assert!(
            !preview_due(false, PREVIEW_BEFORE, 5_000.0),
            "the rest will not take long"
        );
    }
}
