//! `slotscope replay` and `hypotheses` on what a user brings: a library release instead of a
//! model name, a recording that starts before the cluster's slots are assigned, a window of their
//! choice, and commands in flight instead of lanes.

#[allow(dead_code)]
mod common;

use std::path::{Path, PathBuf};

use common::{slotscope, temp_dir, text};
use serde_json::{json, Value};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/incident1-redis-py-5.0.0-valkey.jsonl.zst"
);

const INCIDENT2: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/incident2-valkey.jsonl.zst"
);

/// Start of the hand-made recordings.
const T0: u64 = 1_700_000_000_000;
const A: &str = "127.0.0.1:7000";

/// A topology line: node A's view, owning `slots`.
fn topology(t: u64, slots: Value) -> Value {
    let id = "a".repeat(40);
    json!({"type": "topology", "t": t, "node": {"addr": A, "id": id}, "view": {
        "source": "shards", "myself": id, "shards": [{"slots": slots, "nodes": [{
            "id": id, "addr": A, "role": "primary", "health": "online",
            "flags": ["myself", "master"], "config_epoch": 1, "link_connected": true}]}]}})
}

/// A 30 s recording of a one-node cluster: no slot assigned at first; from `assigned_at` ms (if
/// any) the node owns them all.
fn recording(dir: &Path, name: &str, assigned_at: Option<u64>) -> PathBuf {
    let mut lines = vec![
        json!({"type": "header", "schema": 1, "collector": "slotscope 0.1.0", "seed": A,
               "started": T0, "options": {"interval_ms": 500, "timeout_ms": 400, "tls": false,
               "auth": false, "client_list_every": 1}}),
        json!({"type": "node_discovered", "t": T0 + 5, "node": {"addr": A, "id": "a".repeat(40)},
               "via": {"kind": "seed"}}),
        topology(T0 + 10, json!([])),
    ];
    if let Some(at) = assigned_at {
        lines.push(topology(T0 + at, json!([[0, 16383]])));
    }
    lines.push(json!({"type": "end", "t": T0 + 30_000, "reason": "signal", "rounds": 60}));
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = dir.join(name);
    std::fs::write(&file, body).unwrap();
    file
}

fn json_of(args: &[&str]) -> Value {
    let o = slotscope(&[args, &["--format", "json"]].concat());
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn refused(args: &[&str]) -> String {
    let o = slotscope(args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    text(&o)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_library_release_runs_the_model_that_covers_it_and_says_so() {
    let asked = json_of(&["replay", FIXTURE, "--model", "redis-py@8.1.0"]);
    assert_eq!(asked["model"], "redis-py@8.0.0 (covers 7.2.0–8.x)");
    let named = json_of(&["replay", FIXTURE, "--model", "redis-py@8.0.0"]);
    assert_eq!(named["model"], "redis-py@8.0.0");
    // The same model ran: the same figures.
    for k in [
        "commands",
        "moved",
        "full_reinits",
        "wedged",
        "new_connections",
    ] {
        assert_eq!(asked[k], named[k], "{k}");
    }
    // In flight the release's own behaviour shows: 7.1.0 fetches a COMMAND table per command
    // issued while the first one loads and 7.0.1 does not, so its start piles up, though both
    // run the redis-py@5.0.0 model (built from the release asked, not from the model's name).
    let timed = |m: &str| {
        json_of(&[
            "replay",
            INCIDENT2,
            "--model",
            m,
            "--in-flight",
            "64",
            "--rate",
            "2000",
        ])
    };
    let (v71, v70) = (timed("redis-py@7.1.0"), timed("redis-py@7.0.1"));
    assert_eq!(v71["model"], v70["model"]);
    assert!(
        v71["skipped_while_waiting"].as_u64() > v70["skipped_while_waiting"].as_u64(),
        "{} {}",
        v71["skipped_while_waiting"],
        v70["skipped_while_waiting"]
    );
    let old = json_of(&["replay", FIXTURE, "--model", "redis-py@4.5.5"]);
    assert_eq!(old["model"], "redis-py@5.0.0 (covers 4.4.0–7.1.x)");
    assert_eq!(old["wedged"], true);
    let o = slotscope(&["replay", FIXTURE, "--model", "redis-py@7.2.0"]);
    assert!(
        text(&o).starts_with("model: redis-py@8.0.0 (covers 7.2.0–8.x)\n"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_release_no_model_covers_is_refused_with_every_range() {
    let out = refused(&["replay", FIXTURE, "--model", "redis-py@3.5.3"]);
    assert!(out.contains("no model covers redis-py 3.5.3"), "{out}");
    for range in [
        "4.4.0–7.1.x",
        "7.2.0–8.x",
        "9.8.0–9.14.x",
        "6.1.0–6.8.x",
        "5.1.0–6.x",
        "5.4.0–6.1.x",
        "6.3.0–6.4.0",
    ] {
        assert!(out.contains(range), "{out} lacks {range}");
    }
    let out = refused(&["replay", FIXTURE, "--model", "redis-py"]);
    assert!(out.contains("redis-py@VERSION"), "{out}");
    let help = text(&slotscope(&["replay", "--help"]));
    assert!(
        help.contains("redis-py@8.0.0 (covers redis-py 7.2.0–8.x)"),
        "{help}"
    );
    assert!(
        help.contains("--in-flight") && help.contains("--from"),
        "{help}"
    );
}

#[test]
fn a_recording_started_before_slot_assignment_replays_from_the_first_covered_moment() {
    let d = temp_dir("replay-unassigned");
    let file = recording(&d, "r.jsonl", Some(10_000));
    let f = file.to_str().unwrap();
    for model in ["redis-py@8.1.0", "redis-py@5.0.8", "ideal", "jedis@5.1.0"] {
        let r = json_of(&["replay", f, "--model", model]);
        let w = &r["window"];
        assert_eq!(u(&w["from_ms"]), T0 + 10_000, "{model}: {w}");
        assert_eq!(u(&w["to_ms"]), T0 + 30_000);
        assert_eq!(
            w["start_reason"],
            "first moment all 16384 slots are covered"
        );
        assert_eq!(r["wedged"], false, "{model}");
        assert_eq!(r["failed"], 0, "{model}");
        let rate = u(&r["workload"]["rate_per_sec"]);
        assert_eq!(
            u(&r["commands"]),
            rate * (u(&w["to_ms"]) - u(&w["from_ms"])) / 1000
        );
    }
    let text_out = text(&slotscope(&["replay", f, "--model", "ideal"]));
    assert!(
        text_out.contains("(+10.0s) to ") && text_out.contains("(start: first moment"),
        "{text_out}"
    );
}

#[test]
fn from_and_to_choose_the_window() {
    let d = temp_dir("replay-from-to");
    let file = recording(&d, "r.jsonl", Some(10_000));
    let f = file.to_str().unwrap();
    let at = (T0 + 12_000).to_string();
    let r = json_of(&[
        "replay", f, "--model", "ideal", "--from", &at, "--to", "+20s",
    ]);
    let w = &r["window"];
    assert_eq!(u(&w["from_ms"]), T0 + 12_000);
    assert_eq!(u(&w["to_ms"]), T0 + 20_000);
    assert_eq!(w["start_reason"], "--from");
    assert_eq!(w["end_reason"], "--to");
    assert_eq!(w["from"], "2023-11-14T22:13:32.000Z");
    let rate = u(&r["workload"]["rate_per_sec"]);
    assert_eq!(u(&r["commands"]), rate * 8);
    // RFC 3339 works the same; a window starting before the slots are covered is the user's
    // choice: the commands before 10 s fail.
    let r = json_of(&[
        "replay",
        f,
        "--model",
        "jedis@5.1.0",
        "--from",
        "2023-11-14T22:13:25Z",
    ]);
    assert_eq!(u(&r["window"]["from_ms"]), T0 + 5_000);
    assert_eq!(u(&r["failed"]), rate * 5);
    // Refused: outside the recording, --from not before --to.
    let out = refused(&["replay", f, "--model", "ideal", "--from", "+31s"]);
    assert!(
        out.contains("--from") && out.contains("outside the recording"),
        "{out}"
    );
    let out = refused(&["replay", f, "--model", "ideal", "--to", "+1h"]);
    assert!(out.contains("--to"), "{out}");
    let out = refused(&[
        "replay", f, "--model", "ideal", "--from", "+20s", "--to", "+10s",
    ]);
    assert!(out.contains("window is empty"), "{out}");
    let out = refused(&["replay", f, "--model", "ideal", "--from", "soon"]);
    assert!(out.contains("not a moment"), "{out}");
}

#[test]
fn a_recording_whose_slots_are_never_covered_needs_from() {
    let d = temp_dir("replay-never");
    let file = recording(&d, "r.jsonl", None);
    let f = file.to_str().unwrap();
    let out = refused(&["replay", f, "--model", "ideal"]);
    assert!(out.contains("never shows all 16384 slots covered"), "{out}");
    assert!(out.contains("--from"), "{out}");
    let r = json_of(&["replay", f, "--model", "jedis@5.1.0", "--from", "+0"]);
    assert_eq!(r["succeeded"], 0);
    let out = refused(&["hypotheses", f]);
    assert!(out.contains("never shows all 16384 slots covered"), "{out}");
}

#[test]
fn commands_in_flight_and_their_timing_are_reported() {
    let r = json_of(&[
        "replay",
        FIXTURE,
        "--model",
        "redis-py@8.0.0",
        "--in-flight",
        "64",
        "--rtt-ms",
        "1.5",
    ]);
    let w = &r["workload"];
    assert_eq!(
        w["shape"],
        json!({"kind": "in_flight", "max_in_flight": 64})
    );
    assert_eq!(w["timing"]["rtt_us"], 1500);
    // The fixture's INFO commandstats give zadd's service time.
    let zadd = &w["timing"]["service"][0];
    assert_eq!(zadd["command"], "zadd");
    assert_eq!(zadd["source"], "commandstats");
    assert!(u(&zadd["us"]) >= 1);
    let r = json_of(&[
        "replay",
        FIXTURE,
        "--model",
        "redis-py@8.0.0",
        "--in-flight",
        "8",
        "--service-us",
        "40",
    ]);
    let service = &r["workload"]["timing"]["service"][0];
    assert_eq!(
        (u(&service["us"]), &service["source"]),
        (40, &json!("option"))
    );
    let o = slotscope(&[
        "replay",
        FIXTURE,
        "--model",
        "ideal",
        "--in-flight",
        "4",
        "--rtt-ms",
        "2",
    ]);
    let out = text(&o);
    assert!(
        out.contains("tasks, at most 4 in flight") && out.contains("timing: round trip 2000 µs"),
        "{out}"
    );
    // Lanes stay the default, and the two shapes do not mix.
    let r = json_of(&["replay", FIXTURE, "--model", "ideal", "--concurrency", "8"]);
    assert_eq!(r["workload"]["shape"], json!({"kind": "lanes", "lanes": 8}));
    assert_eq!(r["concurrency"], 8);
    let out = refused(&[
        "replay",
        FIXTURE,
        "--model",
        "ideal",
        "--in-flight",
        "4",
        "--concurrency",
        "2",
    ]);
    assert!(out.contains("--in-flight and --concurrency"), "{out}");
    refused(&["replay", FIXTURE, "--model", "ideal", "--in-flight", "0"]);
    refused(&["replay", FIXTURE, "--model", "ideal", "--rtt-ms", "-1"]);
}

#[test]
fn hypotheses_replay_the_same_window() {
    let d = temp_dir("hypotheses-window");
    let file = recording(&d, "r.jsonl", Some(10_000));
    let f = file.to_str().unwrap();
    let h = json_of(&["hypotheses", f]);
    assert_eq!(u(&h["window"]["from_ms"]), T0 + 10_000);
    assert_eq!(u(&h["window"]["to_ms"]), T0 + 30_000);
    let h = json_of(&["hypotheses", f, "--from", "+15s", "--to", "+25s"]);
    assert_eq!(u(&h["window"]["from_ms"]), T0 + 15_000);
    assert_eq!(h["window"]["start_reason"], "--from");
    let o = slotscope(&["hypotheses", f]);
    assert!(text(&o).starts_with("window: "), "{}", text(&o));
    assert_eq!(h["shape"]["kind"], "lanes");
    let h = json_of(&[
        "hypotheses",
        FIXTURE,
        "--in-flight",
        "16",
        "--rtt-ms",
        "0.5",
    ]);
    assert_eq!(
        h["shape"],
        json!({"kind": "in_flight", "max_in_flight": 16})
    );
    assert_eq!(h["timing"]["rtt_us"], 500);
    assert_eq!(h["timing"]["service"][0]["source"], "commandstats");
    let out = refused(&["hypotheses", f, "--in-flight", "2", "--concurrency", "2"]);
    assert!(out.contains("--in-flight and --concurrency"), "{out}");
}
