//! A client shorter than a poll: redis-py 5.0.0 with `address_remap` sending every node to one
//! address gets MOVED for every key the remap node does not own (MOVED, re-initialise, …); here
//! it stops after 100 ms, most often gone before a poll can list it. When a poll did catch it
//! (a connection listed running `zadd`), the census has it and nothing needs inferring: the test
//! says so and checks that instead. `slotscope record` polls at 500 ms; the analysis must infer the
//! client from the counters (a `short_lived_clients` finding with its command), starting within
//! one poll of when the client started. Run on Redis 7.0 and Valkey 8.1, with a random seed
//! (printed; `SHORT_LIVED_SEED` repeats one).

use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use slotscope_core::analysis::Analyzer;
use slotscope_core::finding::{Attribution, FindingKind};
use slotscope_tests::cluster::{Cluster, ClusterOptions};
use slotscope_tests::collector::{Recorder, Recording};
use slotscope_tests::kind::ServerKind;
use slotscope_tests::python::venv_python;
use tempfile::TempDir;

/// The client: redis-py's `RedisCluster` with every address remapped to the startup node, running
/// `ZADD` at the given rate for 100 ms (it usually gives up sooner), then closing. Prints
/// one JSON line: when it started, its first error, counts.
const CLIENT: &str = r#"
import json, random, sys, time
import redis
from redis.cluster import RedisCluster
host, port, rate, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(seed)
now = lambda: int(time.time() * 1000)
started = now()
out = {"started_ms": started, "ok": 0, "errors": {}, "first_error_ms": None}
try:
    c = RedisCluster(host=host, port=port, address_remap=lambda a: (host, port),
                     socket_timeout=0.5, socket_connect_timeout=0.5)
    n = 0
    while now() - started < 100 or n < 3:
        n += 1
        try:
            c.zadd("key:%d" % rnd.randrange(1000), {"m": 1})
            out["ok"] += 1
        except Exception as e:
            n = type(e).__name__
            out["errors"][n] = out["errors"].get(n, 0) + 1
            out["first_error_ms"] = out["first_error_ms"] or now()
        time.sleep(1.0 / rate)
    c.close()
except Exception as e:
    n = type(e).__name__
    out["errors"][n] = out["errors"].get(n, 0) + 1
    out["first_error_ms"] = out["first_error_ms"] or now()
out["ended_ms"] = now()
print(json.dumps(out))
"#;

/// The poll interval, milliseconds.
const POLL_MS: u64 = 500;

fn seed() -> u64 {
    std::env::var("SHORT_LIVED_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| u64::from(d.subsec_nanos()) ^ d.as_secs())
        })
}

fn run(kind: ServerKind) {
    let seed = seed();
    println!("{kind}: seed {seed} (SHORT_LIVED_SEED={seed} repeats it)");
    // Drawn from the seed: the command rate and when, within a poll, the client starts.
    let rate = 100 + seed % 301;
    let offset_ms = (seed / 151) % POLL_MS;
    let cluster = Cluster::start(kind, 3, ClusterOptions::default());
    let dir = TempDir::new().expect("a temporary directory");
    let path = dir.path().join("short-lived.jsonl.zst");
    let seed_node = cluster.addr(1).to_string();
    let recorder = Recorder::start(
        &path,
        &["--seed", &seed_node, "--interval", "500ms", "--quiet"],
        &[],
    );
    sleep(Duration::from_millis(1500 + offset_ms));
    let remap = cluster.addr(0).to_string();
    let (host, port) = remap.rsplit_once(':').expect("host:port");
    let out = Command::new(venv_python("5.0.0"))
        .arg("-c")
        .arg(CLIENT)
        .args([host, port, &rate.to_string(), &seed.to_string()])
        .output()
        .expect("run the short-lived client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("client report");
    println!("{kind}: client {report}");
    let started_ms = report["started_ms"].as_u64().expect("started_ms");
    let first_error_ms = report["first_error_ms"].as_u64();
    sleep(Duration::from_millis(2000));
    recorder.terminate();
    let _ = recorder.wait(Duration::from_secs(10));

    let rec = Recording::read(&path);
    let mut a = Analyzer::new(rec.header.clone());
    for l in rec.lines {
        a.push_owned(l);
    }
    let analysis = a.finish();
    for g in &analysis.census.groups {
        println!(
            "{kind}: census {} seen {}",
            g.key.label(),
            g.connections_seen
        );
    }
    for g in &analysis.census.inferred {
        println!(
            "{kind}: inferred {} {:?} .. {:?} commands {:?} errors {:?} library {:?}: {}",
            g.label(),
            g.span.start,
            g.span.end,
            g.commands,
            g.errors,
            g.likely_library,
            g.reason
        );
    }
    let listed = analysis
        .census
        .groups
        .iter()
        .any(|g| g.key.name.as_deref() == Some("short-lived"));
    let caught = analysis
        .census
        .groups
        .iter()
        .any(|g| g.commands.contains_key("zadd"));
    if caught {
        println!("{kind} seed {seed}: a poll listed the client running zadd; nothing to infer");
        assert!(
            analysis
                .census
                .inferred
                .iter()
                .all(|g| !g.commands.contains_key("zadd")),
            "a listed client's command is not inferred: {:#?}",
            analysis.census.inferred
        );
        return;
    }
    let inferred = analysis
        .census
        .inferred
        .iter()
        .find(|g| g.commands.contains_key("zadd"))
        .unwrap_or_else(|| {
            panic!(
                "{kind} seed {seed}: no inferred group ran zadd (client listed by CLIENT LIST: {listed}): {:#?}",
                analysis.census
            )
        });
    let start = inferred.span.start.as_millis();
    let real = first_error_ms.unwrap_or(started_ms);
    let diff = start.abs_diff(real);
    println!("{kind}: inferred start {start}, client's first error {real}: {diff} ms apart");
    assert!(
        diff <= POLL_MS,
        "{kind} seed {seed}: inferred start {start} vs client's first error {real} ({diff} ms apart)"
    );
    let f = analysis
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::ShortLivedClients)
        .expect("a short_lived_clients finding");
    println!("{kind}: {:?} {}", f.severity, f.title);
    assert!(
        matches!(&f.attribution, Some(Attribution::Group { commands, .. }) if commands.iter().any(|c| c == "zadd")),
        "{:?}",
        f.attribution
    );
    assert!(f.title.contains("zadd"), "{}", f.title);
}

#[test]
fn a_remapped_client_shorter_than_a_poll_is_inferred_on_redis() {
    run(ServerKind::Redis);
}

#[test]
fn a_remapped_client_shorter_than_a_poll_is_inferred_on_valkey() {
    run(ServerKind::Valkey);
}
