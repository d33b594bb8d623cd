//! `replay` and `hypotheses` on a recording imported from Prometheus (the saved responses of a
//! live incident-2 run in tests/fixtures/metrics, Prometheus 2.42 with redis_exporter 1.45): it
//! has no topology, so the slot map is assumed from the keys, the window starts at the recording's
//! start and says so, and `hypotheses` still finds the remapped client's node from where its
//! traffic lands.

mod common;

use common::{slotscope, temp_dir, text};

use std::path::PathBuf;

use serde_json::Value;

fn imported() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/metrics");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            (name.starts_with("prometheus-2.42-redis_") && name.ends_with(".json"))
                .then(|| dir.join(name).to_str().unwrap().to_owned())
        })
        .collect();
    files.sort();
    let out = temp_dir("imported-replay").join("imported.jsonl");
    let mut args = vec![
        "import-metrics",
        "--out",
        out.to_str().unwrap(),
        "--prometheus-json",
    ];
    args.extend(files.iter().map(String::as_str));
    let o = slotscope(&args);
    assert!(o.status.success(), "{}", text(&o));
    out
}

#[test]
fn hypotheses_on_an_imported_recording_find_the_remap_on_an_assumed_slot_map() {
    let rec = imported();
    let o = slotscope(&["hypotheses", "--format", "json", rec.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("hypotheses --format json");
    let reason = v["window"]["start_reason"].as_str().unwrap();
    assert!(reason.contains("slot map is assumed"), "{reason}");
    let g = &v["groups"][0];
    let target = g["remap_target"].as_str().expect("a remap target");
    assert_eq!(g["ranked"][0]["remap"], target, "{:#}", g["ranked"][0]);
    let replay = slotscope(&[
        "replay",
        rec.to_str().unwrap(),
        "--model",
        "redis-py@8.0.0",
        "--format",
        "json",
    ]);
    assert!(replay.status.success(), "{}", text(&replay));
    let r: Value = serde_json::from_slice(&replay.stdout).expect("replay --format json");
    // Without a slot map every command failed (no owner for any slot); on the assumed one a
    // plain client fails nothing.
    assert_eq!(r["failed"], 0, "{r:#}");
    assert!(r["succeeded"].as_u64().unwrap() > 0, "{r:#}");
}
