//! `slotscope record --metrics-listen` against a real 3-master Redis 7.0.15 cluster on 127.0.0.1:
//! a client that sends a random share of its GETs to a node that does not own their keys (MOVED)
//! shows as that node's `slotscope_moved_share{cmd="get"}` at that share; connections opened and
//! closed on a second node show as its new connections per second, `CLUSTER SLOTS` sent to the
//! third as its topology refreshes per second (each within half to twice the rate sent), and the
//! masters that serve no GET as idle shards. A real Prometheus 2.42 (Debian's package, installed
//! by scripts/setup) scraping `/metrics` with the shipped alert rules fires `SlotscopeMovedStorm`
//! for that node and command and `SlotscopeConnectionChurn` for the churned node. On Valkey 8.1,
//! clients that say `CLIENT SETINFO` redis-py 5.0.0 count as one group with a known defect, and
//! on a scale-out whose new master gets nothing `SlotscopeIdleShard` fires for it and
//! `SlotscopeKnownDefectClient` for the defective group.

use std::fs::File;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use slotscope_core::Slot;
use slotscope_tests::port::free_port;
use slotscope_tests::started::Started;
use slotscope_tests::{
    run_slotscope, Client, Cluster, ClusterOptions, Load, LoadOptions, Recorder, ServerKind,
};
use tempfile::TempDir;

/// Commands per batch the client sends to one node; `wrong` of them are for another node's key.
const BATCH: u64 = 20;

/// `GET path` on 127.0.0.1:`port` with HTTP/1.0: status, head, body.
fn http_get(port: u16, path: &str) -> Option<(u16, String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, head.to_owned(), body.to_owned()))
}

/// The value of the sample `name{labels}` (labels exactly as written) in an OpenMetrics text.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Waits (at most `limit`) until `check` holds.
fn wait_until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        sleep(Duration::from_millis(250));
    }
}

fn has(name: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A key whose slot the node `i` owns, and one whose slot another node owns.
fn keys(cluster: &Cluster, i: usize) -> (String, String) {
    let owner = |k: &str| cluster.owner_seen_by(i, Slot::for_key(k.as_bytes()));
    let right = (0..)
        .map(|n| format!("k{n}"))
        .find(|k| owner(k) == Some(i))
        .unwrap();
    let wrong = (0..)
        .map(|n| format!("k{n}"))
        .find(|k| owner(k).is_some_and(|o| o != i))
        .unwrap();
    (right, wrong)
}

/// `slotscope record --interval 500ms --duration DURATION --metrics-listen 127.0.0.1:PORT` of
/// `cluster` into `dir`: the recorder, the port and the listen address.
fn record_listening(cluster: &Cluster, dir: &Path, duration: &str) -> (Recorder, u16, String) {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let recorder = Recorder::start(
        &dir.join("r.jsonl"),
        &[
            "--seed",
            &cluster.seed().to_string(),
            "--interval",
            "500ms",
            "--duration",
            duration,
            "--metrics-listen",
            &listen,
            "--quiet",
        ],
        &[],
    );
    (recorder, port, listen)
}

/// A Prometheus 2.42 on 127.0.0.1 scraping `target` every second with the shipped rules (their
/// `for:` shortened to 5 s so a test does not wait minutes; the expressions are the shipped
/// ones), its files under `dir`: its port, and the process (ended, by PID, when dropped).
fn prometheus_with_rules(dir: &Path, target: &str) -> (u16, Started) {
    let rules = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/prometheus/slotscope.rules.yml"),
    )
    .expect("the shipped rules");
    let rules = rules
        .replace("for: 1m", "for: 5s")
        .replace("for: 2m", "for: 5s");
    std::fs::write(dir.join("rules.yml"), rules).unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global: {{scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}}\n\
             rule_files: ['{}']\n\
             scrape_configs:\n  - job_name: slotscope\n    static_configs:\n      - targets: ['{target}']\n",
            dir.join("rules.yml").display()
        ),
    )
    .unwrap();
    let prom_port = free_port();
    let log = File::create(dir.join("prometheus.log")).unwrap();
    let mut started = Started(Vec::new());
    started.0.push(
        Command::new("nice")
            .args([
                "-n",
                "19",
                "prometheus",
                &format!("--config.file={}", config.display()),
                &format!("--storage.tsdb.path={}", dir.join("data").display()),
                &format!("--web.listen-address=127.0.0.1:{prom_port}"),
            ])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start prometheus"),
    );
    (prom_port, started)
}

/// Waits (at most `limit`) until Prometheus on `prom_port` has alert `name` firing with labels
/// `matches` accepts; prints how long it took and returns every alert then.
fn wait_alert(
    prom_port: u16,
    name: &str,
    limit: Duration,
    matches: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let start = Instant::now();
    let mut alerts = Vec::new();
    wait_until(&format!("{name} firing in Prometheus"), limit, || {
        let Some((200, _, body)) = http_get(prom_port, "/api/v1/alerts") else {
            return false;
        };
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        alerts = v["data"]["alerts"].as_array().cloned().unwrap_or_default();
        alerts
            .iter()
            .any(|a| a["labels"]["alertname"] == name && a["state"] == "firing" && matches(a))
    });
    println!("{name} firing after {:.1} s", start.elapsed().as_secs_f64());
    alerts
}

#[test]
fn signals_are_served_and_a_real_prometheus_fires_the_alerts() {
    let cluster = Cluster::start(ServerKind::Redis, 3, ClusterOptions::default());
    let dir = TempDir::new().expect("a temporary directory");
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("seed {seed}");
    // Between 10 % and 50 % of the batch to the wrong node.
    let wrong_per_batch = 2 + (seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % 9;
    let expected = wrong_per_batch as f64 / BATCH as f64;
    let node = 1;
    let addr = cluster.addr(node).to_string();
    let (right, wrong) = keys(&cluster, node);

    // A non-loopback address is refused before anything is recorded.
    let refused = run_slotscope(&[
        "record",
        "--seed",
        &cluster.seed().to_string(),
        "--out",
        dir.path().join("refused.jsonl").to_str().unwrap(),
        "--metrics-listen",
        "0.0.0.0:9187",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("loopback"));
    assert!(!dir.path().join("refused.jsonl").exists());

    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let load = {
        let (stop, sent) = (stop.clone(), sent.clone());
        let mut client = cluster.client(node);
        std::thread::spawn(move || {
            let batch: Vec<[&str; 2]> = (0..BATCH)
                .map(|k| {
                    // Spread the wrong ones through the batch.
                    if k * wrong_per_batch % BATCH < wrong_per_batch {
                        ["GET", wrong.as_str()]
                    } else {
                        ["GET", right.as_str()]
                    }
                })
                .collect();
            assert_eq!(
                batch.iter().filter(|c| c[1] == wrong).count() as u64,
                wrong_per_batch
            );
            while !stop.load(Ordering::Relaxed) {
                let replies = client.pipeline(&batch).expect("GETs");
                let moved = replies
                    .iter()
                    .filter(|v| v.to_string().contains("MOVED"))
                    .count() as u64;
                assert_eq!(moved, wrong_per_batch, "{replies:?}");
                sent.fetch_add(BATCH, Ordering::Relaxed);
                sleep(Duration::from_millis(5));
            }
        })
    };

    // Churn on another node (a connection opened, pinged and closed every 25 ms) and topology
    // refreshes on the third (CLUSTER SLOTS every 50 ms): neither is a business command.
    let churn_node = (node + 1) % 3;
    let refresh_node = (node + 2) % 3;
    let paced = |period: Duration, mut op: Box<dyn FnMut() + Send>| {
        let (stop, done) = (stop.clone(), Arc::new(AtomicU64::new(0)));
        let count = done.clone();
        let started = Instant::now();
        let handle = std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                op();
                count.fetch_add(1, Ordering::Relaxed);
                sleep(period);
            }
        });
        (handle, move || {
            done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
        })
    };
    let churn_addr = cluster.addr(churn_node);
    let (churn, churn_rate) = paced(
        Duration::from_millis(25),
        Box::new(move || {
            let mut c = Client::connect(&churn_addr).expect("connect");
            c.cmd_ok(&["PING"]).expect("PING");
        }),
    );
    let mut refresher = cluster.client(refresh_node);
    let (refresh, refresh_rate) = paced(
        Duration::from_millis(50),
        Box::new(move || {
            refresher
                .cmd_ok(&["CLUSTER", "SLOTS"])
                .expect("CLUSTER SLOTS");
        }),
    );

    let (recorder, port, listen) = record_listening(&cluster, dir.path(), "120s");
    let series = format!("slotscope_moved_share{{node=\"{addr}\",cmd=\"get\"}}");
    let mut last = String::new();
    wait_until(
        "the MOVED share on /metrics",
        Duration::from_secs(30),
        || {
            let Some((200, head, body)) = http_get(port, "/metrics") else {
                return false;
            };
            assert!(head.to_ascii_lowercase().contains(
                "content-type: application/openmetrics-text; version=1.0.0; charset=utf-8"
            ));
            assert!(body.ends_with("# EOF\n"));
            last = body;
            // The other masters own slots and receive nothing while the node serves: idle after
            // IDLE_INTERVALS intervals.
            let idle = (0..3).filter(|&i| i != node).all(|i| {
                let s = format!("slotscope_idle_shard{{node=\"{}\"}}", cluster.addr(i));
                sample(&last, &s) == Some(1.0)
            });
            idle && sample(&last, &series).is_some()
                && sample(&last, "slotscope_poll_rounds_total").is_some_and(|r| r >= 3.0)
        },
    );
    let share = sample(&last, &series).unwrap();
    println!(
        "sent {} GETs, {wrong_per_batch} of {BATCH} to the wrong node: expected share {expected:.3}, served {share:.3}",
        sent.load(Ordering::Relaxed)
    );
    assert!(
        (share - expected).abs() < 0.03,
        "share {share} against {expected}:\n{last}"
    );
    // The nodes that received nothing wrong show no MOVED share for GET.
    for i in (0..3).filter(|&i| i != node) {
        let other = format!(
            "slotscope_moved_share{{node=\"{}\",cmd=\"get\"}}",
            cluster.addr(i)
        );
        assert!(sample(&last, &other).is_none_or(|s| s == 0.0), "{last}");
    }
    let (rounds, overruns) = (
        sample(&last, "slotscope_poll_rounds_total").unwrap(),
        sample(&last, "slotscope_round_overruns_total").unwrap(),
    );
    assert!(overruns <= rounds / 10.0, "{last}");
    let served = |name: &str, i: usize| {
        let s = format!("{name}{{node=\"{}\"}}", cluster.addr(i));
        sample(&last, &s).unwrap_or_else(|| panic!("no {s}:\n{last}"))
    };
    let (churned, refreshed) = (churn_rate(), refresh_rate());
    let new_conns = served("slotscope_new_connections_per_second", churn_node);
    let refreshes = served("slotscope_topology_refreshes_per_second", refresh_node);
    println!(
        "new connections/s: opened {churned:.1}, served {new_conns:.1}; topology refreshes/s: sent {refreshed:.1}, served {refreshes:.1}"
    );
    // One interval (500 ms) against the threads' average rate: within half to twice.
    assert!(
        new_conns > churned / 2.0 && new_conns < churned * 2.0,
        "{last}"
    );
    assert!(
        refreshes > refreshed / 2.0 && refreshes < refreshed * 2.0,
        "{last}"
    );
    // Nobody else refreshes: the collector's own CLUSTER SLOTS/SHARDS/NODES are taken out.
    assert_eq!(
        served("slotscope_topology_refreshes_per_second", node),
        0.0,
        "{last}"
    );
    assert!(sample(
        &last,
        &format!("slotscope_connected_clients{{node=\"{addr}\"}}")
    )
    .is_some_and(|c| c >= 2.0));
    assert_eq!(
        sample(&last, &format!("slotscope_idle_shard{{node=\"{addr}\"}}")),
        Some(0.0),
        "the serving node is not idle:\n{last}"
    );
    assert_eq!(http_get(port, "/other").map(|r| r.0), Some(404));

    // A real Prometheus scraping /metrics every second, with the shipped rules (their `for:`
    // shortened to 5 s so the test does not wait minutes; the expressions are the shipped ones).
    if has("prometheus") {
        let (prom_port, _started) = prometheus_with_rules(dir.path(), &listen);
        wait_alert(
            prom_port,
            "SlotscopeMovedStorm",
            Duration::from_secs(60),
            |a| a["labels"]["node"] == addr.as_str() && a["labels"]["cmd"] == "get",
        );
        let churn_label = cluster.addr(churn_node).to_string();
        let alerts = wait_alert(
            prom_port,
            "SlotscopeConnectionChurn",
            Duration::from_secs(30),
            |a| a["labels"]["node"] == churn_label.as_str(),
        );
        // Only the storm's node and command, and nothing about the collector's health.
        for a in &alerts {
            let name = a["labels"]["alertname"].as_str().unwrap_or("");
            assert!(
                !name.starts_with("SlotscopeCollector") && name != "SlotscopeNotPolling",
                "{a}"
            );
            if name == "SlotscopeMovedStorm" {
                assert_eq!(a["labels"]["node"], addr.as_str(), "{a}");
            }
        }
    } else {
        println!(
            "SKIPPED the Prometheus part: prometheus is not installed (scripts/setup installs it)"
        );
    }

    stop.store(true, Ordering::Relaxed);
    load.join().expect("the client thread");
    churn.join().expect("the churn thread");
    refresh.join().expect("the refresh thread");
    recorder.terminate();
    let out = recorder.wait(Duration::from_secs(10));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Valkey 8.1 (Redis 7.0 has no `CLIENT SETINFO`): connections that say they are redis-py 5.0.0
/// (a version with a known defect) count as one group with a known defect; redis-py 8.0.0 does
/// not count.
#[test]
fn client_groups_on_a_defective_version_are_counted() {
    let cluster = Cluster::start(ServerKind::Valkey, 3, ClusterOptions::default());
    let dir = TempDir::new().expect("a temporary directory");
    let mut clients = Vec::new();
    for (i, ver) in [(0, "5.0.0"), (1, "5.0.0"), (2, "8.0.0")] {
        let mut c = cluster.client(i);
        c.cmd_ok(&["CLIENT", "SETNAME", "api"]).unwrap();
        c.cmd_ok(&["CLIENT", "SETINFO", "LIB-NAME", "redis-py"])
            .unwrap();
        c.cmd_ok(&["CLIENT", "SETINFO", "LIB-VER", ver]).unwrap();
        clients.push(c);
    }
    let (recorder, port, _) = record_listening(&cluster, dir.path(), "60s");
    let defective =
        "slotscope_client_groups_with_known_defect{library=\"redis-py\",version=\"5.0.0\"}";
    let mut last = String::new();
    wait_until(
        "the defective group on /metrics",
        Duration::from_secs(30),
        || {
            let Some((200, _, body)) = http_get(port, "/metrics") else {
                return false;
            };
            last = body;
            sample(&last, "slotscope_poll_rounds_total").is_some_and(|r| r >= 2.0)
        },
    );
    assert_eq!(sample(&last, defective), Some(1.0), "{last}");
    assert!(!last.contains("version=\"8.0.0\""), "{last}");
    // The version fixed: no group with a known defect any more.
    for c in &mut clients {
        c.cmd_ok(&["CLIENT", "SETINFO", "LIB-VER", "8.0.0"])
            .unwrap();
    }
    wait_until("no defective group", Duration::from_secs(30), || {
        http_get(port, "/metrics").is_some_and(|(_, _, body)| {
            !body.contains("slotscope_client_groups_with_known_defect{")
        })
    });
    recorder.terminate();
    let out = recorder.wait(Duration::from_secs(10));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A scale-out on Valkey 8.1 with `record --metrics-listen` and a real Prometheus with the
/// shipped rules: a fourth master gets half of master 2's slots while the clients keep writing
/// only the slots that did not move (so the new master gets nothing while the others serve), and
/// a connection says it is redis-py 5.0.0: `SlotscopeIdleShard` fires for the new master and for
/// no other, and `SlotscopeKnownDefectClient` fires for redis-py 5.0.0.
#[test]
fn a_real_prometheus_fires_idle_shard_and_known_defect_on_a_scale_out() {
    if !has("prometheus") {
        println!("SKIPPED: prometheus is not installed (scripts/setup installs it)");
        return;
    }
    let mut cluster = Cluster::start(ServerKind::Valkey, 3, ClusterOptions::default());
    let new = cluster.add_master();
    let dir = TempDir::new().expect("a temporary directory");
    let mut defective = cluster.client(0);
    defective
        .cmd_ok(&["CLIENT", "SETINFO", "LIB-NAME", "redis-py"])
        .unwrap();
    defective
        .cmd_ok(&["CLIENT", "SETINFO", "LIB-VER", "5.0.0"])
        .unwrap();
    let (recorder, _, listen) = record_listening(&cluster, dir.path(), "120s");
    let (prom_port, _started) = prometheus_with_rules(dir.path(), &listen);
    // Master 2 owns 10923–16383; 10923–13653 move to the new master. The load writes the rest.
    let range = |a: u16, b: u16| {
        slotscope_core::SlotRange::new(Slot::new(a).unwrap(), Slot::new(b).unwrap()).unwrap()
    };
    let loads: Vec<Load> = [range(0, 10922), range(13654, 16383)]
        .into_iter()
        .map(|slots| {
            Load::start(
                &cluster,
                LoadOptions {
                    max_ops: 30_000,
                    max_duration: Duration::from_secs(90),
                    slots: Some(slots),
                    interval: Duration::from_millis(5),
                    ..LoadOptions::default()
                },
            )
        })
        .collect();
    cluster.migrate_slots(range(10923, 13653), 2, new);
    cluster.wait_converged();
    let new_addr = cluster.addr(new).to_string();
    let alerts = wait_alert(
        prom_port,
        "SlotscopeIdleShard",
        Duration::from_secs(60),
        |a| a["labels"]["node"] == new_addr.as_str(),
    );
    for a in &alerts {
        if a["labels"]["alertname"] == "SlotscopeIdleShard" {
            assert_eq!(
                a["labels"]["node"],
                new_addr.as_str(),
                "only the new master: {a}"
            );
        }
    }
    wait_alert(
        prom_port,
        "SlotscopeKnownDefectClient",
        Duration::from_secs(30),
        |a| a["labels"]["library"] == "redis-py" && a["labels"]["version"] == "5.0.0",
    );
    for l in loads {
        let r = l.stop();
        assert!(
            r.ok > 100,
            "the load wrote: {} ok, {} errors",
            r.ok,
            r.errors
        );
    }
    drop(defective);
    recorder.terminate();
    let out = recorder.wait(Duration::from_secs(10));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
