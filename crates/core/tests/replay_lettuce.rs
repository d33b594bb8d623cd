//! Replay of synthetic incidents through the Lettuce 6.x model.

use slotscope_core::float;
use slotscope_core::replay::{model, ModelOptions, ReplayReport, SimCluster, Workload};

mod sim;
use sim::*;

const LETTUCE: &str = "lettuce@6.3.2";

/// A reshard in two steps 5 s apart: slots 12288-16382 move at 20 s, 8192-12287 at 25 s.
fn reshard_in_two_steps() -> SimCluster {
    let (a, b) = (addr(A), addr(B));
    let mut builder = b_owns_one_slot();
    builder.layout(
        at(20),
        &[
            (range(0, 12287), a.clone()),
            (range(12288, 16383), b.clone()),
        ],
        &[],
    );
    builder.layout(at(25), &[(range(0, 8191), a), (range(8192, 16383), b)], &[]);
    builder.build()
}

#[test]
fn default_lettuce_follows_moved_forever_after_a_reshard_between_known_nodes() {
    let (cluster, w) = (reshard(), workload(60));
    let r = run_model(&cluster, &w, &[]);
    assert_eq!(r.model, LETTUCE);
    assert_eq!(r.failed, 0);
    assert_eq!(
        r.full_reinits, 1,
        "the topology is loaded once and never again"
    );
    assert_eq!(
        r.cluster_slots_calls, 2,
        "the seed, then B discovered in its view"
    );
    // About half the commands after the reshard meet MOVED first, to the very end.
    let per_command = float::from_u64(r.moved) / float::from_u64(commands_from(&w, at(20)));
    assert!(
        (0.4..0.6).contains(&per_command),
        "MOVED per command {per_command}"
    );
    assert!(r.timeline[21..].iter().all(|s| s.moved > 0));
    assert!(r.timeline[59].moved >= 30, "{}", r.timeline[59].moved);
    // Stale for good, but not wedged: the commands still succeed (after a MOVED).
    assert!(
        !r.wedged,
        "a stale table whose commands succeed is not wedged"
    );
}

#[test]
fn moved_redirect_trigger_refreshes_once_and_moved_stops() {
    let (cluster, w) = (reshard(), workload(60));
    for set in [
        [("enableAdaptiveRefreshTrigger", "MOVED_REDIRECT")],
        [("enableAllAdaptiveRefreshTriggers", "true")],
    ] {
        let r = run_model(&cluster, &w, &set);
        assert_eq!(r.failed, 0);
        assert_eq!(
            r.moved, 1,
            "{set:?}: the refresh runs before the next command"
        );
        assert_eq!(r.full_reinits, 2);
        assert!(!r.wedged);
        // The refresh asks every known node (dynamicRefreshSources): A and B.
        assert_eq!(r.cluster_slots_calls, 4);
    }
}

#[test]
fn adaptive_refreshes_are_rate_limited_by_adaptive_refresh_triggers_timeout() {
    let (cluster, w) = (reshard_in_two_steps(), workload(60));
    let r = run_model(
        &cluster,
        &w,
        &[("enableAdaptiveRefreshTrigger", "MOVED_REDIRECT")],
    );
    // 20 s: a MOVED, a refresh; 25 s: MOVED signals dropped until the 30 s timeout (taken at
    // 20 s) has expired; the first MOVED after 50 s refreshes again.
    assert_eq!(r.full_reinits, 3);
    assert!(r.timeline[26..50].iter().all(|s| s.moved > 0));
    assert!(r.timeline[51..].iter().all(|s| s.moved == 0));
    assert!(r.moved > 400, "{}", r.moved);
    let fast = run_model(
        &cluster,
        &w,
        &[
            ("enableAdaptiveRefreshTrigger", "MOVED_REDIRECT"),
            ("adaptiveRefreshTriggersTimeout", "1"),
        ],
    );
    assert_eq!(fast.full_reinits, 3);
    assert_eq!(fast.moved, 2, "one MOVED per reshard step");
}

#[test]
fn periodic_refresh_picks_up_the_reshard_without_any_trigger() {
    let (cluster, w) = (reshard(), workload(60));
    let r = run_model(
        &cluster,
        &w,
        &[("enablePeriodicRefresh", "true"), ("refreshPeriod", "15")],
    );
    // Refreshes at 15, 30, 45 s (the first one period after the initial load): MOVED from
    // 20 s until the one at 30 s.
    assert_eq!(r.full_reinits, 4);
    assert!(r.timeline[25].moved > 0);
    assert!(r.timeline[31..].iter().all(|s| s.moved == 0));
    assert!(!r.wedged);
    let not_enabled = run_model(&cluster, &w, &[("refreshPeriod", "15")]);
    assert_eq!(
        not_enabled.full_reinits, 1,
        "refreshPeriod alone enables nothing"
    );
}

#[test]
fn default_lettuce_refuses_redirects_to_a_node_that_joined_later_in_incident1() {
    let (cluster, w) = (incident1(), workload(60));
    let r = run_model(&cluster, &w, &[]);
    // B was not in the topology loaded at 0 s: validateClusterNodeMembership refuses every
    // ASK and MOVED to it, forever.
    assert_eq!(r.nodes[B].calls, 0);
    let refused = r.errors["UnknownPartitionException"];
    let share = float::from_u64(refused) / float::from_u64(commands_from(&w, at(20)));
    assert!((0.3..0.6).contains(&share), "refused share {share}");
    assert!(r.timeline[59].errors > 30);
    // A's half is still served: not wedged.
    assert!(r.timeline[59].ok > 30);
    assert!(!r.wedged);
    assert_eq!(r.full_reinits, 1);
    // The 2 s stall: every command in it times out; the connection is kept.
    assert_eq!(
        r.errors["RedisCommandTimeoutException"],
        commands_within(&w, at(10), at(12))
    );
    assert_eq!(
        r.new_connections, 3,
        "the topology load, the cluster connection's own, then the node connection"
    );
}

#[test]
fn validate_cluster_node_membership_false_follows_redirects_to_the_new_node() {
    let (cluster, w) = (incident1(), workload(60));
    let r = run_model(&cluster, &w, &[("validateClusterNodeMembership", "false")]);
    assert_eq!(r.errors.get("UnknownPartitionException"), None);
    assert!(r.nodes[B].ok > 0);
    // Still no refresh: the moved half meets MOVED on every command.
    assert_eq!(r.full_reinits, 1);
    assert!(r.timeline[59].moved >= 30);
}

#[test]
fn all_triggers_recover_in_incident1_once_the_rate_limit_allows_a_refresh_after_the_migration() {
    let (cluster, w) = (incident1(), workload(60));
    let r = run_model(
        &cluster,
        &w,
        &[("enableAllAdaptiveRefreshTriggers", "true")],
    );
    // The ASK at 20 s refreshes at once: the view (CLUSTER NODES) lists B, which joined then,
    // so B is admitted from then on, but the slots have not moved yet; the next refresh waits
    // for the 30 s timeout: MOVED to B until just after 50 s, none after.
    assert_eq!(r.full_reinits, 3);
    assert!(r.timeline[21..].iter().all(|s| s.errors == 0));
    assert!(r.timeline[45].moved > 0);
    assert!(r.timeline[51..]
        .iter()
        .all(|s| s.errors == 0 && s.moved == 0));
    // B serves its half from the migration on (after an ASK or a MOVED until 50 s).
    let share = float::from_u64(r.nodes[B].ok) / float::from_u64(commands_from(&w, at(20)));
    assert!((0.4..0.6).contains(&share), "share to the new node {share}");
    let fast = run_model(
        &cluster,
        &w,
        &[
            ("enableAllAdaptiveRefreshTriggers", "true"),
            ("adaptiveRefreshTriggersTimeout", "1"),
        ],
    );
    assert!(fast.timeline[23..].iter().all(|s| s.errors == 0));
    assert!(!fast.wedged);
}

#[test]
fn persistent_reconnects_trigger_refreshes_while_a_node_refuses_connections() {
    let (cluster, w) = (b_refuses_for_two_seconds(), workload(30));
    let default = run_model(&cluster, &w, &[]);
    let triggered = run_model(
        &cluster,
        &w,
        &[("enableAdaptiveRefreshTrigger", "PERSISTENT_RECONNECTS")],
    );
    for r in [&default, &triggered] {
        // Commands buffered on the broken connection time out; B is reconnected after 12 s.
        assert!(r.errors["RedisCommandTimeoutException"] > 50);
        assert!(r.timeline[13..].iter().all(|s| s.errors == 0));
        assert!(!r.wedged);
    }
    assert_eq!(default.full_reinits, 1);
    // The reconnect attempt count reaches 5 within the window (31 ms after the break): one
    // refresh; the next signal falls inside the 30 s timeout.
    assert_eq!(triggered.full_reinits, 2);
    // Seed and discovered B at start; then A again (B refused: nothing sent).
    assert_eq!(triggered.cluster_slots_calls, 3);
    // The initial load's two connections, the cluster connection's own, A and B, then B again
    // after the outage.
    assert_eq!(default.new_connections, 2 + 1 + 2 + 1);
}

#[test]
fn socket_address_resolver_onto_one_address_fails_the_other_half_after_max_redirects() {
    // Every connection goes to A; the partitions keep B's announced address. B's half meets
    // MOVED (to B) on A, follows it 5 times to the same place and fails with the 6th; A's half
    // is served. No trigger is on: the topology is loaded once.
    let (cluster, w) = (incident2(), workload_of(10, 100, "zadd"));
    let r = run_model(&cluster, &w, &[("socketAddressResolver", A)]);
    assert_other_half_fails(&r, "RedisCommandExecutionException");
    assert_eq!(r.moved, 6 * r.failed);
    assert_eq!(r.succeeded + r.failed, r.commands);
    assert_eq!(r.nodes.get(B).map_or(0, |n| n.calls), 0);
    // The seed's view, then B's (discovered in it), both asked of A; the cluster connection's
    // own; then one connection per partition (A's and B's, both to A).
    assert_eq!(r.full_reinits, 1);
    assert_eq!(r.cluster_slots_calls, 2);
    assert_eq!(r.nodes[A].cluster_slots, 2);
    assert_eq!(r.new_connections, 2 + 1 + 2);
    assert_eq!(r.held.table_nodes, 2);
    // Half the commands succeed to the end: not wedged.
    assert!(r.timeline.iter().all(|s| s.ok > 0));
    assert!(!r.wedged);
    // With the MOVED trigger a refresh runs, and changes nothing: the view is the same.
    let adaptive = run_model(
        &cluster,
        &w,
        &[
            ("socketAddressResolver", A),
            ("enableAdaptiveRefreshTrigger", "MOVED_REDIRECT"),
        ],
    );
    assert_eq!(adaptive.failed, r.failed);
    assert!(adaptive.full_reinits > 1);
    // Without a resolver nothing fails.
    let plain = run_model(&cluster, &w, &[]);
    assert_eq!((plain.failed, plain.moved), (0, 0));
}

#[test]
fn lettuce_options_are_checked() {
    let opts = ModelOptions::new(addr(A));
    let with = |k: &str, v: &str| {
        let mut o = opts.clone();
        o.set(k, v).unwrap();
        model(LETTUCE, o)
    };
    assert!(with("maxRedirects", "3").is_ok());
    assert!(with("maxRedirects", "many").is_err());
    assert!(with("adaptiveRefreshTriggersTimeout", "0.5").is_ok());
    assert!(with("adaptiveRefreshTriggersTimeout", "-1").is_err());
    assert!(with(
        "enableAdaptiveRefreshTrigger",
        "MOVED_REDIRECT,ASK_REDIRECT"
    )
    .is_ok());
    assert!(with("enableAdaptiveRefreshTrigger", "MOVED").is_err());
    assert!(with("refreshPeriod", "0").is_err());
    assert!(with("maxAttempts", "5").is_err(), "a Jedis option");
    assert!(
        with("reinitialize_steps", "3").is_err(),
        "a redis-py option"
    );
}

/// Replays `w` on `cluster` through LETTUCE with the options `set`.
fn run_model(cluster: &SimCluster, w: &Workload, set: &[(&str, &str)]) -> ReplayReport {
    run(cluster, w, LETTUCE, set)
}
