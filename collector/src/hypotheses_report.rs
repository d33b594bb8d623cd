//! `slotscope hypotheses`: client variants (model × configuration × faults) replayed against a recording
//! and ranked by how well each reproduces what the recording shows.

use std::io::IsTerminal;
use std::path::Path;

use slotscope_core::hypothesis::{
    rank_with_progress, standard_variants, Evidence, Hypotheses, HypothesisSpec,
};
use slotscope_core::Timestamp;

use crate::cmd::value_parser::TimeArg;
use crate::replay_report::window::{self, Window};
use crate::replay_report::{read_cluster, Recorded, RunError};

mod rows;

use rows::Rows;

/// What to rank.
pub struct Request<'a> {
    /// The recording.
    pub file: &'a Path,
    /// Distinct keys.
    pub keys: u32,
    /// Seed of the workload and of the migration coin.
    pub seed: u64,
    /// Lanes: commands in flight at most.
    pub concurrency: u32,
    /// `socket_timeout` of the redis-py variants, milliseconds.
    pub redis_py_socket_timeout_ms: Option<u64>,
    /// Start of the window; `None`: the first moment every slot is covered.
    pub from: Option<TimeArg>,
    /// End of the window; `None`: the recording's end.
    pub to: Option<TimeArg>,
}

/// A ranking with the window its workload ran over.
pub struct Ranking {
    /// The ranking.
    pub hypotheses: Hypotheses,
    /// The span replayed and why.
    pub window: Window,
}

/// Reads the recording, replays every standard variant over the window and ranks them.
pub fn run(req: &Request<'_>) -> Result<Ranking, RunError> {
    let Recorded {
        cluster,
        metrics,
        covered_from,
    } = read_cluster(req.file, req.seed)?;
    let recording = cluster
        .span()
        .filter(|s| s.millis() > 0)
        .ok_or(RunError::Empty)?;
    let window = window::choose(recording, covered_from, req.from, req.to)?;
    let (keys, seed, concurrency, redis_py_socket_timeout_ms) = (
        req.keys,
        req.seed,
        req.concurrency,
        req.redis_py_socket_timeout_ms,
    );
    let evidence = Evidence::from_metrics(&metrics);
    let spec = HypothesisSpec {
        rate_per_sec: metrics.observed_business_rate().unwrap_or(100),
        keys,
        seed,
        concurrency,
        redis_py_socket_timeout_ms,
        window: Some(window.span),
    };
    let variants = standard_variants(&cluster);
    let origin = cluster.span().map_or(Timestamp(0), |s| s.start);
    let terminal = std::io::stderr().is_terminal();
    let ranked = rank_with_progress(&cluster, &evidence, &variants, &spec, &mut |i, v| {
        if terminal {
            eprint!(
                "\r\x1b[2Kreplaying {}/{}: {}",
                i + 1,
                variants.len(),
                v.label(origin)
            );
        }
    });
    if terminal {
        eprint!("\r\x1b[2K");
    }
    Ok(Ranking {
        hypotheses: ranked?,
        window,
    })
}

/// The ranking as text: the window, the evidence, then one row per variant with each predicted
/// value and its agreement.
pub fn render_text(r: &Ranking) -> String {
    format!(
        "window: {}\n{}",
        r.window.text(),
        Rows::of(&r.hypotheses).text()
    )
}

/// The ranking as a Markdown table, after the window.
pub fn render_markdown(r: &Ranking) -> String {
    format!(
        "Window: {}.\n\n{}",
        r.window.text(),
        Rows::of(&r.hypotheses).markdown()
    )
}

/// The ranking as pretty JSON: `command`, `rate_per_sec`, `window` (`from`, `to`, `from_ms`,
/// `to_ms`, `start_reason`, `end_reason`), `evidence` and `variants` (best first, each with
/// `model`, `config`, `score` and per-metric `observed`, `predicted`, `agreement`).
pub fn render_json(r: &Ranking) -> String {
    let mut v = serde_json::to_value(&r.hypotheses).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        obj.insert("window".into(), r.window.json());
    }
    serde_json::to_string_pretty(&v).unwrap_or_default()
}
