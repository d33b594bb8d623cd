//! What-if: a client model replayed in the browser against the cluster the loaded recording
//! describes, and its prediction turned into series on the tracks' grid so it can be drawn over
//! the observed data.
//!
//! The replay is set up as `slotscope replay` sets it up (collector/src/replay_report.rs): the
//! simulated cluster from the recording's lines with a per-key migration coin, the workload at the
//! observed business rate with the observed command mix, `key:{n}` keys over 10 000 keys, seed 1.
//!
//! The core's per-second timeline has no per-command MOVED counts and no `CLUSTER SLOTS` calls,
//! so the model is wrapped in a [`ClientModel`] that taps its transport and counts them per
//! second; the replay itself is unchanged.

use std::io::Cursor;
use std::rc::Rc;

use slotscope_core::hypothesis::Evidence;
use slotscope_core::metrics::count_f64;
use slotscope_core::reader::RecordingReader;
use slotscope_core::replay::{
    self, AskPolicy, ClientModel, ClientSnapshot, ClientState, ErrorClass, ModelOptions, Outcome,
    ReplayReport, Reply, Routed, SimCluster, SimClusterBuilder, Transport, Workload, WorkloadSpec,
};
use slotscope_core::slot::SlotRange;
use slotscope_core::track::{Grid, Series};
use slotscope_core::{NodeAddr, Timestamp};

use crate::clock;
use crate::dataset::Dataset;

/// Distinct keys of the workload (the CLI's default).
pub const KEYS: u32 = 10_000;
/// Seed of the workload and of the migration coin (the CLI's default).
pub const SEED: u64 = 1;
/// The rate used when the recording shows no business command (the CLI's default).
pub const DEFAULT_RATE: u32 = 100;

/// What to replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// A model name, one of [`replay::MODELS`].
    pub model: String,
    /// Model options as typed: `key=value` pairs separated by spaces or commas.
    pub options: String,
    /// Commands per second; `None`: the observed rate.
    pub rate: Option<u32>,
    /// Commands in flight at most (at least 1).
    pub concurrency: u32,
}

/// The predicted series, on the loaded recording's grid (NaN where the replay says nothing).
#[derive(Clone, Debug, PartialEq)]
pub struct Overlay {
    /// The model's name (the legend says "predicted (model)").
    pub model: String,
    /// Per command: MOVED ÷ attempts that reached a server (label: the command).
    pub moved_share: Vec<Series>,
    /// Connections opened per second.
    pub new_connections: Series,
    /// `CLUSTER SLOTS` calls per second.
    pub refreshes: Series,
    /// Commands that succeeded per second, all nodes.
    pub ok_rate: Series,
    /// When the client was wedged: `[start, end]` in epoch milliseconds.
    pub wedged: Vec<(u64, u64)>,
}

/// A replay's outcome: the core's report, the workload it ran and the overlay.
#[derive(Clone, Debug)]
pub struct Prediction {
    /// The core's report.
    pub report: ReplayReport,
    /// Commands per second of the workload.
    pub rate: u32,
    /// Whether the rate is the observed one.
    pub observed_rate: bool,
    /// The series to draw over the tracks.
    pub overlay: Overlay,
}

/// A shared prediction, compared by identity (for Yew properties).
#[derive(Clone, Debug)]
pub struct Shared(pub Rc<Prediction>);

impl PartialEq for Shared {
    fn eq(&self, other: &Shared) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// Splits `key=value` pairs separated by spaces or commas. A piece without `=` after a pair
/// continues its value (`startup_nodes=a:1,b:2` keeps both addresses).
pub fn parse_options(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for piece in text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
    {
        match piece.split_once('=') {
            Some((k, v)) if !k.is_empty() => out.push((k.to_owned(), v.to_owned())),
            _ => match out.last_mut() {
                Some((_, v)) if !piece.contains('=') => {
                    v.push(',');
                    v.push_str(piece);
                }
                _ => return Err(format!("`{piece}` is not key=value")),
            },
        }
    }
    Ok(out)
}

/// The simulated cluster of the recording in `bytes` (read again from the start).
pub fn cluster(bytes: &Rc<[u8]>) -> Result<SimCluster, String> {
    let mut reader =
        RecordingReader::detect(Cursor::new(bytes.clone())).map_err(|e| e.to_string())?;
    let header = reader.header().map_err(|e| e.to_string())?.clone();
    let mut builder = SimClusterBuilder::for_recording(&header);
    for line in reader.by_ref() {
        let (_, line) = line.map_err(|e| e.to_string())?;
        builder.push(&line);
    }
    builder.ask_policy(AskPolicy::KeyCoin { seed: SEED });
    Ok(builder.build())
}

/// Counts per second of the replay that the core's timeline does not keep.
#[derive(Clone, Debug, Default)]
struct Tally {
    /// Per command name index: attempts that reached a server.
    calls: Vec<u64>,
    /// Per command name index: `MOVED` replies.
    moved: Vec<u64>,
    /// `CLUSTER SLOTS` calls.
    slots: u64,
}

/// A transport that counts what passes through it.
struct Tap<'a> {
    net: &'a mut dyn Transport,
    calls: u64,
    moved: u64,
    slots: u64,
}

impl Transport for Tap<'_> {
    fn now(&self) -> Timestamp {
        self.net.now()
    }

    fn sleep(&mut self, ms: u64) {
        self.net.sleep(ms);
    }

    fn resume_at(&mut self, t: Timestamp) {
        self.net.resume_at(t);
    }

    fn send(&mut self, to: &NodeAddr, cmd: Routed, asking: bool) -> Reply {
        let r = self.net.send(to, cmd, asking);
        self.calls += u64::from(!matches!(r, Reply::ConnectionError | Reply::Timeout));
        self.moved += u64::from(matches!(r, Reply::Moved { .. }));
        r
    }

    fn cluster_slots(&mut self, to: &NodeAddr) -> Result<Vec<(SlotRange, NodeAddr)>, Reply> {
        self.slots += 1;
        self.net.cluster_slots(to)
    }
}

/// The model under test, its transport tapped: per second, per command attempts and `MOVED`
/// replies and `CLUSTER SLOTS` calls. It finds each command's name by matching its time and key
/// against the workload (the driver issues the workload's commands in order, skipping some).
struct Probe<'w> {
    inner: Box<dyn ClientModel>,
    workload: &'w Workload,
    next: usize,
    start: Timestamp,
    seconds: Vec<Tally>,
}

/// Seconds a probe keeps (as many as the core's timeline).
const MAX_SECONDS: usize = 1_000_000;

impl ClientModel for Probe<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        let t = net.now();
        let name = self.workload.commands[self.next.min(self.workload.commands.len())..]
            .iter()
            .position(|c| c.t == t && c.key == cmd.key)
            .map(|i| {
                self.next += i + 1;
                usize::from(self.workload.commands[self.next - 1].name)
            });
        let mut tap = Tap {
            net,
            calls: 0,
            moved: 0,
            slots: 0,
        };
        let outcome = self.inner.execute(cmd, &mut tap);
        let second = usize::try_from(t.millis_since(self.start) / 1000).unwrap_or(usize::MAX);
        if second < MAX_SECONDS {
            if self.seconds.len() <= second {
                let names = self.workload.names.len();
                self.seconds.resize(
                    second + 1,
                    Tally {
                        calls: vec![0; names],
                        moved: vec![0; names],
                        slots: 0,
                    },
                );
            }
            let s = &mut self.seconds[second];
            s.slots += tap.slots;
            if let Some(n) = name.filter(|&n| n < s.calls.len()) {
                s.calls[n] += tap.calls;
                s.moved[n] += tap.moved;
            }
        }
        outcome
    }

    fn state(&self) -> ClientState {
        self.inner.state()
    }

    fn snapshot(&self) -> ClientSnapshot {
        self.inner.snapshot()
    }

    fn error_name(&self, class: ErrorClass) -> &'static str {
        self.inner.error_name(class)
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.inner.socket_timeout_ms()
    }

    fn set_concurrency(&mut self, in_flight: u32) {
        self.inner.set_concurrency(in_flight);
    }
}

/// Runs `req` against the recording `data` holds.
pub fn run(data: &Dataset, req: &Request) -> Result<Prediction, String> {
    let cluster = cluster(&data.bytes)?;
    let span = cluster
        .span()
        .filter(|s| s.millis() > 0)
        .ok_or("the recording holds no time span to replay over")?;
    let seed = cluster
        .seed()
        .cloned()
        .ok_or("the recording names no seed node")?;
    let mut opts = ModelOptions::new(seed);
    for (k, v) in parse_options(&req.options)? {
        opts.set(k.trim(), v.trim()).map_err(|e| e.to_string())?;
    }
    let client = replay::model(&req.model, opts).map_err(|e| e.to_string())?;
    let metrics = &data.analysis.metrics;
    let observed = metrics.observed_business_rate();
    let rate = req.rate.or(observed).unwrap_or(DEFAULT_RATE);
    let mix: Vec<(String, u64)> = Evidence::from_metrics(metrics).mix.into_iter().collect();
    let workload = Workload::generate(&WorkloadSpec {
        start: span.start,
        duration_ms: span.millis(),
        rate_per_sec: rate,
        keys: KEYS,
        key_prefix: "key".into(),
        command: "zadd".into(),
        seed: SEED,
    })
    .map_err(|e| e.to_string())?
    .with_mix(&mix, SEED)
    .with_concurrency(req.concurrency);
    let mut probe = Probe {
        inner: client,
        workload: &workload,
        next: 0,
        start: workload.commands.first().map_or(Timestamp(0), |c| c.t),
        seconds: Vec::new(),
    };
    let report = replay::replay(&cluster, &workload, &mut probe);
    let overlay = overlay(&report, &workload.names, &probe.seconds, &data.tracks.grid);
    Ok(Prediction {
        report,
        rate,
        observed_rate: req.rate.is_none() && observed.is_some(),
        overlay,
    })
}

fn ratio(part: u64, whole: u64) -> f32 {
    if whole == 0 {
        f32::NAN
    } else {
        // A share or a per-second rate: f32 precision is plenty for drawing.
        #[allow(clippy::cast_possible_truncation)]
        let v = (count_f64(part) / count_f64(whole)) as f32;
        v
    }
}

/// The seconds of the replay (index range into its timeline) that bucket `i` of `grid` covers.
fn seconds_of(grid: &Grid, i: usize, start: u64, len: usize) -> Option<std::ops::Range<usize>> {
    let t = grid.time(i).as_millis();
    let end = t.saturating_add(grid.bucket_ms.max(1));
    if end <= start {
        return None;
    }
    let a = usize::try_from(t.saturating_sub(start) / 1000).ok()?;
    let b = usize::try_from((end - 1).saturating_sub(start) / 1000).ok()?;
    (a < len).then(|| a..(b + 1).min(len))
}

/// The prediction as series on `grid`: counts per second averaged over the seconds each bucket
/// covers, MOVED shares as `moved ÷ attempts` over them.
fn overlay(report: &ReplayReport, names: &[String], tally: &[Tally], grid: &Grid) -> Overlay {
    let timeline = &report.timeline;
    let start = timeline.first().map_or(0, |s| s.t.as_millis());
    let ranges: Vec<Option<std::ops::Range<usize>>> = (0..grid.buckets)
        .map(|i| seconds_of(grid, i, start, timeline.len()))
        .collect();
    let rate = |label: &str, f: &dyn Fn(usize) -> u64| Series {
        label: label.to_owned(),
        values: ranges
            .iter()
            .map(|r| match r {
                Some(r) if !r.is_empty() => {
                    let n = u64::try_from(r.len()).unwrap_or(u64::MAX);
                    ratio(r.clone().map(f).sum(), n)
                }
                _ => f32::NAN,
            })
            .collect(),
    };
    let new_connections = rate("new connections/s", &|s| timeline[s].new_connections);
    let ok_rate = rate("commands/s ok", &|s| timeline[s].ok);
    let refreshes = rate("CLUSTER SLOTS/s", &|s| tally.get(s).map_or(0, |t| t.slots));
    let moved_share = names
        .iter()
        .enumerate()
        .map(|(n, name)| Series {
            label: name.clone(),
            values: ranges
                .iter()
                .map(|r| {
                    let (mut moved, mut calls) = (0, 0);
                    for t in r.clone().into_iter().flatten().filter_map(|s| tally.get(s)) {
                        moved += t.moved.get(n).copied().unwrap_or(0);
                        calls += t.calls.get(n).copied().unwrap_or(0);
                    }
                    ratio(moved, calls)
                })
                .collect(),
        })
        .collect();
    let mut wedged: Vec<(u64, u64)> = Vec::new();
    for s in timeline.iter().filter(|s| s.wedged) {
        let (a, b) = (s.t.as_millis(), s.t.as_millis().saturating_add(1000));
        match wedged.last_mut() {
            Some(last) if last.1 >= a => last.1 = b,
            _ => wedged.push((a, b)),
        }
    }
    if let (Some(since), Some(last)) = (report.wedged_since, wedged.last_mut()) {
        // The run that lasted to the end began when the client wedged, not at its second.
        if report.wedged && since.as_millis() >= last.0 {
            last.0 = since.as_millis();
        }
    }
    Overlay {
        model: report.model.clone(),
        moved_share,
        new_connections,
        refreshes,
        ok_rate,
        wedged,
    }
}

/// `share` as a percentage with one decimal: `38.4 %`.
fn percent(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// The prediction in words: "redis-py@5.0.0 ends wedged since 22:54:25.060Z; MOVED share zadd
/// 0.0 %; 1 full re-initialisations, 1 new connections".
pub fn summary(p: &Prediction, offset: Option<i32>) -> String {
    let r = &p.report;
    let ending = match (r.wedged, r.wedged_since) {
        (true, Some(t)) => {
            let full = clock::format(t.as_millis(), offset);
            format!("ends wedged since {}", full.get(11..).unwrap_or(&full))
        }
        (true, None) => "ends wedged".to_owned(),
        (false, _) => "does not end wedged".to_owned(),
    };
    let shares: Vec<String> = r
        .moved_share
        .iter()
        .map(|(c, s)| format!("MOVED share {c} {}", percent(*s)))
        .collect();
    let errors: Vec<String> = r.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!(
        "{} {ending}; {}; {} full re-initialisations, {} CLUSTER SLOTS calls, {} new connections; {} of {} commands failed{} ({} commands/s{}, {} in flight)",
        r.model,
        shares.join(", "),
        r.full_reinits,
        r.cluster_slots_calls,
        r.new_connections,
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

    fn req(model: &str, options: &str) -> Request {
        Request {
            model: model.into(),
            options: options.into(),
            rate: None,
            concurrency: 1,
        }
    }

    #[test]
    fn options_split_on_spaces_and_commas_and_keep_address_lists() {
        assert_eq!(
            parse_options("address_remap=127.0.0.1:22809, socket_timeout=0.5").unwrap(),
            vec![
                ("address_remap".into(), "127.0.0.1:22809".into()),
                ("socket_timeout".into(), "0.5".into())
            ]
        );
        assert_eq!(
            parse_options(" startup_nodes=a:1,b:2 reinitialize_steps=0 ").unwrap(),
            vec![
                ("startup_nodes".into(), "a:1,b:2".into()),
                ("reinitialize_steps".into(), "0".into())
            ]
        );
        assert!(parse_options("").unwrap().is_empty());
        assert!(parse_options("oops").is_err());
        assert!(parse_options("=1").is_err());
    }

    #[test]
    fn incident_1_redis_py_5_wedges_and_8_does_not() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let p5 = run(&data, &req("redis-py@5.0.0", "")).unwrap();
        assert!(p5.report.wedged);
        assert!(p5.observed_rate);
        assert_eq!(p5.rate, 199, "the CLI's observed rate");
        let text = summary(&p5, None);
        assert!(
            text.starts_with("redis-py@5.0.0 ends wedged since 22:54:25.060Z;"),
            "{text}"
        );
        assert!(text.contains("MOVED share zadd 0.0 %"), "{text}");
        // The wedged interval runs from when it wedged to the end of the replay.
        let since = p5.report.wedged_since.unwrap().as_millis();
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
            text.starts_with("redis-py@8.0.0 does not end wedged;"),
            "{text}"
        );
        // Its CLUSTER SLOTS calls all show up on the refreshes series.
        let per_bucket_s = count_f64(grid.bucket_ms) / 1000.0;
        let total: f64 = p8
            .overlay
            .refreshes
            .values
            .iter()
            .filter(|v| !v.is_nan())
            .map(|&v| f64::from(v) * per_bucket_s)
            .sum();
        let calls = count_f64(p8.report.cluster_slots_calls);
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
        assert!(text.contains("MOVED share zrevrange 38.4 %"), "{text}");
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
