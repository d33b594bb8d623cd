//! A client started before the cluster's slots are assigned (the recording starts while
//! `CLUSTER SLOTS` answers nothing, then partly, then everything): each of the other libraries'
//! models checks the answer the way its library does, and none of them is wedged once the slots
//! are covered.

use slotscope_core::replay::{ReplayReport, SimCluster, SimClusterBuilder};

mod sim;
use sim::*;

/// A and B known from 0 s owning nothing; at 5 s A owns 0-8191 only (B not yet assigned); at
/// 10 s A owns 0-8191 and B 8192-16383.
fn assigned_late() -> SimCluster {
    let (a, b) = (addr(A), addr(B));
    let mut builder = SimClusterBuilder::new();
    builder.layout(at(0), &[], &[]);
    builder.add_node(&b);
    builder.layout(at(5), &[(range(0, 8191), a.clone())], &[]);
    builder.layout(
        at(10),
        &[(range(0, 8191), a.clone()), (range(8192, 16383), b.clone())],
        &[],
    );
    builder.build()
}

/// Seconds of the report's timeline in which every command succeeded.
fn all_ok(r: &ReplayReport, from: usize, to: usize) -> bool {
    r.timeline[from..to]
        .iter()
        .all(|s| s.commands > 0 && s.ok == s.commands)
}

fn check(name: &str, set: &[(&str, &str)]) -> ReplayReport {
    let w = workload(30);
    let r = run(&assigned_late(), &w, name, set);
    assert!(!r.wedged, "{name}: wedged since {:?}", r.wedged_since);
    // Before any slot is assigned nothing can succeed.
    assert_eq!(r.timeline[0].ok, 0, "{name}: {:?}", r.timeline[0]);
    // Once every slot is covered, every command succeeds after at most the library's own
    // refresh delay (go-redis: its 10 s staleness; the others at once).
    assert!(all_ok(&r, 21, 30), "{name}: {:?}", &r.timeline[10..30]);
    r
}

#[test]
fn redis_rs_accepts_an_empty_answer_and_reconnects_to_its_initial_nodes() {
    let r = check("redis-rs@1.8.1", &[]);
    assert!(all_ok(&r, 11, 30), "{:?}", &r.timeline[10..12]);
}

#[test]
fn go_redis_accepts_an_empty_answer_and_sends_uncovered_slots_to_a_random_node() {
    check("go-redis@9.8.0", &[]);
}

#[test]
fn lettuce_with_defaults_stays_on_its_empty_table_as_the_library_does() {
    // Lettuce applies a view without slots and then fails every command with
    // PartitionSelectorException; only the UNCOVERED_SLOT trigger (or a periodic refresh) would
    // reload it, and both are off by default.
    let w = workload(30);
    let r = run(&assigned_late(), &w, "lettuce@6.3.2", &[]);
    assert!(r.wedged);
    assert_eq!(r.succeeded, 0);
    assert_eq!(
        r.errors.get("PartitionSelectorException"),
        Some(&r.commands)
    );
}

#[test]
fn lettuce_with_the_uncovered_slot_trigger_recovers_once_the_slots_are_covered() {
    // The trigger fires at once, then is rate-limited (adaptiveRefreshTriggersTimeout): with 5 s
    // the refresh after 10 s finds every slot covered.
    let r = check(
        "lettuce@6.3.2",
        &[
            ("enableAdaptiveRefreshTrigger", "UNCOVERED_SLOT"),
            ("adaptiveRefreshTriggersTimeout", "5"),
        ],
    );
    assert!(r.full_reinits >= 2, "{} views applied", r.full_reinits);
}

#[test]
fn jedis_refuses_an_incomplete_answer_and_retries_at_the_next_command() {
    let r = check("jedis@5.1.0", &[]);
    // No answer before 10 s covers every slot: nothing applied, nothing succeeds.
    assert!(r.timeline[..10]
        .iter()
        .all(|s| s.ok == 0 && s.full_reinits == 0));
    assert!(all_ok(&r, 10, 30), "{:?}", &r.timeline[9..12]);
}
