//! A case run live: a real cluster on 127.0.0.1, `slotscope record` started at the drawn point,
//! the instrumented application (a separate program, [`App`]) and, while it runs, the drawn fault
//! and migration. Everything it starts is a child owned by a handle that kills it by PID when
//! dropped (servers, recorder, application), so a failing case leaves nothing behind.
//!
//! The cluster: three masters (nodes 0–2, the 16384 slots split evenly) and an empty fourth master
//! (node 3) that joined before the recording, and for a failover fault a replica of node 0 (node
//! 4); every node runs with
//! `cluster-require-full-coverage no` (see [`Fault::KillNode`]). The application's startup node
//! is node 0, which the faults strike; `address_remap` maps every address to node 0 too (the
//! remapped application talks to node 0 only, as incident 2's service); the recorder's seed is
//! node 1; the migration moves the last slots of node 2 to node 3.
//!
//! Timeline, from the application's start: the first event after `first_event_ms`, then, by
//! `when`: before (fault, gap, both halves), during (first half, fault, gap, second half), after
//! (both halves, gap, fault); without a fault, first half, gap, second half. A recording that
//! starts mid-migration has the first half done and the next slot open before the recorder and the
//! application start. Events run one after another on this thread; one that ends after the
//! application's drawn duration extends the application's schedule to [`TAIL`] after it (at most
//! [`OVERRUN_S`] more), ended with SIGTERM.
//!
//! [`run_with`] can start a second, healthy application beside the drawn one (the story check's
//! companion, [`Companion`]): it starts just before the drawn application, gets the same
//! schedule and is ended with it. The fidelity matrix runs without it ([`run`]).

use std::path::PathBuf;
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tempfile::TempDir;

use crate::cluster::{Cluster, ClusterOptions};
use crate::collector::Recorder;
use crate::matrix::app::SOCKET_TIMEOUT_S;
use crate::matrix::app::{App, AppReport, AppSettings};
use crate::matrix::calibration::{self, MachineOptions};
use crate::matrix::case::{Case, Fault, RecordStart, When};
use crate::matrix::companion::{Companion, COMPANION_NODE, COMPANION_VERSION};
use crate::matrix::fault::{inject, FAULT_NODE, FAULT_REPLICA, RECORDER_SEED};
use crate::matrix::library::Library;
use crate::matrix::migration::{halves, migrate, open_first_slot, SOURCE, TARGET};

/// The recorder's poll interval.
pub const INTERVAL: &str = "500ms";
/// The application's `CLIENT SETNAME`.
pub const APP_NAME: &str = "matrix-app";
/// How long the application's schedule runs on after the last event.
pub const TAIL: Duration = Duration::from_millis(2500);
/// How much longer than drawn the application may schedule (when events take longer).
pub const OVERRUN_S: u32 = 40;
/// The node `address_remap` maps every address to: the startup node, which the faults strike (a
/// remapped application talks to no other node, as incident 2's service).
pub const REMAP_NODE: usize = FAULT_NODE;

/// Wall clock, epoch milliseconds.
pub fn now_ms() -> u64 {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970");
    u64::try_from(d.as_millis()).expect("milliseconds fit")
}

/// Something the harness did, and when (epoch ms).
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// When it began (its start for a stall or a migration).
    pub began_ms: u64,
    /// When it was done (its end for a stall or a migration).
    pub at_ms: u64,
    /// What.
    pub what: String,
}

/// A case after its live run.
#[derive(Debug)]
pub struct LiveRun {
    /// Holds the recording.
    pub dir: TempDir,
    /// The recording.
    pub recording: PathBuf,
    /// When the recorder was started, epoch ms.
    pub recording_started_ms: u64,
    /// What the application was told.
    pub settings: AppSettings,
    /// What it reported.
    pub app: AppReport,
    /// What the harness did.
    pub events: Vec<Event>,
    /// What the companion was told, when one ran ([`run_with`]).
    pub companion_settings: Option<AppSettings>,
    /// What the companion reported, when one ran.
    pub companion: Option<AppReport>,
    /// When the fault began, epoch ms (none for [`Fault::None`]): its event is noted when it is
    /// done (after a stall, after the promotion), this when it was started.
    pub fault_started_ms: Option<u64>,
    /// Every node's address, by node number (empty for a kept run read back).
    pub nodes: Vec<String>,
    /// The library's model options timed on this machine before the case ([`calibration`]).
    pub machine_options: MachineOptions,
}

impl LiveRun {
    /// What the harness knew of `case`'s run, kept beside its recording as `<seed>.live.json`
    /// (what `scripts/fidelity --rescore` reads, [`crate::matrix::rescore`]).
    pub fn kept_json(&self, case: &Case) -> serde_json::Value {
        serde_json::json!({
            "settings": self.settings.to_json(),
            "fault_started_ms": self.fault_started_ms,
            "recording_started_ms": self.recording_started_ms,
            "library": case.library.label(),
            "machine_options": calibration::to_json(&self.machine_options),
        })
    }

    /// The options the replay of this run is given as `--set NAME=VALUE` besides the case's:
    /// what the library resolved on the application's machine (its report's `model_options`)
    /// and what was timed on it ([`LiveRun::machine_options`]).
    pub fn model_options(&self) -> Vec<(String, String)> {
        let mut options: Vec<(String, String)> = self.app.raw["model_options"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect();
        options.extend(self.machine_options.iter().cloned());
        options
    }
}

/// Runs `case` live; `say` receives a line per step.
///
/// # Errors
///
/// If the application failed or did not report. A server, the recorder or a cluster command that
/// fails panics, as everywhere in the harness.
pub fn run(case: &Case, say: &dyn Fn(&str)) -> Result<LiveRun, String> {
    run_with(case, None, say)
}

/// Runs `case` live with `companion` (if any) beside the application; `say` receives a line per
/// step.
///
/// # Errors
///
/// If the application or the companion failed or did not report.
pub fn run_with(
    case: &Case,
    companion: Option<&Companion>,
    say: &dyn Fn(&str),
) -> Result<LiveRun, String> {
    let t0 = Instant::now();
    let step = |what: &str| say(&format!("[{:>6.2}s] {what}", t0.elapsed().as_secs_f64()));
    let mut events = Vec::new();
    let note = |what: String, began_ms: u64, events: &mut Vec<Event>| {
        step(&what);
        events.push(Event {
            began_ms,
            at_ms: now_ms(),
            what,
        });
    };

    let kind = case.server;
    // Timed before the case's cluster starts: nothing of it reaches the recording.
    let machine_options = match calibration::machine_options(case.library, kind) {
        Ok(o) => {
            if !o.is_empty() {
                let list: Vec<String> = o.iter().map(|(k, v)| format!("{k}={v}")).collect();
                note(
                    format!("timed on this machine: {}", list.join(", ")),
                    now_ms(),
                    &mut events,
                );
            }
            o
        }
        Err(e) => {
            note(
                format!("CPU costs not timed ({e}): the model's defaults"),
                now_ms(),
                &mut events,
            );
            Vec::new()
        }
    };
    let mut cluster = if case.record_start == RecordStart::BeforeSlots {
        Cluster::start_unassigned(kind, 4, ClusterOptions::default())
    } else {
        let mut c = Cluster::start(kind, 3, ClusterOptions::default());
        let added = c.add_master();
        assert_eq!(added, TARGET, "the empty master is node {TARGET}");
        c
    };
    if case.fault.needs_replica() {
        let replica = cluster.add_replica(FAULT_NODE);
        assert_eq!(
            replica, FAULT_REPLICA,
            "node 0's replica is node {FAULT_REPLICA}"
        );
    }
    for i in 0..cluster.len() {
        cluster
            .client(i)
            .cmd_ok(&["CONFIG", "SET", "cluster-require-full-coverage", "no"])
            .unwrap_or_else(|e| panic!("CONFIG SET on node {i}: {e}"));
    }
    step(&format!(
        "{kind} cluster of 4 masters up{}",
        if case.fault.needs_replica() {
            ", node 0 with a replica"
        } else {
            ""
        }
    ));
    let (first, second) = halves(case.slots_moved);
    if case.record_start == RecordStart::MidMigration {
        let began = now_ms();
        migrate(&cluster, first);
        open_first_slot(&cluster, second);
        note(
            format!("first half {first} moved, slot {} open", second.start()),
            began,
            &mut events,
        );
    }

    let dir = TempDir::new().expect("a temporary directory");
    let recording = dir.path().join("case.jsonl.zst");
    let seed = cluster.addr(RECORDER_SEED).to_string();
    let recorder = Recorder::start(
        &recording,
        &["--seed", &seed, "--interval", INTERVAL, "--quiet"],
        &[],
    );
    let recording_started_ms = now_ms();
    step("recorder started");
    // The recorder's first round comes before anything it must see.
    sleep(Duration::from_millis(1200));
    if case.record_start == RecordStart::BeforeSlots {
        let began = now_ms();
        cluster.assign_slots(&[0, 1, SOURCE]);
        note("slots assigned to nodes 0-2".to_owned(), began, &mut events);
        sleep(Duration::from_millis(500));
    }

    let settings = AppSettings {
        startup: cluster.addr(FAULT_NODE).to_string(),
        rate: case.rate,
        in_flight: case.in_flight,
        duration_s: case.duration_s,
        keys: case.keys,
        key_prefix: None,
        command: case.command.to_owned(),
        address_remap: case.remap.then(|| cluster.addr(REMAP_NODE).to_string()),
        socket_timeout_s: SOCKET_TIMEOUT_S,
        connect_timeout_s: SOCKET_TIMEOUT_S,
        client_name: APP_NAME.to_owned(),
        seed: case.seed,
    };
    // The application's own bound; the harness ends its schedule with SIGTERM (below).
    let bounded = AppSettings {
        duration_s: case.duration_s + OVERRUN_S,
        ..settings.clone()
    };
    let companion_settings =
        companion.map(|c| c.settings(cluster.addr(COMPANION_NODE).to_string(), case.duration_s));
    let companion_app = companion_settings.as_ref().map(|s| {
        let bounded = AppSettings {
            duration_s: s.duration_s + OVERRUN_S,
            ..s.clone()
        };
        App::start(Library::RedisPy(COMPANION_VERSION), &bounded)
    });
    if let Some(c) = companion {
        note(format!("companion started: {c}"), now_ms(), &mut events);
    }
    let app = App::start(case.library, &bounded);
    let app_start = Instant::now();
    note(
        format!("application started: {case}"),
        now_ms(),
        &mut events,
    );
    let until = |ms: u64| {
        let at = app_start + Duration::from_millis(ms);
        if let Some(d) = at.checked_duration_since(Instant::now()) {
            sleep(d);
        }
    };
    until(case.first_event_ms);
    let gap = Duration::from_millis(case.gap_ms);
    let fault_started = std::cell::Cell::new(None);
    let fault = |cluster: &mut Cluster, events: &mut Vec<Event>| {
        let began = now_ms();
        fault_started.set(Some(began));
        let what = inject(cluster, case.fault, APP_NAME);
        note(what, began, events);
    };
    let part = |cluster: &Cluster, range, events: &mut Vec<Event>| {
        let began_ms = now_ms();
        migrate(cluster, range);
        events.push(Event {
            began_ms,
            at_ms: now_ms(),
            what: format!("slots {range} moved from node {SOURCE} to node {TARGET}"),
        });
        step(&format!("slots {range} moved"));
    };
    let mid = case.record_start == RecordStart::MidMigration;
    match (case.fault, case.when) {
        (Fault::None, _) => {
            if !mid {
                part(&cluster, first, &mut events);
                sleep(gap);
            }
            part(&cluster, second, &mut events);
        }
        (_, When::Before) => {
            fault(&mut cluster, &mut events);
            sleep(gap);
            part(&cluster, first, &mut events);
            part(&cluster, second, &mut events);
        }
        (_, When::During) => {
            if !mid {
                part(&cluster, first, &mut events);
            }
            fault(&mut cluster, &mut events);
            sleep(gap);
            part(&cluster, second, &mut events);
        }
        (_, When::After) => {
            if !mid {
                part(&cluster, first, &mut events);
            }
            part(&cluster, second, &mut events);
            sleep(gap);
            fault(&mut cluster, &mut events);
        }
    }
    // The schedule lasts the drawn duration, and at least until TAIL after the last event.
    let drawn = app_start + Duration::from_secs(u64::from(case.duration_s));
    let after_events = Instant::now() + TAIL;
    let end = drawn.max(after_events);
    if let Some(d) = end.checked_duration_since(Instant::now()) {
        sleep(d);
    }
    app.terminate();
    if let Some(c) = &companion_app {
        c.terminate();
    }
    let app = app.finish()?;
    step(&format!(
        "application reported: issued {}, failed {}, skipped {}",
        app.issued, app.failed, app.skipped
    ));
    let companion_report = match companion_app {
        Some(c) => {
            let r = c.finish().map_err(|e| format!("companion: {e}"))?;
            step(&format!(
                "companion reported: issued {}, failed {}, skipped {}",
                r.issued, r.failed, r.skipped
            ));
            Some(r)
        }
        None => None,
    };
    sleep(Duration::from_millis(700));
    recorder.terminate();
    let out = recorder.wait(Duration::from_secs(20));
    if !out.status.success() {
        return Err(format!(
            "slotscope record failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    step("recording stopped");
    let nodes = (0..cluster.len())
        .map(|i| cluster.addr(i).to_string())
        .collect();
    drop(cluster);
    Ok(LiveRun {
        dir,
        recording,
        recording_started_ms,
        settings,
        app,
        events,
        companion_settings,
        companion: companion_report,
        fault_started_ms: fault_started.get(),
        nodes,
        machine_options,
    })
}
