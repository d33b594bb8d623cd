//! `slotscope hypotheses`: client variants (model × configuration × faults) replayed against a recording
//! and ranked by how well each reproduces what the recording shows.

use std::io::IsTerminal;
use std::path::Path;

use slotscope_core::hypothesis::{
    rank_with_progress, standard_variants, Evidence, ExchangeTimes, Hypotheses, HypothesisSpec,
};
use slotscope_core::replay::Shape;
use slotscope_core::Timestamp;

use crate::cmd::value_parser::TimeArg;
use crate::replay_report::timing::{self, TimingChoice};
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
    /// Tasks with at most this many commands in flight; `None`: lanes.
    pub in_flight: Option<u32>,
    /// Round trip in microseconds; `None`: the default.
    pub rtt_us: Option<u32>,
    /// Service time of every command in microseconds; `None`: from the recording.
    pub service_us: Option<u32>,
}

/// A ranking with the window its workload ran over.
pub struct Ranking {
    /// The ranking.
    pub hypotheses: Hypotheses,
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
                crate::replay_report::rows::shape(self.shape, self.lanes),
                self.timing.text()
            ));
        }
        s
    }
}

/// Reads the recording, replays every standard variant over the window and ranks them.
pub fn run(req: &Request<'_>) -> Result<Ranking, RunError> {
    if req.in_flight.is_some() && req.concurrency > 1 {
        return Err(RunError::Conflict(
            "--in-flight and --concurrency are two application shapes: give one",
        ));
    }
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
    let names: Vec<String> = if evidence.mix.is_empty() {
        vec![evidence.command.clone().unwrap_or_else(|| "zadd".into())]
    } else {
        evidence.mix.keys().cloned().collect()
    };
    let timing = timing::choose(&names, &metrics, req.rtt_us, req.service_us);
    let shape = req.in_flight.map_or(Shape::Lanes, Shape::InFlight);
    let spec = HypothesisSpec {
        rate_per_sec: metrics.observed_business_rate().unwrap_or(100),
        keys,
        seed,
        concurrency,
        redis_py_socket_timeout_ms,
        window: Some(window.span),
        shape,
        timing: ExchangeTimes {
            rtt_us: Some(timing.timing.rtt_us),
            service_us: timing
                .service
                .iter()
                .map(|(n, us, _)| (n.clone(), *us))
                .collect(),
            default_us: Some(timing.timing.default_us),
        },
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
        shape,
        lanes: req.concurrency,
        timing,
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
        "{}\n{}",
        r.head()
            .lines()
            .map(|l| format!("{}{}.  \n", l[..1].to_uppercase(), &l[1..]))
            .collect::<String>(),
        Rows::of(&r.hypotheses).markdown()
    )
}

/// The ranking as pretty JSON: `command`, `rate_per_sec`, `window` (`from`, `to`, `from_ms`,
/// `to_ms`, `start_reason`, `end_reason`), `shape`, `timing`, `evidence` and `variants` (best
/// first, each with `model`, `config`, `score` and per-metric `observed`, `predicted`,
/// `agreement`).
pub fn render_json(r: &Ranking) -> String {
    let mut v = serde_json::to_value(&r.hypotheses).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        obj.insert("window".into(), r.window.json());
        obj.insert(
            "shape".into(),
            crate::replay_report::shape_json(r.shape, r.lanes),
        );
        obj.insert("timing".into(), r.timing.json());
    }
    serde_json::to_string_pretty(&v).unwrap_or_default()
}
