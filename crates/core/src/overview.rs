//! The overview of a recording: what a viewer shows first of a big one while it reads the rest.
//!
//! A day at one-second polls is hundreds of megabytes of JSON, which a browser parses for tens of
//! seconds. The overview is written beside the recording (`FILE` + [`SUFFIX`]; by `slotscope
//! index`, by `record` when it closes a file, or by `slotscope serve` when a viewer first asks)
//! and holds what the first screen needs, in a few megabytes at most:
//!
//! - the analysis (story, findings, census, summary, client-side evidence): everything but the
//!   per-node metrics and the cluster timeline, which only the whole recording gives;
//! - the tracks at most [`COLUMNS`] buckets wide: each run of the recording's buckets becomes a
//!   pair, the smallest and the largest value of the run in the order they came, so a one-second
//!   spike survives a day drawn on one screen (a one-level min/max pyramid; the viewer reads
//!   the recording itself for anything finer).

use std::io::BufRead;

use serde::{Deserialize, Serialize};

use crate::analysis::{Analysis, Analyzer};
use crate::metrics::Metrics;
use crate::reader::{ReadError, RecordingReader};
use crate::timeline::ClusterTimeline;
use crate::track::{Grid, Series, Tracks, TracksBuilder};

/// The overview's format version; a reader refuses another.
pub const FORMAT: u32 = 1;

/// The analysis code of this build: the crate's version and a hash of its sources (made by the
/// build script). An overview written by another build may tell another story of the same
/// recording: [`Overview::is_current`] says whether it was this one.
pub const ANALYSIS_ID: &str = env!("SLOTSCOPE_ANALYSIS_ID");

/// At most this many buckets per series (a pair per run of the recording's buckets).
pub const COLUMNS: usize = 4096;

/// The file name suffix an overview has beside its recording (`a.jsonl.zst.overview.json`).
pub const SUFFIX: &str = ".overview.json";

/// What a viewer shows first of a recording (see the module's notes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overview {
    /// [`FORMAT`].
    pub format: u32,
    /// The [`ANALYSIS_ID`] of the build that wrote it (empty in overviews older than it).
    #[serde(default)]
    pub analysis_id: String,
    /// The recording's size in bytes, as stored (compressed or not): a viewer that then reads
    /// a recording of another size knows the overview is of an older state of it.
    pub recording_bytes: u64,
    /// Lines in the recording, the header included.
    pub lines: u64,
    /// How many of the recording's buckets each pair of the tracks' buckets covers (1: the
    /// tracks are the recording's own, not reduced).
    pub buckets_per_pair: u64,
    /// The tracks, reduced to at most [`COLUMNS`] buckets.
    pub tracks: Tracks,
    /// The analysis, without its metrics and timeline (see [`Analysis`]'s serialisation).
    pub analysis: Analysis,
}

/// Why an overview could not be read.
#[derive(Debug, thiserror::Error)]
pub enum OverviewError {
    /// Not JSON of an overview.
    #[error("not a slotscope overview: {0}")]
    Parse(#[from] serde_json::Error),
    /// Written by another version.
    #[error("overview format {found}, this slotscope reads format {FORMAT}")]
    Format {
        /// The format it says.
        found: u32,
    },
}

impl Overview {
    /// The overview of a recording whose tracks and analysis are at hand.
    pub fn new(tracks: &Tracks, analysis: &Analysis, lines: u64, recording_bytes: u64) -> Overview {
        let (tracks, buckets_per_pair) = min_max(tracks, COLUMNS);
        Overview {
            format: FORMAT,
            analysis_id: ANALYSIS_ID.to_owned(),
            recording_bytes,
            lines,
            buckets_per_pair,
            tracks,
            analysis: Analysis {
                story: analysis.story.clone(),
                summary: analysis.summary.clone(),
                shard_traffic: analysis.shard_traffic.clone(),
                census: analysis.census.clone(),
                findings: analysis.findings.clone(),
                evidence: analysis.evidence.clone(),
                metrics: Metrics::default(),
                tap: analysis.tap.clone(),
                timeline: ClusterTimeline::default(),
            },
        }
    }

    /// Reads a whole recording (plain JSON Lines or zstd) from `src`, `recording_bytes` long,
    /// and makes its overview. A bad line stops it with an error naming the line.
    pub fn of_recording<S: BufRead + 'static>(
        src: S,
        recording_bytes: u64,
    ) -> Result<Overview, ReadError> {
        let mut reader =
            RecordingReader::detect(src).map_err(|source| ReadError::Io { line: 1, source })?;
        let header = reader.header()?.clone();
        let mut tracks = TracksBuilder::new(&header);
        let mut analyzer = Analyzer::new(header);
        for next in reader.by_ref() {
            let (_, line) = next?;
            tracks.push(&line);
            analyzer.push_owned(line);
        }
        analyzer.set_truncated_tail(reader.truncated_tail());
        let analysis = analyzer.finish();
        let tracks = tracks.finish(&analysis.metrics, &analysis.timeline);
        Ok(Overview::new(
            &tracks,
            &analysis,
            reader.lines_read(),
            recording_bytes,
        ))
    }

    /// The overview as JSON.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("an overview serialises")
    }

    /// Whether this build wrote it: the same analysis code (see [`ANALYSIS_ID`]).
    pub fn is_current(&self) -> bool {
        self.analysis_id == ANALYSIS_ID
    }

    /// Whether `bytes` are an overview in [`FORMAT`] that this build wrote ([`is_current`]),
    /// without reading its tracks and analysis into memory.
    ///
    /// [`is_current`]: Overview::is_current
    pub fn is_current_json(bytes: &[u8]) -> bool {
        #[derive(Deserialize)]
        struct Identity {
            format: u32,
            #[serde(default)]
            analysis_id: String,
        }
        serde_json::from_slice::<Identity>(bytes)
            .is_ok_and(|i| i.format == FORMAT && i.analysis_id == ANALYSIS_ID)
    }

    /// Reads an overview written by [`Overview::to_json`].
    pub fn from_json(bytes: &[u8]) -> Result<Overview, OverviewError> {
        #[derive(Deserialize)]
        struct Version {
            format: u32,
        }
        let v: Version = serde_json::from_slice(bytes)?;
        if v.format != FORMAT {
            return Err(OverviewError::Format { found: v.format });
        }
        Ok(serde_json::from_slice(bytes)?)
    }
}

/// `tracks` reduced to at most `columns` buckets per series (at least 2): runs of `k` buckets
/// (`k` even, the smallest that fits) become pairs holding each run's smallest and largest value
/// in the order they came (NaN for a run without any); events and layouts are kept as they are.
/// Returns the tracks and `k` (1 when they already fit and are returned whole).
pub fn min_max(tracks: &Tracks, columns: usize) -> (Tracks, u64) {
    let columns = columns.max(2);
    let n = tracks.grid.buckets;
    if n <= columns {
        return (tracks.clone(), 1);
    }
    let pairs = columns / 2;
    let mut k = n.div_ceil(pairs);
    k += k % 2;
    let grid = Grid {
        start: tracks.grid.start,
        bucket_ms: tracks.grid.bucket_ms * u64::try_from(k / 2).unwrap_or(u64::MAX),
        buckets: 2 * n.div_ceil(k),
    };
    let reduce = |s: &Series| Series {
        label: s.label.clone(),
        values: s.values.chunks(k).flat_map(extremes).collect(),
    };
    let all = |v: &[Series]| v.iter().map(reduce).collect::<Vec<_>>();
    let out = Tracks {
        grid,
        nodes: tracks.nodes.clone(),
        node_rate: all(&tracks.node_rate),
        moved_share: all(&tracks.moved_share),
        errors: all(&tracks.errors),
        new_connections: reduce(&tracks.new_connections),
        new_connections_by_node: all(&tracks.new_connections_by_node),
        open_connections: reduce(&tracks.open_connections),
        refreshes: reduce(&tracks.refreshes),
        layouts: tracks.layouts.clone(),
        node_events: tracks.node_events.clone(),
        poll_failures: tracks.poll_failures.clone(),
        annotations: tracks.annotations.clone(),
    };
    (out, u64::try_from(k).unwrap_or(u64::MAX))
}

/// A run's smallest and largest value, in the order they came (NaN, NaN for a run of none).
fn extremes(run: &[f32]) -> [f32; 2] {
    let mut lo: Option<(usize, f32)> = None;
    let mut hi: Option<(usize, f32)> = None;
    for (i, &v) in run.iter().enumerate() {
        if v.is_nan() {
            continue;
        }
        if lo.is_none_or(|(_, l)| v < l) {
            lo = Some((i, v));
        }
        if hi.is_none_or(|(_, h)| v > h) {
            hi = Some((i, v));
        }
    }
    match (lo, hi) {
        (Some((i, l)), Some((j, h))) if j < i => [h, l],
        (Some((_, l)), Some((_, h))) => [l, h],
        _ => [f32::NAN, f32::NAN],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    fn series(values: Vec<f32>) -> Series {
        Series {
            label: "s".into(),
            values,
        }
    }

    fn tracks(values: Vec<f32>) -> Tracks {
        let n = values.len();
        Tracks {
            grid: Grid {
                start: Timestamp(1_000),
                bucket_ms: 1_000,
                buckets: n,
            },
            nodes: Vec::new(),
            node_rate: vec![series(values.clone())],
            moved_share: Vec::new(),
            errors: Vec::new(),
            new_connections: series(values.clone()),
            new_connections_by_node: Vec::new(),
            open_connections: series(values.clone()),
            refreshes: series(values),
            layouts: Vec::new(),
            node_events: Vec::new(),
            poll_failures: Vec::new(),
            annotations: Vec::new(),
        }
    }

    #[test]
    fn runs_become_their_extremes_in_order() {
        assert_eq!(extremes(&[3.0, 1.0, 2.0]), [3.0, 1.0]);
        assert_eq!(extremes(&[1.0, f32::NAN, 5.0, 2.0]), [1.0, 5.0]);
        let none = extremes(&[f32::NAN, f32::NAN]);
        assert!(none[0].is_nan() && none[1].is_nan());
    }

    #[test]
    fn a_one_bucket_spike_survives_the_reduction() {
        // A day at 1 s with one spike: reduced to 4096 buckets, the spike is still the maximum
        // and the grid still covers the whole day.
        let n = 86_400;
        let mut v = vec![1.0_f32; n];
        v[50_001] = 900.0;
        v[70_000] = f32::NAN;
        let t = tracks(v);
        let (r, k) = min_max(&t, COLUMNS);
        assert!(r.grid.buckets <= COLUMNS, "{}", r.grid.buckets);
        assert_eq!(k % 2, 0);
        assert_eq!(r.node_rate[0].max(), 900.0);
        assert_eq!(r.grid.start, t.grid.start);
        assert!(r.grid.span().end >= t.grid.span().end);
        assert!(r.grid.span().end.0 - t.grid.span().end.0 < k * 1_000);
        assert_eq!(r.grid.bucket_ms * 2, k * 1_000);
        // The spike's pair is where it happened.
        let b = r.grid.bucket(Timestamp(1_000 + 50_001 * 1_000)).unwrap();
        assert_eq!(r.node_rate[0].values[b / 2 * 2 + 1], 900.0);
        // Small tracks are kept whole.
        let small = tracks(vec![1.0, 2.0]);
        assert_eq!(min_max(&small, COLUMNS), (small.clone(), 1));
    }

    #[test]
    fn another_format_is_refused() {
        let e = Overview::from_json(br#"{"format": 99}"#).unwrap_err();
        assert!(e.to_string().contains("format 99"), "{e}");
        assert!(Overview::from_json(b"[]").is_err());
    }
}
