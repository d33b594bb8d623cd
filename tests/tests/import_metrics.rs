//! `slotscope import-metrics --prometheus` against the real metric stack: a 3-master Redis
//! 7.0.15 cluster on 127.0.0.1, one `prometheus-redis-exporter` 1.45 per node (with its client
//! list: `--export-client-list --export-client-port`), and a Prometheus
//! 2.42 scraping them every second (Debian's packages, installed by scripts/setup), while a real
//! redis-py application remapped to one node (incident 2) runs. The recording made from
//! Prometheus alone must show the redirect storm at the servers' own MOVED share, and churn only
//! when the application churned.

use std::fs::File;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::Value;
use slotscope_core::info::InfoReport;
use slotscope_core::{Slot, SlotRange};
use slotscope_tests::matrix::app::{App, AppSettings};
use slotscope_tests::matrix::library::Library;
use slotscope_tests::matrix::live::now_ms;
use slotscope_tests::port::free_port;
use slotscope_tests::python::REDIS_PY_8_0_0;
use slotscope_tests::started::Started;
use slotscope_tests::{run_slotscope, Cluster, ClusterOptions, Load, LoadOptions, ServerKind};
use tempfile::TempDir;

/// Seconds the application schedules commands: a storm counts as sustained from 30 s.
const APP_SECONDS: u32 = 36;

fn tool(name: &str) -> String {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(found, "{name} is not installed: run scripts/setup (Debian packages prometheus, prometheus-redis-exporter)");
    name.to_owned()
}

fn spawn(cmd: &mut Command, log: &Path) -> Child {
    let log = File::create(log).expect("a log file");
    cmd.stdin(Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"))
}

/// `GET path` on 127.0.0.1:`port` with HTTP/1.0 (the server closes after the body): status, body.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_owned()))
}

/// Waits (at most `limit`) until `check` holds.
fn wait_until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        sleep(Duration::from_millis(250));
    }
}

fn commandstats(cluster: &Cluster, i: usize) -> InfoReport {
    let text = cluster
        .client(i)
        .cmd_text(&["INFO", "commandstats"])
        .expect("INFO commandstats");
    InfoReport::parse(&text).expect("INFO parses")
}

/// One `prometheus-redis-exporter` per node of `cluster` and a Prometheus scraping them every
/// second, all on 127.0.0.1 with their files under `dir`; returns Prometheus's port once every
/// exporter is scraped, and the processes (ended, by PID, when dropped). With `web`, Prometheus
/// serves its API as that web config says (TLS, basic auth), and the caller waits for it.
fn metric_stack(cluster: &Cluster, dir: &Path, web: Option<&Path>) -> (u16, Started) {
    let prometheus = tool("prometheus");
    let exporter = tool("prometheus-redis-exporter");
    let mut started = Started(Vec::new());
    let mut targets = String::new();
    for i in 0..cluster.len() {
        let port = free_port();
        let addr = cluster.addr(i).to_string();
        started.0.push(spawn(
            Command::new(&exporter).args([
                "--redis.addr",
                &format!("redis://{addr}"),
                "--web.listen-address",
                &format!("127.0.0.1:{port}"),
                "--export-client-list",
                "--export-client-port",
            ]),
            &dir.join(format!("exporter-{i}.log")),
        ));
        targets.push_str(&format!(
            "      - targets: ['127.0.0.1:{port}']\n        labels: {{addr: '{addr}'}}\n"
        ));
    }
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global: {{scrape_interval: 1s, scrape_timeout: 900ms}}\nscrape_configs:\n  - job_name: redis\n    static_configs:\n{targets}"
        ),
    )
    .expect("write the config");
    let prom_port = free_port();
    let mut cmd = Command::new(&prometheus);
    cmd.args([
        &format!("--config.file={}", config.display()),
        &format!("--storage.tsdb.path={}", dir.join("data").display()),
        &format!("--web.listen-address=127.0.0.1:{prom_port}"),
    ]);
    if let Some(web) = web {
        cmd.arg(format!("--web.config.file={}", web.display()));
    }
    started.0.push(spawn(&mut cmd, &dir.join("prometheus.log")));
    if web.is_some() {
        return (prom_port, started);
    }
    // Every exporter scraped: one series of redis_connected_clients each.
    wait_until(
        "Prometheus scraping every exporter",
        Duration::from_secs(60),
        || {
            http_get(prom_port, "/api/v1/query?query=redis_connected_clients")
                .and_then(|(_, b)| serde_json::from_str::<Value>(&b).ok())
                .and_then(|v| v["data"]["result"].as_array().map(Vec::len))
                == Some(cluster.len())
        },
    );
    (prom_port, started)
}

/// The arguments of `slotscope import-metrics --prometheus URL` of `from`..`to` at 1 s into
/// `out`.
fn import_args(url: &str, from: u64, to: u64, out: &Path) -> Vec<String> {
    [
        "import-metrics",
        "--prometheus",
        url,
        "--from",
        &from.to_string(),
        "--to",
        &to.to_string(),
        "--step",
        "1s",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// `slotscope import-metrics --prometheus` of `from`..`to` at 1 s into `out`, then `analyze` of
/// it as JSON.
fn import_and_analyze(prom_port: u16, from: u64, to: u64, out: &Path) -> Value {
    let args = import_args(&format!("http://127.0.0.1:{prom_port}"), from, to, out);
    let o = run_slotscope(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "import-metrics failed: {stderr}");
    println!("{}{stderr}", String::from_utf8_lossy(&o.stdout));
    let a = run_slotscope(&["analyze", "--format", "json", out.to_str().unwrap()]);
    assert!(
        a.status.success(),
        "analyze failed: {}",
        String::from_utf8_lossy(&a.stderr)
    );
    serde_json::from_slice(&a.stdout).expect("analyze prints JSON")
}

#[test]
fn prometheus_alone_finds_the_remapped_storm_at_the_servers_share() {
    let cluster = Cluster::start(ServerKind::Redis, 3, ClusterOptions::default());
    let dir = TempDir::new().expect("a temporary directory");
    let (prom_port, _started) = metric_stack(&cluster, dir.path(), None);
    let from = now_ms();
    sleep(Duration::from_secs(2));
    let seed = now_ms();
    println!("seed {seed}");
    let settings = AppSettings {
        startup: cluster.addr(0).to_string(),
        rate: 200 + u32::try_from(seed % 200).unwrap(),
        in_flight: 4,
        duration_s: APP_SECONDS,
        keys: 1000,
        key_prefix: None,
        command: "zadd".to_owned(),
        address_remap: Some(cluster.addr(0).to_string()),
        socket_timeout_s: 0.5,
        connect_timeout_s: 0.5,
        client_name: "metrics-app".to_owned(),
        seed,
    };
    let report = App::start(Library::RedisPy(REDIS_PY_8_0_0), &settings)
        .finish()
        .expect("the application reports");
    println!(
        "app: issued {} succeeded {} failed {} new connections {}",
        report.issued, report.succeeded, report.failed, report.new_connections
    );
    // Two more scrapes after the last command.
    sleep(Duration::from_secs(3));
    let to = now_ms();
    // The servers' own share of ZADD answered MOVED.
    let (mut calls, mut rejected) = (0u64, 0u64);
    for i in 0..3 {
        if let Some(c) = commandstats(&cluster, i).commandstats.get("zadd") {
            calls += c.calls;
            rejected += c.rejected_calls.unwrap_or(0);
        }
    }
    let real_share = rejected as f64 / (calls + rejected).max(1) as f64;
    println!(
        "servers: zadd calls {calls}, rejected {rejected}, share {:.1} %",
        real_share * 100.0
    );
    assert!(rejected > 0, "the remapped application met MOVED");

    let out = dir.path().join("imported.jsonl");
    let v = import_and_analyze(prom_port, from, to, &out);
    let findings = v["findings"].as_array().expect("findings");
    let kinds: Vec<&str> = findings.iter().filter_map(|f| f["kind"].as_str()).collect();
    println!("findings: {kinds:?}");
    let storm = findings
        .iter()
        .find(|f| f["kind"] == "redirect_storm")
        .unwrap_or_else(|| panic!("no redirect_storm among {kinds:?}"));
    let share = storm["numbers"]["moved_share:zadd"]
        .as_f64()
        .unwrap_or_else(|| panic!("no MOVED share of zadd: {}", storm["numbers"]));
    println!(
        "imported MOVED share of zadd {:.1} %, servers' {:.1} %",
        share * 100.0,
        real_share * 100.0
    );
    assert!(
        (share - real_share).abs() <= 0.05,
        "imported share {share:.3} vs the servers' {real_share:.3}"
    );
    assert_eq!(
        storm["node"],
        cluster.addr(0).to_string(),
        "the remap target"
    );
    // Churn: reported when the application opened connections again and again, not when it kept
    // its first ones (one or two per node).
    let churned = kinds.contains(&"connection_churn");
    let per_sec = report.new_connections as f64 / f64::from(APP_SECONDS);
    if per_sec >= 4.0 {
        assert!(
            churned,
            "{per_sec:.1} new connections/s and no churn finding"
        );
    } else if report.new_connections <= 12 {
        assert!(
            !churned,
            "{} new connections in all, yet churn",
            report.new_connections
        );
    }
    // What metrics cannot tell is said.
    let limits = v["story"]["limits"].to_string();
    assert!(limits.contains("Imported from metrics"), "{limits}");
    assert!(limits.contains("no topology"), "{limits}");
    assert!(limits.contains("exporter's client list"), "{limits}");
    // The exporters' client lists (--export-client-list) give the census its groups: the
    // application by its name, and the storm attributed to it.
    let groups = v["census"]["groups"].as_array().expect("census groups");
    let names: Vec<&str> = groups
        .iter()
        .filter_map(|g| g["key"]["name"].as_str())
        .collect();
    println!("census groups by name: {names:?}");
    assert!(names.contains(&"metrics-app"), "{names:?}");
    assert_eq!(
        storm["attribution"]["group"], "\"metrics-app\"",
        "{}",
        storm["attribution"]
    );
}

fn slots(first: u16, last: u16) -> SlotRange {
    SlotRange::new(Slot::new(first).unwrap(), Slot::new(last).unwrap()).unwrap()
}

/// What the clients do around the scale-out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clients {
    /// They write every slot and follow the move (the new node gets its share).
    FollowTheMove,
    /// They write only slots of master 0 (the new node gets nothing while the others serve).
    StaleMap,
    /// They stop before the move, as incident 1's wedged client did (the cluster goes silent).
    Wedged,
}

/// A scale-out seen through the metric stack alone: a fourth, empty master joins, 6,000 keys are
/// written over the whole keyspace, then half of master 2's slots move to the new master while
/// the clients do as `clients` says. The recording imported from Prometheus has no topology: the
/// idle shard is found, or not, from the keys the new node gained.
fn scale_out_through_prometheus(clients: Clients) {
    let mut cluster = Cluster::start(ServerKind::Redis, 3, ClusterOptions::default());
    let new = cluster.add_master();
    let dir = TempDir::new().expect("a temporary directory");
    let (prom_port, _started) = metric_stack(&cluster, dir.path(), None);
    let mut router = cluster.router();
    for n in 0..6000 {
        let key = format!("scale:{n}");
        router.cmd_key(key.as_bytes(), &["SET", &key, "v"]).unwrap();
    }
    sleep(Duration::from_secs(2));
    let from = now_ms();
    let load = Load::start(
        &cluster,
        LoadOptions {
            prefix: "load:".to_owned(),
            max_ops: 20_000,
            max_duration: Duration::from_secs(40),
            slots: (clients == Clients::StaleMap).then(|| slots(0, 5000)),
            interval: Duration::from_millis(5),
            ..LoadOptions::default()
        },
    );
    sleep(Duration::from_secs(5));
    let mut load = Some(load);
    let stop = |load: &mut Option<Load>| {
        if let Some(l) = load.take() {
            let r = l.stop();
            println!(
                "load: {} written, {} MOVED, {} errors",
                r.ok, r.moved, r.errors
            );
            assert!(r.ok > 100, "the load wrote");
        }
    };
    if clients == Clients::Wedged {
        stop(&mut load);
        sleep(Duration::from_secs(3));
    }
    // Master 2 owns 10923–16383: half of its slots move to the new master.
    let moved = slots(10923, 13653);
    cluster.migrate_slots(moved, 2, new);
    cluster.wait_converged();
    sleep(Duration::from_secs(10));
    stop(&mut load);
    sleep(Duration::from_secs(3));
    let to = now_ms();
    let out = dir.path().join("imported.jsonl");
    let v = import_and_analyze(prom_port, from, to, &out);
    let findings = v["findings"].as_array().expect("findings");
    let idle: Vec<&Value> = findings
        .iter()
        .filter(|f| f["kind"] == "idle_shard")
        .collect();
    println!(
        "idle shards: {}",
        serde_json::to_string_pretty(&idle).unwrap()
    );
    let new_addr = cluster.addr(new).to_string();
    if clients == Clients::FollowTheMove {
        assert!(
            idle.iter().all(|f| f["node"] != new_addr.as_str()),
            "the new master got its share, yet: {idle:?}"
        );
    } else {
        let f = idle
            .iter()
            .find(|f| f["node"] == new_addr.as_str())
            .unwrap_or_else(|| panic!("no idle shard on the new master {new_addr}: {findings:?}"));
        assert_eq!(f["severity"], "critical");
        assert!(f["numbers"]["keys"].as_f64().unwrap() > 100.0, "{f}");
        assert!(
            f["numbers"]["commands_per_sec"].as_f64().unwrap() < 1.0,
            "{f}"
        );
        // Wedged clients leave the whole cluster silent: measured against the rate before.
        let silent = f["title"]
            .as_str()
            .unwrap()
            .ends_with("before its keys came");
        assert_eq!(silent, clients == Clients::Wedged, "{}", f["title"]);
    }
}

#[test]
fn prometheus_alone_finds_a_new_shard_left_idle_by_its_keys() {
    scale_out_through_prometheus(Clients::StaleMap);
}

#[test]
fn prometheus_alone_finds_the_new_shard_of_incident_1_after_the_clients_wedged() {
    scale_out_through_prometheus(Clients::Wedged);
}

#[test]
fn prometheus_alone_finds_no_idle_shard_when_clients_follow_the_move() {
    scale_out_through_prometheus(Clients::FollowTheMove);
}

/// Prometheus serving its API over TLS with basic auth (its `--web.config.file`): the import
/// logs in with `--prometheus-user` and the password from the environment, trusting the test CA
/// (`--prometheus-cacert`); a wrong password, no password, plain http and an unknown CA are each
/// refused with status 2 and no file, and the password shows in no message.
#[test]
fn an_https_prometheus_with_basic_auth() {
    const PASSWORD: &str = "s3cr3t-Pa55";
    let cluster = Cluster::start(ServerKind::Redis, 3, ClusterOptions::default());
    let dir = TempDir::new().expect("a temporary directory");
    let pki = slotscope_tests::pki::Pki::new();
    let hash = bcrypt::hash(PASSWORD, 4).expect("bcrypt");
    let web = dir.path().join("web.yml");
    std::fs::write(
        &web,
        format!(
            "tls_server_config:\n  cert_file: {}\n  key_file: {}\nbasic_auth_users:\n  slotscope: '{hash}'\n",
            pki.cert.display(),
            pki.key.display()
        ),
    )
    .unwrap();
    let (prom_port, _started) = metric_stack(&cluster, dir.path(), Some(&web));
    let from = now_ms();
    let url = format!("https://127.0.0.1:{prom_port}");
    let out = dir.path().join("imported.jsonl");
    let import = |url: &str, extra: &[&str], password: Option<&str>, to: u64| {
        let mut args = import_args(url, from, to, &out);
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let mut cmd = Command::new(slotscope_tests::collector::slotscope_bin());
        cmd.args(&args)
            .env_remove("SLOTSCOPE_PROMETHEUS_PASSWORD")
            .stdin(Stdio::null());
        if let Some(p) = password {
            cmd.env("SLOTSCOPE_PROMETHEUS_PASSWORD", p);
        }
        cmd.output().expect("run slotscope")
    };
    let ca = pki.ca.to_str().unwrap().to_owned();
    let login = [
        "--prometheus-user",
        "slotscope",
        "--prometheus-cacert",
        ca.as_str(),
    ];
    // Prometheus takes a moment to scrape every exporter: bounded retries of the real import
    // until it has all three nodes.
    let started = Instant::now();
    let to = loop {
        sleep(Duration::from_millis(500));
        let to = now_ms();
        let o = import(&url, &login, Some(PASSWORD), to);
        if o.status.success() && String::from_utf8_lossy(&o.stdout).contains("3 nodes") {
            break to;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "import over https never had the three nodes: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    };
    assert!(out.exists());
    std::fs::remove_file(&out).unwrap();
    let plain = format!("http://127.0.0.1:{prom_port}");
    for (what, url, extra, password, expect) in [
        (
            "plain http",
            plain.as_str(),
            &login[..],
            Some(PASSWORD),
            "HTTPS",
        ),
        (
            "a wrong password",
            url.as_str(),
            &login[..],
            Some("wrong"),
            "refused the credentials",
        ),
        (
            "no password",
            url.as_str(),
            &login[..],
            None,
            "SLOTSCOPE_PROMETHEUS_PASSWORD",
        ),
        (
            "no login",
            url.as_str(),
            &login[2..],
            None,
            "refused the credentials",
        ),
        (
            "an unknown CA",
            url.as_str(),
            &login[..2],
            Some(PASSWORD),
            "TLS",
        ),
    ] {
        let o = import(url, extra, password, to);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(expect), "{what}: {err}");
        assert!(
            !err.contains(PASSWORD) && !err.contains("wrong"),
            "{what}: {err}"
        );
        assert!(!out.exists(), "{what}: a file was written");
        assert!(!dir.path().join("imported.jsonl.tmp").exists(), "{what}");
    }
    // Credentials in the URL are refused without being echoed.
    let o = import(
        &format!("https://slotscope:{PASSWORD}@127.0.0.1:{prom_port}"),
        &[],
        None,
        to,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
}

/// Bad input exits with status 2 and leaves neither FILE nor FILE.tmp: an `"status":"error"` body
/// (the real one of Prometheus 2.42), a refused connection, and a page cut short by a server that
/// announces more bytes than it sends.
#[test]
fn bad_input_writes_nothing_and_exits_2() {
    let dir = TempDir::new().expect("a temporary directory");
    let out = dir.path().join("f.jsonl");
    let out_s = out.to_str().unwrap();
    let fixtures = slotscope_tests::kind::workspace_root().join("tests/fixtures/metrics");
    let error_body = fixtures.join("prometheus-2.42-error.json");
    let check = |args: &[&str], says: &str| {
        let o = run_slotscope(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!out.exists() && !dir.path().join("f.jsonl.tmp").exists());
    };
    check(
        &[
            "import-metrics",
            "--prometheus-json",
            error_body.to_str().unwrap(),
            "--out",
            out_s,
        ],
        "bad_data",
    );
    // A port nobody listens on: bound and dropped.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{closed}");
    let window = [
        "--from",
        "2025-03-14T05:10:00Z",
        "--to",
        "2025-03-14T05:11:00Z",
    ];
    let mut args = vec!["import-metrics", "--prometheus", &url];
    args.extend(window);
    args.extend(["--out", out_s]);
    check(&args, "refused");
    // A server that sends half of the body it announces.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        if let Ok((mut s, _)) = listener.accept() {
            s.set_read_timeout(Some(Duration::from_secs(5))).ok();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let body = r#"{"status":"success","data":{"resultType":"matrix","result":["#;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len() * 2
            );
        }
    });
    let url = format!("http://127.0.0.1:{port}");
    let mut args = vec!["import-metrics", "--prometheus", &url];
    args.extend(window);
    args.extend(["--out", out_s]);
    check(&args, "partial page");
    server.join().unwrap();
}
