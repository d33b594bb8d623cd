//! The census names the library (issue 24, part 4): each library's real app runs against a real
//! three-master cluster on 127.0.0.1 under `slotscope record`, on Valkey 8.1 (where `CLIENT
//! SETINFO` puts `lib-name` in `CLIENT LIST`) and on Redis 7.0 (where it is rejected and the
//! rejection fingerprint decides), and `slotscope hypotheses` on the recording must give the
//! app's group its library: on Valkey that library alone; on Redis 7.0 the libraries
//! [`Library::named_on_redis_7_0`] lists (the ones the fingerprint cannot tell apart there), and
//! none for a library that leaves no fingerprint. Where a named library has a model, the first
//! model the group's ranking replays must be one of the named libraries'.
//!
//! An app that is not built fails the test when `SLOTSCOPE_REQUIRE_APPS=1` (scripts/test), and is
//! reported and passed over otherwise.

use std::thread;
use std::time::Duration;

use serde_json::Value;
use slotscope_tests::matrix::analysis::run_json;
use slotscope_tests::matrix::app::{App, AppSettings, SOCKET_TIMEOUT_S};
use slotscope_tests::matrix::library::{Library, ALL};
use slotscope_tests::matrix::live::INTERVAL;
use slotscope_tests::{Cluster, ClusterOptions, Recorder, ServerKind};
use tempfile::TempDir;

/// The app's connection name, which its census group is keyed by.
const NAME: &str = "census-app";

/// The libraries the hypotheses name for the app's group: the declared one, or the candidates.
fn named(group: &Value) -> Vec<String> {
    if let Some(l) = group["declared_library"].as_str() {
        return vec![l.to_owned()];
    }
    group["candidate_libraries"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// One library on one server: the recorded run and what the hypotheses name.
fn check(library: Library, kind: ServerKind) {
    let ctx = format!("{} on {}", library.label(), kind.name());
    let cluster = Cluster::start(kind, 3, ClusterOptions::default());
    let dir = TempDir::new().expect("a temporary directory");
    let recording = dir.path().join("census.jsonl.zst");
    let seed = cluster.addr(1).to_string();
    let recorder = Recorder::start(
        &recording,
        &["--seed", &seed, "--interval", INTERVAL, "--quiet"],
        &[],
    );
    thread::sleep(Duration::from_millis(1200));
    let settings = AppSettings {
        startup: cluster.addr(0).to_string(),
        rate: 100,
        in_flight: 4,
        duration_s: 4,
        keys: 200,
        key_prefix: None,
        command: "zadd".to_owned(),
        address_remap: None,
        socket_timeout_s: SOCKET_TIMEOUT_S,
        connect_timeout_s: SOCKET_TIMEOUT_S,
        client_name: NAME.to_owned(),
        seed: 1,
    };
    let app = App::start(library, &settings);
    let report = app.finish();
    thread::sleep(Duration::from_millis(1200));
    recorder.terminate();
    let out = recorder.wait(Duration::from_secs(20));
    assert!(out.status.success(), "{ctx}: slotscope record failed");
    let report = report.unwrap_or_else(|e| panic!("{ctx}: no report: {e}"));
    assert!(report.issued > 0, "{ctx}: nothing issued");
    let file = recording.display().to_string();
    let hypotheses =
        run_json(&["hypotheses", &file]).unwrap_or_else(|e| panic!("{ctx}: hypotheses: {e}"));
    let groups = hypotheses["groups"].as_array().cloned().unwrap_or_default();
    let group = groups
        .iter()
        .find(|g| g["short"].as_str() == Some(NAME))
        .unwrap_or_else(|| {
            panic!(
                "{ctx}: no group {NAME:?} among {:?}",
                groups
                    .iter()
                    .map(|g| g["short"].clone())
                    .collect::<Vec<_>>()
            )
        });
    let named = named(group);
    let first = group["ranked"][0]["model"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    println!(
        "{ctx}: named {named:?}, declared model {}, first replayed {first}",
        group["declared_model"]
    );
    let expected: Vec<String> = match kind {
        ServerKind::Valkey => library
            .named_on_valkey()
            .into_iter()
            .map(str::to_owned)
            .collect(),
        ServerKind::Redis => library
            .named_on_redis_7_0()
            .iter()
            .map(|l| (*l).to_owned())
            .collect(),
    };
    assert_eq!(named, expected, "{ctx}: the libraries named");
    let library_of = |m: &Value| {
        m["model"]
            .as_str()
            .and_then(|m| m.split('@').next())
            .map(str::to_owned)
    };
    let replayable = group["ranked"]
        .as_array()
        .is_some_and(|r| r.iter().filter_map(library_of).any(|l| named.contains(&l)));
    if replayable {
        let first_library = first.split('@').next().unwrap_or("");
        assert!(
            named.iter().any(|l| l == first_library),
            "{ctx}: the first model replayed ({first}) is none of {named:?}'s"
        );
    }
}

/// Every library's app on `kind`, one after the other.
fn every_library(kind: ServerKind) {
    let required = std::env::var("SLOTSCOPE_REQUIRE_APPS").is_ok_and(|v| v == "1");
    let mut missing = Vec::new();
    for library in ALL {
        if !library.is_available() {
            missing.push(library.label());
            continue;
        }
        check(library, kind);
    }
    if !missing.is_empty() {
        println!("not built here: {}", missing.join(", "));
    }
    assert!(
        !required || missing.is_empty(),
        "SLOTSCOPE_REQUIRE_APPS=1 and not built: {} (run scripts/setup)",
        missing.join(", ")
    );
}

// The two servers' runs go side by side (libtest's threads), each on its own cluster: the apps
// are light (100 commands a second), and the run takes half as long.

#[test]
fn the_census_names_each_librarys_app_on_valkey() {
    every_library(ServerKind::Valkey);
}

#[test]
fn the_census_names_each_librarys_app_on_redis_7_0() {
    every_library(ServerKind::Redis);
}
