//! `slotscope preflight`: a planned change replayed against the clients a recording shows, before
//! it is made. Reads the recording once into its [`BasisBuilder`] (its last cluster, its
//! counters, its client census), makes each census group a client, carries the plan out on the recording's last
//! cluster and replays every client through its models ([`predict`]); then writes the risk
//! table, each group's verdict with why, and what would make the change safe.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::Path;

use slotscope_core::hypothesis::HypothesisSpec;
use slotscope_core::preflight::{
    predict, Assumption, BasisBuilder, BasisError, Frame, Plan, Prediction, PreflightError, Setup,
};
use slotscope_core::replay::Shape;
use slotscope_core::time::format_millis;
use slotscope_core::Timestamp;

use crate::report::replay::timing;
use crate::report::table::{Cell, Column, Table};
use crate::store::input::{read_recording, InputError};

/// What to predict.
pub struct Request<'a> {
    /// The recording of the cluster as it is now.
    pub file: &'a Path,
    /// The plan.
    pub plan: Plan,
    /// The groups whose library the user states.
    pub assumed: &'a [Assumption],
    /// Commands in flight for every group (`None`: each group's from the census).
    pub in_flight: Option<u32>,
    /// Commands in flight for a group the census tells nothing of.
    pub default_in_flight: u32,
    /// Network round trip, microseconds (`None`: the default).
    pub rtt_us: Option<u32>,
    /// Service time of every command, microseconds (`None`: the recording's).
    pub service_us: Option<u32>,
    /// `socket_timeout` of redis-py clients whose own is not assumed, milliseconds.
    pub redis_py_socket_timeout_ms: Option<u64>,
    /// How long the clients run before the plan's first step, milliseconds.
    pub lead_ms: u64,
    /// How long they run after its last change, milliseconds.
    pub tail_ms: u64,
    /// Keys (`None`: the keys the nodes hold at the recording's end, else [`DEFAULT_KEYS`]).
    pub keys: Option<u32>,
    /// Seed of the keys and the migration coin.
    pub seed: u64,
}

/// Keys of a recording whose nodes hold none.
pub const DEFAULT_KEYS: u32 = 10_000;

/// Why a prediction could not be made; every one is exit status 2.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The recording could not be read.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The plan, the clients or a replay.
    #[error(transparent)]
    Preflight(#[from] PreflightError),
    /// An `--assume` names no group.
    #[error("{0}")]
    Assume(String),
    /// The recording holds no cluster to start from.
    #[error(transparent)]
    Basis(#[from] BasisError),
}

/// Reads the recording and predicts what the plan does to each client group.
pub fn run(req: &Request<'_>) -> Result<Prediction, RunError> {
    let (builder, _) = read_recording(req.file, BasisBuilder::new, |b, line| b.push(line))?;
    let basis = builder.finish()?;
    let mut clients = basis.clients(req.assumed).map_err(RunError::Assume)?;
    for c in &mut clients {
        c.in_flight = req
            .in_flight
            .or(c.in_flight)
            .or(Some(req.default_in_flight));
    }
    let metrics = &basis.metrics;
    let names: Vec<String> = {
        let mut n: Vec<String> = clients
            .iter()
            .flat_map(|c| c.mix.iter().map(|(m, _)| m.clone()))
            .collect();
        n.sort();
        n.dedup();
        n
    };
    let timing = timing::choose(&names, metrics, req.rtt_us, req.service_us);
    let setup = Setup {
        frame: Frame {
            // The plan starts a second after the recording ends.
            origin: Timestamp(basis.end.0 + 1_000),
            lead_ms: req.lead_ms,
            tail_ms: req.tail_ms,
        },
        seed: basis.seed.clone(),
        spec: HypothesisSpec {
            rate_per_sec: 0,
            keys: req.keys.unwrap_or_else(|| {
                basis
                    .keys()
                    .map_or(DEFAULT_KEYS, |k| u32::try_from(k).unwrap_or(u32::MAX))
            }),
            seed: req.seed,
            concurrency: 1,
            redis_py_socket_timeout_ms: req.redis_py_socket_timeout_ms,
            window: None,
            shape: Shape::InFlight(req.default_in_flight),
            timing: timing.exchange_times(),
        },
    };
    let terminal = std::io::stderr().is_terminal();
    let prediction = predict(
        &req.plan,
        &basis.start,
        &clients,
        &setup,
        &mut |group, what| {
            if terminal {
                eprint!("\r\x1b[2K{group}: replaying {what}");
            }
        },
    );
    if terminal {
        eprint!("\r\x1b[2K");
    }
    Ok(prediction?)
}

/// `+4.0s`, `-0.5s`: milliseconds from the plan's start.
fn at(ms: i64) -> String {
    let text = format_millis(ms.unsigned_abs());
    if ms < 0 {
        format!("-{text}")
    } else {
        format!("+{text}")
    }
}

/// The risk table: one row per group, the most harmed first.
fn risk_table(p: &Prediction) -> Table {
    let mut t = Table::new(vec![
        Column::left("group"),
        Column::left("model"),
        Column::left("verdict"),
        Column::left("without the change"),
        Column::right("from"),
        Column::right("failed"),
        Column::right("MOVED peak"),
        Column::right("refreshes"),
        Column::right("new conns peak/s"),
    ]);
    for g in &p.groups {
        let w = g.worst_run();
        let f = &w.verdict.figures;
        let models = if g.runs.len() > 1 {
            format!("{} models, worst {}", g.runs.len(), w.model)
        } else {
            w.model.clone()
        };
        t.push(vec![
            Cell::of(&g.client.short),
            Cell::of(models),
            Cell::of(g.range()),
            Cell::of(w.baseline.headline()),
            Cell::of(w.verdict.stretch.map_or("-".to_owned(), |s| at(s.from_ms))),
            Cell::of(f.failed),
            Cell::of(format!("{:.0} %", f.peak_moved_share * 100.0)),
            Cell::of(f.refreshes),
            Cell::of(f.peak_new_connections_per_sec),
        ]);
    }
    t
}

/// Each group in prose: the client, why, the other models' verdicts, what helps.
fn groups_text(p: &Prediction, md: bool) -> String {
    let mut s = String::new();
    let bullet = if md { "- " } else { "  " };
    for g in &p.groups {
        let c = &g.client;
        let head = format!(
            "{} — {} ({:.1} commands/s, {} in flight; models: {})",
            c.short,
            g.range(),
            c.rate_per_sec,
            c.in_flight.unwrap_or(1),
            c.chosen.text()
        );
        if md {
            let _ = writeln!(s, "### {head}\n");
        } else {
            let _ = writeln!(s, "{head}");
        }
        if let Some(to) = &c.remap {
            let _ = writeln!(
                s,
                "{bullet}its traffic shows a remap to {to}: replayed with it"
            );
        }
        let _ = writeln!(s, "{bullet}why: {}", g.why);
        if g.runs.len() > 1 {
            for r in &g.runs {
                let _ = writeln!(s, "{bullet}as {}: {}", r.model, r.verdict.headline());
            }
        }
        if g.worst_run().verdict.kind > slotscope_core::preflight::VerdictKind::MovedBurst {
            if g.remedies.is_empty() {
                let _ = writeln!(s, "{bullet}no change tried makes it safer");
            }
            for r in &g.remedies {
                let _ = writeln!(
                    s,
                    "{bullet}safer with {}: {}",
                    r.change,
                    r.verdict.headline()
                );
            }
        }
        s.push('\n');
    }
    s.trim_end().to_owned() + "\n"
}

/// The prediction as text.
pub fn render_text(p: &Prediction) -> String {
    let mut s = String::from("the plan, written out:\n");
    for step in &p.steps {
        let _ = writeln!(s, "  {step}");
    }
    let _ = write!(
        s,
        "replayed to {} after the plan's start\n\nrisk, the most harmed first:\n{}\n{}",
        format_millis(p.after_ms),
        risk_table(p).render_text("  "),
        groups_text(p, false)
    );
    s
}

/// The prediction as Markdown.
pub fn render_markdown(p: &Prediction) -> String {
    let mut s = String::from("## Pre-flight\n\nThe plan, written out:\n\n");
    for step in &p.steps {
        let _ = writeln!(s, "1. {step}");
    }
    let _ = write!(
        s,
        "\nReplayed to {} after the plan's start.\n\n{}\n{}",
        format_millis(p.after_ms),
        risk_table(p).render_markdown(),
        groups_text(p, true)
    );
    s
}

/// The prediction as JSON.
pub fn render_json(p: &Prediction) -> String {
    serde_json::to_string_pretty(p).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
