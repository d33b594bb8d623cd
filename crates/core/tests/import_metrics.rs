//! `slotscope_core::import` on real samples (tests/fixtures/metrics, see its README): a
//! query_range response and an exporter scrape become `info` lines whose intervals carry the
//! MOVED rejections; a counter reset and a gap on generated series.

use std::path::PathBuf;

use slotscope_core::import::{convert, exposition, prometheus, ImportError, Series, SourceInfo};
use slotscope_core::metrics::Metrics;
use slotscope_core::recording::Line;
use slotscope_core::time::Timestamp;

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/metrics")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn src(step_ms: Option<u64>) -> SourceInfo {
    SourceInfo {
        description: "test".to_owned(),
        step_ms,
        collector: "slotscope test".to_owned(),
    }
}

fn metrics_of(lines: &[Line]) -> Metrics {
    let mut m = Metrics::default();
    for l in lines {
        m.push(l);
    }
    m
}

#[test]
fn a_real_query_range_gives_the_servers_rejections() {
    let mut series = Vec::new();
    for m in [
        "redis_commands_total",
        "redis_commands_rejected_calls_total",
        "redis_errors_total",
        "redis_connections_received_total",
        "redis_connected_clients",
        "redis_instance_info",
    ] {
        series.extend(
            prometheus::parse_response(m, &fixture(&format!("prometheus-2.42-{m}.json"))).unwrap(),
        );
    }
    let conv = convert("fixtures", &series, &src(Some(1000))).unwrap();
    assert_eq!(conv.nodes.len(), 3);
    let Line::Header(h) = &conv.lines[0] else {
        panic!("no header")
    };
    assert_eq!(h.options.interval_ms, 1000);
    let resolution = format!("{} resolution", slotscope_core::time::format_millis(1000));
    assert!(
        h.source.as_deref().unwrap().contains(&resolution),
        "{:?}",
        h.source
    );
    // The last point of node 17100, straight from the response.
    let rejected_set = series
        .iter()
        .find(|s| {
            s.name == "redis_commands_rejected_calls_total"
                && s.labels["cmd"] == "set"
                && s.labels["addr"] == "127.0.0.1:17100"
        })
        .unwrap();
    let (first, last) = (
        rejected_set.points.first().unwrap().1,
        rejected_set.points.last().unwrap().1,
    );
    let m = metrics_of(&conv.lines);
    let node = m.node(&"127.0.0.1:17100".parse().unwrap()).unwrap();
    let rejected: u64 = node
        .intervals
        .iter()
        .map(|i| i.command("set").rejected)
        .sum();
    assert_eq!(rejected as f64, last - first);
    assert!(rejected > 100, "the client's MOVED rejections: {rejected}");
    let moved: u64 = node.intervals.iter().map(|i| i.error("MOVED")).sum();
    assert_eq!(moved, rejected, "every rejection of SET was a MOVED");
    assert!(node.intervals.iter().any(|i| i.connected_clients.is_some()));
}

#[test]
fn an_error_body_and_a_partial_page_are_refused() {
    let e = prometheus::parse_response("q", &fixture("prometheus-2.42-error.json")).unwrap_err();
    assert!(matches!(e, ImportError::ApiError { .. }), "{e}");
    assert!(e.to_string().contains("bad_data"), "{e}");
    let body = fixture("prometheus-2.42-redis_commands_total.json");
    let cut = &body[..body.len() / 2];
    let e = prometheus::parse_response("q", cut).unwrap_err();
    assert!(matches!(e, ImportError::NotJson { .. }), "{e}");
    assert!(prometheus::parse_response("q", "<html>").is_err());
}

#[test]
fn a_real_scrape_is_one_instant_of_one_node() {
    let mut series = exposition::parse_scrape(
        "scrape",
        &fixture("redis-exporter-1.45-scrape.prom"),
        Timestamp(7),
    )
    .unwrap();
    // A saved scrape names no node: without a label it is refused, with one it is read.
    assert!(matches!(
        convert("scrape", &series, &src(None)),
        Err(ImportError::Node { .. })
    ));
    for s in &mut series {
        s.labels.insert("instance".into(), "127.0.0.1:17100".into());
    }
    let conv = convert("scrape", &series, &src(None)).unwrap();
    let infos: Vec<_> = conv
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::Info(i) => Some(i),
            _ => None,
        })
        .collect();
    assert_eq!(infos.len(), 1);
    let info = &infos[0].info;
    assert_eq!(info.get("server", "redis_version"), Some("7.0.15"));
    assert!(info.commandstats["set"].rejected_calls.unwrap() > 0);
    assert!(info.errorstats["MOVED"] > 0);
    assert!(info
        .get_u64("stats", "total_connections_received")
        .is_some());
}

/// Generated series of one node, drawn at random (seed printed): a restart (uptime and counters
/// go back) and a gap of missing points.
#[test]
fn resets_are_kept_and_gaps_are_stated() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("seed {seed}");
    let mut x = seed | 1;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let n = 20 + next(20) as usize;
    let restart = 5 + next(n as u64 - 10) as usize;
    let gap = (restart + 2..n - 1).find(|_| true).unwrap();
    let mut calls = Vec::new();
    let mut c = 1000 + next(1000);
    for k in 0..n {
        c = if k == restart {
            next(50)
        } else {
            c + next(100)
        };
        calls.push(c);
    }
    let points = |v: &dyn Fn(usize) -> f64| {
        (0..n)
            .filter(|&k| k != gap)
            .map(|k| (Timestamp(1_000_000 + k as u64 * 15_000), v(k)))
            .collect::<Vec<_>>()
    };
    let labels = |cmd: Option<&str>| {
        let mut l =
            std::collections::BTreeMap::from([("instance".to_owned(), "10.0.0.1:6379".to_owned())]);
        if let Some(c) = cmd {
            l.insert("cmd".into(), c.into());
        }
        l
    };
    let series = vec![
        Series {
            name: "redis_commands_total".into(),
            labels: labels(Some("get")),
            points: points(&|k| calls[k] as f64),
        },
        Series {
            name: "redis_uptime_in_seconds".into(),
            labels: labels(None),
            points: points(&|k| {
                if k < restart {
                    100.0 + k as f64 * 15.0
                } else {
                    (k - restart) as f64 * 15.0 + 1.0
                }
            }),
        },
    ];
    let conv = convert("generated", &series, &src(Some(15_000))).unwrap();
    assert_eq!(conv.gaps.len(), 1, "one gap");
    let Line::Header(h) = &conv.lines[0] else {
        panic!()
    };
    assert!(
        h.source.as_deref().unwrap().contains("1 gap(s)"),
        "{:?}",
        h.source
    );
    let m = metrics_of(&conv.lines);
    let node = &m.nodes[0];
    let total: u64 = node.intervals.iter().map(|i| i.command("get").calls).sum();
    // Deltas before the restart, the restart's new value, deltas after: never negative.
    let expected = (calls[restart - 1] - calls[0]) + calls[n - 1];
    assert_eq!(total, expected);
    assert_eq!(node.intervals.iter().filter(|i| i.restarted).count(), 1);
}
