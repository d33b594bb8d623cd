//! `slotscope preflight` on a recorded cluster: a scale-out replayed against its census groups
//! (the remapped group already failing, the other one meeting a MOVED burst), `--assume`, and
//! every input it cannot use refused with exit status 2 and a message naming what is wrong.

#[allow(dead_code)]
mod common;

use std::io::Write as _;

use common::{slotscope, temp_dir, text};

fn fixture(name: &str) -> String {
    format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn preflight(args: &[&str]) -> std::process::Output {
    let mut all = vec!["preflight"];
    all.extend_from_slice(args);
    slotscope(&all)
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--format", "json"]);
    let o = preflight(&all);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_scale_out_is_replayed_against_each_census_group() {
    let rec = fixture("incident2-valkey.jsonl.zst");
    let v = json(&[&rec, "--plan", "scale-out:+1"]);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert!(steps[1].as_str().unwrap().contains("rebalance"));
    let groups = v["groups"].as_array().unwrap();
    let names: Vec<&str> = groups
        .iter()
        .map(|g| g["client"]["short"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["recommendation", "api"]);
    // The remapped group: replayed with its remap, failing before the change already.
    let rec_group = &groups[0];
    assert!(rec_group["client"]["remap"].is_string());
    let worst = &rec_group["runs"][0];
    assert_eq!(worst["baseline"]["kind"], "errors");
    assert!(rec_group["why"]
        .as_str()
        .unwrap()
        .contains("already without the change"));
    // The other one follows the moved slots: MOVED from the rebalance's start, no failure.
    let api = &groups[1]["runs"][0]["verdict"];
    assert_eq!(api["kind"], "moved_burst");
    assert_eq!(api["figures"]["failed"], 0);
    assert!(api["stretch"]["from_ms"].as_i64().unwrap() >= 5_000);
    assert_eq!(groups[1]["client"]["chosen"], "declared");

    // The same as text: the risk table and each group's why.
    let o = preflight(&[&rec, "--plan", "scale-out:+1"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("risk, the most harmed first"), "{out}");
    assert!(out.contains("redis/asyncio/cluster.py"), "{out}");
}

#[test]
fn an_assumed_release_replaces_the_reported_one() {
    let rec = fixture("incident2-valkey.jsonl.zst");
    let v = json(&[
        &rec,
        "--plan",
        "scale-out:+1",
        "--assume",
        "api=redis-py@5.0.1,reinitialize_steps=5",
    ]);
    let api = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["client"]["short"] == "api")
        .unwrap();
    assert_eq!(api["client"]["chosen"], "assumed");
    assert_eq!(api["runs"][0]["model"], "redis-py@5.0.1");
    assert_eq!(api["runs"][0]["config"]["reinitialize_steps"], "5");
}

#[test]
fn what_cannot_be_used_is_refused_with_status_2() {
    let rec = fixture("incident2-valkey.jsonl.zst");
    let dir = temp_dir("preflight-refused");
    let refused = |args: &[&str], says: &str| {
        let o = preflight(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(o.stdout.is_empty());
    };
    // A step naming a node the recording does not hold: the step's index.
    let plan = dir.join("plan.json");
    std::fs::write(
        &plan,
        r#"{"steps": [{"at": "0s", "add_master": "new1"},
                      {"at": "2s", "stall": {"node": "10.9.9.9:7000", "for": "1s"}}]}"#,
    )
    .unwrap();
    refused(
        &[&rec, "--plan", plan.to_str().unwrap()],
        "plan step 1: no node \"10.9.9.9:7000\"",
    );
    // Slots the source does not own.
    refused(
        &[
            &rec,
            "--plan",
            r#"{"steps": [{"at": "0s", "add_master": "new1"},
                          {"at": "1s", "move": {"slots": "0-99", "from": "new1", "to": "127.0.0.1:22809"}}]}"#,
        ],
        "plan step 1",
    );
    // Not a plan at all, malformed JSON, a bad short form.
    refused(&[&rec, "--plan", "no-such-file.json"], "no file, no JSON");
    refused(&[&rec, "--plan", "{\"steps\": [}"], "plan");
    refused(&[&rec, "--plan", "scale-out:+0"], "scale-out:+N");
    // An assumption naming no group lists the groups; one no model covers lists nothing wrong
    // silently.
    refused(
        &[
            &rec,
            "--plan",
            "scale-out:+1",
            "--assume",
            "nobody=redis-py@8.1.0",
        ],
        "groups: recommendation, api",
    );
    refused(
        &[
            &rec,
            "--plan",
            "scale-out:+1",
            "--assume",
            "api=redis-py@1.0.0",
        ],
        "--assume",
    );
    // A recording without any client group (its CLIENT LIST samples left out).
    let bare = dir.join("bare.jsonl");
    let raw = zstd::decode_all(std::fs::File::open(&rec).unwrap()).unwrap();
    let mut out = std::fs::File::create(&bare).unwrap();
    for line in String::from_utf8(raw).unwrap().lines() {
        if !line.contains("\"client_list\"") {
            writeln!(out, "{line}").unwrap();
        }
    }
    drop(out);
    refused(
        &[bare.to_str().unwrap(), "--plan", "scale-out:+1"],
        "no client group",
    );
    // A recording that is not there.
    refused(
        &["/nonexistent.jsonl", "--plan", "scale-out:+1"],
        "nonexistent",
    );
}
