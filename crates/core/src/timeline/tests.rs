//! The timeline folded from small synthetic recordings: two nodes A (10.0.0.1:7000) and
//! B (10.0.0.1:7001) reporting `CLUSTER NODES`.

use super::*;
use crate::node::{NodeAddr, NodeId, NodeRef};
use crate::recording::{NodeDiscovered, NodeGone};
use crate::topology::TopologyView;

const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

fn addr(port: u16) -> NodeAddr {
    NodeAddr::new("10.0.0.1", port).expect("valid address")
}

fn node(port: u16, id: &str) -> NodeRef {
    NodeRef {
        addr: addr(port),
        id: NodeId::new(id),
    }
}

/// `CLUSTER NODES` as seen by `me`: A owning `a_slots`, B owning `b_slots` (each may hold a
/// `[slot->-id]` migration on `me`'s own line).
fn view(me: &str, a_slots: &str, b_slots: &str) -> TopologyView {
    let flag = |id: &str| if id == me { "myself,master" } else { "master" };
    let text = format!(
        "{A} 10.0.0.1:7000@17000 {} - 0 0 1 connected {a_slots}\n{B} 10.0.0.1:7001@17001 {} - 0 0 2 connected {b_slots}\n",
        flag(A),
        flag(B)
    );
    TopologyView::from_nodes(&text).expect("valid CLUSTER NODES")
}

fn topology(t: u64, me: &str, v: TopologyView) -> Line {
    let port = if me == A { 7000 } else { 7001 };
    Line::Topology(TopologySample {
        t: Timestamp(t),
        node: node(port, me),
        view: v,
    })
}

fn fold(lines: &[Line]) -> ClusterTimeline {
    let mut tl = ClusterTimeline::new();
    for l in lines {
        tl.push(l);
    }
    tl
}

fn range(a: u16, b: u16) -> SlotRange {
    SlotRange::try_from((a, b)).expect("valid range")
}

fn slot(s: u16) -> Slot {
    Slot::new(s).expect("valid slot")
}

#[test]
fn a_recording_that_starts_before_the_slots_are_assigned() {
    let tl = fold(&[
        topology(1_000, A, view(A, "", "")),
        topology(1_000, B, view(B, "", "")),
        topology(2_000, A, view(A, "0-8191", "8192-16383")),
        topology(2_000, B, view(B, "0-8191", "8192-16383")),
    ]);
    let before = tl.state_at(Timestamp(1_500)).expect("a state");
    assert_eq!(before.owners.covered(), 0);
    assert!(tl.state_at(Timestamp(999)).is_none());
    assert_eq!(tl.covered_from(), Some(Timestamp(2_000)));
    let a = tl.nodes().find_addr(&addr(7000)).expect("A numbered");
    let b = tl.nodes().find_addr(&addr(7001)).expect("B numbered");
    assert_eq!(
        tl.state_at(Timestamp(2_000)).map(|s| s.ranges.clone()),
        Some(vec![(range(0, 8191), a), (range(8192, 16383), b)])
    );
    // The assignment is reported as such, never as a move between nodes.
    let moves = tl.moves();
    assert_eq!(moves.len(), 2);
    assert!(moves.iter().all(OwnerMove::is_assignment));
    assert_eq!(moves[0].to, Some(a));
    assert_eq!(moves[0].slots, 8192);
}

#[test]
fn a_recording_that_starts_mid_migration() {
    let tl = fold(&[
        topology(1_000, A, view(A, &format!("0-16383 [100->-{B}]"), "")),
        topology(1_000, B, view(B, "0-16383", &format!("[100-<-{A}]"))),
        topology(2_000, A, view(A, "0-99 101-16383", "100")),
        topology(2_000, B, view(B, "0-99 101-16383", "100")),
    ]);
    let a = tl.nodes().find_id(&NodeId::new(A).expect("id")).expect("A");
    let b = tl.nodes().find_id(&NodeId::new(B).expect("id")).expect("B");
    let first = tl.state_at(Timestamp(1_000)).expect("a state");
    assert!(first.owners.is_covered());
    assert_eq!(
        first.migration(slot(100)),
        Some(Migrating {
            slot: slot(100),
            from: a,
            to: b
        })
    );
    assert_eq!(first.migration(slot(101)), None);
    let last = tl.state_at(Timestamp(5_000)).expect("a state");
    assert!(last.migrating.is_empty());
    assert_eq!(last.owners.get(slot(100)), Some(b));
    let migrations = tl.migrations();
    assert_eq!(migrations.len(), 1);
    assert_eq!((migrations[0].from, migrations[0].to), (a, b));
    assert_eq!(migrations[0].ranges, vec![range(100, 100)]);
    // The slot moved; nothing was assigned (the recording started with every slot owned).
    let moves = tl.moves();
    assert_eq!(moves.len(), 1);
    assert_eq!(
        (moves[0].from, moves[0].to, moves[0].slots),
        (Some(a), Some(b), 1)
    );
    assert_eq!(moves[0].span.start, Timestamp(2_000));
}

#[test]
fn moves_and_states_between_two_instants() {
    let tl = fold(&[
        topology(1_000, A, view(A, "0-16383", "")),
        topology(10_000, A, view(A, "8192-16383", "0-8191")),
        topology(11_000, B, view(B, "8192-16383", "0-8191")),
        topology(12_000, A, view(A, "8192-16383", "0-8191")),
    ]);
    assert_eq!(tl.states().len(), 2, "an unchanged sample is no new state");
    assert_eq!(tl.changes(), vec![Timestamp(10_000)]);
    let early = tl.state_at(Timestamp(5_000)).expect("a state");
    let late = tl.state_at(Timestamp(20_000)).expect("a state");
    let diff = early.owners.diff(&late.owners);
    assert_eq!(diff.len(), 1);
    assert_eq!(diff[0].range, range(0, 8191));
    assert_eq!(
        tl.moves_between(TimeSpan::new(Timestamp(0), Timestamp(9_000))),
        vec![]
    );
    assert_eq!(
        tl.moves_between(TimeSpan::new(Timestamp(9_000), Timestamp(10_500)))
            .len(),
        1
    );
}

#[test]
fn membership_follows_discoveries_and_departures() {
    let tl = fold(&[
        Line::NodeDiscovered(NodeDiscovered {
            t: Timestamp(0),
            node: node(7000, A),
            via: Discovery::Seed,
        }),
        Line::NodeDiscovered(NodeDiscovered {
            t: Timestamp(100),
            node: node(7001, B),
            via: Discovery::Topology { from: addr(7000) },
        }),
        Line::NodeGone(NodeGone {
            t: Timestamp(5_000),
            node: node(7001, B),
            reason: GoneReason::Unreachable,
        }),
        Line::NodeDiscovered(NodeDiscovered {
            t: Timestamp(9_000),
            node: node(7001, B),
            via: Discovery::Recovered,
        }),
    ]);
    let a = tl.nodes().find_addr(&addr(7000)).expect("A");
    let b = tl.nodes().find_addr(&addr(7001)).expect("B");
    assert_eq!(tl.members_at(Timestamp(50)), vec![a]);
    assert_eq!(tl.members_at(Timestamp(1_000)), vec![a, b]);
    assert_eq!(tl.members_at(Timestamp(6_000)), vec![a]);
    assert_eq!(tl.members_at(Timestamp(9_000)), vec![a, b]);
    assert_eq!(tl.membership().len(), 4);
}

#[test]
fn consensus_counts_the_latest_view_of_each_node() {
    let tl = fold(&[
        topology(1_000, A, view(A, "0-16383", "")),
        topology(1_000, B, view(B, "0-16383", "")),
        // A has seen the move of 0-99 to B; B has not yet.
        topology(2_000, A, view(A, "100-16383", "0-99")),
    ]);
    let c = tl.consensus();
    assert_eq!(c.disagreements, 100);
    let a = tl.nodes().find_id(&NodeId::new(A).expect("id")).expect("A");
    let b = tl.nodes().find_id(&NodeId::new(B).expect("id")).expect("B");
    // One vote each: the tie goes to the greater id (B's).
    assert_eq!(c.owners.get(slot(0)), Some(b));
    assert_eq!(c.owners.get(slot(100)), Some(a));
}

#[test]
fn an_unreachable_node_s_last_view_votes_no_more_until_it_gives_a_new_one() {
    let gone = Line::NodeGone(NodeGone {
        t: Timestamp(3_000),
        node: node(7001, B),
        reason: GoneReason::Unreachable,
    });
    let lines = [
        topology(1_000, A, view(A, "0-16383", "")),
        topology(1_000, B, view(B, "0-16383", "")),
        // A has seen 0-99 go to B; B's view stays as it was when it stopped answering.
        topology(2_000, A, view(A, "100-16383", "0-99")),
        gone,
    ];
    let tl = fold(&lines);
    assert_eq!(tl.consensus().disagreements, 0);
    // Back, with its own (still old) view: it votes again.
    let mut back = lines.to_vec();
    back.push(topology(4_000, B, view(B, "0-16383", "")));
    assert_eq!(fold(&back).consensus().disagreements, 100);
}

/// `CLUSTER NODES` as seen by A: A the master of every slot, B its replica.
fn replicated(me: &str) -> TopologyView {
    let (fa, fb) = if me == A {
        ("myself,master", "slave")
    } else {
        ("master", "myself,slave")
    };
    let text = format!(
        "{A} 10.0.0.1:7000@17000 {fa} - 0 0 1 connected 0-16383\n{B} 10.0.0.1:7001@17001 {fb} {A} 0 0 1 connected\n"
    );
    TopologyView::from_nodes(&text).expect("valid CLUSTER NODES")
}

#[test]
fn replicas_are_noted_with_when_the_views_listed_them() {
    let tl = fold(&[
        topology(1_000, A, replicated(A)),
        topology(1_500, B, replicated(B)),
        topology(2_000, A, replicated(A)),
        // B promoted: both masters in the views, B with the slots.
        topology(3_000, B, view(B, "", "0-16383")),
    ]);
    let a = tl.nodes().find_addr(&addr(7000)).expect("A");
    let b = tl.nodes().find_addr(&addr(7001)).expect("B");
    assert_eq!(
        tl.replica_of(b, a),
        Some(TimeSpan::new(Timestamp(1_000), Timestamp(2_000)))
    );
    assert_eq!(tl.replica_of(a, b), None);
}

/// `CLUSTER NODES` as B sees A: flagged `flags` (`master,fail?`, `master,fail`).
fn flagged_by_b(flags: &str) -> TopologyView {
    let text = format!(
        "{A} 10.0.0.1:7000@17000 {flags} - 0 0 1 disconnected 0-16383\n{B} 10.0.0.1:7001@17001 myself,master - 0 0 2 connected\n"
    );
    TopologyView::from_nodes(&text).expect("valid CLUSTER NODES")
}

#[test]
fn failure_flags_are_kept_with_when_and_by_whom() {
    let tl = fold(&[
        topology(1_000, A, view(A, "0-16383", "")),
        topology(2_000, B, flagged_by_b("master,fail?")),
        topology(3_000, B, flagged_by_b("master,fail")),
        topology(4_000, B, flagged_by_b("master,fail")),
    ]);
    let a = tl.nodes().find_addr(&addr(7000)).expect("A");
    let all = TimeSpan::new(Timestamp(0), Timestamp(10_000));
    let suspected = tl.flagged(a, FailFlag::Suspected, all).expect("fail?");
    assert_eq!(
        suspected.span,
        TimeSpan::new(Timestamp(2_000), Timestamp(2_000))
    );
    assert_eq!(suspected.reporters, 1);
    let failed = tl.flagged(a, FailFlag::Failed, all).expect("fail");
    assert_eq!(
        failed.span,
        TimeSpan::new(Timestamp(3_000), Timestamp(4_000))
    );
    let early = TimeSpan::new(Timestamp(0), Timestamp(2_500));
    assert_eq!(tl.flagged(a, FailFlag::Failed, early), None);
    assert_eq!(
        FailFlag::of(&["master".into(), "fail?".into()]),
        Some(FailFlag::Suspected)
    );
    assert_eq!(FailFlag::Failed.text(), "fail");
}

#[test]
fn explicit_states_replace_one_at_the_same_instant() {
    let mut tl = ClusterTimeline::new();
    let (a, _) = tl.nodes_mut().intern_addr(&addr(7000)).expect("numbered");
    let (b, _) = tl.nodes_mut().intern_addr(&addr(7001)).expect("numbered");
    tl.set_state(
        Timestamp(0),
        SlotTable::from_ranges(&[(range(0, 16383), a)]),
        vec![],
    );
    tl.set_state(
        Timestamp(0),
        SlotTable::from_ranges(&[(range(0, 16383), b)]),
        vec![],
    );
    tl.set_state(
        Timestamp(10),
        SlotTable::from_ranges(&[(range(0, 16383), b)]),
        vec![],
    );
    assert_eq!(tl.states().len(), 1);
    assert_eq!(
        tl.state_at(Timestamp(5)).map(|s| s.owners.get(slot(0))),
        Some(Some(b))
    );
}
