//! `slotscope hypotheses`: client variants (model × configuration × faults) replayed against a recording
//! and ranked by how well each reproduces what the recording shows.

use std::io::IsTerminal;
use std::path::Path;

use slotscope_core::census::{Census, CensusBuilder};
use slotscope_core::hypothesis::{
    group_workloads, layout_change_spans, rank_groups, rank_with_progress, standard_variants,
    ClusterRates, Evidence, Grouped, Hypotheses, HypothesisSpec,
};
use slotscope_core::recording::Line;
use slotscope_core::replay::Shape;
use slotscope_core::Timestamp;

use crate::report::replay::timing::{self, TimingChoice};
use crate::report::replay::window::Window;
use crate::report::replay::{prepare, Recorded, RunError, Shaping};

mod groups;
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
    /// `socket_timeout` of the redis-py variants, milliseconds.
    pub redis_py_socket_timeout_ms: Option<u64>,
    /// The application's shape and the window replayed.
    pub shaping: Shaping,
}

/// A ranking with the window its workload ran over.
pub struct Ranking {
    /// The ranking of the whole command mix as one workload.
    pub hypotheses: Hypotheses,
    /// The rankings per client group.
    pub grouped: Grouped,
    /// The span replayed and why.
    pub window: Window,
    /// How the application issued its commands.
    pub shape: Shape,
    /// Its lanes (with [`Shape::Lanes`]).
    pub lanes: u32,
    /// How long exchanges took.
    pub timing: TimingChoice,
}

impl Ranking {
    /// `window: …` and, for commands in flight, the shape and the timing, one line each.
    fn head(&self) -> String {
        let mut s = format!("window: {}\n", self.window.text());
        if let Shape::InFlight(_) = self.shape {
            s.push_str(&format!(
                "shape: {}\ntiming: {}\n",
                crate::report::replay::rows::shape(self.shape, self.lanes),
                self.timing.text()
            ));
        }
        s
    }
}

/// The recording's client census, and when its topology samples were taken.
fn census(file: &Path) -> Result<(Census, Vec<Timestamp>), RunError> {
    let ((builder, samples), _input) = crate::store::input::read_recording(
        file,
        |_| (CensusBuilder::default(), Vec::new()),
        |(b, samples): &mut (CensusBuilder, Vec<Timestamp>), line| {
            if let Line::Topology(t) = line {
                samples.push(t.t);
            }
            b.push(line);
        },
    )?;
    Ok((builder.finish(), samples))
}

/// Reads the recording, replays every standard variant over the window with the whole command
/// mix and ranks them; then does the same per client group.
pub fn run(req: &Request<'_>) -> Result<Ranking, RunError> {
    let shaping = &req.shaping;
    let (
        Recorded {
            cluster, metrics, ..
        },
        window,
    ) = prepare(req.file, req.seed, shaping)?;
    let (keys, seed, concurrency, redis_py_socket_timeout_ms) = (
        req.keys,
        req.seed,
        shaping.concurrency,
        req.redis_py_socket_timeout_ms,
    );
    let evidence = Evidence::from_metrics(&metrics);
    let names: Vec<String> = if evidence.mix.is_empty() {
        vec![evidence.command.clone().unwrap_or_else(|| "zadd".into())]
    } else {
        evidence.mix.keys().cloned().collect()
    };
    let timing = timing::choose(&names, &metrics, shaping.rtt_us, shaping.service_us);
    let shape = shaping.shape();
    let spec = HypothesisSpec {
        rate_per_sec: metrics.observed_business_rate().unwrap_or(100),
        keys,
        seed,
        concurrency,
        redis_py_socket_timeout_ms,
        window: Some(window.span),
        shape,
        timing: timing.exchange_times(),
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
    let hypotheses = ranked?;
    let (census, topology_samples) = census(req.file)?;
    let changes = layout_change_spans(&cluster.changes(), &topology_samples);
    let workloads = group_workloads(Some(&census), &metrics, window.span, &changes);
    let rates = ClusterRates::over(&metrics, window.span);
    let count = workloads.len();
    let grouped = rank_groups(&cluster, &workloads, &rates, &spec, &mut |g, i, n, v| {
        if terminal {
            let k = workloads
                .iter()
                .position(|w| std::ptr::eq(w, g))
                .unwrap_or(0);
            eprint!(
                "\r\x1b[2Kgroup {}/{count} {}: replaying {}/{n}: {}",
                k + 1,
                g.short,
                i + 1,
                v.label(origin)
            );
        }
    });
    if terminal {
        eprint!("\r\x1b[2K");
    }
    Ok(Ranking {
        hypotheses,
        grouped: grouped?,
        window,
        shape,
        lanes: shaping.concurrency,
        timing,
    })
}

/// The ranking as text: the window, each group's top variants and the recommendation, then the
/// whole mix's evidence and one row per variant with each predicted value and its agreement.
pub fn render_text(r: &Ranking) -> String {
    format!(
        "window: {}\n{}\nthe whole command mix as one workload:\n{}",
        r.window.text(),
        groups::text(&r.grouped),
        Rows::of(&r.hypotheses).text()
    )
}

/// The ranking as Markdown: the window, each group's top variants, then the whole mix's table.
pub fn render_markdown(r: &Ranking) -> String {
    format!(
        "{}\n{}\n### The whole command mix as one workload\n\n{}",
        r.head()
            .lines()
            .map(|l| format!("{}{}.  \n", l[..1].to_uppercase(), &l[1..]))
            .collect::<String>(),
        groups::markdown(&r.grouped),
        Rows::of(&r.hypotheses).markdown()
    )
}

/// The ranking as pretty JSON: `command`, `rate_per_sec`, `window` (`from`, `to`, `from_ms`,
/// `to_ms`, `start_reason`, `end_reason`), `shape`, `timing`, `evidence` and `variants` (best
/// first, each with `model`, `config`, `score` and per-metric `observed`, `predicted`,
/// `agreement`) for the whole mix as one workload; `groups` (per client group: `group`,
/// `commands`, `rate_per_sec`, `remap_target`, `landing`, `evidence` and `ranked`, each with
/// `label`, `model`, `covers`, `remap`, `score`, `why` and its metrics), `cluster` (the
/// cluster-wide rates the groups share) and `recommendation` (each group's best in one line).
pub fn render_json(r: &Ranking) -> String {
    let mut v = serde_json::to_value(&r.hypotheses).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        obj.insert("window".into(), r.window.json());
        obj.insert(
            "shape".into(),
            crate::report::replay::shape_json(r.shape, r.lanes),
        );
        obj.insert("timing".into(), r.timing.json());
        obj.insert(
            "groups".into(),
            serde_json::to_value(&r.grouped.groups).unwrap_or_default(),
        );
        obj.insert(
            "cluster".into(),
            serde_json::to_value(&r.grouped.cluster).unwrap_or_default(),
        );
        obj.insert(
            "recommendation".into(),
            r.grouped.recommendation.clone().into(),
        );
    }
    serde_json::to_string_pretty(&v).unwrap_or_default()
}
