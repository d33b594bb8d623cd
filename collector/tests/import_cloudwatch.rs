//! `slotscope import-metrics --cloudwatch-json` end to end on the ElastiCache sample
//! (tests/fixtures/metrics/cloudwatch-elasticache-*.json, constructed from the documented shape):
//! the recording made from CloudWatch alone shows connection churn, with the `ClusterBasedCmds`
//! refreshes beside it, through `analyze --format json`; the same pages without the churn show
//! none; a missing page writes nothing and exits 2.

mod common;

use common::{slotscope, temp_dir, text};

use std::path::{Path, PathBuf};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/metrics")
        .join(name)
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn analyze(recording: &Path) -> Value {
    let o = slotscope(&["analyze", "--format", "json", p(recording)]);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).expect("analyze --format json")
}

fn churn(report: &Value) -> Option<&Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "connection_churn")
}

fn import(queries: &Path, pages: &[&Path], out: &Path) -> std::process::Output {
    let mut args = vec![
        "import-metrics",
        "--cloudwatch-queries",
        p(queries),
        "--cloudwatch-json",
    ];
    args.extend(pages.iter().map(|x| p(x)));
    args.extend(["--out", p(out)]);
    slotscope(&args)
}

#[test]
fn cloudwatch_alone_shows_churn_and_the_refreshes() {
    let dir = temp_dir("import-cloudwatch");
    let queries = fixture("cloudwatch-elasticache-queries.json");
    let pages = [
        fixture("cloudwatch-elasticache-page1.json"),
        fixture("cloudwatch-elasticache-page2.json"),
    ];
    let out = dir.join("cw.jsonl");
    let o = import(&queries, &[&pages[0], &pages[1]], &out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("3 nodes"), "{}", text(&o));
    let report = analyze(&out);
    let f = churn(&report).unwrap_or_else(|| panic!("no churn: {report:#}"));
    let new = f["numbers"]["new_connections_per_sec"].as_f64().unwrap();
    let open = f["numbers"]["open_connections"].as_f64().unwrap();
    let refresh = f["numbers"]["refresh_per_sec:cluster|slots"]
        .as_f64()
        .unwrap();
    assert!(new > open, "new {new}/s against {open} open");
    assert!(
        refresh > 0.0,
        "ClusterBasedCmds as cluster|slots: {refresh}/s"
    );
    // The header says where the data came from and what ClusterBasedCmds stands for.
    let first = std::fs::read_to_string(&out).unwrap();
    let header: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let source = header["source"].as_str().unwrap();
    assert!(source.contains("cloudwatch get-metric-data"), "{source}");
    assert!(source.contains("ClusterBasedCmds"), "{source}");

    // The same pages with NewConnections a handful a minute: no churn.
    let q: Value = serde_json::from_str(&std::fs::read_to_string(&queries).unwrap()).unwrap();
    let new_ids: Vec<&str> = q
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["MetricStat"]["Metric"]["MetricName"] == "NewConnections")
        .map(|q| q["Id"].as_str().unwrap())
        .collect();
    let mut calm = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(page).unwrap()).unwrap();
        for r in v["MetricDataResults"].as_array_mut().unwrap() {
            if new_ids.contains(&r["Id"].as_str().unwrap()) {
                for x in r["Values"].as_array_mut().unwrap() {
                    *x = Value::from(3.0);
                }
            }
        }
        let path = dir.join(format!("calm{i}.json"));
        std::fs::write(&path, v.to_string()).unwrap();
        calm.push(path);
    }
    let out = dir.join("calm.jsonl");
    let o = import(&queries, &[&calm[0], &calm[1]], &out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(churn(&analyze(&out)).is_none(), "churn without churn");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_page_writes_nothing_and_exits_2() {
    let dir = temp_dir("import-cloudwatch-partial");
    let out = dir.join("cw.jsonl");
    let o = import(
        &fixture("cloudwatch-elasticache-queries.json"),
        &[&fixture("cloudwatch-elasticache-page1.json")],
        &out,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("NextToken"), "{}", text(&o));
    assert!(!out.exists());
    assert!(!dir.join("cw.jsonl.tmp").exists());
    // --cloudwatch-json without its queries is a usage error.
    let o = slotscope(&[
        "import-metrics",
        "--cloudwatch-json",
        p(&fixture("cloudwatch-elasticache-page1.json")),
        "--out",
        p(&out),
    ]);
    assert!(!o.status.success());
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
