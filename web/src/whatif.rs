//! What-if: a client model replayed against the cluster the loaded recording describes, drawn
//! over the observed tracks.
//!
//! The replay runs in a second wasm module (the `slotscope-whatif` crate built with its `module`
//! feature into `whatif/` beside the viewer), fetched the first time the panel runs, so the replay
//! engine and its client models are not part of the viewer's first download. Natively (the tests)
//! the same crate runs in process.

use std::rc::Rc;

pub use slotscope_whatif::{
    parse_options, Overlay, PlanPrediction, PlanRequest, Prediction, Request, DEFAULT_RATE,
};

use crate::clock;
use crate::dataset::Dataset;
use crate::module::Module;
use slotscope_core::quantity::count;

/// A shared prediction, compared by identity (for Yew properties).
#[derive(Clone, Debug)]
pub struct Shared(pub Rc<Prediction>);

impl PartialEq for Shared {
    fn eq(&self, other: &Shared) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// Where the what-if module's JavaScript is, relative to the page.
pub const MODULE_URL: &str = "whatif/slotscope_whatif.js";

/// Why a what-if cannot run on an overview (`Dataset::from_overview`): it replays the recording.
pub const STILL_READING: &str =
    "the recording is still being read (the overview shown holds no polls to replay): run it again when it is loaded";

/// Calls `function` of the what-if module (fetched on first use) with the recording `data` holds,
/// its grid and `request` as JSON; the JSON it answers, parsed (`what` names it in an error).
async fn call_module<Req: serde::Serialize, Out: serde::de::DeserializeOwned>(
    data: &Dataset,
    function: &str,
    request: &Req,
    what: &str,
) -> Result<Out, String> {
    if data.bytes.is_empty() {
        return Err(STILL_READING.to_owned());
    }
    let module = Module::load(MODULE_URL).await?;
    let grid = serde_json::to_string(&data.tracks.grid).map_err(|e| e.to_string())?;
    let request = serde_json::to_string(request).map_err(|e| e.to_string())?;
    let bytes = js_sys::Uint8Array::from(&data.bytes[..]);
    let out = module.call(function, &[bytes.into(), grid.into(), request.into()])?;
    let json = out
        .as_string()
        .ok_or("the what-if module returned no text")?;
    // From bytes, as every JSON the viewer reads: one instance of serde_json's parser.
    serde_json::from_slice(json.as_bytes())
        .map_err(|e| format!("bad {what} from the what-if module: {e}"))
}

/// Runs `req` against the recording `data` holds, in the what-if module (fetched on first use).
pub async fn run_in_module(data: &Dataset, req: &Request) -> Result<Prediction, String> {
    call_module(data, "replay", req, "prediction").await
}

/// Pre-flights `req` against the recording `data` holds, in the what-if module.
pub async fn plan_in_module(data: &Dataset, req: &PlanRequest) -> Result<PlanPrediction, String> {
    call_module(data, "preflight", req, "pre-flight").await
}

/// The predictions a pre-flight draws: its two most harmed groups (A and B), each as a
/// prediction of its worst run.
pub fn drawn(p: &PlanPrediction) -> Vec<Shared> {
    p.groups
        .iter()
        .take(2)
        .map(|g| {
            Shared(Rc::new(Prediction {
                report: g.report.clone(),
                rate: g.rate,
                observed_rate: true,
                overlay: g.overlay.clone(),
            }))
        })
        .collect()
}

/// Runs `req` against the recording `data` holds, in process (native builds: the tests).
#[cfg(not(target_arch = "wasm32"))]
pub fn run(data: &Dataset, req: &Request) -> Result<Prediction, String> {
    slotscope_whatif::run(&data.bytes, &data.tracks.grid, req)
}

/// The model the what-if panel starts on: the one covering the library and release (`CLIENT
/// SETINFO`) of the group the first critical finding names, else of the first census group that
/// reports one, else the first model. (A group without `lib-name` suggests none: its library is
/// told by `slotscope hypotheses`, which the viewer does not carry.)
pub fn suggested_model(data: &Dataset) -> String {
    use slotscope_core::finding::{Attribution, Severity};
    let a = &data.analysis;
    let model_of = |g: &slotscope_core::census::ClientGroup| {
        let (lib, ver) = (g.key.lib_name.as_ref()?, g.key.lib_ver.as_ref()?);
        slotscope_core::replay::resolve(&format!("{lib}@{ver}"))
            .ok()
            .flatten()
            .map(|r| r.model.to_owned())
    };
    let named = a
        .findings
        .iter()
        .find(|f| f.severity == Severity::Critical)
        .and_then(|f| match &f.attribution {
            Some(Attribution::Group { group, .. }) => Some(group.clone()),
            _ => None,
        });
    named
        .and_then(|label| a.census.groups.iter().find(|g| g.key.label() == label))
        .and_then(model_of)
        .or_else(|| a.census.groups.iter().find_map(model_of))
        .unwrap_or_else(|| slotscope_core::replay::MODELS[0].name.to_owned())
}

/// `share` as a percentage with one decimal: `38.4 %`.
fn percent(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// The prediction in words: "redis-py@5.0.0 ends wedged since 22:54:25.060Z; MOVED share zadd
/// 0.0 %; 1 full re-initialisation, 2 CLUSTER SLOTS calls, 1 new connection; …".
pub fn summary(p: &Prediction, offset: Option<i32>) -> String {
    let r = &p.report;
    let ending = match (r.wedged, r.wedged_since) {
        (true, Some(t)) => {
            let full = clock::format(t, offset);
            format!("ends wedged since {}", full.get(11..).unwrap_or(&full))
        }
        (true, None) => "ends wedged".to_owned(),
        (false, _) => "does not end wedged".to_owned(),
    };
    let ending = match r.moments {
        Some(m) => format!(
            "{ending} (wedged at {} of {} moments of the kill and failure windows)",
            m.wedged, m.tried
        ),
        None => ending,
    };
    let shares: Vec<String> = r
        .moved_share
        .iter()
        .map(|(c, s)| format!("MOVED share {c} {}", percent(*s)))
        .collect();
    let errors: Vec<String> = r.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!(
        "{} {ending}; {}; {}, {}, {}; {} of {} commands failed{} ({} commands/s{}, {} in flight)",
        r.model,
        shares.join(", "),
        count(r.full_reinits, "full re-initialisation"),
        count(r.cluster_slots_calls, "CLUSTER SLOTS call"),
        count(r.new_connections, "new connection"),
        r.failed,
        r.commands,
        if errors.is_empty() {
            String::new()
        } else {
            format!(" ({})", errors.join(", "))
        },
        p.rate,
        if p.observed_rate { ", observed" } else { "" },
        r.concurrency,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::fixture;
    use slotscope_core::float;
    use slotscope_core::Timestamp;

    fn req(model: &str, options: &str) -> Request {
        Request {
            model: model.into(),
            options: options.into(),
            rate: None,
            concurrency: 1,
        }
    }

    #[test]
    fn incident_1_redis_py_5_wedges_and_8_does_not() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let p5 = run(&data, &req("redis-py@5.0.0", "")).unwrap();
        assert!(p5.report.wedged);
        assert!(p5.observed_rate);
        assert_eq!(p5.rate, 199, "the CLI's observed rate");
        let text = summary(&p5, None);
        // Wedged at the stall's first moment: in the middle of the window it began in (between
        // A's last answer at ...864_546 and the sending of the first poll that timed out,
        // ...865_059), at each of the 15 places of that window.
        assert!(
            text.starts_with(
                "redis-py@5.0.0 ends wedged since 22:54:24.804Z (wedged at 15 of 15 moments of \
                 the kill and failure windows);"
            ),
            "{text}"
        );
        assert!(text.contains("MOVED share zadd 0.0 %"), "{text}");
        // The wedged interval runs from when it wedged to the end of the replay.
        let since = p5.report.wedged_since.unwrap();
        assert_eq!(p5.overlay.wedged.len(), 1, "{:?}", p5.overlay.wedged);
        assert_eq!(p5.overlay.wedged[0].0, since);
        assert!(p5.overlay.wedged[0].1 >= data.span().1 - 1000);
        // Wedged: nothing succeeds after it, so the predicted rate falls to 0.
        let grid = &data.tracks.grid;
        let after = grid.bucket(Timestamp(since + 5000)).unwrap();
        assert_eq!(p5.overlay.ok_rate.values[after], 0.0);
        let before = grid.bucket(Timestamp(data.span().0 + 2000)).unwrap();
        assert!(p5.overlay.ok_rate.values[before] > 150.0);

        let p8 = run(&data, &req("redis-py@8.0.0", "")).unwrap();
        assert!(!p8.report.wedged);
        assert!(p8.overlay.wedged.is_empty());
        let text = summary(&p8, None);
        assert!(
            text.starts_with(
                "redis-py@8.0.0 does not end wedged (wedged at 0 of 15 moments of the kill and \
                 failure windows);"
            ),
            "{text}"
        );
        // A kill known only within a window: the summary says at how many of its moments the
        // client wedged (the figures are then the majority's).
        let mut killed = p8.clone();
        killed.report.moments = Some(slotscope_core::replay::Moments {
            tried: 15,
            wedged: 4,
        });
        let text = summary(&killed, None);
        assert!(
            text.starts_with(
                "redis-py@8.0.0 does not end wedged (wedged at 4 of 15 moments of the kill and \
                 failure windows);"
            ),
            "{text}"
        );
        // Its CLUSTER SLOTS calls all show up on the refreshes series.
        let per_bucket_s = float::from_u64(grid.bucket_ms) / 1000.0;
        let total: f64 = p8
            .overlay
            .refreshes
            .values
            .iter()
            .filter(|v| !v.is_nan())
            .map(|&v| f64::from(v) * per_bucket_s)
            .sum();
        let calls = float::from_u64(p8.report.cluster_slots_calls);
        assert!(
            (total - calls).abs() <= calls * 0.05 + 2.0,
            "{total} vs {calls}"
        );
    }

    #[test]
    fn incident_2_with_address_remap_to_the_seed_predicts_the_moved_storm() {
        let data = fixture("incident2-valkey");
        let p = run(
            &data,
            &req("redis-py@5.0.0", "address_remap=127.0.0.1:22809"),
        )
        .unwrap();
        assert!(!p.report.wedged);
        let shares: Vec<f64> = p.report.moved_share.values().copied().collect();
        assert_eq!(shares.len(), 3, "{:?}", p.report.moved_share);
        assert!(
            shares.iter().all(|s| (0.35..0.42).contains(s)),
            "{shares:?}"
        );
        let text = summary(&p, None);
        assert!(text.contains("MOVED share zrevrange 38.5 %"), "{text}");
        // The per-bucket series agree with the report: mostly around 38 %.
        let zrevrange = p
            .overlay
            .moved_share
            .iter()
            .find(|s| s.label == "zrevrange")
            .unwrap();
        let vals: Vec<f32> = zrevrange
            .values
            .iter()
            .copied()
            .filter(|v| !v.is_nan())
            .collect();
        assert!(vals.len() > 10);
        let mean = vals.iter().sum::<f32>() / f32::from(u16::try_from(vals.len()).unwrap());
        assert!((0.3..0.45).contains(&mean), "{mean}");
        assert_eq!(p.overlay.moved_share.len(), 3);
        assert_eq!(zrevrange.values.len(), data.tracks.grid.buckets);
    }

    #[test]
    fn the_panel_starts_on_the_model_of_the_group_the_story_is_about() {
        // Incident 1: the wedged group runs redis-py 5.0.0.
        let i1 = fixture("incident1-redis-py-5.0.0-valkey");
        assert_eq!(suggested_model(&i1), "redis-py@5.0.0");
        // Incident 2: the remapped group runs redis-py 8.0.0.
        let i2 = fixture("incident2-valkey");
        assert_eq!(suggested_model(&i2), "redis-py@8.0.0");
    }

    #[test]
    fn bad_options_and_models_give_the_core_message() {
        let data = fixture("incident2-valkey");
        let e = run(&data, &req("redis-py@5.0.0", "socket_timeout=abc")).unwrap_err();
        assert!(
            e.contains("bad value `abc` for model option `socket_timeout`"),
            "{e}"
        );
        let e = run(&data, &req("nope", "")).unwrap_err();
        assert!(e.contains("unknown client model `nope`"), "{e}");
        let e = run(&data, &req("redis-py@5.0.0", "address_remap")).unwrap_err();
        assert!(e.contains("not key=value"), "{e}");
    }

    #[test]
    fn the_whatif_panel_round_trips_in_the_url_hash() {
        use crate::state::{Action, HashState, Panel, ViewState};
        assert_eq!(Panel::from_name("whatif"), Some(Panel::Whatif));
        let s = ViewState::default().reduce(Action::TogglePanel(Panel::Whatif));
        let hash = s.hash_state().encode();
        assert!(hash.contains("whatif"), "{hash}");
        let back = HashState::decode(&hash).unwrap();
        assert!(back.panels.unwrap().contains(&Panel::Whatif));
        assert!(
            !ViewState::default().panels.contains(&Panel::Whatif),
            "closed at first"
        );
    }

    #[test]
    fn a_rate_and_concurrency_override_the_defaults() {
        let data = fixture("incident2-valkey");
        let p = run(
            &data,
            &Request {
                rate: Some(50),
                concurrency: 4,
                ..req("ideal", "")
            },
        )
        .unwrap();
        assert_eq!(p.rate, 50);
        assert!(!p.observed_rate);
        assert_eq!(p.report.concurrency, 4);
        let text = summary(&p, None);
        assert!(text.contains("(50 commands/s, 4 in flight)"), "{text}");
    }
}
