//! The viewer's pre-flight: a planned change replayed against each client group of the loaded
//! recording, after its end (`slotscope preflight` in the browser), each group's prediction as
//! series on a grid that goes on past the recording's end.
//!
//! Set up as the CLI sets it up by default (collector/src/report/preflight.rs): the plan starts a
//! second after the recording ends, the clients run 5 s before it and 30 s after its last change,
//! each group with the commands in flight its connections show (8 when the census tells none),
//! over as many keys as the nodes hold at the recording's end (10 000 when none),
//! redis-py with a 1 s `socket_timeout`; the exchange times are the replay's defaults (the CLI
//! takes the recording's service times).

use std::io::Cursor;

use serde::{Deserialize, Serialize};
use slotscope_core::hypothesis::{replayed_rate, ExchangeTimes, HypothesisSpec};
use slotscope_core::preflight::{
    predict, short_form, Assumption, BasisBuilder, Frame, Plan, Setup, VerdictKind,
};
use slotscope_core::reader::RecordingReader;
use slotscope_core::replay::Shape;
use slotscope_core::track::Grid;
use slotscope_core::Timestamp;

use crate::digest::Digest;
use crate::overlay::overlay;
use crate::{Overlay, KEYS, SEED};

/// Commands in flight of a group the census tells nothing of (the CLI's default).
pub const DEFAULT_IN_FLIGHT: u32 = 8;

/// What to pre-flight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanRequest {
    /// The plan: a short form (`scale-out:+1`, `failover:HOST:PORT`) or JSON steps.
    pub plan: String,
    /// `GROUP=LIB@VERSION[,option=value]` assumptions, separated by spaces or new lines.
    #[serde(default)]
    pub assume: String,
}

/// One group's prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanGroup {
    /// The group's short name.
    pub short: String,
    /// Its commands per second.
    pub rate: u32,
    /// Its verdict, or the range over the models that may stand for it.
    pub verdict: String,
    /// Whether its worst run is harmed (errors or wedged).
    pub harmed: bool,
    /// Why.
    pub why: String,
    /// Changes that help, with their verdicts.
    pub remedies: Vec<String>,
    /// The worst run's figures.
    pub report: Digest,
    /// The worst run's series, on the pre-flight's grid.
    pub overlay: Overlay,
}

/// A pre-flight's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanPrediction {
    /// The plan written out.
    pub steps: Vec<String>,
    /// When the plan starts, epoch ms (a second after the recording's end).
    pub origin: u64,
    /// When the replay ends, epoch ms.
    pub end: u64,
    /// The groups, the most harmed first.
    pub groups: Vec<PlanGroup>,
}

/// The plan `text` stands for: a short form or JSON.
fn plan_of(text: &str) -> Result<Plan, String> {
    match short_form(text) {
        Some(p) => p.map_err(|e| e.to_string()),
        None => Plan::from_json(text).map_err(|e| e.to_string()),
    }
}

/// Pre-flights `req` against the recording in `bytes`, the series on `grid` (the viewer's) made
/// longer to cover the replay.
pub fn preflight(bytes: &[u8], grid: &Grid, req: &PlanRequest) -> Result<PlanPrediction, String> {
    let plan = plan_of(req.plan.trim())?;
    let assumed = req
        .assume
        .split_whitespace()
        .map(Assumption::parse)
        .collect::<Result<Vec<_>, _>>()?;
    let mut reader =
        RecordingReader::detect(Cursor::new(bytes.to_vec())).map_err(|e| e.to_string())?;
    let header = reader.header().map_err(|e| e.to_string())?.clone();
    let mut builder = BasisBuilder::new(&header);
    for line in reader.by_ref() {
        builder.push(&line.map_err(|e| e.to_string())?.1);
    }
    let basis = builder.finish().map_err(|e| e.to_string())?;
    let clients = basis.clients(&assumed)?;
    let setup = Setup {
        frame: Frame {
            origin: Timestamp(basis.end.0 + 1_000),
            lead_ms: 5_000,
            tail_ms: 30_000,
        },
        seed: basis.seed.clone(),
        spec: HypothesisSpec {
            rate_per_sec: 0,
            keys: basis
                .keys()
                .map_or(KEYS, |k| u32::try_from(k).unwrap_or(u32::MAX)),
            seed: SEED,
            concurrency: 1,
            redis_py_socket_timeout_ms: Some(1_000),
            window: None,
            shape: Shape::InFlight(DEFAULT_IN_FLIGHT),
            timing: ExchangeTimes::default(),
        },
    };
    let p = predict(&plan, &basis.start, &clients, &setup, &mut |_, _| {})
        .map_err(|e| e.to_string())?;
    let origin = setup.frame.origin.as_millis();
    let end = origin + p.after_ms;
    let bucket = grid.bucket_ms.max(1);
    let longer = Grid {
        buckets: usize::try_from(end.saturating_sub(grid.start.as_millis()).div_ceil(bucket))
            .map_err(|e| e.to_string())?,
        ..*grid
    };
    let groups = p
        .groups
        .iter()
        .map(|g| {
            let w = g.worst_run();
            let mut o = overlay(&w.report, &w.names, &longer);
            o.model = format!("{}: {}", g.client.short, w.model);
            o.grid = Some(longer);
            PlanGroup {
                short: g.client.short.clone(),
                rate: replayed_rate(g.client.rate_per_sec),
                verdict: g.range(),
                harmed: w.verdict.kind >= VerdictKind::Errors,
                why: g.why.clone(),
                remedies: g
                    .remedies
                    .iter()
                    .map(|r| format!("{}: {}", r.change, r.verdict.headline()))
                    .collect(),
                report: Digest::of(&w.report),
                overlay: o,
            }
        })
        .collect();
    Ok(PlanPrediction {
        steps: p.steps,
        origin,
        end,
        groups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotscope_core::metrics::Metrics;
    use slotscope_core::timeline::ClusterTimeline;
    use slotscope_core::track::TracksBuilder;

    #[test]
    fn a_scale_out_is_drawn_per_group_after_the_recording_ends() {
        let path = format!(
            "{}/../../tests/fixtures/incident2-valkey.jsonl.zst",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(path).unwrap();
        let mut reader = RecordingReader::detect(Cursor::new(bytes.clone())).unwrap();
        let mut tracks = TracksBuilder::new(&reader.header().unwrap().clone());
        let (mut metrics, mut timeline) = (Metrics::default(), ClusterTimeline::new());
        for line in reader.by_ref() {
            let line = line.unwrap().1;
            tracks.push(&line);
            timeline.push(&line);
            metrics.push_owned(line);
        }
        let grid = tracks.finish(&metrics, &timeline).grid;
        let req = PlanRequest {
            plan: "scale-out:+1".into(),
            assume: String::new(),
        };
        let wire = serde_json::to_string(&req).unwrap();
        assert_eq!(serde_json::from_str::<PlanRequest>(&wire).unwrap(), req);
        let p = preflight(&bytes, &grid, &req).unwrap();
        let recording_end = grid.time(grid.buckets).as_millis();
        assert!(p.origin >= recording_end && p.end > p.origin + 30_000);
        assert_eq!(p.groups.len(), 2);
        for g in &p.groups {
            let on = g.overlay.grid.as_ref().unwrap();
            assert!(on.time(on.buckets).as_millis() >= p.end, "{}", g.short);
            // Drawn only after the recording: nothing before the clients' lead-in.
            let first = g
                .overlay
                .ok_rate
                .values
                .iter()
                .position(|v| !v.is_nan())
                .unwrap();
            assert!(on.time(first).as_millis() + on.bucket_ms >= p.origin - 5_000);
            assert!(g.overlay.model.starts_with(&g.short));
        }
        // The JSON crosses between the modules unchanged (NaN as null).
        let json = serde_json::to_string(&p).unwrap();
        let back: PlanPrediction = serde_json::from_str(&json).unwrap();
        assert_eq!(back.steps, p.steps);
        assert_eq!(back.groups[0].why, p.groups[0].why);
        // A plan that cannot be carried out says which step.
        let bad = PlanRequest {
            plan: r#"{"steps": [{"at": "0s", "kill": "10.9.9.9:1"}]}"#.into(),
            assume: String::new(),
        };
        let e = preflight(&bytes, &grid, &bad).unwrap_err();
        assert!(e.contains("plan step 0"), "{e}");
    }
}
