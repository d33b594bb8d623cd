//! The fault windows a recording's failed polls make in the simulated cluster: a node that
//! answers again is up again; a node whose last poll failed stays down past the recording's end.

mod common;

use common::*;
use slotscope_core::recording::{FailureKind, Line, PollFailed};
use slotscope_core::replay::{FaultKind, SimClusterBuilder};
use slotscope_core::Timestamp;

fn failed(t: u64, port: u16, id: &str) -> Line {
    Line::PollFailed(PollFailed {
        t: Timestamp(t),
        node: node(port, id),
        step: "connect".into(),
        kind: FailureKind::Connect,
        error: "connection refused".into(),
    })
}

/// A and B polled every second for 6 s; B's polls fail from 3 s, and answer again at 5 s when
/// `back`.
fn recording(back: bool) -> SimClusterBuilder {
    let mut b = SimClusterBuilder::for_recording(&header());
    b.push(&topology(T0, 7000, A, view(A, "0-8191", "8192-16383")));
    let c = Counters::default();
    for k in 0..6u64 {
        let t = T0 + k * 1000;
        b.push(&info(t, 7000, A, &c));
        if (3..5).contains(&k) || (k >= 5 && !back) {
            b.push(&failed(t, 7001, B));
        } else {
            b.push(&info(t, 7001, B, &c));
        }
    }
    b
}

#[test]
fn a_node_whose_last_poll_failed_stays_down_past_the_recordings_end() {
    let c = recording(false).build();
    let b = c.node_index(&addr(7001)).unwrap();
    let end = c.span().unwrap().end;
    // During the recording, and a minute after its end: the last thing known is a refusal.
    for t in [T0 + 4_000, end.0 + 60_000] {
        assert_eq!(
            c.fault_until(Timestamp(t), b).map(|(k, _)| k),
            Some(FaultKind::ConnectionError),
            "{}",
            t - T0
        );
    }
}

#[test]
fn a_node_that_answered_again_is_up_again() {
    let c = recording(true).build();
    let b = c.node_index(&addr(7001)).unwrap();
    assert!(c.fault_until(Timestamp(T0 + 3_500), b).is_some());
    let end = c.span().unwrap().end;
    assert_eq!(c.fault_until(Timestamp(end.0 + 60_000), b), None);
    assert_eq!(c.fault_until(Timestamp(T0 + 5_500), b), None);
}

/// A's and B's views of a cluster where C (10.0.0.1:7002) replicates B until it takes B's slots
/// over (`promoted`).
fn replicated(me: &str, promoted: bool) -> slotscope_core::topology::TopologyView {
    const C: &str = "cccccccccccccccccccccccccccccccccccccccc";
    let flag = |id: &str, role: &str| {
        if id == me {
            format!("myself,{role}")
        } else {
            role.to_owned()
        }
    };
    let text = if promoted {
        format!(
            "{A} 10.0.0.1:7000@17000 {} - 0 0 1 connected 0-8191\n{B} 10.0.0.1:7001@17001 {} - 0 0 2 disconnected\n{C} 10.0.0.1:7002@17002 {} - 0 0 3 connected 8192-16383\n",
            flag(A, "master"),
            flag(B, "master,fail"),
            flag(C, "master")
        )
    } else {
        format!(
            "{A} 10.0.0.1:7000@17000 {} - 0 0 1 connected 0-8191\n{B} 10.0.0.1:7001@17001 {} - 0 0 2 connected 8192-16383\n{C} 10.0.0.1:7002@17002 {} {B} 0 0 2 connected\n",
            flag(A, "master"),
            flag(B, "master"),
            flag(C, "slave")
        )
    };
    slotscope_core::topology::TopologyView::from_nodes(&text).unwrap()
}

#[test]
fn an_answer_lists_a_replica_from_the_start_until_the_first_view_without_it() {
    // Views every second; C replicates B in the views of 0-3 s, and owns B's slots from 4 s.
    let mut b = SimClusterBuilder::for_recording(&header());
    for k in 0..8u64 {
        let t = T0 + k * 1000;
        b.push(&topology(t, 7000, A, replicated(A, k >= 4)));
    }
    let c = b.build();
    let entries = |ms: u64| c.answer_entries(Timestamp(T0 + ms));
    // Before the first view too (the first view's replica stands for the start).
    assert_eq!(entries(0), 16_384 + 8_192);
    assert_eq!(entries(3_500), 16_384 + 8_192);
    assert_eq!(entries(4_000), 16_384);
    assert_eq!(entries(60_000), 16_384);
    // Listed in the last view: listed past the end.
    let mut b = SimClusterBuilder::for_recording(&header());
    for k in 0..3u64 {
        b.push(&topology(T0 + k * 1000, 7000, A, replicated(A, false)));
    }
    assert_eq!(
        b.build().answer_entries(Timestamp(T0 + 60_000)),
        16_384 + 8_192
    );
}
