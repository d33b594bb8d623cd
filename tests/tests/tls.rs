//! `slotscope record` over TLS against a real TLS-enabled Redis 7.0.15 cluster on 127.0.0.1.
//!
//! A CA and a server certificate (SAN `IP:127.0.0.1` and `DNS:localhost`) are made with `rcgen` at
//! test time and written to a temporary directory as PEM files. Every node keeps its plain client
//! port (the harness's own client speaks plain TCP) and adds a TLS client port. The cluster bus runs
//! TLS too (`tls-cluster yes`): with `tls-cluster no`, Redis 7.0 reports only the plain port in
//! `CLUSTER SHARDS` (no `tls-port`), so a TLS client could not learn the nodes' TLS addresses;
//! the collector then polls the seed's own node at the seed (see the last test). With `tls-cluster yes` the bus port is
//! `tls-port + 10000` and nodes `MEET` at their TLS port, which is why the cluster is built here
//! rather than with [`slotscope_tests::Cluster`].
//!
//! Valkey is not covered: the embedded Valkey 8.1.8 build has no TLS support (it refuses
//! `--tls-port` with "Failed finding TLS support").

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Output;
use std::thread::sleep;
use std::time::{Duration, Instant};

use slotscope_core::recording::{Discovery, EndReason, Line};
use slotscope_core::resp::Value;
use slotscope_core::{NodeAddr, SLOT_COUNT};
use slotscope_tests::pki::Pki;
use slotscope_tests::port::{free_port, BUS_OFFSET};
use slotscope_tests::topology::info_field;
use slotscope_tests::{Recorder, Recording, Server, ServerKind, ServerOptions};
use tempfile::TempDir;

/// How long a cluster may take to form.
const FORM_TIMEOUT: Duration = Duration::from_secs(20);
/// Upper bound on any `slotscope record` run in these tests.
const RUN_LIMIT: Duration = Duration::from_secs(15);

/// How the cluster bus runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bus {
    /// `tls-cluster yes`: the bus is TLS and `CLUSTER SHARDS` reports `port` and `tls-port`.
    Tls,
    /// `tls-cluster no`: the bus is plain and Redis 7.0 reports only the plain `port`.
    Plain,
}

/// A cluster of Redis masters, each with a plain and a TLS client port.
struct TlsCluster {
    pki: Pki,
    bus: Bus,
    nodes: Vec<Server>,
    tls_ports: Vec<u16>,
    ids: Vec<String>,
}

impl TlsCluster {
    /// Starts `masters` masters, splits the slots evenly, joins them over the bus and waits until
    /// every node reports `cluster_state:ok` and lists every node with its ports.
    fn start(masters: usize, bus: Bus) -> TlsCluster {
        let pki = Pki::new();
        let mut nodes = Vec::new();
        let mut tls_ports = Vec::new();
        for _ in 0..masters {
            // free_port checks P and P + 10000: the TLS port and, with tls-cluster, the bus.
            let tls_port = free_port();
            let path = |p: &Path| p.display().to_string();
            let extra: Vec<(String, String)> = [
                ("tls-port", tls_port.to_string()),
                ("tls-cert-file", path(&pki.cert)),
                ("tls-key-file", path(&pki.key)),
                ("tls-ca-cert-file", path(&pki.ca)),
                ("tls-auth-clients", "no".to_owned()),
                (
                    "tls-cluster",
                    if bus == Bus::Tls { "yes" } else { "no" }.to_owned(),
                ),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
            let opts = ServerOptions {
                extra,
                ..ServerOptions::default()
            };
            nodes.push(Server::start(ServerKind::Redis, &opts));
            tls_ports.push(tls_port);
        }
        let mut cluster = TlsCluster {
            pki,
            bus,
            nodes,
            tls_ports,
            ids: Vec::new(),
        };
        cluster.ids = (0..masters)
            .map(|i| {
                cluster
                    .run(i, &["CLUSTER", "MYID"])
                    .as_text()
                    .expect("CLUSTER MYID is text")
            })
            .collect();
        let slots = usize::from(SLOT_COUNT);
        for m in 0..masters {
            let first = slots * m / masters;
            let last = slots * (m + 1) / masters - 1;
            cluster.run(
                m,
                &[
                    "CLUSTER",
                    "ADDSLOTSRANGE",
                    &first.to_string(),
                    &last.to_string(),
                ],
            );
            cluster.run(m, &["CLUSTER", "SET-CONFIG-EPOCH", &(m + 1).to_string()]);
        }
        // With tls-cluster yes a node's announced port is its TLS port, its bus that port + 10000.
        let meet_port = match bus {
            Bus::Tls => cluster.tls_ports[0],
            Bus::Plain => cluster.nodes[0].port(),
        };
        for i in 1..masters {
            cluster.run(
                i,
                &[
                    "CLUSTER",
                    "MEET",
                    "127.0.0.1",
                    &meet_port.to_string(),
                    &(meet_port + BUS_OFFSET).to_string(),
                ],
            );
        }
        let deadline = Instant::now() + FORM_TIMEOUT;
        loop {
            let why = match cluster.check_formed() {
                Ok(()) => break,
                Err(why) => why,
            };
            if Instant::now() > deadline {
                let logs: String = cluster
                    .nodes
                    .iter()
                    .map(|n| format!("--- {} ---\n{}", n.addr(), n.log_tail(15)))
                    .collect();
                panic!("TLS cluster did not form within {FORM_TIMEOUT:?}: {why}\n{logs}");
            }
            sleep(Duration::from_millis(50));
        }
        cluster
    }

    fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Runs `args` on node `i` over its plain port; panics on any failure or error reply.
    fn run(&self, i: usize, args: &[&str]) -> Value {
        self.nodes[i]
            .client()
            .cmd_ok(args)
            .unwrap_or_else(|e| panic!("node {i} ({}): {e}", self.nodes[i].addr()))
    }

    /// `127.0.0.1:<tls-port>` of node `i`.
    fn tls_addr(&self, i: usize) -> NodeAddr {
        NodeAddr::new("127.0.0.1", self.tls_ports[i]).expect("host is not empty")
    }

    fn tls_addrs(&self) -> BTreeSet<NodeAddr> {
        (0..self.len()).map(|i| self.tls_addr(i)).collect()
    }

    fn plain_addrs(&self) -> BTreeSet<NodeAddr> {
        self.nodes.iter().map(Server::addr).collect()
    }

    fn ca(&self) -> String {
        self.pki.ca.display().to_string()
    }

    /// Every node: `cluster_state:ok`, knows all nodes, and its `CLUSTER SHARDS` lists each node
    /// online with its plain `port` and, with a TLS bus, its `tls-port`.
    fn check_formed(&self) -> Result<(), String> {
        let expected: BTreeMap<String, (u16, Option<u16>)> = (0..self.len())
            .map(|i| {
                let tls = (self.bus == Bus::Tls).then_some(self.tls_ports[i]);
                (self.ids[i].clone(), (self.nodes[i].port(), tls))
            })
            .collect();
        for (i, node) in self.nodes.iter().enumerate() {
            let mut c = node.try_client().map_err(|e| format!("node {i}: {e}"))?;
            let info = c
                .cmd_text(&["CLUSTER", "INFO"])
                .map_err(|e| format!("node {i}: {e}"))?;
            if info_field(&info, "cluster_state") != Some("ok") {
                return Err(format!("node {i}: cluster_state is not ok"));
            }
            let known: Option<usize> =
                info_field(&info, "cluster_known_nodes").and_then(|v| v.parse().ok());
            if known != Some(self.len()) {
                return Err(format!("node {i}: cluster_known_nodes {known:?}"));
            }
            let shards = c
                .cmd_ok(&["CLUSTER", "SHARDS"])
                .map_err(|e| format!("node {i}: {e}"))?;
            let seen = shard_ports(&shards).map_err(|e| format!("node {i}: {e}"))?;
            if seen != expected {
                return Err(format!(
                    "node {i}: CLUSTER SHARDS lists {seen:?}, expected {expected:?}"
                ));
            }
        }
        Ok(())
    }
}

/// From a `CLUSTER SHARDS` reply: each online node's id with its `port` and `tls-port`.
fn shard_ports(reply: &Value) -> Result<BTreeMap<String, (u16, Option<u16>)>, String> {
    let mut out = BTreeMap::new();
    for shard in reply.as_array().ok_or("CLUSTER SHARDS is not an array")? {
        let pairs = shard.as_pairs().ok_or("a shard is not a map")?;
        let nodes = pairs
            .iter()
            .find(|(k, _)| k.as_text().as_deref() == Some("nodes"))
            .and_then(|(_, v)| v.as_array())
            .ok_or("a shard without nodes")?;
        for node in nodes {
            let fields: BTreeMap<String, &Value> = node
                .as_pairs()
                .ok_or("a node is not a map")?
                .into_iter()
                .filter_map(|(k, v)| Some((k.as_text()?, v)))
                .collect();
            let text = |k: &str| fields.get(k).and_then(|v| v.as_text());
            let port = |k: &str| {
                fields
                    .get(k)
                    .and_then(|v| v.as_int())
                    .and_then(|p| u16::try_from(p).ok())
            };
            if text("health").as_deref() != Some("online") {
                return Err(format!("node {:?} is not online yet", text("id")));
            }
            let id = text("id").ok_or("a node without id")?;
            let plain = port("port").ok_or_else(|| format!("node {id} lacks port: {fields:?}"))?;
            out.insert(id, (plain, port("tls-port")));
        }
    }
    Ok(out)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Records `cluster` for 3 s at 500 ms with `flags`, seeded at node 0's TLS address, and checks
/// that every node was found and polled at its TLS address, without a single failed poll.
fn records_every_node_over_tls(cluster: &TlsCluster, flags: &[&str]) {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("tls.jsonl");
    let seed = cluster.tls_addr(0);
    let seed_text = seed.to_string();
    let mut args = vec![
        "--seed",
        &seed_text,
        "--interval",
        "500ms",
        "--duration",
        "3s",
    ];
    args.extend_from_slice(flags);
    let rec = Recorder::start(&out, &args, &[]);
    let o = rec.wait(RUN_LIMIT);
    assert!(
        o.status.success(),
        "record {flags:?} failed: {}",
        stderr(&o)
    );
    let r = Recording::read(&out);
    assert_eq!(r.truncated_tail, None);
    assert!(
        r.header.options.tls,
        "header options: {:?}",
        r.header.options
    );
    assert_eq!(r.header.seed, seed);
    assert!(
        matches!(r.lines.last(), Some(Line::End(e)) if e.reason == EndReason::Duration),
        "last line: {:?}",
        r.lines.last()
    );

    let failures: Vec<&Line> = r
        .lines
        .iter()
        .filter(|l| matches!(l, Line::PollFailed(_)))
        .collect();
    assert!(failures.is_empty(), "poll failures: {failures:#?}");

    // Discovered at their TLS ports, with the ids the nodes report; the seed is one of them.
    let discovered: BTreeMap<NodeAddr, (Option<String>, &Discovery)> = r
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::NodeDiscovered(d) => Some((
                d.node.addr.clone(),
                (d.node.id.as_ref().map(|id| id.as_str().to_owned()), &d.via),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        discovered.keys().cloned().collect::<BTreeSet<_>>(),
        cluster.tls_addrs(),
        "plain ports are {:?}",
        cluster.plain_addrs()
    );
    for i in 0..cluster.len() {
        let (id, via) = &discovered[&cluster.tls_addr(i)];
        assert_eq!(id.as_deref(), Some(cluster.ids[i].as_str()), "node {i}");
        if i == 0 {
            assert_eq!(**via, Discovery::Seed);
        } else {
            assert_eq!(**via, Discovery::Topology { from: seed.clone() });
        }
    }
    // No line names a plain port.
    let plain = cluster.plain_addrs();
    for l in &r.lines {
        let addr = match l {
            Line::NodeDiscovered(d) => &d.node.addr,
            Line::NodeGone(g) => &g.node.addr,
            Line::Topology(t) => &t.node.addr,
            Line::Info(i) => &i.node.addr,
            Line::ClientList(c) => &c.node.addr,
            Line::PollFailed(f) => &f.node.addr,
            _ => continue,
        };
        assert!(!plain.contains(addr), "a plain address in {l:?}");
    }

    for i in 0..cluster.len() {
        let addr = cluster.tls_addr(i);
        let samples: Vec<_> = r
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Info(s) if s.node.addr == addr => Some(s),
                _ => None,
            })
            .collect();
        assert!(
            samples.len() >= 3,
            "{addr}: {} INFO samples over TLS",
            samples.len()
        );
        let last = samples.last().unwrap();
        assert_eq!(
            last.node.id.as_ref().map(|id| id.as_str()),
            Some(cluster.ids[i].as_str())
        );
        assert!(
            r.lines
                .iter()
                .any(|l| matches!(l, Line::ClientList(c) if c.node.addr == addr)),
            "{addr}: no CLIENT LIST"
        );
        let view = r
            .lines
            .iter()
            .find_map(|l| match l {
                Line::Topology(t) if t.node.addr == addr => Some(&t.view),
                _ => None,
            })
            .expect("a topology sample");
        assert_eq!(view.shards.len(), cluster.len());
        assert_eq!(view.assigned_slots(), usize::from(SLOT_COUNT));
    }
}

/// Runs `slotscope record` with `flags` against a seed that must fail discovery, and returns its
/// output and how long it ran. The recording file must not be left behind.
fn fails_at_discovery(seed: &NodeAddr, flags: &[&str]) -> (Output, Duration) {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("refused.jsonl");
    let seed_text = seed.to_string();
    let mut args = vec!["--seed", &seed_text, "--duration", "5s"];
    args.extend_from_slice(flags);
    let started = Instant::now();
    let rec = Recorder::start(&out, &args, &[]);
    let o = rec.wait(RUN_LIMIT);
    let took = started.elapsed();
    assert_eq!(
        o.status.code(),
        Some(1),
        "record {flags:?} against {seed}: expected exit status 1; stderr:\n{}",
        stderr(&o)
    );
    let err = stderr(&o);
    assert!(
        err.contains(&format!("cannot discover the cluster from {seed}")),
        "{err}"
    );
    assert!(
        !out.exists(),
        "a failed discovery left {} behind",
        out.display()
    );
    (o, took)
}

/// (a) `--cacert ca.pem`: the certificate chain and the IP SAN verify, every node is recorded at
/// its TLS address.
#[test]
fn cacert_records_every_node_at_its_tls_port() {
    let cluster = TlsCluster::start(3, Bus::Tls);
    let ca = cluster.ca();
    records_every_node_over_tls(&cluster, &["--cacert", &ca]);
}

/// (c) `--insecure` records the same cluster without any CA.
#[test]
fn insecure_records_every_node_at_its_tls_port() {
    let cluster = TlsCluster::start(3, Bus::Tls);
    records_every_node_over_tls(&cluster, &["--insecure"]);
}

/// (b) `--tls` alone verifies against the Mozilla roots, which do not include the test CA: the
/// seed's handshake fails, and the error says it is about the certificate.
#[test]
fn tls_without_cacert_rejects_the_private_ca() {
    let cluster = TlsCluster::start(2, Bus::Tls);
    let seed = cluster.tls_addr(0);
    let (o, took) = fails_at_discovery(&seed, &["--tls"]);
    let err = stderr(&o);
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    assert!(err.contains("TLS"), "{err}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    eprintln!("--tls against a private CA: {took:?}: {err}");
}

/// (d) Plain RESP sent to a TLS port: discovery fails within the collector's timeout instead of
/// hanging.
#[test]
fn plain_connection_to_a_tls_port_fails_fast() {
    let cluster = TlsCluster::start(2, Bus::Tls);
    let seed = cluster.tls_addr(0);
    let (o, took) = fails_at_discovery(&seed, &["--timeout", "1s"]);
    let err = stderr(&o);
    assert!(took < Duration::from_secs(10), "took {took:?}: {err}");
    eprintln!("plain to TLS port: {took:?}: {err}");
}

/// With `tls-cluster no`, Redis 7.0 reports no `tls-port` in `CLUSTER SHARDS` (checked while the
/// cluster forms), so `--tls` cannot learn the other nodes' TLS addresses. The seed, though, was
/// reached over TLS at an address that works: its own node should keep being polled there rather
/// than only at its plain port, where a TLS client gets no answer.
#[test]
fn tls_seed_of_a_plain_bus_cluster_is_polled_at_the_seed_address() {
    let cluster = TlsCluster::start(2, Bus::Plain);
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("plain-bus.jsonl");
    let seed = cluster.tls_addr(0);
    let seed_text = seed.to_string();
    let ca = cluster.ca();
    let rec = Recorder::start(
        &out,
        &[
            "--seed",
            &seed_text,
            "--cacert",
            &ca,
            "--interval",
            "500ms",
            "--duration",
            "2s",
        ],
        &[],
    );
    let o = rec.wait(RUN_LIMIT);
    assert!(o.status.success(), "record failed: {}", stderr(&o));
    let r = Recording::read(&out);
    let seed_samples = r
        .lines
        .iter()
        .filter(|l| matches!(l, Line::Info(s) if s.node.addr == seed))
        .count();
    let failures: Vec<String> = r
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::PollFailed(f) => Some(format!("{} {}: {}", f.node.addr, f.step, f.error)),
            _ => None,
        })
        .collect();
    assert!(
        seed_samples >= 2,
        "{seed_samples} INFO samples of the seed at {seed}; failures: {failures:#?}"
    );
}
