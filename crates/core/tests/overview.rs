//! The overview of every real recording of the founding incidents reads back as written, and
//! holds the analysis a viewer would make of the whole recording (without its metrics and
//! timeline) and tracks that cover the same span.

use slotscope_core::analysis::Analyzer;
use slotscope_core::overview::{Overview, ANALYSIS_ID, COLUMNS};
use slotscope_core::reader::RecordingReader;
use slotscope_core::track::TracksBuilder;

fn fixtures() -> Vec<std::path::PathBuf> {
    let dir = format!("{}/../../tests/fixtures", env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.zst"))
        .collect();
    out.sort();
    assert!(out.len() >= 6, "{out:?}");
    out
}

#[test]
fn every_fixtures_overview_reads_back_and_holds_its_analysis() {
    for path in fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let len = bytes.len() as u64;
        let ov = Overview::of_recording(std::io::Cursor::new(bytes.clone()), len).unwrap();
        // Read back, it is what was written (compared as JSON, NaN being `null`; serde_json
        // reads a float back within an ulp).
        let json = ov.to_json();
        let back = Overview::from_json(&json).unwrap();
        assert_same(&back, &ov, &path);

        // What the viewer makes of the whole recording.
        let mut reader = RecordingReader::detect(std::io::Cursor::new(bytes)).unwrap();
        let header = reader.header().unwrap().clone();
        let (mut tracks, mut analyzer) = (TracksBuilder::new(&header), Analyzer::new(header));
        for item in reader.by_ref() {
            let line = item.unwrap().1;
            tracks.push(&line);
            analyzer.push_owned(line);
        }
        let whole = analyzer.finish();
        let tracks = tracks.finish(&whole.metrics, &whole.timeline);
        assert!(!whole.findings.is_empty(), "{}", path.display());
        assert_eq!(back.lines, reader.lines_read());
        assert_eq!(back.recording_bytes, len);
        // The fixtures are minutes long: their tracks fit whole.
        assert!(tracks.grid.buckets <= COLUMNS);
        assert_same(&back.tracks, &tracks, &path);
        assert_eq!(back.buckets_per_pair, 1);
        // Only the metrics and the timeline are left out (neither is serialised).
        assert!(back.analysis.metrics.nodes.is_empty());
        assert_same(&back.analysis, &whole, &path);
        assert_eq!(back.analysis.findings.len(), whole.findings.len());
    }
}

/// `a` and `b` serialise alike, numbers within a relative 1e-12.
fn assert_same<T: serde::Serialize>(a: &T, b: &T, path: &std::path::Path) {
    let (a, b) = (
        serde_json::to_value(a).unwrap(),
        serde_json::to_value(b).unwrap(),
    );
    assert!(same(&a, &b), "{}:\n{a}\n{b}", path.display());
}

fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn an_overview_names_the_build_that_wrote_it() {
    let path = &fixtures()[0];
    let bytes = std::fs::read(path).unwrap();
    let len = bytes.len() as u64;
    let ov = Overview::of_recording(std::io::Cursor::new(bytes), len).unwrap();
    assert!(ov.is_current() && ov.analysis_id == ANALYSIS_ID);
    assert!(
        ANALYSIS_ID.starts_with(env!("CARGO_PKG_VERSION")),
        "{ANALYSIS_ID}"
    );
    let json = ov.to_json();
    assert!(Overview::is_current_json(&json));
    // Written by another build, or before overviews named theirs: read, but not current.
    let other = String::from_utf8(json)
        .unwrap()
        .replace(ANALYSIS_ID, "0.1.0-0000000000000000");
    assert!(!Overview::is_current_json(other.as_bytes()));
    assert!(!Overview::from_json(other.as_bytes()).unwrap().is_current());
    let unnamed = other.replace(r#""analysis_id":"0.1.0-0000000000000000","#, "");
    assert!(!Overview::from_json(unnamed.as_bytes())
        .unwrap()
        .is_current());
    assert!(!Overview::is_current_json(b"not json"));
}

/// Found by fuzzing (`fuzz/regressions/recording/`): a recording with one line dated 57 years
/// after its start (one corrupted time: an `info` line in one, a `client_list` line in the other)
/// made the analysis allocate for every poll interval of those years — the redirect detector's
/// buckets (230 GB), then the traffic streams' grid (29 GB) — and the process ran out of
/// memory. Each is read and analysed, its overview made, at the cost of its few lines.
#[test]
fn a_line_dated_decades_later_costs_no_memory_for_the_years_between() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/recording");
    let mut found = 0;
    for name in [
        "oom-a-line-dated-decades-later",
        "oom-a-client-list-dated-decades-later",
    ] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let times: Vec<u64> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v["t"].as_u64())
            .collect();
        let (lo, hi) = (times.iter().min().unwrap(), times.iter().max().unwrap());
        assert!(hi - lo > 50 * 365 * 86_400_000, "{name}: {lo}..{hi}");
        let overview = Overview::of_recording(std::io::Cursor::new(bytes), 0)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(Overview::from_json(&overview.to_json()).is_ok(), "{name}");
        found += 1;
    }
    assert_eq!(found, 2);
}

/// Found by the structure-aware fuzz target (`recording_lines`): a recording whose `INFO` lines
/// carry command counters near the top of `u64` (8.3e18 and 1.6e19 rejected calls, as a damaged
/// file can) made the per-shard traffic's sums overflow (a panic in a debug build, a wrapped
/// count in a release one). Sums of counters saturate now; the recording is read and analysed.
#[test]
fn command_counters_near_the_top_of_u64_add_up_without_wrapping() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions/recording/overflow-command-counters-near-the-top-of-u64");
    let bytes = std::fs::read(&path).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let huge = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "info")
        .filter_map(|v| {
            let stats = v["info"]["commandstats"].as_object()?.clone();
            stats
                .values()
                .filter_map(|c| c["rejected_calls"].as_u64())
                .max()
        })
        .max()
        .unwrap();
    assert!(huge > u64::MAX / 2, "{huge}");
    let (read, analysis) = analysed_as_analyze_reads(bytes);
    assert!(read > 20, "{read} lines read");
    assert!(serde_json::to_string(&analysis.shard_traffic).is_ok());
}

/// Found by `recording_lines` too: a header whose `interval_ms` is near the top of `u64` (a
/// damaged header) made the story's "first round" (start + 2 intervals) overflow, and a dozen
/// other places work on multiples of the interval. The reader now reads an interval as at most a
/// day (`MAX_INTERVAL_MS`); the recording is read and analysed.
#[test]
fn a_header_interval_near_the_top_of_u64_is_read_as_a_day() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions/recording/overflow-a-header-interval-near-the-top-of-u64");
    let bytes = std::fs::read(&path).unwrap();
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&bytes).lines().next().unwrap()).unwrap();
    assert!(first["options"]["interval_ms"].as_u64().unwrap() > u64::MAX / 2);
    let mut reader =
        slotscope_core::reader::RecordingReader::detect(std::io::Cursor::new(bytes.clone()))
            .unwrap();
    assert_eq!(
        reader.header().unwrap().options.interval_ms,
        slotscope_core::reader::MAX_INTERVAL_MS
    );
    let (read, analysis) = analysed_as_analyze_reads(bytes);
    assert!(read > 0);
    assert!(serde_json::to_string(&analysis.story).is_ok());
}

/// Found by `recording_lines` in its hour-long run: a `poll_round` line whose `round` is the top
/// of `u64` (a damaged file) overflowed the summary's round count (`round + 1`). The count
/// saturates; the recording is summarised and analysed.
#[test]
fn a_poll_round_at_the_top_of_u64_is_counted_without_wrapping() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions/recording/overflow-a-poll-round-at-the-top-of-u64");
    let bytes = std::fs::read(&path).unwrap();
    let rounds: Vec<u64> = String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "poll_round")
        .filter_map(|v| v["round"].as_u64())
        .collect();
    assert!(rounds.contains(&u64::MAX), "{rounds:?}");
    let mut reader = RecordingReader::detect(std::io::Cursor::new(bytes.clone())).unwrap();
    let mut summary =
        slotscope_core::summary::SummaryBuilder::new(reader.header().unwrap().clone());
    for (_, line) in reader.by_ref().flatten() {
        summary.push(&line);
    }
    assert_eq!(summary.finish().rounds, u64::MAX);
    let (read, analysis) = analysed_as_analyze_reads(bytes);
    assert!(read > 10, "{read} lines read");
    assert!(serde_json::to_string(&analysis.story).is_ok());
}

/// `bytes` read as `analyze` reads a file (bad lines skipped, as the fuzzer also makes them) and
/// analysed: the lines read, and the analysis.
fn analysed_as_analyze_reads(bytes: Vec<u8>) -> (usize, slotscope_core::analysis::Analysis) {
    let mut reader =
        slotscope_core::reader::RecordingReader::detect(std::io::Cursor::new(bytes)).unwrap();
    let mut analyzer = slotscope_core::analysis::Analyzer::new(reader.header().unwrap().clone());
    let mut read = 0;
    for (_, line) in reader.by_ref().flatten() {
        analyzer.push_owned(line);
        read += 1;
    }
    (read, analyzer.finish())
}

/// Every input fuzzing kept (`fuzz/regressions/recording/`, each a crash once) is read to its
/// end or to an error naming its line, without a crash.
#[test]
fn every_recording_fuzzing_found_is_read_without_a_crash() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/recording");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let _ = Overview::of_recording(std::io::Cursor::new(bytes), 0);
        n += 1;
    }
    assert!(n >= 5, "{n} inputs in {}", dir.display());
}
