//! `slotscope tap` against real clusters on 127.0.0.1 (Redis 7.0.15 and Valkey 8.1.8): raw RESP
//! clients (pipelining, pub/sub, `HELLO 3`, redirections and topology replies rewritten), the real
//! redis-py 8.0.0 and 5.0.0 cluster clients (RESP2 and RESP3) whose own per-node counts must equal
//! the recording's, `redis-benchmark --cluster` with pipelining, and a live reshard while a client
//! runs through the tap.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use slotscope_core::recording::{ConnEvent, EndReason, Line, ReplyClass, TapCommand};
use slotscope_core::redirect::Redirect;
use slotscope_core::resp::{self, Value};
use slotscope_core::tap::TapSummary;
use slotscope_core::{NodeAddr, Slot, SlotRange};
use slotscope_tests::fixture;
use slotscope_tests::port::free_port;
use slotscope_tests::python::{self, PyClient, REDIS_PY_5_0_0, REDIS_PY_8_0_0};
use slotscope_tests::{
    run_slotscope, slotscope_bin, Cluster, ClusterOptions, Load, LoadOptions, Recording, Router,
    ServerKind,
};
use tempfile::TempDir;

/// Real-client tests compare counts on a 2-core machine: one at a time.
fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running `slotscope tap`.
struct Tap {
    child: Option<Child>,
    listen: NodeAddr,
    out: PathBuf,
}

impl Tap {
    /// Starts `slotscope tap --upstream UPSTREAM --listen 127.0.0.1:<free> --node-ports any
    /// --out OUT EXTRA…` and waits (at most 10 s) until it accepts connections.
    fn start(upstream: &NodeAddr, out: &Path, extra: &[&str]) -> Tap {
        let port = free_port();
        let listen = NodeAddr::new("127.0.0.1", port).unwrap();
        let child = Command::new(slotscope_bin())
            .arg("tap")
            .args(["--upstream", &upstream.to_string()])
            .args(["--listen", &listen.to_string()])
            .args(["--node-ports", "any", "--quiet", "--out"])
            .arg(out)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start slotscope tap");
        let tap = Tap {
            child: Some(child),
            listen,
            out: out.to_owned(),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "tap not listening on {port}");
            sleep(Duration::from_millis(50));
        }
        tap
    }

    /// SIGTERM, then waits (at most 20 s) and reads the recording back.
    fn stop(mut self) -> (Output, Recording) {
        let mut child = self.child.take().expect("running");
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        while child.try_wait().expect("poll tap").is_none() {
            if Instant::now() >= deadline {
                let _ = child.kill();
                panic!("slotscope tap did not exit within 20 s of SIGTERM");
            }
            sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().expect("tap output");
        assert!(
            out.status.success(),
            "tap failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rec = Recording::read(&self.out);
        (out, rec)
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A raw RESP connection: bytes in, values out.
struct Raw {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Raw {
    fn connect(a: &NodeAddr) -> Raw {
        let s = TcpStream::connect((a.host(), a.port())).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Raw { s, buf: Vec::new() }
    }

    fn send(&mut self, cmds: &[&[&str]]) {
        let mut out = Vec::new();
        for c in cmds {
            resp::encode_command(c, &mut out);
        }
        self.s.write_all(&out).unwrap();
    }

    fn read(&mut self) -> Value {
        loop {
            if let Some((v, n)) = resp::parse(&self.buf).expect("valid RESP") {
                self.buf.drain(..n);
                return v;
            }
            let mut chunk = [0u8; 65536];
            let n = self.s.read(&mut chunk).expect("read reply");
            assert!(n > 0, "connection closed");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn cmd(&mut self, c: &[&str]) -> Value {
        self.send(&[c]);
        self.read()
    }

    /// Reads raw bytes until `n` replies have arrived; returns the bytes.
    fn read_raw(&mut self, n: usize) -> Vec<u8> {
        let mut all = Vec::new();
        let mut got = 0;
        while got < n {
            match resp::parse(&self.buf).expect("valid RESP") {
                Some((_, used)) => {
                    all.extend(self.buf.drain(..used));
                    got += 1;
                }
                None => {
                    let mut chunk = [0u8; 65536];
                    let k = self.s.read(&mut chunk).expect("read");
                    assert!(k > 0, "closed");
                    self.buf.extend_from_slice(&chunk[..k]);
                }
            }
        }
        all
    }
}

fn values(mut bytes: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some((v, n)) = resp::parse(bytes).expect("valid RESP") {
        out.push(v);
        bytes = &bytes[n..];
    }
    assert!(bytes.is_empty());
    out
}

fn text(v: &Value) -> String {
    v.as_text().unwrap_or_else(|| format!("{v}"))
}

/// A key whose slot master `i` of a fresh two-master cluster serves (0-8191, 8192-16383).
fn key_on(i: usize) -> String {
    (0..)
        .map(|n| format!("k{n}"))
        .find(|k| (Slot::for_key(k.as_bytes()).get() >= 8192) == (i == 1))
        .unwrap()
}

fn tap_commands(rec: &Recording) -> Vec<&TapCommand> {
    rec.lines
        .iter()
        .filter_map(|l| match l {
            Line::TapCommand(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// Listener → node, from the recording's connection lines.
fn listeners(rec: &Recording) -> BTreeMap<String, NodeAddr> {
    rec.lines
        .iter()
        .filter_map(|l| match l {
            Line::TapConn(c) => Some((c.listener.to_string(), c.node.clone())),
            _ => None,
        })
        .collect()
}

fn raw_client_through_the_tap(kind: ServerKind) {
    let cluster = Cluster::start(kind, 2, ClusterOptions::default());
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("tap.jsonl");
    let tap = Tap::start(&cluster.addr(0), &out, &[]);
    let node_ports: BTreeSet<u16> = (0..2).map(|i| cluster.addr(i).port()).collect();

    let mut c = Raw::connect(&tap.listen);
    assert_eq!(text(&c.cmd(&["PING"])), "PONG");
    // A key of node 1 asked on node 0's listener: MOVED to a listener of the tap.
    let k1 = key_on(1);
    let moved = c.cmd(&["GET", &k1]);
    let err = moved.as_error().expect("MOVED").to_owned();
    let target: NodeAddr = err.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(err.starts_with("MOVED "), "{err}");
    assert!(!node_ports.contains(&target.port()), "{err} names a node");
    let mut c1 = Raw::connect(&target);
    assert_eq!(text(&c1.cmd(&["SET", &k1, "v1"])), "OK");
    assert_eq!(text(&c1.cmd(&["GET", &k1])), "v1");
    // AUTH arguments never reach the recording.
    // (The default user has no password here: any password is accepted.)
    assert_eq!(text(&c.cmd(&["AUTH", "default", "hunter2-secret"])), "OK");

    // Topology replies: every address is a tap listener, in RESP2 and after HELLO 3.
    let direct_slots = Raw::connect(&cluster.addr(0)).cmd(&["CLUSTER", "SLOTS"]);
    for resp3 in [false, true] {
        if resp3 {
            let hello = c.cmd(&["HELLO", "3"]);
            assert!(matches!(hello, Value::Map(_)), "HELLO 3: {hello}");
        }
        let slots = c.cmd(&["CLUSTER", "SLOTS"]);
        let ranges = slots.as_array().expect("CLUSTER SLOTS array");
        assert_eq!(ranges.len(), direct_slots.as_array().unwrap().len());
        for r in ranges {
            let node = r.as_array().unwrap()[2].as_array().unwrap();
            let port = u16::try_from(node[1].as_int().unwrap()).unwrap();
            assert!(
                !node_ports.contains(&port),
                "CLUSTER SLOTS names node port {port}"
            );
            // The listener answers as that node does.
            let l = NodeAddr::new(text(&node[0]), port).unwrap();
            assert_eq!(text(&Raw::connect(&l).cmd(&["PING"])), "PONG");
        }
        let nodes = text(&c.cmd(&["CLUSTER", "NODES"]));
        for p in &node_ports {
            assert!(!nodes.contains(&format!(":{p}@")), "CLUSTER NODES: {nodes}");
        }
        let shards = c.cmd(&["CLUSTER", "SHARDS"]);
        let shown = format!("{shards:?}");
        for p in &node_ports {
            assert!(!shown.contains(&format!("Integer({p})")), "{shown}");
        }
    }

    // Pipelining: 200 commands in one write; the bytes that come back equal a direct run's.
    let k0 = key_on(0);
    let mut cmds: Vec<Vec<String>> = Vec::new();
    for i in 0..200 {
        cmds.push(match i % 3 {
            0 => vec!["SET".into(), k0.clone(), format!("v{i}")],
            1 => vec!["GET".into(), k0.clone()],
            _ => vec!["INCR".into(), format!("{k0}:n")],
        });
    }
    let refs: Vec<Vec<&str>> = cmds
        .iter()
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    let refs: Vec<&[&str]> = refs.iter().map(Vec::as_slice).collect();
    let mut p = Raw::connect(&tap.listen);
    p.send(&refs);
    let through = p.read_raw(refs.len());
    let mut d = Raw::connect(&cluster.addr(0));
    d.send(&refs);
    let direct = d.read_raw(refs.len());
    // The counter ran twice (66 INCRs each time); everything else is equal.
    let (through, direct) = (values(&through), values(&direct));
    assert_eq!(through.len(), 200);
    for (i, (t, d)) in through.iter().zip(&direct).enumerate() {
        match (t, d) {
            (Value::Integer(t), Value::Integer(d)) => assert_eq!(t + 66, *d, "reply {i}"),
            _ => assert_eq!(t, d, "reply {i}"),
        }
    }

    // Pub/sub: confirmations and messages pass through; the connection then works normally.
    let mut sub = Raw::connect(&tap.listen);
    sub.send(&[&["SUBSCRIBE", "ch-a", "ch-b"]]);
    for ch in ["ch-a", "ch-b"] {
        let conf = sub.read();
        let items = conf.as_array().expect("confirmation");
        assert_eq!(
            (text(&items[0]).as_str(), text(&items[1])),
            ("subscribe", ch.to_owned())
        );
    }
    let published = Raw::connect(&cluster.addr(0)).cmd(&["PUBLISH", "ch-a", "hello"]);
    assert_eq!(published.as_int(), Some(1));
    let msg = sub.read();
    assert_eq!(text(&msg.as_array().unwrap()[2]), "hello");
    sub.send(&[&["UNSUBSCRIBE"]]);
    for _ in 0..2 {
        assert_eq!(text(&sub.read().as_array().unwrap()[0]), "unsubscribe");
    }
    assert_eq!(text(&sub.cmd(&["PING"])), "PONG");
    drop((c, c1, p, sub));
    sleep(Duration::from_millis(300));

    let (_, rec) = tap.stop();
    assert!(matches!(rec.lines.last(), Some(Line::End(e)) if e.reason == EndReason::Signal));
    let raw = std::fs::read_to_string(&out).unwrap();
    assert!(
        !raw.contains("hunter2"),
        "an AUTH argument reached the recording"
    );
    assert!(!raw.contains("\"v1\""), "a value reached the recording");
    assert!(
        !raw.contains(&k1),
        "a key name was recorded without --record-keys"
    );
    let cmds = tap_commands(&rec);
    let a0 = cluster.addr(0);
    let a1 = cluster.addr(1);
    let moved: Vec<_> = cmds.iter().filter(|c| c.reply.name() == "moved").collect();
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert_eq!(moved[0].node, a0);
    assert_eq!(
        moved[0].reply,
        ReplyClass::Redirect(Redirect::Moved {
            slot: Slot::for_key(k1.as_bytes()),
            to: a1.clone()
        })
    );
    assert_eq!(moved[0].slot, Some(Slot::for_key(k1.as_bytes())));
    let on_1: Vec<&str> = cmds
        .iter()
        .filter(|c| c.node == a1)
        .map(|c| c.cmd.as_str())
        .collect();
    assert!(on_1.starts_with(&["set", "get"]), "{on_1:?}");
    assert!(cmds
        .iter()
        .any(|c| c.cmd == "auth" && c.reply == ReplyClass::Ok));
    let s = TapSummary::from_lines(&rec.lines);
    assert_eq!(s.per_command["set"].sent, 1 + 67);
    assert_eq!(s.per_command["incr"].sent, 66);
    assert_eq!(s.per_command["subscribe"].sent, 1);
    assert_eq!(s.per_command["unsubscribe"].sent, 1);
    // One on the first connection, one per listener of CLUSTER SLOTS (2 ranges, twice), one after
    // UNSUBSCRIBE.
    assert_eq!(s.per_command["ping"].sent, 1 + 4 + 1);
    assert_eq!(s.per_command["cluster slots"].sent, 2);
    assert_eq!(s.total.closed, 0);
    assert_eq!(s.connections_opened, s.connections_closed);
    assert!(s.connections_opened >= 8);
}

#[test]
fn raw_clients_pass_through_the_tap_redis() {
    let _x = exclusive();
    raw_client_through_the_tap(ServerKind::Redis);
}

#[test]
fn raw_clients_pass_through_the_tap_valkey() {
    let _x = exclusive();
    raw_client_through_the_tap(ServerKind::Valkey);
}

/// Sorted sets `rank:0..N` the incident 2 clients read.
const KEYS: usize = 500;

fn cluster_with_keys(kind: ServerKind) -> Cluster {
    let cluster = Cluster::start(kind, 2, ClusterOptions::default());
    let mut router = cluster.router();
    for n in 0..KEYS {
        let key = format!("rank:{n}");
        router
            .cmd_key(key.as_bytes(), &["ZADD", &key, "1", "a", "2", "b"])
            .unwrap();
    }
    cluster
}

/// `incident2.py` through the tap: `role` api (plain) or recommendation (every node remapped to the
/// tap's first listener).
fn incident2_client(version: &str, tap: &Tap, role: &str, protocol: u8, secs: u32) -> PyClient {
    let mut args: Vec<String> = vec![
        "--role".into(),
        role.into(),
        "--port".into(),
        tap.listen.port().to_string(),
        "--duration".into(),
        secs.to_string(),
        "--rate".into(),
        "200".into(),
        "--keys".into(),
        KEYS.to_string(),
    ];
    if protocol == 3 {
        args.extend(["--protocol".into(), "3".into()]);
    }
    if role == "recommendation" {
        args.extend(["--remap-to".into(), tap.listen.to_string()]);
    }
    python::start_script(version, "incident2.py", &args, Duration::from_secs(90))
}

/// The client's own per-node counts (`wire`: node → command → outcome → n, nodes named by the
/// addresses it connected to, the tap's listeners) equal the recording's, node for node; commands
/// in `shared` are left out (another client sends them through the same tap).
fn assert_wire_matches(client: &Json, rec: &Recording, shared: &[&str]) {
    let by_listener = listeners(rec);
    let mut recorded: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for c in tap_commands(rec) {
        let outcome = match c.reply {
            ReplyClass::Ok => "ok",
            ReplyClass::Redirect(Redirect::Moved { .. }) => "MOVED",
            ReplyClass::Redirect(Redirect::Ask { .. }) => "ASK",
            _ => "other",
        };
        *recorded
            .entry((c.node.to_string(), c.cmd.clone(), outcome.into()))
            .or_default() += 1;
    }
    let wire = client["wire"].as_object().expect("wire counts");
    assert!(!wire.is_empty());
    let mut compared = 0;
    for (listener, cmds) in wire {
        let node = by_listener
            .get(listener)
            .unwrap_or_else(|| panic!("the client used {listener}, which is not a tap listener"));
        for (cmd, outcomes) in cmds.as_object().unwrap() {
            if shared.contains(&cmd.as_str()) {
                continue;
            }
            for (outcome, n) in outcomes.as_object().unwrap() {
                let got = recorded
                    .get(&(node.to_string(), cmd.clone(), outcome.clone()))
                    .copied()
                    .unwrap_or(0);
                assert_eq!(
                    got,
                    n.as_u64().unwrap(),
                    "{cmd} {outcome} on {node} (via {listener}): recording vs client"
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 2, "{wire:?}");
}

fn redis_py_through_the_tap(kind: ServerKind, version: &str, protocol: u8) {
    let cluster = cluster_with_keys(kind);
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("tap.jsonl.zst");
    let tap = Tap::start(&cluster.addr(0), &out, &[]);
    let client = incident2_client(version, &tap, "api", protocol, 6).wait();
    let summary = client.summary();
    let (_, rec) = tap.stop();
    // The application saw no error, as without the tap.
    assert_eq!(summary["error_total"], 0, "{summary:#}");
    let cmd = &summary["commands"]["zrevrangebyscore"];
    assert!(cmd["issued"].as_u64().unwrap() > 500, "{summary:#}");
    assert_wire_matches(&summary, &rec, &[]);
    // Both nodes served the client, each through its own listener.
    let s = TapSummary::from_lines(&rec.lines);
    for i in 0..2 {
        let n = &s.per_node[&cluster.addr(i)];
        assert!(n.ok > 100, "node {i}: {n:?}");
    }
    // No redirection to speak of: the client's table is right from its first CLUSTER SLOTS. (A
    // freshly formed cluster sometimes answers one early command with MOVED, with or without the
    // tap: seen directly in 1 run of 3 with redis-py 8.0.0 RESP3 on Valkey 8.1.8. The exact count
    // is compared with the client's own above.)
    assert!(s.total.moved * 100 < s.total.sent, "{:?}", s.total);
    assert_eq!(
        s.per_command["zrevrangebyscore"].sent,
        cmd["sent"].as_u64().unwrap()
    );
    if protocol == 3 {
        assert!(
            s.per_command.contains_key("hello"),
            "{:?}",
            s.per_command.keys()
        );
    }
}

#[test]
fn redis_py_8_resp2_counts_equal_the_recording_redis() {
    let _x = exclusive();
    redis_py_through_the_tap(ServerKind::Redis, REDIS_PY_8_0_0, 2);
}

#[test]
fn redis_py_8_resp3_counts_equal_the_recording_valkey() {
    let _x = exclusive();
    redis_py_through_the_tap(ServerKind::Valkey, REDIS_PY_8_0_0, 3);
}

#[test]
fn redis_py_5_resp2_counts_equal_the_recording_valkey() {
    let _x = exclusive();
    redis_py_through_the_tap(ServerKind::Valkey, REDIS_PY_5_0_0, 2);
}

#[test]
fn redis_py_5_resp3_counts_equal_the_recording_redis() {
    let _x = exclusive();
    redis_py_through_the_tap(ServerKind::Redis, REDIS_PY_5_0_0, 3);
}

/// Incident 2 through the tap: the remapped service (redis-py 8.0.0, `address_remap` of every node
/// to the tap's first listener) next to a healthy service talking to the cluster directly. The
/// recording's per-command MOVED share equals the client's own count exactly, and `analyze` shows
/// it next to the servers' counters (which also count the other service).
fn incident_2_address_remap_through_the_tap(kind: ServerKind) {
    let cluster = cluster_with_keys(kind);
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("incident2-tap.jsonl.zst");
    let tap = Tap::start(&cluster.addr(0), &out, &["--poll", "500ms"]);
    sleep(Duration::from_millis(800));
    let api = python::start_script(
        REDIS_PY_8_0_0,
        "incident2.py",
        &[
            "--role".into(),
            "api".into(),
            "--port".into(),
            cluster.addr(1).port().to_string(),
            "--duration".into(),
            "8".into(),
            "--rate".into(),
            "100".into(),
            "--keys".into(),
            KEYS.to_string(),
        ],
        Duration::from_secs(90),
    );
    let remapped = incident2_client(REDIS_PY_8_0_0, &tap, "recommendation", 2, 8).wait();
    let api = api.wait();
    sleep(Duration::from_millis(1200));
    let (_, rec) = tap.stop();
    let client = remapped.summary();
    let api = api.summary();
    assert_wire_matches(&client, &rec, &[]);
    let s = TapSummary::from_lines(&rec.lines);
    let report: Json = serde_json::from_slice(&analyze(&out, "json").stdout).expect("analyze JSON");
    for cmd in ["zrevrange", "zrangebyscore"] {
        let own = &client["commands"][cmd];
        let recorded = &s.per_command[cmd];
        assert_eq!(
            recorded.moved,
            own["moved"].as_u64().unwrap(),
            "{cmd} MOVED"
        );
        assert_eq!(recorded.sent, own["sent"].as_u64().unwrap(), "{cmd} sent");
        // A storm: the remapped client sends node 1's commands to node 0 first.
        assert!(own["moved_share_of_calls"].as_f64().unwrap() > 0.2, "{own}");
        let v = &report["tap"]["versus_server"][cmd];
        assert_eq!(
            v["client_moved_share"].as_f64().unwrap(),
            own["moved_share_of_calls"].as_f64().unwrap(),
            "{cmd}: analyze vs the client's own share"
        );
        // The servers counted the same redirections (no other client uses these commands).
        assert!(v["server_rejected"].as_u64().unwrap() > 0, "{v}");
    }
    // Every MOVED the client got pointed at node 1 (the only other master).
    assert_eq!(
        s.moved_to.keys().collect::<Vec<_>>(),
        vec![&cluster.addr(1)]
    );
    let text = String::from_utf8(analyze(&out, "text").stdout).unwrap();
    assert!(text.contains("CLIENT-SIDE EVIDENCE"), "{text}");
    assert!(text.contains("zrevrange"), "{text}");
    // The poller's lines are in the same file, before the one end line.
    assert!(rec.lines.iter().any(|l| matches!(l, Line::Info(_))));
    assert_eq!(
        rec.lines
            .iter()
            .filter(|l| matches!(l, Line::End(_)))
            .count(),
        1
    );
    assert!(matches!(rec.lines.last(), Some(Line::End(_))));
    // The viewer's tap demo (tests/fixtures/incident2-tap-*.jsonl.zst).
    let clients = serde_json::json!({ "recommendation": client, "api": api });
    fixture::keep(&format!("incident2-tap-{kind}"), &out, &clients);
}

fn analyze(path: &Path, format: &str) -> Output {
    let o = run_slotscope(&["analyze", path.to_str().unwrap(), "--format", format]);
    assert!(
        o.status.success(),
        "analyze failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn incident_2_moved_share_equals_the_clients_own_count_redis() {
    let _x = exclusive();
    incident_2_address_remap_through_the_tap(ServerKind::Redis);
}

#[test]
fn incident_2_moved_share_equals_the_clients_own_count_valkey() {
    let _x = exclusive();
    incident_2_address_remap_through_the_tap(ServerKind::Valkey);
}

/// A live reshard while two clients run through the tap: the harness's cluster router (SET, one
/// connection per node, follows MOVED and ASK) and redis-py 8.0.0. Every MOVED and ASK the router
/// got names a slot that moved and the node it moved to, and its counts equal the recording's;
/// redis-py's own per-node counts (ok, MOVED, ASK) equal the recording's.
fn live_reshard_through_the_tap(kind: ServerKind) {
    let cluster = cluster_with_keys(kind);
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("reshard.jsonl");
    let tap = Tap::start(&cluster.addr(0), &out, &["--record-keys"]);
    let router = Router::connect(std::slice::from_ref(&tap.listen), None).expect("router via tap");
    let load = Load::with_router(
        router,
        LoadOptions {
            prefix: "w:".into(),
            max_duration: Duration::from_secs(40),
            interval: Duration::from_millis(2),
            ..LoadOptions::default()
        },
    );
    let client = incident2_client(REDIS_PY_8_0_0, &tap, "api", 2, 10);
    sleep(Duration::from_secs(2));
    let moved_range = SlotRange::new(Slot::new(0).unwrap(), Slot::new(3999).unwrap()).unwrap();
    cluster.migrate_slots_paced(moved_range, 0, 1, 200, Duration::from_millis(300));
    let client = client.wait();
    let report = load.stop();
    let (_, rec) = tap.stop();
    assert_eq!(report.errors, 0, "{:?}", report.error_samples);
    let summary = client.summary();
    assert_eq!(summary["error_total"], 0, "{summary:#}");
    assert_wire_matches(&summary, &rec, &["cluster slots"]);
    let s = TapSummary::from_lines(&rec.lines);
    let cmds = tap_commands(&rec);
    // The router: redirections only for the slots that moved, counted as it counted them.
    let sets: Vec<_> = cmds.iter().filter(|c| c.cmd == "set").collect();
    assert_eq!(s.per_command["set"].moved, report.moved);
    assert_eq!(s.per_command["set"].ask, report.ask);
    assert!(
        report.moved + report.ask > 0,
        "no redirection during the reshard"
    );
    // --record-keys: the key each SET wrote, and its slot.
    for c in &sets {
        let key = c.key.as_deref().expect("--record-keys records the key");
        assert!(key.starts_with("w:"), "{c:?}");
        assert_eq!(c.slot, Some(Slot::for_key(key.as_bytes())), "{c:?}");
    }
    for c in &sets {
        if let ReplyClass::Redirect(Redirect::Moved { slot, to } | Redirect::Ask { slot, to }) =
            &c.reply
        {
            assert!(moved_range.contains(*slot), "{c:?}");
            assert_eq!(to, &cluster.addr(1), "{c:?}");
            assert_eq!(c.node, cluster.addr(0), "{c:?}");
            assert_eq!(c.slot, Some(*slot), "{c:?}");
        }
    }
    // redis-py: as many MOVED and ASK as it counted itself. (Mid-migration it also routes a few
    // commands by a table rebuilt from a node's momentary view, and gets MOVED for slots that did
    // not move: client behaviour, counted the same by the client and the tap.)
    let own = &summary["commands"]["zrevrangebyscore"];
    assert_eq!(
        s.per_command["zrevrangebyscore"].moved,
        own["moved"].as_u64().unwrap()
    );
    assert!(s.per_command["zrevrangebyscore"].moved > 0);
    assert!(
        rec.lines
            .iter()
            .all(|l| !matches!(l, Line::TapConn(c) if c.event == ConnEvent::Refused)),
        "a connection was refused"
    );
}

#[test]
fn live_reshard_redirections_match_the_moved_slots_redis() {
    let _x = exclusive();
    live_reshard_through_the_tap(ServerKind::Redis);
}

#[test]
fn live_reshard_redirections_match_the_moved_slots_valkey() {
    let _x = exclusive();
    live_reshard_through_the_tap(ServerKind::Valkey);
}

/// Runs `redis-benchmark --cluster` against `addr`: SET and GET, `n` requests each, pipelining 16,
/// 4 connections; returns stdout (CSV).
fn redis_benchmark(addr: &NodeAddr, n: u32) -> String {
    let o = Command::new("redis-benchmark")
        .args(["-h", addr.host(), "-p", &addr.port().to_string()])
        .args(["--cluster", "-t", "set,get", "-P", "16", "-c", "4", "--csv"])
        .args(["-n", &n.to_string()])
        .stdin(Stdio::null())
        .output()
        .expect("run redis-benchmark (Debian's redis-tools)");
    assert!(
        o.status.success(),
        "redis-benchmark failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("\"SET\"") && out.contains("\"GET\""), "{out}");
    out
}

/// `redis-benchmark --cluster -P 16` through the tap: it completes as it does directly, every
/// request is recorded on the node that owns its key's slot, and no request was redirected.
fn redis_benchmark_through_the_tap(kind: ServerKind) {
    let cluster = Cluster::start(kind, 2, ClusterOptions::default());
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("bench.jsonl.zst");
    let tap = Tap::start(&cluster.addr(0), &out, &[]);
    let n = 20_000;
    redis_benchmark(&cluster.addr(0), n);
    redis_benchmark(&tap.listen, n);
    let (_, rec) = tap.stop();
    let s = TapSummary::from_lines(&rec.lines);
    for cmd in ["set", "get"] {
        let c = &s.per_command[cmd];
        assert_eq!(c.sent, u64::from(n), "{cmd}: {c:?}");
        assert_eq!(c.ok, u64::from(n), "{cmd}: {c:?}");
    }
    assert_eq!(
        s.total.moved + s.total.ask + s.total.errors + s.total.closed,
        0,
        "{:?}",
        s.total
    );
    // Both masters served their own slots through their own listeners.
    let owner = |slot: Slot| cluster.addr(usize::from(slot.get() >= 8192));
    let mut per_node = [0u64; 2];
    for c in tap_commands(&rec).into_iter().filter(|c| c.cmd == "set") {
        let slot = c.slot.expect("SET has a key");
        assert_eq!(c.node, owner(slot), "{c:?}");
        per_node[usize::from(slot.get() >= 8192)] += 1;
    }
    assert!(per_node.iter().all(|&k| k > 0), "{per_node:?}");
}

#[test]
fn redis_benchmark_cluster_pipelined_through_the_tap_redis() {
    let _x = exclusive();
    redis_benchmark_through_the_tap(ServerKind::Redis);
}

#[test]
fn redis_benchmark_cluster_pipelined_through_the_tap_valkey() {
    let _x = exclusive();
    redis_benchmark_through_the_tap(ServerKind::Valkey);
}

/// Resident memory of a process, in KiB (`VmRSS` of `/proc/PID/status`).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// The GETs of 1 MiB a client sends through the tap and never reads.
const UNREAD_GETS: u64 = 256;

/// A client that pipelines 256 MiB of replies and reads none: the tap stops reading the node once
/// the client's socket is full, so its memory stays bounded (the server holds the backlog, as it
/// would for the client directly). Then a dead node: its listener refuses clients (recorded), the
/// other node's connections go on.
fn slow_reader_and_dead_node(kind: ServerKind) {
    let mut cluster = Cluster::start(kind, 2, ClusterOptions::default());
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("bounded.jsonl");
    let tap = Tap::start(&cluster.addr(0), &out, &[]);
    let pid = tap.child.as_ref().unwrap().id();
    let k0 = key_on(0);
    let value = "x".repeat(1024 * 1024);
    let mut c = Raw::connect(&tap.listen);
    assert_eq!(text(&c.cmd(&["SET", &k0, &value])), "OK");
    // A reply larger than the tap holds (8 MiB) is forwarded in pieces, unchanged.
    let big = format!("{k0}:big");
    let big_value = "y".repeat(12 * 1024 * 1024);
    let mut direct = Raw::connect(&cluster.addr(0));
    assert_eq!(text(&direct.cmd(&["SET", &big, &big_value])), "OK");
    assert_eq!(text(&c.cmd(&["GET", &big])), big_value);
    assert_eq!(text(&c.cmd(&["PING"])), "PONG");
    let before = rss_kib(pid);
    let get = ["GET", k0.as_str()];
    // Four times the growth allowed below, many times any socket buffer: a tap that held the
    // replies would show it. Not more: the node makes every reply at once, and on a machine
    // whose memory is slow to touch first (a microVM: 135 MB/s measured) 1.5 GiB kept the node
    // busy past the other client's 5 s wait below.
    let gets: Vec<&[&str]> = (0..UNREAD_GETS).map(|_| &get[..]).collect();
    c.send(&gets);
    sleep(Duration::from_secs(3));
    let during = rss_kib(pid);
    assert!(
        during < before + 64 * 1024,
        "tap grew from {before} KiB to {during} KiB with a client not reading"
    );
    // The same tap still serves another client meanwhile.
    let mut other = Raw::connect(&tap.listen);
    assert_eq!(text(&other.cmd(&["PING"])), "PONG");
    drop(c);

    // Learn node 1's listener, then kill node 1.
    let moved = other.cmd(&["GET", &key_on(1)]);
    let l1: NodeAddr = moved
        .as_error()
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    cluster.kill(1);
    let mut refused = Raw::connect(&l1);
    refused.send(&[&["PING"]]);
    let mut b = [0u8; 16];
    assert_eq!(
        refused.s.read(&mut b).unwrap_or(0),
        0,
        "the dead node's listener must close"
    );
    assert_eq!(text(&other.cmd(&["PING"])), "PONG");
    assert_eq!(
        text(&Raw::connect(&tap.listen).cmd(&["GET", &k0])).len(),
        value.len()
    );
    drop(other);
    let (_, rec) = tap.stop();
    let refusals: Vec<_> = rec
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::TapConn(c) if c.event == ConnEvent::Refused => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert_eq!(refusals[0].node, cluster.addr(1));
    let s = TapSummary::from_lines(&rec.lines);
    // The unread GETs were cut off by the client's close: recorded as such, never lost.
    let get = &s.per_command["get"];
    assert_eq!(get.sent, UNREAD_GETS + 3, "{get:?}");
    // The 1 MiB SET was forwarded in pieces and recorded once, with its slot.
    assert_eq!(s.per_command["set"].sent, 1);
    assert!(tap_commands(&rec)
        .iter()
        .any(|c| c.cmd == "set" && c.slot == Some(Slot::for_key(k0.as_bytes()))));
    assert_eq!(get.ok + get.moved + get.closed, get.sent, "{get:?}");
    assert!(matches!(rec.lines.last(), Some(Line::End(_))));
}

#[test]
fn slow_reader_stays_bounded_and_a_dead_node_harms_no_other_redis() {
    let _x = exclusive();
    slow_reader_and_dead_node(ServerKind::Redis);
}

#[test]
fn slow_reader_stays_bounded_and_a_dead_node_harms_no_other_valkey() {
    let _x = exclusive();
    slow_reader_and_dead_node(ServerKind::Valkey);
}
