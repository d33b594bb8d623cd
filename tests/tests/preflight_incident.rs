//! The founding incident 1 predicted before the change (issue 25, "Done when"): a one-shard
//! Valkey cluster with an empty master joined, a redis-py 5.0.0 service and a redis-py 8.1.0
//! service (the real releases, `tests/scenarios/app.py`) running against it while `slotscope
//! record` records the cluster as it is; then `slotscope preflight` on that recording with the
//! plan of a scale-out whose source stalls for 2.5 s a second into the move. The 5.0.0 service
//! wedges (its one startup node popped by the stall's timeout), the 8.1.0 one recovers, and the
//! setting that makes the first safe, replayed, is named.
//!
//! The move runs at 100 slots a second (the incident's ran at 34). At 800/s the answer hung on
//! what the census happened to see (each service's share of the `ZADD`s, 81-119/s, and 6-8
//! connections in flight): a fifth `MOVED` before the stall made 5.0.0 refresh and learn the new
//! master (no wedge), and the `MOVED` replies the stall's end releases at once could reset the
//! client under its commands in flight, whose lost replies pop its one startup node whatever the
//! socket timeout (the reset race): each in about one recording of eight, 4 of 32 runs
//! (2026-12-05); at 100/s none of 16 kept recordings.

use std::thread::sleep;
use std::time::Duration;

use serde_json::Value;
use slotscope_tests::cluster::{Cluster, ClusterOptions};
use slotscope_tests::collector::{run_slotscope, Recorder};
use slotscope_tests::kind::ServerKind;
use slotscope_tests::matrix::app::{App, AppSettings};
use slotscope_tests::matrix::library::Library;
use slotscope_tests::python::{REDIS_PY_5_0_0, REDIS_PY_8_1_0};

fn settings(startup: &str, name: &str, seed: u64) -> AppSettings {
    AppSettings {
        startup: startup.to_owned(),
        rate: 100,
        in_flight: 4,
        duration_s: 6,
        keys: 2_000,
        key_prefix: Some(name.to_owned()),
        command: "zadd".to_owned(),
        address_remap: None,
        socket_timeout_s: 0.5,
        connect_timeout_s: 0.5,
        client_name: name.to_owned(),
        seed,
    }
}

fn group<'a>(report: &'a Value, short: &str) -> &'a Value {
    report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["client"]["short"] == short)
        .unwrap_or_else(|| panic!("no group {short}: {report}"))
}

#[test]
fn a_scale_out_with_a_short_stall_is_predicted_to_wedge_redis_py_5_only() {
    let mut cluster = Cluster::start(ServerKind::Valkey, 1, ClusterOptions::default());
    let target = cluster.add_master();
    let (source, target) = (
        cluster.addr(0).to_string(),
        cluster.addr(target).to_string(),
    );
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("now.jsonl.zst");
    let recorder = Recorder::start(
        &rec,
        &["--seed", &source, "--interval", "500ms", "--quiet"],
        &[],
    );
    sleep(Duration::from_millis(1200));
    let py5 = App::start(
        Library::RedisPy(REDIS_PY_5_0_0),
        &settings(&source, "svc-py5", 1),
    );
    let py8 = App::start(
        Library::RedisPy(REDIS_PY_8_1_0),
        &settings(&source, "svc-py8", 2),
    );
    let (r5, r8) = (py5.finish().unwrap(), py8.finish().unwrap());
    assert_eq!(
        (r5.failed, r8.failed),
        (0, 0),
        "a quiet cluster before the change"
    );
    recorder.terminate();
    assert!(recorder.wait(Duration::from_secs(20)).status.success());
    drop(cluster);

    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        format!(
            r#"{{"steps": [
                {{"at": "0s", "move": {{"slots": "8192-16383", "from": "{source}", "to": "{target}", "rate": "100/s"}}}},
                {{"at": "1s", "stall": {{"node": "{source}", "for": "2.5s"}}}}
            ]}}"#
        ),
    )
    .unwrap();
    let o = run_slotscope(&[
        "preflight",
        rec.to_str().unwrap(),
        "--plan",
        plan.to_str().unwrap(),
        "--format",
        "json",
        "--assume",
        "svc-py5=redis-py@5.0.0,socket_timeout=0.5",
        "--assume",
        "svc-py8=redis-py@8.1.0,socket_timeout=0.5",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let g5 = group(&report, "svc-py5");
    let g8 = group(&report, "svc-py8");
    let worst = |g: &Value| g["runs"][g["worst"].as_u64().unwrap() as usize]["verdict"].clone();
    assert_eq!(worst(g5)["kind"], "wedged", "{}\n{g5}", g5["why"]);
    assert_ne!(worst(g8)["kind"], "wedged", "{}", g8["why"]);
    assert!(g5["why"].as_str().unwrap().contains("startup_nodes"));
    // The risk table puts the wedged service first.
    assert_eq!(report["groups"][0]["client"]["short"], "svc-py5");
    // What makes the first safe, replayed: a socket timeout that waits out the stall.
    let safe: Vec<&str> = g5["remedies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"]["kind"] != "wedged" && r["verdict"]["kind"] != "errors")
        .map(|r| r["change"].as_str().unwrap())
        .collect();
    assert!(
        safe.iter().any(|c| c.starts_with("socket_timeout=")),
        "{safe:?}\n{g5}"
    );
}
