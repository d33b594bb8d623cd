//! `slotscope_core::import::cloudwatch`: `aws cloudwatch get-metric-data` pages for
//! `AWS/ElastiCache` (tests/fixtures/metrics/cloudwatch-elasticache-*.json, constructed from the
//! documented shape, see its README) and generated pages drawn at random (seed printed,
//! `SLOTSCOPE_SEED=N` replays one): pages merged, results tied to their metric and node through
//! the queries' `Id`s, per-period counts accumulated into counters placed at the period's end,
//! partial data refused, missing datapoints stated.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};
use slotscope_core::import::cloudwatch::{self, parse_iso8601, Page, Query};
use slotscope_core::import::{convert, ImportError, SourceInfo};
use slotscope_core::metrics::Metrics;
use slotscope_core::recording::Line;
use slotscope_core::time::Timestamp;

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/metrics")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn src(step_ms: u64, notes: &[String]) -> SourceInfo {
    SourceInfo {
        description: format!("test; {}", notes.join("; ")),
        step_ms: Some(step_ms),
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

fn sample() -> (Vec<Query>, Vec<(String, Page)>) {
    let q = cloudwatch::parse_queries("queries", &fixture("cloudwatch-elasticache-queries.json"))
        .unwrap();
    let pages = (1..=2)
        .map(|i| {
            let name = format!("cloudwatch-elasticache-page{i}.json");
            let p = cloudwatch::parse_page(&name, &fixture(&name)).unwrap();
            (name, p)
        })
        .collect();
    (q, pages)
}

/// The sum of a metric's values for one cluster id over every page of the sample, read with
/// serde_json directly (not through the module under test).
fn sample_sum(metric: &str, cluster: &str) -> f64 {
    let queries: Value =
        serde_json::from_str(&fixture("cloudwatch-elasticache-queries.json")).unwrap();
    let id = queries
        .as_array()
        .unwrap()
        .iter()
        .find(|q| {
            q["MetricStat"]["Metric"]["MetricName"] == metric
                && q["MetricStat"]["Metric"]["Dimensions"][0]["Value"] == cluster
        })
        .unwrap()["Id"]
        .clone();
    let mut sum = 0.0;
    for i in 1..=2 {
        let page: Value =
            serde_json::from_str(&fixture(&format!("cloudwatch-elasticache-page{i}.json")))
                .unwrap();
        for r in page["MetricDataResults"].as_array().unwrap() {
            if r["Id"] == id {
                sum += r["Values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .sum::<f64>();
            }
        }
    }
    sum
}

#[test]
fn iso8601_times_as_the_cli_prints_them() {
    let t = parse_iso8601("2025-03-14T05:12:00+00:00").unwrap();
    assert_eq!(t.to_rfc3339(), "2025-03-14T05:12:00.000Z");
    assert_eq!(parse_iso8601("2025-03-14T05:12:00Z"), Some(t));
    assert_eq!(parse_iso8601("2025-03-14T07:12:00+02:00"), Some(t));
    assert_eq!(parse_iso8601("2025-03-14T04:42:00-00:30"), Some(t));
    assert_eq!(
        parse_iso8601("2025-03-14T05:12:00.25Z"),
        Some(Timestamp(t.0 + 250))
    );
    assert_eq!(parse_iso8601("2025-03-14 05:12"), None);
    assert_eq!(parse_iso8601("2025-02-30T05:12:00Z"), None);
}

#[test]
fn the_sample_becomes_counters_per_node_with_churn_and_refreshes() {
    let (q, pages) = sample();
    assert_eq!(q.len(), 18);
    let imp = cloudwatch::import("sample", &q, &pages).unwrap();
    assert_eq!(imp.step_ms, 60_000);
    let notes = imp.notes.join("; ");
    assert!(notes.contains("ClusterBasedCmds"), "{notes}");
    assert!(notes.contains("EngineCPUUtilization"), "{notes}");
    assert!(!notes.contains("no datapoint"), "{notes}");
    let conv = convert("sample", &imp.series, &src(imp.step_ms, &imp.notes)).unwrap();
    let names: Vec<String> = conv.nodes.iter().map(ToString::to_string).collect();
    assert_eq!(
        names,
        [
            "orders-0001-001:6379",
            "orders-0002-001:6379",
            "orders-0003-001:6379"
        ]
    );
    let m = metrics_of(&conv.lines);
    for node in &m.nodes {
        let cluster = node.addr.to_string().trim_end_matches(":6379").to_owned();
        let new: u64 = node.intervals.iter().map(|i| i.connections_received).sum();
        assert_eq!(new as f64, sample_sum("NewConnections", &cluster));
        let refresh: u64 = node
            .intervals
            .iter()
            .map(|i| i.command("cluster|slots").calls)
            .sum();
        assert_eq!(refresh as f64, sample_sum("ClusterBasedCmds", &cluster));
        let key: u64 = node
            .intervals
            .iter()
            .map(|i| i.command("keybasedcmds").calls)
            .sum();
        assert_eq!(key as f64, sample_sum("KeyBasedCmds", &cluster));
        // Every interval is one period, and the open connections are CurrConnections.
        assert!(node.intervals.iter().all(|i| i.span.millis() == 60_000));
        assert!(node
            .intervals
            .iter()
            .all(|i| i.connected_clients.is_some_and(|c| (30..=50).contains(&c))));
    }
}

#[test]
fn partial_data_without_a_later_page_is_refused() {
    let (q, mut pages) = sample();
    // The first page alone: it has a NextToken.
    let e = cloudwatch::import("sample", &q, &pages[..1]).unwrap_err();
    assert!(e.to_string().contains("NextToken"), "{e}");
    // Without its NextToken, its results still say PartialData.
    pages[0].1.next_token = None;
    let e = cloudwatch::import("sample", &q, &pages[..1]).unwrap_err();
    assert!(matches!(e, ImportError::CloudWatch { .. }));
    assert!(e.to_string().contains("PartialData"), "{e}");
    // Pages out of order: the PartialData page last.
    let swapped = vec![pages[1].clone(), pages[0].clone()];
    let e = cloudwatch::import("sample", &q, &swapped).unwrap_err();
    assert!(e.to_string().contains("PartialData"), "{e}");
}

#[test]
fn a_result_without_its_query_or_an_error_status_is_refused() {
    let (mut q, pages) = sample();
    let gone = q.remove(3).id;
    let e = cloudwatch::import("sample", &q, &pages).unwrap_err();
    assert!(e.to_string().contains(&gone), "{e}");
    let (q, mut pages) = sample();
    pages[1].1.results[0].status = cloudwatch::StatusCode::Forbidden;
    let e = cloudwatch::import("sample", &q, &pages).unwrap_err();
    assert!(e.to_string().contains("Forbidden"), "{e}");
    assert!(cloudwatch::parse_page("x", "{\"MetricDataResults\":[").is_err());
    assert!(cloudwatch::parse_page("x", "{\"status\":\"success\"}").is_err());
    let uneven =
        r#"{"MetricDataResults":[{"Id":"m","Timestamps":["2025-03-14T05:00:00Z"],"Values":[]}]}"#;
    assert!(cloudwatch::parse_page("x", uneven).is_err());
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const METRICS: [(&str, &str); 4] = [
    ("CurrConnections", "Average"),
    ("NewConnections", "Sum"),
    ("KeyBasedCmds", "Sum"),
    ("ClusterBasedCmds", "Sum"),
];

/// One draw: nodes, their datapoints with some periods missing, cut into pages in a random
/// order. Checks every period's count lands in the interval ending at the period's end.
fn one_draw(rng: &mut Rng) {
    const T0: u64 = 1_741_928_400_000;
    const P: u64 = 60_000;
    let nodes = 1 + rng.below(4) as usize;
    let shared = rng.below(2) == 0; // one cluster id, several node ids
    let periods = 8 + rng.below(30);
    let mut queries = Vec::new();
    // Id -> (node addr, metric, datapoints)
    let mut truth: BTreeMap<String, (String, &str, BTreeMap<u64, f64>)> = BTreeMap::new();
    let mut inner_gap = false;
    for n in 0..nodes {
        let (cluster, node_id) = if shared {
            ("cache".to_owned(), format!("{:04}", n + 1))
        } else {
            (format!("cache-{:04}-001", n + 1), "0001".to_owned())
        };
        let addr = if shared && nodes > 1 {
            format!("{cluster}-{node_id}:6379")
        } else {
            format!("{cluster}:6379")
        };
        for (j, (metric, stat)) in METRICS.iter().enumerate() {
            let id = format!("q{n}x{j}");
            queries.push(
                json!({"Id": id, "MetricStat": {"Metric": {"Namespace": "AWS/ElastiCache",
                "MetricName": metric, "Dimensions": [{"Name": "CacheClusterId", "Value": cluster},
                {"Name": "CacheNodeId", "Value": node_id}]}, "Period": 60, "Stat": stat}}),
            );
            let mut pts = BTreeMap::new();
            for k in 0..periods {
                if rng.below(8) == 0 {
                    continue; // a missing datapoint
                }
                pts.insert(T0 + k * P, (1 + rng.below(5000)) as f64);
            }
            if pts.is_empty() {
                pts.insert(T0, 7.0);
            }
            let ks: Vec<u64> = pts.keys().copied().collect();
            inner_gap |= ks.windows(2).any(|w| w[1] - w[0] > P);
            truth.insert(id, (addr.clone(), metric, pts));
        }
    }
    // Pages: each result cut at random points, newest or oldest first, results shuffled.
    let n_pages = 1 + rng.below(4) as usize;
    let descending = rng.below(2) == 0;
    let mut pages: Vec<Vec<Value>> = vec![Vec::new(); n_pages];
    for (id, (_, _, pts)) in &truth {
        let mut all: Vec<(u64, f64)> = pts.iter().map(|(&t, &x)| (t, x)).collect();
        if descending {
            all.reverse();
        }
        let mut cuts: Vec<usize> = (0..n_pages - 1)
            .map(|_| rng.below(all.len() as u64 + 1) as usize)
            .collect();
        cuts.sort_unstable();
        cuts.insert(0, 0);
        cuts.push(all.len());
        // The last page the result is on is the one with its last points.
        let last = (0..n_pages)
            .rev()
            .find(|&p| cuts[p + 1] > cuts[p])
            .unwrap_or(0);
        for p in 0..=last {
            // Sometimes a page repeats the previous page's last point (a merge must not count it twice).
            let from = if p > 0 && cuts[p] > 0 && rng.below(3) == 0 {
                cuts[p] - 1
            } else {
                cuts[p]
            };
            let part = &all[from..cuts[p + 1]];
            pages[p].push(json!({"Id": id, "Label": id,
                "Timestamps": part.iter().map(|(t, _)| Timestamp(*t).to_rfc3339()).collect::<Vec<_>>(),
                "Values": part.iter().map(|(_, x)| x).collect::<Vec<_>>(),
                "StatusCode": if p == last { "Complete" } else { "PartialData" }}));
        }
    }
    let mut parsed = Vec::new();
    for (p, mut results) in pages.into_iter().enumerate() {
        for i in (1..results.len()).rev() {
            results.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let next = if p + 1 < n_pages {
            json!(format!("token{p}"))
        } else {
            Value::Null
        };
        let text =
            json!({"MetricDataResults": results, "NextToken": next, "Messages": []}).to_string();
        let name = format!("page{p}");
        parsed.push((name.clone(), cloudwatch::parse_page(&name, &text).unwrap()));
    }
    let q: Vec<Query> =
        cloudwatch::parse_queries("queries", &Value::Array(queries).to_string()).unwrap();
    let imp = cloudwatch::import("generated", &q, &parsed).unwrap();
    assert_eq!(
        imp.notes.iter().any(|n| n.contains("no datapoint")),
        inner_gap,
        "missing datapoints stated iff some: {:?}",
        imp.notes
    );
    let conv = convert("generated", &imp.series, &src(imp.step_ms, &imp.notes)).unwrap();
    assert_eq!(conv.nodes.len(), nodes);
    let m = metrics_of(&conv.lines);
    for (id, (addr, metric, pts)) in &truth {
        let node = m
            .nodes
            .iter()
            .find(|n| n.addr.to_string() == *addr)
            .unwrap_or_else(|| panic!("{id}: no node {addr}"));
        for (&t, &x) in pts {
            let i = node
                .intervals
                .iter()
                .find(|i| i.span.end == Timestamp(t + P))
                .unwrap_or_else(|| panic!("{id}: no interval ending {}", t + P));
            let got = match *metric {
                "CurrConnections" => i.connected_clients.unwrap_or(0),
                "NewConnections" => i.connections_received,
                "KeyBasedCmds" => i.command("keybasedcmds").calls,
                _ => i.command("cluster|slots").calls,
            };
            assert_eq!(got as f64, x, "{id} {metric} of the period from {t}");
        }
        if *metric == "NewConnections" {
            let total: u64 = node.intervals.iter().map(|i| i.connections_received).sum();
            assert_eq!(total as f64, pts.values().sum::<f64>(), "{id}");
        }
    }
    if n_pages > 1 {
        // The last page missing: refused.
        assert!(cloudwatch::import("generated", &q, &parsed[..n_pages - 1]).is_err());
    }
}

#[test]
fn generated_pages_merge_to_every_periods_count() {
    let seed = std::env::var("SLOTSCOPE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("import_cloudwatch: SLOTSCOPE_SEED={seed}");
    let mut rng = Rng(seed | 1);
    for _ in 0..50 {
        one_draw(&mut rng);
    }
}
