//! `slotscope hypotheses`: client variants (model × configuration × faults) replayed against a recording
//! and ranked by how well each reproduces what the recording shows.

use std::io::IsTerminal;
use std::path::Path;

use slotscope_core::hypothesis::{
    rank_with_progress, standard_variants, Evidence, Hypotheses, HypothesisSpec,
};
use slotscope_core::Timestamp;

use crate::replay_report::{read_cluster, RunError};

mod rows;

use rows::Rows;

/// Reads the recording, replays every standard variant and ranks them.
pub fn run(
    file: &Path,
    keys: u32,
    seed: u64,
    concurrency: u32,
    redis_py_socket_timeout_ms: Option<u64>,
) -> Result<Hypotheses, RunError> {
    let (cluster, metrics) = read_cluster(file, seed)?;
    if cluster.span().filter(|s| s.millis() > 0).is_none() {
        return Err(RunError::Empty);
    }
    let evidence = Evidence::from_metrics(&metrics);
    let spec = HypothesisSpec {
        rate_per_sec: metrics.observed_business_rate().unwrap_or(100),
        keys,
        seed,
        concurrency,
        redis_py_socket_timeout_ms,
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
    Ok(ranked?)
}

/// The ranking as text: the evidence, then one row per variant with each predicted value and
/// its agreement.
pub fn render_text(h: &Hypotheses) -> String {
    Rows::of(h).text()
}

/// The ranking as a Markdown table.
pub fn render_markdown(h: &Hypotheses) -> String {
    Rows::of(h).markdown()
}

/// The ranking as pretty JSON: `command`, `rate_per_sec`, `evidence` and `variants` (best
/// first, each with `model`, `config`, `score` and per-metric `observed`, `predicted`,
/// `agreement`).
pub fn render_json(h: &Hypotheses) -> String {
    serde_json::to_string_pretty(h).unwrap_or_default()
}
