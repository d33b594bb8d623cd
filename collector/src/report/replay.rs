//! `slotscope replay`: a workload replayed against the cluster a recording describes, through a
//! client library model.

use std::path::Path;

use slotscope_core::float;
use slotscope_core::hypothesis::Evidence;
use slotscope_core::metrics::Metrics;
use slotscope_core::replay::{
    model, replay_over_moments, resolve, AskPolicy, ModelOptions, ReplayError, Shape, SimCluster,
    SimClusterBuilder, Workload, WorkloadSpec,
};
use slotscope_core::Timestamp;

use crate::store::input::{read_recording, InputError};
use slotscope_core::moment::Moment;

pub(crate) mod replayed;
pub(crate) mod rows;
pub(crate) mod timing;
pub(crate) mod window;

pub use replayed::{RateSource, Replayed};
use rows::Rows;
use window::{StartReason, Window, WindowError};

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
    /// The application's shape and the window replayed.
    pub shaping: Shaping,
    /// Seed of the workload and of the migration coin.
    pub seed: u64,
    /// Commands at the times of a Poisson process of the rate instead of evenly spaced.
    pub poisson: bool,
}

/// How the replayed application issues its commands and over which window (what `replay` and
/// `hypotheses` share).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shaping {
    /// Lanes: commands in flight at most, one after another per lane.
    pub concurrency: u32,
    /// Tasks with at most this many commands in flight ([`Shape::InFlight`]); `None`: lanes.
    pub in_flight: Option<u32>,
    /// Round trip in microseconds; `None`: the default.
    pub rtt_us: Option<u32>,
    /// Service time of every command in microseconds; `None`: from the recording.
    pub service_us: Option<u32>,
    /// Start of the window; `None`: the first moment every slot is covered.
    pub from: Option<Moment>,
    /// End of the window; `None`: the recording's end.
    pub to: Option<Moment>,
}

impl Shaping {
    /// The application shape it asks for.
    pub fn shape(&self) -> Shape {
        self.in_flight.map_or(Shape::Lanes, Shape::InFlight)
    }
}

/// Checks `shaping`, reads the recording and chooses the window replayed: the start `replay` and
/// `hypotheses` share.
pub(crate) fn prepare(
    file: &Path,
    seed: u64,
    shaping: &Shaping,
) -> Result<(Recorded, Window), RunError> {
    if shaping.in_flight.is_some() && shaping.concurrency > 1 {
        return Err(RunError::Conflict(
            "--in-flight and --concurrency are two application shapes: give one",
        ));
    }
    let recorded = read_cluster(file, seed)?;
    let recording = recorded
        .cluster
        .span()
        .filter(|s| s.millis() > 0)
        .ok_or(RunError::Empty)?;
    let mut window = window::choose(recording, recorded.covered_from, shaping.from, shaping.to)?;
    if recorded.assumed_layout && window.start == StartReason::Covered {
        window.start = StartReason::Assumed;
    }
    Ok((recorded, window))
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
    /// No window to replay (see [`window::choose`]).
    #[error(transparent)]
    Window(#[from] WindowError),
    /// Options that do not go together.
    #[error("{0}")]
    Conflict(&'static str),
}

/// A recording read for replays: the cluster it describes, the counters its `INFO` samples show
/// and the first moment every slot has an owner.
pub(crate) struct Recorded {
    /// The cluster.
    pub cluster: SimCluster,
    /// The counters.
    pub metrics: Metrics,
    /// The first moment every slot is covered (`None`: never).
    pub covered_from: Option<Timestamp>,
    /// Whether the slot map is assumed from the keys (see
    /// [`SimClusterBuilder::assume_layout_from_keys`]): a recording imported from metrics has no
    /// topology.
    pub assumed_layout: bool,
}

/// Reads the recording into the cluster it describes (the migration coin seeded with `seed`),
/// the counters its `INFO` samples show and when its slots are first all covered.
pub(crate) fn read_cluster(file: &Path, seed: u64) -> Result<Recorded, InputError> {
    let ((mut builder, metrics, imported), _input) = read_recording(
        file,
        |h| {
            (
                SimClusterBuilder::for_recording(h),
                Metrics::default(),
                h.source.is_some(),
            )
        },
        |(b, m, _): &mut (SimClusterBuilder, Metrics, bool), line| {
            b.push(line);
            m.push(line);
        },
    )?;
    builder.ask_policy(AskPolicy::KeyCoin { seed });
    // No topology (a recording imported from metrics): the slots as the keys lay them out.
    let assumed_layout = imported && builder.assume_layout_from_keys(&metrics);
    let covered_from = builder.timeline().covered_from();
    Ok(Recorded {
        covered_from,
        assumed_layout,
        cluster: builder.build(),
        metrics,
    })
}

/// Reads the recording and replays the workload through the model.
pub fn run(req: &Request<'_>) -> Result<Replayed, RunError> {
    let shaping = &req.shaping;
    let (
        Recorded {
            cluster, metrics, ..
        },
        window,
    ) = prepare(req.file, req.seed, shaping)?;
    let span = window.span;
    let seed_addr = cluster.seed().cloned().ok_or(RunError::Empty)?;
    let mut opts = ModelOptions::new(seed_addr);
    for kv in req.set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| RunError::Set(kv.clone()))?;
        opts.set(k.trim(), v.trim())?;
    }
    let resolved = resolve(req.model)
        .map_err(ReplayError::from)?
        .ok_or_else(|| ReplayError::UnknownModel(req.model.to_owned()))?;
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
    .with_concurrency(shaping.concurrency);
    let workload = if req.poisson {
        workload.with_poisson_arrivals(req.seed)
    } else {
        workload
    };
    let workload = match shaping.in_flight {
        Some(n) => workload.with_in_flight(n),
        None => workload,
    };
    let timing = timing::choose(
        &workload.names,
        &metrics,
        shaping.rtt_us,
        shaping.service_us,
    );
    let workload = workload.with_timing(timing.timing.clone());
    let total: u64 = mix.iter().map(|(_, n)| n).sum();
    // The client is built from what was asked (a release keeps its own defaults), named by the
    // model, once per replay: a kill or a failure's edge known only within a window is replayed
    // at several of its moments (the majority's answer, `moments` in the report).
    let mut report = replay_over_moments(&cluster, &workload, || model(req.model, opts.clone()))?;
    report.model = resolved.label();
    Ok(Replayed {
        poisson: req.poisson,
        report,
        window,
        shape: workload.shape,
        timing,
        rate,
        rate_source,
        mix: mix
            .into_iter()
            .map(|(c, n)| (c, float::from_u64(n) / float::from_u64(total.max(1))))
            .collect(),
    })
}

/// The application shape as JSON: `{"kind": "lanes", "lanes": n}` or `{"kind": "in_flight",
/// "max_in_flight": n}`.
pub(crate) fn shape_json(shape: Shape, lanes: u32) -> serde_json::Value {
    match shape {
        Shape::Lanes => serde_json::json!({"kind": "lanes", "lanes": lanes}),
        Shape::InFlight(n) => serde_json::json!({"kind": "in_flight", "max_in_flight": n}),
    }
}

/// The report as pretty JSON, with a `workload` object (`rate_per_sec`, `rate_source`, `mix`,
/// `shape`, `arrivals` (`even` or `poisson`), `timing`) and a `window` object (`from`, `to` as
/// RFC 3339 and `from_ms`, `to_ms`, `start_reason`, `end_reason`).
pub fn render_json(r: &Replayed) -> String {
    let mut v = serde_json::to_value(&r.report).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        obj.insert(
            "workload".into(),
            serde_json::json!({
                "rate_per_sec": r.rate,
                "rate_source": r.rate_source.name(),
                "mix": r.mix.iter().map(|(c, s)| serde_json::json!({"command": c, "share": s})).collect::<Vec<_>>(),
                "shape": shape_json(r.shape, r.report.concurrency),
                "arrivals": if r.poisson { "poisson" } else { "even" },
                "timing": r.timing.json(),
            }),
        );
        obj.insert("window".into(), r.window.json());
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
