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
use std::process::Output;
use std::time::{Duration, Instant};

use slotscope_core::recording::{Discovery, EndReason, Line};
use slotscope_core::{NodeAddr, SLOT_COUNT};
use slotscope_tests::tls_cluster::{Bus, TlsCluster};
use slotscope_tests::{Recorder, Recording};
use tempfile::TempDir;

/// Upper bound on any `slotscope record` run in these tests.
const RUN_LIMIT: Duration = Duration::from_secs(15);

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
        assert_eq!(id.as_deref(), Some(cluster.id(i)), "node {i}");
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
            Some(cluster.id(i))
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
