//! `slotscope replay`: a workload replayed against the cluster a recording describes, through a
//! client library model.

use std::path::Path;

use slotscope_core::float;
use slotscope_core::hypothesis::Evidence;
use slotscope_core::metrics::Metrics;
use slotscope_core::replay::{
    model, replay, AskPolicy, ModelOptions, ReplayError, ReplayReport, SimCluster,
    SimClusterBuilder, Workload, WorkloadSpec,
};

use crate::input::{read_recording, InputError};

pub(crate) mod rows;

use rows::Rows;

/// What to replay.
pub struct Request<'a> {
    /// The recording.
    pub file: &'a Path,
    /// The client model name.
    pub model: &'a str,
    /// `key=value` model options.
    pub set: &'a [String],
    /// Commands per second; `None`: the rate observed in the recording, else 100.
    pub rate: Option<u32>,
    /// Distinct keys.
    pub keys: u32,
    /// Command name; `None`: the business command mix the recording shows, else `zadd`.
    pub command: Option<&'a str>,
    /// Commands in flight at most.
    pub concurrency: u32,
    /// Seed of the workload and of the migration coin.
    pub seed: u64,
}

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The recording could not be read.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A model, option or workload was refused.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// A `--set` is not `key=value`.
    #[error("--set `{0}` is not KEY=VALUE")]
    Set(String),
    /// The recording holds no time span.
    #[error("the recording holds no time span to replay over")]
    Empty,
}

/// Where the workload's rate came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateSource {
    /// `--rate`.
    Option,
    /// The business commands the recording's `INFO` samples show (see
    /// [`Metrics::observed_business_rate`]).
    Observed,
    /// Nothing observed: 100 per second.
    Default,
}

impl RateSource {
    /// The name shown in reports.
    pub fn name(self) -> &'static str {
        match self {
            RateSource::Option => "option",
            RateSource::Observed => "observed",
            RateSource::Default => "default",
        }
    }
}

/// A replay's report with the workload it ran.
pub struct Replayed {
    /// The report.
    pub report: ReplayReport,
    /// Commands per second of the workload.
    pub rate: u32,
    /// Where the rate came from.
    pub rate_source: RateSource,
    /// The commands replayed with their shares (empty: `zadd` only).
    pub mix: Vec<(String, f64)>,
}

/// Reads the recording into the cluster it describes (the migration coin seeded with `seed`)
/// and the counters its `INFO` samples show.
pub(crate) fn read_cluster(file: &Path, seed: u64) -> Result<(SimCluster, Metrics), InputError> {
    let ((mut builder, metrics), _input) = read_recording(
        file,
        |h| (SimClusterBuilder::for_recording(h), Metrics::default()),
        |(b, m): &mut (SimClusterBuilder, Metrics), line| {
            b.push(line);
            m.push(line);
        },
    )?;
    builder.ask_policy(AskPolicy::KeyCoin { seed });
    Ok((builder.build(), metrics))
}

/// Reads the recording and replays the workload through the model.
pub fn run(req: &Request<'_>) -> Result<Replayed, RunError> {
    let (cluster, metrics) = read_cluster(req.file, req.seed)?;
    let span = cluster
        .span()
        .filter(|s| s.millis() > 0)
        .ok_or(RunError::Empty)?;
    let seed_addr = cluster.seed().cloned().ok_or(RunError::Empty)?;
    let mut opts = ModelOptions::new(seed_addr);
    for kv in req.set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| RunError::Set(kv.clone()))?;
        opts.set(k.trim(), v.trim())?;
    }
    let mut client = model(req.model, opts)?;
    let (rate, rate_source) = match (req.rate, metrics.observed_business_rate()) {
        (Some(r), _) => (r, RateSource::Option),
        (None, Some(r)) => (r, RateSource::Observed),
        (None, None) => (100, RateSource::Default),
    };
    let mix: Vec<(String, u64)> = match req.command {
        Some(c) => vec![(c.to_owned(), 1)],
        None => Evidence::from_metrics(&metrics).mix.into_iter().collect(),
    };
    let workload = Workload::generate(&WorkloadSpec {
        start: span.start,
        duration_ms: span.millis(),
        rate_per_sec: rate,
        keys: req.keys,
        key_prefix: "key".into(),
        command: "zadd".into(),
        seed: req.seed,
    })?
    .with_mix(&mix, req.seed)
    .with_concurrency(req.concurrency);
    let total: u64 = mix.iter().map(|(_, n)| n).sum();
    Ok(Replayed {
        report: replay(&cluster, &workload, client.as_mut()),
        rate,
        rate_source,
        mix: mix
            .into_iter()
            .map(|(c, n)| (c, float::from_u64(n) / float::from_u64(total.max(1))))
            .collect(),
    })
}

/// The report as pretty JSON, with a `workload` object (`rate_per_sec`, `rate_source`).
pub fn render_json(r: &Replayed) -> String {
    let mut v = serde_json::to_value(&r.report).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        obj.insert(
            "workload".into(),
            serde_json::json!({
                "rate_per_sec": r.rate,
                "rate_source": r.rate_source.name(),
                "mix": r.mix.iter().map(|(c, s)| serde_json::json!({"command": c, "share": s})).collect::<Vec<_>>(),
            }),
        );
    }
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// The report as text.
pub fn render_text(replayed: &Replayed) -> String {
    Rows::of(replayed).text()
}

/// The report as Markdown (for a postmortem document).
pub fn render_markdown(replayed: &Replayed) -> String {
    Rows::of(replayed).markdown()
}
