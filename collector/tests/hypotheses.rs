//! `slotscope hypotheses` on the real incident recordings: the address_remap storms of incident 2
//! are best explained by a remapped client, incident 1 (redis-py 5.0.0 wedged on Valkey) by
//! redis-py 5.0.0 rather than 8.0.0.

#[allow(dead_code)]
mod common;

use common::{slotscope, text};

fn fixture(name: &str) -> String {
    format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn hypotheses_json(name: &str) -> serde_json::Value {
    let file = fixture(name);
    let o = slotscope(&["hypotheses", &file, "--format", "json", "--seed", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn variants(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v["variants"].as_array().unwrap()
}

fn assert_well_formed(v: &serde_json::Value) {
    let list = variants(v);
    assert!(list.len() >= 11, "{} variants", list.len());
    let scores: Vec<f64> = list.iter().map(|r| r["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    for r in list {
        assert!(r["model"].is_string() && r["config"].is_object());
        for m in [
            "moved_share",
            "moved_per_sec",
            "new_connections_per_sec",
            "cluster_slots_per_sec",
            "traffic_ended",
        ] {
            let a = r["metrics"][m]["agreement"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&a), "{m}: {a}");
            assert!(!r["metrics"][m]["observed"].is_null());
            assert!(!r["metrics"][m]["predicted"].is_null());
        }
    }
}

#[test]
fn incident2_storms_are_best_explained_by_address_remap() {
    for name in ["incident2-valkey.jsonl.zst", "incident2-redis.jsonl.zst"] {
        let v = hypotheses_json(name);
        assert_well_formed(&v);
        let top = &variants(&v)[0];
        assert!(
            top["config"]["address_remap"].is_string(),
            "{name}: top variant {top:#}"
        );
    }
}

#[test]
fn incident1_redis_py_5_ranks_above_every_redis_py_8_variant() {
    let v = hypotheses_json("incident1-redis-py-5.0.0-valkey.jsonl.zst");
    assert_well_formed(&v);
    let list = variants(&v);
    let best = |model: &str| {
        list.iter()
            .position(|r| r["model"] == model)
            .unwrap_or_else(|| panic!("no {model} variant"))
    };
    let first_py8 = best("redis-py@8.0.0");
    assert!(best("redis-py@5.0.0") < first_py8);
    let best_py5 = list[best("redis-py@5.0.0")]["score"].as_f64().unwrap();
    for r in list.iter().filter(|r| r["model"] == "redis-py@8.0.0") {
        assert!(best_py5 > r["score"].as_f64().unwrap(), "{r:#}");
    }
    assert_eq!(
        list[0]["metrics"]["traffic_ended"]["observed"], true,
        "the real client stopped"
    );
}

#[test]
fn text_and_markdown_show_per_metric_agreement() {
    let file = fixture("incident2-valkey.jsonl.zst");
    let o = slotscope(&["hypotheses", &file]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("MOVED/s") && out.contains("CLUSTER SLOTS/s"),
        "{out}"
    );
    assert!(out.contains("address_remap="), "{out}");
    let o = slotscope(&["hypotheses", &file, "--format", "markdown"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("| rank | variant | score |"), "{out}");
    assert!(out.contains("*observed*"), "{out}");
    let o = slotscope(&["hypotheses", "/nonexistent/recording.jsonl"]);
    assert!(!o.status.success());
}

#[test]
fn incident1_redis_py_8_ranks_first_and_the_stall_matters_for_5_0_0() {
    let v = hypotheses_json("incident1-redis-py-8.0.0-valkey.jsonl.zst");
    assert_well_formed(&v);
    let list = variants(&v);
    assert_eq!(list[0]["model"], "redis-py@8.0.0", "{:#}", list[0]);
    assert_eq!(list[0]["faults"], "recorded");
    // The fault axis: the same recording replayed without its recorded stall.
    let cleared: Vec<_> = list.iter().filter(|r| r["faults"] == "none").collect();
    assert_eq!(cleared.len(), 2, "one per redis-py release");
    // On the 5.0.0 recording the stall is what wedged the client: without it, 5.0.0 ranks far
    // below its plain variant.
    let v5 = hypotheses_json("incident1-redis-py-5.0.0-valkey.jsonl.zst");
    let score = |faults: &str| {
        variants(&v5)
            .iter()
            .find(|r| r["model"] == "redis-py@5.0.0" && r["faults"] == faults)
            .and_then(|r| r["score"].as_f64())
            .unwrap()
    };
    assert!(score("recorded") > score("none") + 0.2);
    // Other libraries are ranked too.
    for model in [
        "lettuce@6.3.2",
        "jedis@5.1.0",
        "go-redis@9.8.0",
        "redis-rs@1.8.1",
    ] {
        assert!(list.iter().any(|r| r["model"] == model), "{model}");
    }
}
