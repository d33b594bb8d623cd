//! One what-if replay: the request, the run and its prediction.

use std::io::Cursor;

use serde::{Deserialize, Serialize};
use slotscope_core::hypothesis::Evidence;
use slotscope_core::metrics::Metrics;
use slotscope_core::reader::RecordingReader;
use slotscope_core::replay::{
    self, AskPolicy, ModelOptions, SimCluster, SimClusterBuilder, Workload, WorkloadSpec,
};
use slotscope_core::track::Grid;
use slotscope_core::{TimeSpan, Timestamp};

use crate::digest::Digest;
use crate::options::parse_options;
use crate::overlay::{overlay, Overlay};

/// Distinct keys of the workload (the CLI's default).
pub const KEYS: u32 = 10_000;
/// Seed of the workload and of the migration coin (the CLI's default).
pub const SEED: u64 = 1;
/// The rate used when the recording shows no business command (the CLI's default).
pub const DEFAULT_RATE: u32 = 100;

/// What to replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// A model name, one of [`replay::MODELS`].
    pub model: String,
    /// Model options as typed: `key=value` pairs separated by spaces or commas.
    pub options: String,
    /// Commands per second; `None`: the observed rate.
    pub rate: Option<u32>,
    /// Commands in flight at most (at least 1).
    pub concurrency: u32,
}

/// A replay's outcome: the report's figures, the workload it ran and the overlay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// The report's figures.
    pub report: Digest,
    /// Commands per second of the workload.
    pub rate: u32,
    /// Whether the rate is the observed one.
    pub observed_rate: bool,
    /// The series to draw over the tracks.
    pub overlay: Overlay,
}

/// What a replay needs of the recording, read again from its bytes: the simulated cluster, the
/// metrics that give the observed rate and command mix, and the first moment every slot has an
/// owner (where a working client could start).
fn read(bytes: &[u8]) -> Result<(SimCluster, Metrics, Option<Timestamp>), String> {
    let mut reader =
        RecordingReader::detect(Cursor::new(bytes.to_vec())).map_err(|e| e.to_string())?;
    let header = reader.header().map_err(|e| e.to_string())?.clone();
    let mut builder = SimClusterBuilder::for_recording(&header);
    let mut metrics = Metrics::default();
    for line in reader.by_ref() {
        let (_, line) = line.map_err(|e| e.to_string())?;
        builder.push(&line);
        metrics.push_owned(line);
    }
    builder.ask_policy(AskPolicy::KeyCoin { seed: SEED });
    // No topology (a recording imported from metrics): the slots as the keys lay them out.
    builder.assume_layout_from_keys(&metrics);
    let covered = builder.timeline().covered_from();
    Ok((builder.build(), metrics, covered))
}

/// Runs `req` against the recording in `bytes` (plain or zstd), the prediction on `grid` (the
/// viewer's tracks' grid).
pub fn run(bytes: &[u8], grid: &Grid, req: &Request) -> Result<Prediction, String> {
    let (cluster, metrics, covered) = read(bytes)?;
    let recorded = cluster
        .span()
        .filter(|s| s.millis() > 0)
        .ok_or("the recording holds no time span to replay over")?;
    // The workload starts where the slots are first all covered, as `slotscope replay` does.
    let start = covered
        .filter(|&t| recorded.start < t && t < recorded.end)
        .unwrap_or(recorded.start);
    let span = TimeSpan::new(start, recorded.end);
    let seed = cluster
        .seed()
        .cloned()
        .ok_or("the recording names no seed node")?;
    let mut opts = ModelOptions::new(seed);
    for (k, v) in parse_options(&req.options)? {
        opts.set(k.trim(), v.trim()).map_err(|e| e.to_string())?;
    }
    let observed = metrics.observed_business_rate();
    let rate = req.rate.or(observed).unwrap_or(DEFAULT_RATE);
    let mix: Vec<(String, u64)> = Evidence::from_metrics(&metrics).mix.into_iter().collect();
    let workload = Workload::generate(&WorkloadSpec {
        start: span.start,
        duration_ms: span.millis(),
        rate_per_sec: rate,
        keys: KEYS,
        key_prefix: "key".into(),
        command: "zadd".into(),
        seed: SEED,
    })
    .map_err(|e| e.to_string())?
    .with_mix(&mix, SEED)
    .with_concurrency(req.concurrency);
    let report = replay::replay_over_moments(&cluster, &workload, || {
        replay::model(&req.model, opts.clone())
    })
    .map_err(|e| e.to_string())?;
    let overlay = overlay(&report, &workload.names, grid);
    Ok(Prediction {
        report: Digest::of(&report),
        rate,
        observed_rate: req.rate.is_none() && observed.is_some(),
        overlay,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotscope_core::timeline::ClusterTimeline;
    use slotscope_core::track::TracksBuilder;

    /// A fixture recording's bytes and its tracks' grid, as the viewer has them.
    fn fixture(name: &str) -> (Vec<u8>, Grid) {
        let path = format!(
            "{}/../../tests/fixtures/{name}.jsonl.zst",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(path).unwrap();
        let mut reader = RecordingReader::detect(Cursor::new(bytes.clone())).unwrap();
        let mut tracks = TracksBuilder::new(&reader.header().unwrap().clone());
        let mut metrics = Metrics::default();
        let mut timeline = ClusterTimeline::new();
        for line in reader.by_ref() {
            let line = line.unwrap().1;
            tracks.push(&line);
            timeline.push(&line);
            metrics.push_owned(line);
        }
        (bytes, tracks.finish(&metrics, &timeline).grid)
    }

    #[test]
    fn a_prediction_crosses_between_the_modules_as_json_unchanged() {
        let (bytes, grid) = fixture("incident2-valkey");
        let req = Request {
            model: "redis-py@5.0.0".into(),
            options: "address_remap=127.0.0.1:22809".into(),
            rate: None,
            concurrency: 1,
        };
        let wire = serde_json::to_string(&req).unwrap();
        assert_eq!(serde_json::from_str::<Request>(&wire).unwrap(), req);
        let wire = serde_json::to_string(&grid).unwrap();
        assert_eq!(serde_json::from_str::<Grid>(&wire).unwrap(), grid);

        let mut p = run(&bytes, &grid, &req).unwrap();
        assert!(
            p.overlay.moved_share[0].values.iter().any(|v| *v > 0.3),
            "the storm"
        );
        // A bucket the replay says nothing about (NaN) must stay one: JSON writes it as null.
        p.overlay.ok_rate.values[0] = f32::NAN;
        let json = serde_json::to_string(&p).unwrap();
        let back: Prediction = serde_json::from_str(&json).unwrap();
        // NaN != NaN: compare the series bit for bit, the rest as values.
        let bits = |p: &Prediction| -> Vec<Vec<u32>> {
            p.overlay
                .moved_share
                .iter()
                .chain([
                    &p.overlay.new_connections,
                    &p.overlay.refreshes,
                    &p.overlay.ok_rate,
                ])
                .map(|s| s.values.iter().map(|v| v.to_bits()).collect())
                .collect()
        };
        assert_eq!(bits(&back), bits(&p));
        assert_eq!(back.report, p.report);
        assert_eq!(back.overlay.wedged, p.overlay.wedged);
        assert_eq!((back.rate, back.observed_rate), (p.rate, p.observed_rate));
    }

    #[test]
    fn a_damaged_recording_is_refused_with_the_reader_message() {
        let (_, grid) = fixture("incident2-valkey");
        let req = Request {
            model: "ideal".into(),
            options: String::new(),
            rate: None,
            concurrency: 1,
        };
        let e = run(b"hello\n", &grid, &req).unwrap_err();
        assert!(e.contains("not a slotscope recording"), "{e}");
    }
}
