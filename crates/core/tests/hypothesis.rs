//! Hypotheses on a synthetic recording: a steady two-node cluster whose clients show the
//! `address_remap` signature (sustained MOVED on one node, CLUSTER SLOTS and new connections
//! at a fifth of the MOVED rate) must be explained best by a remapped client.

use slotscope_core::hypothesis::{
    rank, standard_variants, Evidence, ExchangeTimes, HypothesisSpec, Value,
};
use slotscope_core::info::{CommandStat, InfoReport};
use slotscope_core::metrics::Metrics;
use slotscope_core::recording::{InfoSample, Line};
use slotscope_core::replay::{Hypotheses, Shape, SimClusterBuilder, MODELS};
use slotscope_core::{TimeSpan, Timestamp};

mod common;

use common::{header, node, topology, view, A, B, T0};

/// `CLUSTER NODES` as `me` sees it: A (7000) owns 0-8191, B (7001) 8192-16383.
fn two_shards(t: u64, port: u16, me: &str) -> Line {
    topology(t, port, me, view(me, "0-8191", "8192-16383"))
}

/// Cumulative counters of one node after `k` seconds at the given per-second rates.
struct Rates {
    zadd: u64,
    rejected: u64,
    slots: u64,
    conns: u64,
}

fn info(k: u64, port: u16, id: &str, r: &Rates) -> Line {
    let mut rep = InfoReport::default();
    rep.sections.insert(
        "server".into(),
        [("uptime_in_seconds".to_owned(), (100 + k).to_string())].into(),
    );
    rep.sections.insert(
        "stats".into(),
        [(
            "total_connections_received".to_owned(),
            (10 + r.conns * k).to_string(),
        )]
        .into(),
    );
    let stat = |calls: u64, rejected: u64| CommandStat {
        calls,
        usec: calls,
        rejected_calls: Some(rejected),
        failed_calls: Some(0),
    };
    rep.commandstats
        .insert("zadd".into(), stat(r.zadd * k, r.rejected * k));
    // The collector's own CLUSTER SLOTS, once per poll, comes on top of the clients'.
    rep.commandstats
        .insert("cluster|slots".into(), stat((r.slots + 1) * k, 0));
    rep.commandstats.insert("info".into(), stat(k, 0));
    if r.rejected > 0 {
        rep.errorstats.insert("MOVED".into(), r.rejected * k);
    }
    Line::Info(InfoSample {
        t: Timestamp(T0 + k * 1000),
        node: node(port, id),
        latency_us: 300,
        info: rep,
    })
}

/// 60 s of a steady cluster: 100 zadd/s executed, half on each node, and on A 60 MOVED/s,
/// 12 CLUSTER SLOTS/s and 12 new connections/s (a client remapped to A).
fn remap_storm() -> Vec<Line> {
    let mut lines = vec![two_shards(T0, 7000, A), two_shards(T0, 7001, B)];
    for k in 0..=60 {
        lines.push(info(
            k,
            7000,
            A,
            &Rates {
                zadd: 50,
                rejected: 60,
                slots: 12,
                conns: 12,
            },
        ));
        lines.push(info(
            k,
            7001,
            B,
            &Rates {
                zadd: 50,
                rejected: 0,
                slots: 0,
                conns: 0,
            },
        ));
    }
    lines
}

#[test]
fn a_remap_storm_is_best_explained_by_a_remapped_client() {
    let lines = remap_storm();
    let mut builder = SimClusterBuilder::for_recording(&header());
    let mut metrics = Metrics::default();
    for l in &lines {
        builder.push(l);
        metrics.push(l);
    }
    let cluster = builder.build();
    let evidence = Evidence::from_metrics(&metrics);
    assert_eq!(evidence.command.as_deref(), Some("zadd"));
    assert!((evidence.moved_share - 60.0 / 160.0).abs() < 1e-9);
    assert!((evidence.moved_per_sec - 60.0).abs() < 1e-9);
    assert!((evidence.cluster_slots_per_sec - 12.0).abs() < 1e-9);
    assert!(!evidence.traffic_ended);

    let variants = standard_variants(&cluster);
    // No failure and no slot move recorded: no fault variant. The suspects' 2 x (1 + 2 + 2),
    // each other library's defaults and extra sets (read from MODELS: adding a model changes no
    // test), the contrast.
    let libraries: usize = MODELS
        .iter()
        .map(|m| match m.hypotheses {
            Hypotheses::Library { extra } => 1 + extra.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(variants.len(), 2 * (1 + 2 + 2) + libraries + 1);
    let spec = HypothesisSpec {
        rate_per_sec: 100,
        keys: 10_000,
        seed: 1,
        concurrency: 1,
        redis_py_socket_timeout_ms: Some(1000),
        window: None,
        shape: Shape::Lanes,
        timing: ExchangeTimes::default(),
    };
    let h = rank(&cluster, &evidence, &variants, &spec).unwrap();
    assert_eq!(h.variants.len(), variants.len());
    let top = &h.variants[0];
    assert_eq!(
        top.config.get("address_remap").map(String::as_str),
        Some("10.0.0.1:7000"),
        "{:#?}",
        h.variants
    );
    assert!(h.variants.windows(2).all(|w| w[0].score >= w[1].score));
    let plain = h
        .variants
        .iter()
        .find(|v| v.model == "redis-py@8.0.0" && v.config.is_empty())
        .unwrap();
    assert!(
        top.score > plain.score + 0.2,
        "{} vs {}",
        top.score,
        plain.score
    );
    assert_eq!(
        top.metrics["moved_per_sec"].observed,
        Value::Number(evidence.moved_per_sec)
    );
    // Deterministic: the same inputs give the same ranking.
    assert_eq!(h, rank(&cluster, &evidence, &variants, &spec).unwrap());
    // The workload spans the recording, or the window given; rates are per second of it.
    assert_eq!(Some(h.window), cluster.span());
    let half = TimeSpan::new(Timestamp(T0 + 30_000), Timestamp(T0 + 60_000));
    let windowed = rank(
        &cluster,
        &evidence,
        &variants,
        &HypothesisSpec {
            window: Some(half),
            ..spec.clone()
        },
    )
    .unwrap();
    assert_eq!(windowed.window, half);
    let remapped = |h: &slotscope_core::hypothesis::Hypotheses| {
        let v = h
            .variants
            .iter()
            .find(|v| v.config.get("address_remap").map(String::as_str) == Some("10.0.0.1:7000"))
            .unwrap();
        match v.metrics["moved_per_sec"].predicted {
            Value::Number(x) => x,
            Value::Flag(_) => panic!("a rate"),
        }
    };
    // The storm is steady: the same MOVED rate over half the span.
    let (whole, second_half) = (remapped(&h), remapped(&windowed));
    assert!(whole > 1.0, "{whole}");
    assert!(
        (second_half - whole).abs() < 0.2 * whole,
        "{second_half} vs {whole}"
    );
}

#[test]
fn traffic_that_stops_looks_wedged() {
    let mut metrics = Metrics::default();
    let mut lines = vec![two_shards(T0, 7000, A)];
    for k in 0..=60u64 {
        // 100 zadd/s for 40 s, then nothing.
        let calls = 100 * k.min(40);
        let mut rep = InfoReport::default();
        rep.sections.insert(
            "server".into(),
            [("uptime_in_seconds".to_owned(), (100 + k).to_string())].into(),
        );
        rep.commandstats.insert(
            "zadd".into(),
            CommandStat {
                calls,
                usec: calls,
                rejected_calls: Some(0),
                failed_calls: Some(0),
            },
        );
        lines.push(Line::Info(InfoSample {
            t: Timestamp(T0 + k * 1000),
            node: node(7000, A),
            latency_us: 300,
            info: rep,
        }));
    }
    for l in &lines {
        metrics.push(l);
    }
    let e = Evidence::from_metrics(&metrics);
    assert!(e.traffic_ended);
    assert_eq!(e.moved_share, 0.0);
    assert_eq!(
        Evidence::from_metrics(&Metrics::default()),
        Evidence::default()
    );
}
