//! `slotscope analyze` on recorded incidents, without a cluster.
//!
//! `tests/fixtures/` holds small recordings of the scenarios of `scenarios.rs` (real redis-py
//! clients against Redis 7.0.15 and Valkey 8.1.8, 500 ms polls) and, beside each, what the clients
//! themselves counted (`<name>.client.json`). Each test here analyses one fixture with the real
//! binary and
//!
//! - compares a reduced form of `analyze --format json` with its insta snapshot
//!   (`tests/tests/snapshots/`): finding kinds, severities, nodes (as `node0`, `node1`, … in order
//!   of discovery), attributions, numbers rounded to two significant digits, and spans in whole
//!   seconds from the start of the recording; per-shard rates and the census groups that ran
//!   business commands;
//! - checks the numbers that can be compared against the client's own counts.
//!
//! `scripts/regenerate-fixtures` re-records the files and rewrites the snapshots.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use slotscope_tests::run_slotscope;

/// Largest fixture kept in the repository.
const MAX_FIXTURE_BYTES: u64 = 400 * 1024;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn fixture(name: &str) -> PathBuf {
    fixtures_dir().join(format!("{name}.jsonl.zst"))
}

fn analyze(name: &str) -> Value {
    let path = fixture(name);
    assert!(
        path.is_file(),
        "missing fixture {}: run scripts/regenerate-fixtures",
        path.display()
    );
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(
        size <= MAX_FIXTURE_BYTES,
        "{} is {size} bytes; keep fixtures under {MAX_FIXTURE_BYTES}",
        path.display()
    );
    let o = run_slotscope(&["analyze", path.to_str().unwrap(), "--format", "json"]);
    assert!(
        o.status.success(),
        "analyze {name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("analyze --format json is JSON")
}

fn clients(name: &str) -> Value {
    let path = fixtures_dir().join(format!("{name}.client.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}: run scripts/regenerate-fixtures", path.display()));
    serde_json::from_str(&text).expect("client summary is JSON")
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// `v` rounded to `sig` significant digits (integers below 10^sig stay as they are).
fn round_sig(v: f64, sig: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    // Truncation is what is wanted: the decimal exponent of |v|.
    #[allow(clippy::cast_possible_truncation)]
    let magnitude = v.abs().log10().floor() as i32;
    let k = sig - 1 - magnitude;
    if k >= 0 {
        let p = 10f64.powi(k);
        (v * p).round() / p
    } else {
        let p = 10f64.powi(-k);
        (v / p).round() * p
    }
}

/// Counts (whole numbers) as they are, anything else to two significant digits.
fn rounded(v: &Value) -> Value {
    match v.as_f64() {
        Some(x) if x.fract() == 0.0 && x.abs() < 1e9 => v.clone(),
        Some(x) => json!(round_sig(x, 2)),
        None => Value::Null,
    }
}

/// Addresses and node ids as `node<i>`, in the order the recording discovered them.
struct Names {
    by_addr: BTreeMap<String, String>,
    by_id: BTreeMap<String, String>,
}

impl Names {
    fn of(a: &Value) -> Names {
        let mut by_addr = BTreeMap::new();
        let mut by_id = BTreeMap::new();
        for (i, n) in a["summary"]["nodes"].as_array().unwrap().iter().enumerate() {
            let name = format!("node{i}");
            by_addr.insert(n["addr"].as_str().unwrap().to_owned(), name.clone());
            if let Some(id) = n["id"].as_str() {
                by_id.insert(id.to_owned(), name);
            }
        }
        Names { by_addr, by_id }
    }

    fn addr(&self, v: &Value) -> Value {
        v.as_str().map_or(Value::Null, |a| {
            json!(self.by_addr.get(a).map_or(a, String::as_str))
        })
    }

    fn id(&self, v: &Value) -> Value {
        v.as_str().map_or(Value::Null, |a| {
            json!(self.by_id.get(a).map_or(a, String::as_str))
        })
    }
}

fn rates(r: &Value) -> Value {
    json!({
        "calls": rounded(&r["calls"]),
        "rejected": rounded(&r["rejected"]),
        "moved": rounded(&r["moved"]),
        "new_connections": rounded(&r["new_connections"]),
    })
}

/// The parts of an analysis worth a snapshot.
fn reduced(a: &Value) -> Value {
    let names = Names::of(a);
    let start = u(&a["summary"]["span"]["start"]);
    let secs = |t: &Value| json!((u(t).saturating_sub(start) + 500) / 1000);
    let findings: Vec<Value> = a["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let numbers: Map<String, Value> = x["numbers"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), rounded(v)))
                .collect();
            let mut out = json!({
                "kind": x["kind"],
                "severity": x["severity"],
                "from_secs": secs(&x["span"]["start"]),
                "to_secs": secs(&x["span"]["end"]),
                "numbers": numbers,
            });
            if let Some(n) = x.get("node") {
                out["node"] = names.addr(n);
            }
            if let Some(at) = x.get("attribution") {
                out["attribution"] = at.clone();
            }
            out
        })
        .collect();
    let slot_moves: Vec<Value> = a["summary"]["slot_moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            json!({
                "from": names.id(&m["from"]),
                "to": names.id(&m["to"]),
                "slots": m["slots"],
                "from_secs": secs(&m["span"]["start"]),
                "to_secs": secs(&m["span"]["end"]),
            })
        })
        .collect();
    let traffic: Vec<Value> = a["shard_traffic"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            json!({
                "node": names.addr(&t["addr"]),
                "slots": t["slots"],
                "before": rates(&t["before"]),
                "after": rates(&t["after"]),
            })
        })
        .collect();
    let census: Vec<Value> = a["census"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| {
            let business: Vec<&String> = g["commands"]
                .as_object()
                .unwrap()
                .keys()
                .filter(|c| is_business(c))
                .collect();
            (!business.is_empty()).then(|| json!({"key": g["key"], "business_commands": business}))
        })
        .collect();
    let story: Vec<Value> = a["story"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            json!({
                "at_secs": secs(&s["at"]),
                "kind": s["finding_kind"].as_str().unwrap_or(s["kind"].as_str().unwrap_or("?")),
                "role": s["role"],
                "confidence": s["confidence"],
            })
        })
        .collect();
    json!({
        "nodes": a["summary"]["nodes"].as_array().unwrap().len(),
        "story": story,
        "slot_moves": slot_moves,
        "findings": findings,
        "shard_traffic": traffic,
        "census_groups_with_business_commands": census,
    })
}

/// The commands the client scripts send on purpose (everything else is handshake or topology).
fn is_business(cmd: &str) -> bool {
    [
        "zadd",
        "zrevrange",
        "zrangebyscore",
        "zrevrangebyscore",
        "hgetall",
    ]
    .contains(&cmd)
}

fn findings(a: &Value) -> &[Value] {
    a["findings"].as_array().map_or(&[], Vec::as_slice)
}

fn num(x: &Value, name: &str) -> f64 {
    x["numbers"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("{} has no number {name}", x["kind"]))
}

fn assert_close(what: &str, found: f64, expected: f64, rel: f64) {
    let scale = found.abs().max(expected.abs()).max(f64::MIN_POSITIVE);
    assert!(
        (found - expected).abs() <= rel * scale,
        "{what}: analyze says {found:.4}, the client says {expected:.4}"
    );
}

fn traffic(a: &Value, i: usize) -> &Value {
    let addr = &a["summary"]["nodes"][i]["addr"];
    a["shard_traffic"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| &t["addr"] == addr)
        .unwrap()
}

/// Incident 1 with redis-py 5.0.0: the wedged client stops when the node stalls, before the
/// scale-out; the analysis leads with it, at the rate it wrote and the moment it stopped.
fn wedged_client_agrees(name: &str) {
    let a = analyze(name);
    let c = &clients(name)["incident1"];
    let first = &findings(&a)[0];
    assert_eq!(first["severity"], "critical");
    assert_eq!(first["kind"], "client_group_lost", "the root cause leads");
    // The root cause is the group's stop (when its library's defect is known) or the node's
    // stall that set it off; either way the stop is the first finding the story rests on.
    let steps = a["story"]["steps"].as_array().unwrap();
    let cause = steps
        .iter()
        .position(|s| s["root_cause"] == true)
        .expect("a root cause");
    let rests_on = steps[cause..]
        .iter()
        .find_map(|s| s["finding"].as_u64())
        .expect("a finding at or after the root cause");
    assert_eq!(rests_on, 0, "{:#}", a["story"]);
    // It fell from the rate the client wrote at, between its last success and its first error,
    // to within one poll (500 ms).
    slotscope_tests::wedge::assert_stop_matches(first, c, 500);
    insta::assert_json_snapshot!(name.replace(['.', '-'], "_"), reduced(&a));
}

/// Incident 1 with redis-py 8.0.0: after the scale-out both shards get the client's writes.
fn recovered_client_agrees(name: &str) {
    let a = analyze(name);
    let c = &clients(name)["incident1"];
    // The node's stall paused the client's writes (traffic lost while it lasted: critical), and
    // it recovered: nothing is lost for good and no shard is left idle.
    for x in findings(&a).iter().filter(|x| x["severity"] == "critical") {
        assert_eq!(x["kind"], "client_group_paused", "{x:#}");
    }
    assert!(findings(&a)
        .iter()
        .all(|x| x["kind"] != "client_group_lost" && x["kind"] != "idle_shard"));
    let start = a["summary"]["slot_moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| u(&m["span"]["end"]))
        .max()
        .unwrap();
    let end = u(&a["summary"]["span"]["end"]);
    let ok: u64 = c["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| (start..end).contains(&u(&b[0])))
        .map(|b| u(&b[1]))
        .sum();
    let client_rate = ok as f64 * 1000.0 / (end - start) as f64;
    let after = f(&traffic(&a, 0)["after"]["calls"]) + f(&traffic(&a, 1)["after"]["calls"]);
    assert_close("commands/s after the change", after, client_rate, 0.05);
    insta::assert_json_snapshot!(name.replace(['.', '-'], "_"), reduced(&a));
}

/// Incident 2: the storm's per-command MOVED share is the remapped client's MOVED / calls sent.
fn storm_agrees(name: &str) {
    let a = analyze(name);
    let c = &clients(name)["recommendation"];
    let storm = &findings(&a)[0];
    assert_eq!(storm["kind"], "redirect_storm");
    for cmd in ["zrevrange", "zrangebyscore"] {
        assert_close(
            &format!("moved share of {cmd}"),
            num(storm, &format!("moved_share:{cmd}")),
            f(&c["commands"][cmd]["moved_share_of_calls"]),
            0.05,
        );
    }
    // Each of the storm's buckets holds the counters of the poll intervals that end in it: the
    // MOVED of the half second (one 500 ms poll) before.
    let (from, to) = (u(&storm["span"]["start"]), u(&storm["span"]["end"]));
    let counted = (from - 500)..(to - 500);
    let moved: u64 = c["moved_timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| counted.contains(&u(&b[0])))
        .map(|b| u(&b[1]))
        .sum();
    assert_close(
        "MOVED/s",
        num(storm, "moved_per_sec"),
        moved as f64 * 1000.0 / (to - from) as f64,
        0.05,
    );
    insta::assert_json_snapshot!(name.replace(['.', '-'], "_"), reduced(&a));
}

#[test]
fn incident_1_redis_py_5_0_0_on_valkey() {
    wedged_client_agrees("incident1-redis-py-5.0.0-valkey");
}

#[test]
fn incident_1_redis_py_5_0_0_on_redis() {
    wedged_client_agrees("incident1-redis-py-5.0.0-redis");
}

#[test]
fn incident_1_redis_py_8_0_0_on_valkey() {
    recovered_client_agrees("incident1-redis-py-8.0.0-valkey");
}

#[test]
fn incident_1_redis_py_8_0_0_on_redis() {
    recovered_client_agrees("incident1-redis-py-8.0.0-redis");
}

#[test]
fn incident_2_on_valkey() {
    storm_agrees("incident2-valkey");
}

#[test]
fn incident_2_on_redis() {
    storm_agrees("incident2-redis");
}

#[test]
fn rounding_keeps_two_significant_digits() {
    assert_eq!(round_sig(41.7, 2), 42.0);
    assert_eq!(round_sig(0.384, 2), 0.38);
    assert_eq!(round_sig(8192.0, 2), 8200.0);
    assert_eq!(round_sig(0.0, 2), 0.0);
    assert_eq!(round_sig(-1.26, 2), -1.3);
}

/// Compares the text `analyze` prints for fixture `name`, from the story up to `until` (or the
/// end), with its snapshot.
fn report_snapshot(name: &str, until: &str) {
    let path = fixture(name);
    let o = run_slotscope(&["analyze", path.to_str().unwrap()]);
    assert!(o.status.success(), "{name}");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let from = text.find("WHAT HAPPENED").expect("the story");
    let to = text.find(until).unwrap_or(text.len());
    insta::assert_snapshot!(
        format!("text_{}", name.replace(['.', '-'], "_")),
        &text[from..to]
    );
}

/// The text `analyze` prints for each real recording: the story, then every finding's title,
/// explanation and labelled figures (together the founding incidents give every kind but the
/// short-lived clients and slot coverage, whose texts the core's unit tests hold). A change of
/// wording shows here as a snapshot diff.
#[test]
fn the_report_text_of_each_recording() {
    for name in [
        "incident1-redis-py-5.0.0-valkey",
        "incident1-redis-py-5.0.0-redis",
        "incident1-redis-py-8.0.0-valkey",
        "incident2-valkey",
    ] {
        // From the story to the end of the findings: the timeline, traffic and census tables
        // have tests of their own.
        report_snapshot(name, "\nTIMELINE");
    }
}

/// Failovers on clusters with replicas, as the story check recorded them (`scripts/story
/// --keep`, 2026-12-04: a redis-py application, and in three of them a healthy companion): an
/// automatic failover after the master of a third of the slots was killed, and a manual
/// `CLUSTER FAILOVER` (`TAKEOVER` on Redis 7.0), on Valkey 8.1 and Redis 7.0 (case seeds
/// 10130563014774313942, 5312003445669337548, 12630122564221972895, 14728680456811929374), each
/// with a migration of a few hundred slots as well. The story names the promotion, automatic or
/// manual, once, and tells the migration as a move; a dead master's last view does not make the
/// nodes disagree at the end; the promotion's evidence gives each group's cost and how the
/// replica took over: the views' `fail?` and `fail` flags and the election's votes after a kill,
/// and which `CLUSTER FAILOVER` it was by hand (the coordinated one's `MFSTART`, `TAKEOVER`'s
/// missing election).
#[test]
fn a_failover_is_told_as_a_promotion() {
    for (name, mode) in [
        ("failover-redis-py-5.0.0-valkey", None),
        ("failover-redis-py-8.1.0-redis", None),
        (
            "manual-failover-redis-py-5.0.0-valkey",
            Some("(a manual failover: CLUSTER FAILOVER)"),
        ),
        (
            "manual-failover-redis-py-8.1.0-redis",
            Some("(a manual failover: CLUSTER FAILOVER TAKEOVER)"),
        ),
    ] {
        let a = analyze(name);
        let steps = a["story"]["steps"].as_array().expect("story steps");
        let kind = |k: &str| -> Vec<&Value> { steps.iter().filter(|s| s["kind"] == k).collect() };
        let promotions = kind("promotion");
        assert_eq!(promotions.len(), 1, "{name}: {promotions:?}");
        let text = promotions[0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("5461 slots"), "{name}: {text}");
        let evidence: Vec<&str> = promotions[0]["evidence"]
            .as_array()
            .map(|e| e.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let has = |what: &str| evidence.iter().any(|e| e.contains(what));
        if let Some(mode) = mode {
            assert!(text.contains(mode), "{name}: {text}");
            assert!(!has("flagged `fail"), "{name}: {evidence:#?}");
            // The old master answers throughout and comes back as the new one's replica.
            assert!(
                promotions[0]["evidence"].as_array().is_some_and(|e| e
                    .iter()
                    .any(|e| e.as_str().is_some_and(|e| e.contains("is listed as")))),
                "{name}: {promotions:?}"
            );
        } else {
            assert!(
                text.contains("stopped answering (a failover)"),
                "{name}: {text}"
            );
            assert_eq!(kind("node_stopped").len(), 1, "{name}");
            for what in ["flagged `fail?`", "flagged `fail`", "ran for election"] {
                assert!(has(what), "{name}: {what}: {evidence:#?}");
            }
        }
        // What it cost each group that used the old master: when its commands reached the new
        // one, about how many went unserved, and the refreshes and connections meanwhile.
        assert!(
            evidence.iter().any(|e| e.contains("matrix-app")
                && e.contains("reached")
                && e.contains("went unserved")),
            "{name}: {evidence:#?}"
        );
        assert!(
            evidence.iter().any(|e| e.starts_with("meanwhile")),
            "{name}: {evidence:#?}"
        );
        // The migration stays a move; the promotion is not one.
        let moves = kind("slots_moved");
        assert_eq!(moves.len(), 1, "{name}: {moves:?}");
        assert!(
            !moves[0]["text"]
                .as_str()
                .unwrap_or_default()
                .contains("5461"),
            "{name}: {moves:?}"
        );
        assert!(
            findings(&a).iter().all(|f| f["kind"] != "slot_coverage"),
            "{name}: the nodes agree at the end"
        );
    }
}

/// The story of each failover fixture, as `analyze` prints it (see the test above).
#[test]
fn the_report_text_of_each_failover() {
    for name in [
        "failover-redis-py-5.0.0-valkey",
        "manual-failover-redis-py-8.1.0-redis",
    ] {
        report_snapshot(name, "\nFINDINGS");
    }
}
