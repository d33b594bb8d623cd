//! `slotscope replay` on the real incident 1 recording (redis-py 5.0.0 against Valkey, the only
//! node SIGSTOPped for 2 s, then a scale-out to two nodes).

#[allow(dead_code)]
mod common;

use common::{slotscope, text};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/incident1-redis-py-5.0.0-valkey.jsonl.zst"
);

fn replay_json(model: &str) -> serde_json::Value {
    let o = slotscope(&["replay", FIXTURE, "--model", model, "--format", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn redis_py_5_replay_of_incident1_ends_wedged_and_never_reaches_the_new_node() {
    let r = replay_json("redis-py@5.0.0");
    assert_eq!(r["wedged"], true);
    assert!(r["errors"]["RedisClusterException"].as_u64().unwrap() > 0);
    assert_eq!(r["nodes"]["127.0.0.1:22807"]["calls"], 0);
    assert_eq!(r["startup_nodes"], 0);
    // The real client ran at 200 commands/s; the default rate is the one INFO shows.
    assert_eq!(r["workload"]["rate_source"], "observed");
    let rate = r["workload"]["rate_per_sec"].as_u64().unwrap();
    assert!((180..=220).contains(&rate), "observed rate {rate}");
}

#[test]
fn redis_py_8_replay_of_incident1_recovers_and_uses_the_new_node() {
    let r = replay_json("redis-py@8.0.0");
    assert_eq!(r["wedged"], false);
    assert!(r["nodes"]["127.0.0.1:22807"]["ok"].as_u64().unwrap() > 0);
    assert!(r["moved_share"]["zadd"].as_f64().unwrap() < 0.2);
}

#[test]
fn poisson_arrivals_are_chosen_named_and_keep_the_commands() {
    // The same commands, issued or skipped, at other times (their bunching is checked in the
    // core's workload tests); the report names the arrivals; an unknown kind is refused.
    let run = |arrivals: &str| {
        let o = slotscope(&[
            "replay",
            FIXTURE,
            "--model",
            "ideal",
            "--rate",
            "200",
            "--in-flight",
            "40",
            "--arrivals",
            arrivals,
            "--format",
            "json",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let (even, poisson) = (run("even"), run("poisson"));
    assert_eq!(even["workload"]["arrivals"], "even");
    assert_eq!(poisson["workload"]["arrivals"], "poisson");
    let scheduled = |r: &serde_json::Value| {
        r["commands"].as_u64().unwrap() + r["skipped_while_waiting"].as_u64().unwrap()
    };
    assert_eq!(scheduled(&even), scheduled(&poisson));
    assert_ne!(even["timeline"], poisson["timeline"]);
    let o = slotscope(&[
        "replay",
        FIXTURE,
        "--model",
        "ideal",
        "--in-flight",
        "4",
        "--arrivals",
        "poisson",
    ]);
    assert!(text(&o).contains("Poisson arrivals"), "{}", text(&o));
    let o = slotscope(&[
        "replay",
        FIXTURE,
        "--model",
        "ideal",
        "--arrivals",
        "bursty",
    ]);
    assert!(!o.status.success());
}

#[test]
fn replay_text_names_the_model_and_refuses_unknown_models_and_options() {
    let o = slotscope(&["replay", FIXTURE, "--model", "ideal"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("model: ideal") && out.contains("wedged: no"),
        "{out}"
    );
    let o = slotscope(&["replay", FIXTURE, "--model", "jedis@0.1"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("no model covers jedis 0.1.0"),
        "{}",
        text(&o)
    );
    let o = slotscope(&["replay", FIXTURE, "--model", "hiredis@1.0"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("unknown client model"), "{}", text(&o));
    let o = slotscope(&["replay", FIXTURE, "--model", "ideal", "--set", "nope=1"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("model `ideal` has no option `nope`"),
        "{}",
        text(&o)
    );
    let o = slotscope(&["replay", FIXTURE, "--model", "ideal", "--set", "no pe=1"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("unknown model option"), "{}", text(&o));
}

#[test]
fn address_remap_replay_of_incident2_shows_sustained_moved_and_a_reinit_every_five() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/incident2-valkey.jsonl.zst"
    );
    let seed = "127.0.0.1:22809";
    let remap = format!("address_remap={seed}");
    let args = [
        "replay",
        fixture,
        "--model",
        "redis-py@8.0.0",
        "--command",
        "zrevrange",
        "--format",
        "json",
    ];
    let o = slotscope(&[&args[..], &["--set", &remap]].concat());
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let share = r["moved_share"]["zrevrange"].as_f64().unwrap();
    assert!((0.3..0.5).contains(&share), "MOVED share {share}");
    let (moved, reinits) = (
        r["moved"].as_u64().unwrap(),
        r["full_reinits"].as_u64().unwrap(),
    );
    assert!(
        (moved / 5).abs_diff(reinits - 1) <= 1,
        "{moved} MOVED, {reinits} re-inits"
    );

    // Without the remap nothing sends a command to the wrong node but the first one, which
    // starts before the client has a default node and goes to a random primary (redis-py 7.1+,
    // `keyless.rs`): at most one MOVED, one initialisation.
    let o = slotscope(&args);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["moved"].as_u64().unwrap() <= 1, "{}", r["moved"]);
    assert_eq!(r["full_reinits"], 1);
}

#[test]
fn markdown_replay_has_the_figures_and_the_client_at_the_end() {
    let o = slotscope(&[
        "replay",
        FIXTURE,
        "--model",
        "redis-py@5.0.0",
        "--format",
        "markdown",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.starts_with("## Replay: `redis-py@5.0.0`"), "{out}");
    assert!(out.contains("| wedged | **yes**, since "), "{out}");
    assert!(out.contains("| at the end | 0 connections open"), "{out}");
    assert!(out.contains("| command | issued |"), "{out}");
}
