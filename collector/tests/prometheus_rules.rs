//! The shipped Prometheus alert rules (deploy/prometheus/) pass `promtool check rules` and their
//! unit tests (`promtool test rules`). Skipped, saying so, only when promtool is not installed
//! (scripts/setup installs it with Debian's `prometheus` package).

use std::path::{Path, PathBuf};
use std::process::Command;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/prometheus")
}

fn promtool(args: &[&str]) -> Option<std::process::Output> {
    match Command::new("promtool")
        .args(args)
        .current_dir(deploy())
        .output()
    {
        Ok(o) => Some(o),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("cannot run promtool: {e}"),
    }
}

#[test]
fn the_alert_rules_check_and_pass_their_unit_tests() {
    let Some(check) = promtool(&["check", "rules", "slotscope.rules.yml"]) else {
        eprintln!("SKIPPED: promtool is not installed (scripts/setup installs Debian's prometheus package)");
        return;
    };
    let text = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert!(
        check.status.success(),
        "promtool check rules:\n{}",
        text(&check)
    );
    // Every alert named in the rules is unit-tested.
    let rules = std::fs::read_to_string(deploy().join("slotscope.rules.yml")).unwrap();
    let tests = std::fs::read_to_string(deploy().join("slotscope.rules.test.yml")).unwrap();
    let alerts: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
        .collect();
    assert!(alerts.len() >= 5, "{alerts:?}");
    for a in &alerts {
        assert!(
            tests.contains(&format!("alertname: {a}\n")),
            "{a} has no promtool unit test"
        );
    }
    let test = promtool(&["test", "rules", "slotscope.rules.test.yml"]).unwrap();
    assert!(
        test.status.success(),
        "promtool test rules:\n{}",
        text(&test)
    );
    println!(
        "promtool: {} alert rules checked and unit-tested",
        alerts.len()
    );
}
