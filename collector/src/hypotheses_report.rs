//! `slotscope hypotheses`: client variants (model × configuration × faults) replayed against a recording
//! and ranked by how well each reproduces what the recording shows.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::Path;

use slotscope_core::hypothesis::{
    rank_with_progress, standard_variants, Evidence, Hypotheses, HypothesisSpec, MetricScore,
    Ranked, Value, METRICS,
};
use slotscope_core::metrics::{count_f64, Metrics};
use slotscope_core::replay::{AskPolicy, SimClusterBuilder};
use slotscope_core::Timestamp;

use crate::input::read_recording;
use crate::replay_report::RunError;

/// Reads the recording, replays every standard variant and ranks them.
pub fn run(
    file: &Path,
    keys: u32,
    seed: u64,
    concurrency: u32,
    redis_py_socket_timeout_ms: Option<u64>,
) -> Result<Hypotheses, RunError> {
    let ((mut builder, metrics), _input) = read_recording(
        file,
        |h| (SimClusterBuilder::for_recording(h), Metrics::default()),
        |(b, m): &mut (SimClusterBuilder, Metrics), line| {
            b.push(line);
            m.push(line);
        },
    )?;
    builder.ask_policy(AskPolicy::KeyCoin { seed });
    let cluster = builder.build();
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

fn label(r: &Ranked) -> String {
    let mut s = r.model.clone();
    for (k, v) in &r.config {
        let _ = write!(s, " {k}={v}");
    }
    if r.faults != "recorded" {
        let _ = write!(s, " faults={}", r.faults);
    }
    s
}

fn short(metric: &str) -> &'static str {
    match metric {
        "moved_share" => "MOVED share",
        "moved_per_sec" => "MOVED/s",
        "new_connections_per_sec" => "new conn/s",
        "cluster_slots_per_sec" => "CLUSTER SLOTS/s",
        "traffic_ended" => "traffic ended",
        _ => "?",
    }
}

fn value(v: Value, metric: &str) -> String {
    match v {
        Value::Flag(b) => if b { "yes" } else { "no" }.to_owned(),
        Value::Number(x) if metric == "moved_share" => format!("{:.1}%", x * 100.0),
        Value::Number(x) => format!("{x:.2}"),
    }
}

fn cell(m: Option<&MetricScore>, metric: &str) -> String {
    m.map_or_else(String::new, |m| {
        format!(
            "{} ({:.0}%)",
            value(m.predicted, metric),
            m.agreement * 100.0
        )
    })
}

fn observed(h: &Hypotheses, metric: &str) -> String {
    h.variants
        .first()
        .and_then(|r| r.metrics.get(metric))
        .map_or_else(String::new, |m| value(m.observed, metric))
}

/// The commands replayed: the recording's business mix with shares, else the one command.
fn workload(h: &Hypotheses) -> String {
    let total: u64 = h.evidence.mix.values().sum();
    if total == 0 {
        return h.command.clone();
    }
    h.evidence
        .mix
        .iter()
        .map(|(c, n)| format!("{c} {:.0} %", count_f64(*n) * 100.0 / count_f64(total)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The ranking as text: the evidence, then one row per variant with each predicted value and
/// its agreement.
pub fn render_text(h: &Hypotheses) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "workload: {} at {} commands/s over {:.0} s",
        workload(h),
        h.rate_per_sec,
        h.evidence.secs
    );
    let _ = writeln!(s, "observed (MOVED share: all business commands):");
    for m in METRICS {
        let _ = writeln!(s, "  {:<16} {}", short(m), observed(h, m));
    }
    for (cmd, share) in &h.evidence.moved_share_by_command {
        let _ = writeln!(s, "    MOVED share {cmd}: {:.1}%", share * 100.0);
    }
    let _ = writeln!(
        s,
        "\nrank  score  variant  |  predicted (agreement) per metric"
    );
    for (i, r) in h.variants.iter().enumerate() {
        let _ = writeln!(s, "{:>4}  {:>4.0}%  {}", i + 1, r.score * 100.0, label(r));
        let cells: Vec<String> = METRICS
            .iter()
            .map(|m| format!("{}: {}", short(m), cell(r.metrics.get(*m), m)))
            .collect();
        let _ = writeln!(s, "             {}", cells.join(" | "));
    }
    s
}

/// The ranking as a Markdown table.
pub fn render_markdown(h: &Hypotheses) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Workload: `{}` at {} commands/s over {:.0} s.\n",
        workload(h),
        h.rate_per_sec,
        h.evidence.secs
    );
    let _ = write!(s, "| rank | variant | score |");
    for m in METRICS {
        let _ = write!(s, " {} |", short(m));
    }
    let _ = write!(s, "\n|---:|---|---:|");
    for _ in METRICS {
        let _ = write!(s, "---|");
    }
    let _ = write!(s, "\n| | *observed* | |");
    for m in METRICS {
        let _ = write!(s, " *{}* |", observed(h, m));
    }
    for (i, r) in h.variants.iter().enumerate() {
        let _ = write!(
            s,
            "\n| {} | `{}` | {:.0}% |",
            i + 1,
            label(r),
            r.score * 100.0
        );
        for m in METRICS {
            let _ = write!(s, " {} |", cell(r.metrics.get(*m), m));
        }
    }
    s.push('\n');
    s
}

/// The ranking as pretty JSON: `command`, `rate_per_sec`, `evidence` and `variants` (best
/// first, each with `model`, `config`, `score` and per-metric `observed`, `predicted`,
/// `agreement`).
pub fn render_json(h: &Hypotheses) -> String {
    serde_json::to_string_pretty(h).unwrap_or_default()
}
