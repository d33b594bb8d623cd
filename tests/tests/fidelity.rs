//! Fidelity of `slotscope replay`'s client models, measured on the recorded incidents.
//!
//! `tests/fixtures/` holds recordings of the founding incidents reproduced with the real redis-py
//! 5.0.0 and 8.0.0, and beside each what the real client measured (`<name>.client.json`). Each
//! test here replays the matching model against the recording's topology with the real binary
//! (`slotscope replay FILE --model … --format json`, the workload matched to the scenario: its
//! command, its key count, the client's achieved command rate and its `address_remap`) and compares
//! one metric with the real client's, against the targets of the fidelity issue:
//!
//! - wedged (no startup node left, only `RedisClusterException` after the stall): identical;
//! - MOVED share per command (MOVED ÷ calls that reached a server): within 5 percentage points;
//! - full refreshes (`CLUSTER SLOTS` calls, failed ones included): within 20 %. Incident 1 compares
//!   the counts over the whole run (they are driven by the stall and the migration). Incident 2's
//!   services ran a shorter span than the recording, and their refreshes are driven by the
//!   command rate, so there the counts are compared per 1000 commands issued;
//! - new connections: within 20 % where the client recorded them (the fixtures with 8 tasks
//!   sharing the client, `incident1-c8-*`, count the connections the library opened).
//!
//! A comparison a model misses stays as an `#[ignore = "fidelity miss: …"]` test with the numbers;
//! `docs/FIDELITY.md` lists them. `fidelity_table` (ignored, run with `--ignored --nocapture`)
//! prints that document's tables.

use std::path::{Path, PathBuf};

use serde_json::Value;
use slotscope_tests::run_slotscope;

/// MOVED share target: percentage points.
const MOVED_SHARE_POINTS: f64 = 5.0;
/// Full refresh target: relative difference.
const REFRESH_REL: f64 = 0.20;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn client_json(fixture: &str) -> Value {
    let path = fixtures_dir().join(format!("{fixture}.client.json"));
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

/// One real client of one fixture and the model that stands for it.
#[derive(Clone, Copy)]
struct Case {
    /// Fixture name (without `.jsonl.zst`).
    fixture: &'static str,
    /// Key of the client's summary in the client JSON.
    role: &'static str,
    /// Replay model.
    model: &'static str,
    /// Distinct keys the scenario used.
    keys: u32,
    /// Whether the refresh counts are compared per 1000 commands issued.
    per_command: bool,
    /// Tasks sharing the client (`--concurrency` of the replay).
    concurrency: u32,
}

const I1_PY5_VALKEY: Case = incident_1("incident1-redis-py-5.0.0-valkey", "redis-py@5.0.0");
const I1_PY5_REDIS: Case = incident_1("incident1-redis-py-5.0.0-redis", "redis-py@5.0.0");
const I1_PY8_VALKEY: Case = incident_1("incident1-redis-py-8.0.0-valkey", "redis-py@8.0.0");
const I1_PY8_REDIS: Case = incident_1("incident1-redis-py-8.0.0-redis", "redis-py@8.0.0");
const I1C8_PY5_VALKEY: Case = Case {
    concurrency: 8,
    ..incident_1("incident1-c8-redis-py-5.0.0-valkey", "redis-py@5.0.0")
};
const I1C8_PY8_VALKEY: Case = Case {
    concurrency: 8,
    ..incident_1("incident1-c8-redis-py-8.0.0-valkey", "redis-py@8.0.0")
};
const I2_VALKEY_REC: Case = incident_2("incident2-valkey", "recommendation");
const I2_VALKEY_API: Case = incident_2("incident2-valkey", "api");
const I2_REDIS_REC: Case = incident_2("incident2-redis", "recommendation");
const I2_REDIS_API: Case = incident_2("incident2-redis", "api");

const ALL: [Case; 10] = [
    I1_PY5_VALKEY,
    I1_PY5_REDIS,
    I1_PY8_VALKEY,
    I1_PY8_REDIS,
    I1C8_PY5_VALKEY,
    I1C8_PY8_VALKEY,
    I2_VALKEY_REC,
    I2_VALKEY_API,
    I2_REDIS_REC,
    I2_REDIS_API,
];

/// Incident 1: `incident1.py` defaults, 4000 keys `device_imp:N`, ZADD only.
const fn incident_1(fixture: &'static str, model: &'static str) -> Case {
    Case {
        fixture,
        role: "incident1",
        model,
        keys: 4000,
        per_command: false,
        concurrency: 1,
    }
}

/// Incident 2: redis-py 8.0.0, 1000 keys `rank:N` (`INCIDENT_2_KEYS`).
const fn incident_2(fixture: &'static str, role: &'static str) -> Case {
    Case {
        fixture,
        role,
        model: "redis-py@8.0.0",
        keys: 1000,
        per_command: true,
        concurrency: 1,
    }
}

impl Case {
    fn client(&self) -> Value {
        client_json(self.fixture)[self.role].clone()
    }

    /// The commands the client issued, in the order of its summary.
    fn commands(&self) -> Vec<String> {
        self.client()["per_command"]
            .as_object()
            .expect("per_command")
            .keys()
            .cloned()
            .collect()
    }

    /// Commands per second the real client achieved over its run.
    fn rate(&self) -> u32 {
        let c = self.client();
        let ms = u(&c["ended_ms"]).saturating_sub(u(&c["started_ms"])).max(1);
        let rate = (u(&c["iterations"]) * 1000 + ms / 2) / ms;
        u32::try_from(rate).expect("rate")
    }

    /// The exact `slotscope replay` arguments.
    fn args(&self, command: &str) -> Vec<String> {
        let path = fixtures_dir().join(format!("{}.jsonl.zst", self.fixture));
        let mut args = vec![
            "replay".to_owned(),
            path.to_str().unwrap().to_owned(),
            "--model".to_owned(),
            self.model.to_owned(),
            "--rate".to_owned(),
            self.rate().to_string(),
            "--keys".to_owned(),
            self.keys.to_string(),
            "--command".to_owned(),
            command.to_owned(),
            "--format".to_owned(),
            "json".to_owned(),
        ];
        if self.concurrency > 1 {
            args.push("--concurrency".to_owned());
            args.push(self.concurrency.to_string());
        }
        if let Some(remap) = self.client()["remap_to"].as_str() {
            args.push("--set".to_owned());
            args.push(format!("address_remap={remap}"));
        }
        if self.role == "incident1" {
            // incident1.py's client: socket_timeout=0.5 (its --timeout default).
            args.push("--set".to_owned());
            args.push("socket_timeout=0.5".to_owned());
        }
        args
    }

    /// The replay of the model with the workload running `command` only.
    fn replay(&self, command: &str) -> Value {
        let args = self.args(command);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run_slotscope(&refs);
        assert!(
            o.status.success(),
            "slotscope {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).expect("replay --format json is JSON")
    }
}

/// What one comparison came to.
struct Row {
    metric: String,
    real: String,
    model: String,
    difference: String,
    target: &'static str,
    met: bool,
}

/// Whether the real client ended wedged: no startup node left, no success after its last
/// error, and only `RedisClusterException` raised.
fn real_wedged(c: &Value) -> bool {
    let startup_empty = c["startup_nodes"].as_array().is_some_and(Vec::is_empty);
    let errors_only_cluster_exception = c["errors"]
        .as_object()
        .is_some_and(|e| !e.is_empty() && e.keys().all(|k| k == "RedisClusterException"));
    startup_empty && c["first_ok_after_last_error_ms"].is_null() && errors_only_cluster_exception
}

/// `(MOVED, calls that reached a server)` of `cmd` on the real client's wire, all nodes.
fn real_moved(c: &Value, cmd: &str) -> (u64, u64) {
    let mut moved = 0;
    let mut calls = 0;
    for node in c["wire"].as_object().expect("wire").values() {
        let w = &node[cmd];
        moved += u(&w["MOVED"]);
        calls += u(&w["ok"]) + u(&w["MOVED"]) + u(&w["ASK"]);
    }
    (moved, calls)
}

/// `CLUSTER SLOTS` calls on the real client's wire, failed ones included.
fn real_cluster_slots(c: &Value) -> u64 {
    c["wire"]
        .as_object()
        .expect("wire")
        .values()
        .filter_map(|n| n["cluster slots"].as_object())
        .flat_map(|o| o.values())
        .map(u)
        .sum()
}

fn wedged_row(case: &Case, replay: &Value) -> Row {
    let c = case.client();
    let real = real_wedged(&c);
    let model = replay["wedged"].as_bool().expect("wedged");
    Row {
        metric: "wedged".into(),
        real: format!(
            "{} (startup_nodes {}, errors {})",
            yes(real),
            c["startup_nodes"],
            c["errors"]
        ),
        model: format!(
            "{} (startup_nodes {}, errors {})",
            yes(model),
            replay["startup_nodes"],
            replay["errors"]
        ),
        difference: if real == model { "none" } else { "differs" }.into(),
        target: "identical",
        met: real == model,
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn moved_row(case: &Case, cmd: &str, replay: &Value) -> Row {
    let (moved, calls) = real_moved(&case.client(), cmd);
    let real = if calls == 0 {
        0.0
    } else {
        moved as f64 / calls as f64
    };
    let st = &replay["per_command"][cmd];
    let model = f(&st["moved_share"]);
    let diff = (model - real) * 100.0;
    Row {
        metric: format!("MOVED share {cmd}"),
        real: format!("{:.2} % ({moved} / {calls})", real * 100.0),
        model: format!(
            "{:.2} % ({} / {})",
            model * 100.0,
            u(&st["moved"]),
            u(&st["calls"])
        ),
        difference: format!("{diff:+.2} points"),
        target: "within 5 points",
        met: diff.abs() <= MOVED_SHARE_POINTS,
    }
}

fn refresh_row(case: &Case, cmd: &str, replay: &Value) -> Row {
    let c = case.client();
    let real_calls = real_cluster_slots(&c);
    let model_calls = u(&replay["cluster_slots_calls"]);
    let (real, model, unit, real_txt, model_txt);
    if case.per_command {
        let real_issued = u(&c["iterations"]).max(1);
        let model_issued = u(&replay["commands"]).max(1);
        real = real_calls as f64 * 1000.0 / real_issued as f64;
        model = model_calls as f64 * 1000.0 / model_issued as f64;
        unit = " per 1000 commands";
        real_txt = format!("{real:.2} ({real_calls} / {real_issued} commands)");
        model_txt = format!("{model:.2} ({model_calls} / {model_issued} commands)");
    } else {
        real = real_calls as f64;
        model = model_calls as f64;
        unit = "";
        real_txt = format!("{real_calls}");
        model_txt = format!("{model_calls}");
    }
    let rel = if real == 0.0 && model == 0.0 {
        0.0
    } else {
        (model - real) / real.max(f64::MIN_POSITIVE)
    };
    let metric = if case.per_command {
        format!("full refreshes (CLUSTER SLOTS){unit}, workload {cmd}")
    } else {
        "full refreshes (CLUSTER SLOTS)".to_owned()
    };
    Row {
        metric,
        real: real_txt,
        model: model_txt,
        difference: format!("{:+.1} %", rel * 100.0),
        target: "within 20 %",
        met: rel.abs() <= REFRESH_REL,
    }
}

fn connections_row(case: &Case, replay: &Value) -> Row {
    let model = u(&replay["new_connections"]);
    let c = case.client();
    let Some(real) = c["connections_opened"].as_u64() else {
        return Row {
            metric: "new connections".into(),
            real: "not recorded by the client".into(),
            model: format!("{model}"),
            difference: "—".into(),
            target: "within 20 % where recorded",
            met: true,
        };
    };
    let rel = if real == 0 && model == 0 {
        0.0
    } else {
        (model as f64 - real as f64) / (real as f64).max(f64::MIN_POSITIVE)
    };
    Row {
        metric: "new connections".into(),
        real: format!("{real} (per node {})", c["connections"]),
        model: format!("{model}"),
        difference: format!("{:+.1} %", rel * 100.0),
        target: "within 20 %",
        met: rel.abs() <= REFRESH_REL,
    }
}

/// Every comparison of one case.
fn rows(case: &Case) -> Vec<Row> {
    let commands = case.commands();
    let mut out = Vec::new();
    for (i, cmd) in commands.iter().enumerate() {
        let replay = case.replay(cmd);
        if i == 0 {
            out.push(wedged_row(case, &replay));
        }
        out.push(moved_row(case, cmd, &replay));
        out.push(refresh_row(case, cmd, &replay));
        if i == 0 {
            out.push(connections_row(case, &replay));
        }
    }
    out
}

/// Asserts the comparison named `metric` (a prefix of the row's metric) of `case`.
fn check(case: Case, metric: &str) {
    let all = rows(&case);
    let mut matched = 0;
    for r in all.iter().filter(|r| r.metric.starts_with(metric)) {
        matched += 1;
        assert!(
            r.met,
            "{} {} ({}): real {}, model {}, difference {}, target {}",
            case.fixture, case.role, r.metric, r.real, r.model, r.difference, r.target
        );
    }
    assert!(matched > 0, "no comparison named {metric}");
}

// --- Incident 1, redis-py 5.0.0 (wedges) ---------------------------------------------------------

#[test]
fn incident_1_py5_valkey_wedged() {
    check(I1_PY5_VALKEY, "wedged");
}

#[test]
fn incident_1_py5_redis_wedged() {
    check(I1_PY5_REDIS, "wedged");
}

#[test]
fn incident_1_py5_valkey_moved_share() {
    check(I1_PY5_VALKEY, "MOVED share");
}

#[test]
fn incident_1_py5_redis_moved_share() {
    check(I1_PY5_REDIS, "MOVED share");
}

#[test]
fn incident_1_py5_valkey_refreshes() {
    check(I1_PY5_VALKEY, "full refreshes");
}

#[test]
fn incident_1_py5_redis_refreshes() {
    check(I1_PY5_REDIS, "full refreshes");
}

// --- Incident 1, redis-py 8.0.0 (recovers) -------------------------------------------------------

#[test]
fn incident_1_py8_valkey_wedged() {
    check(I1_PY8_VALKEY, "wedged");
}

#[test]
fn incident_1_py8_redis_wedged() {
    check(I1_PY8_REDIS, "wedged");
}

#[test]
fn incident_1_py8_valkey_moved_share() {
    check(I1_PY8_VALKEY, "MOVED share");
}

#[test]
fn incident_1_py8_redis_moved_share() {
    check(I1_PY8_REDIS, "MOVED share");
}

#[test]
fn incident_1_py8_valkey_refreshes() {
    check(I1_PY8_VALKEY, "full refreshes");
}

#[test]
fn incident_1_py8_redis_refreshes() {
    check(I1_PY8_REDIS, "full refreshes");
}

// --- Incident 1 with 8 tasks sharing the client, at 400 writes/s (Valkey) ------------------------

#[test]
fn incident_1_c8_py5_wedged() {
    check(I1C8_PY5_VALKEY, "wedged");
}

#[test]
fn incident_1_c8_py5_moved_share() {
    check(I1C8_PY5_VALKEY, "MOVED share");
}

#[test]
fn incident_1_c8_py5_refreshes() {
    check(I1C8_PY5_VALKEY, "full refreshes");
}

#[test]
fn incident_1_c8_py5_new_connections() {
    check(I1C8_PY5_VALKEY, "new connections");
}

#[test]
fn incident_1_c8_py8_wedged() {
    check(I1C8_PY8_VALKEY, "wedged");
}

#[test]
fn incident_1_c8_py8_moved_share() {
    check(I1C8_PY8_VALKEY, "MOVED share");
}

#[test]
#[ignore = "fidelity miss: real 31 CLUSTER SLOTS, model 21 (-32 %): 8 tasks in flight each meet the \
            same MOVED before the first patch lands (real 144 MOVED, model 81), and each 5th MOVED \
            is a full re-initialisation; the replay runs commands one after another"]
fn incident_1_c8_py8_refreshes() {
    check(I1C8_PY8_VALKEY, "full refreshes");
}

#[test]
fn incident_1_c8_py8_new_connections() {
    check(I1C8_PY8_VALKEY, "new connections");
}

// --- Incident 2, remapped recommendation service (MOVED storm) -----------------------------------

#[test]
fn incident_2_valkey_recommendation_wedged() {
    check(I2_VALKEY_REC, "wedged");
}

#[test]
fn incident_2_redis_recommendation_wedged() {
    check(I2_REDIS_REC, "wedged");
}

#[test]
fn incident_2_valkey_recommendation_moved_share() {
    check(I2_VALKEY_REC, "MOVED share");
}

#[test]
fn incident_2_redis_recommendation_moved_share() {
    check(I2_REDIS_REC, "MOVED share");
}

#[test]
fn incident_2_valkey_recommendation_refreshes() {
    check(I2_VALKEY_REC, "full refreshes");
}

#[test]
fn incident_2_redis_recommendation_refreshes() {
    check(I2_REDIS_REC, "full refreshes");
}

// --- Incident 2, healthy api service ------------------------------------------------------------

#[test]
fn incident_2_valkey_api_wedged() {
    check(I2_VALKEY_API, "wedged");
}

#[test]
fn incident_2_redis_api_wedged() {
    check(I2_REDIS_API, "wedged");
}

#[test]
fn incident_2_valkey_api_moved_share() {
    check(I2_VALKEY_API, "MOVED share");
}

#[test]
fn incident_2_redis_api_moved_share() {
    check(I2_REDIS_API, "MOVED share");
}

#[test]
fn incident_2_valkey_api_refreshes() {
    check(I2_VALKEY_API, "full refreshes");
}

#[test]
fn incident_2_redis_api_refreshes() {
    check(I2_REDIS_API, "full refreshes");
}

// --- The document -------------------------------------------------------------------------------

/// Prints the tables of `docs/FIDELITY.md`.
#[test]
#[ignore = "generator: prints the tables of docs/FIDELITY.md (--ignored --nocapture)"]
fn fidelity_table() {
    for case in ALL {
        let cmds = case.commands();
        println!("### `{}` — {} ({})\n", case.fixture, case.role, case.model);
        println!("Replay (once per command):\n");
        for cmd in &cmds {
            println!(
                "    slotscope {}",
                case.args(cmd)
                    .join(" ")
                    .replace(fixtures_dir().to_str().unwrap(), "tests/fixtures",)
            );
        }
        println!();
        println!("| metric | real client | model | difference | target | met |");
        println!("|---|---|---|---|---|---|");
        for r in rows(&case) {
            println!(
                "| {} | {} | {} | {} | {} | {} |",
                r.metric,
                r.real.replace('|', "\\|"),
                r.model.replace('|', "\\|"),
                r.difference,
                r.target,
                if r.met { "yes" } else { "**no**" }
            );
        }
        println!();
    }
}
