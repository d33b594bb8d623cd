//! A node's failure as the polls know it: begun somewhere between the node's last answer and the
//! poll that failed, ended somewhere between the last failure and the next answer (at that
//! answer when it waited for the node). The replay places each edge in the middle of its window
//! and replays the other places too where they may change its answer (`fault_edges.rs`).

use slotscope_core::info::InfoReport;
use slotscope_core::node::NodeRef;
use slotscope_core::recording::{FailureKind, InfoSample, Line, PollFailed};
use slotscope_core::replay::{
    model, replay, replay_majority, replay_over_moments, FaultKind, SimCluster, SimClusterBuilder,
    MOMENTS,
};
use slotscope_core::time::Timestamp;

mod sim;
use sim::*;

/// An `INFO` sample of A `ms` after the start that took `latency_us`.
fn info_of_a(ms: u64, latency_us: u64) -> Line {
    Line::Info(InfoSample {
        t: Timestamp(at(0).0 + ms),
        node: NodeRef {
            addr: addr(A),
            id: None,
        },
        latency_us,
        info: InfoReport::parse("# Server\r\nuptime_in_seconds:5\r\n").expect("INFO text"),
    })
}

/// A poll of A `ms` after the start that failed by `kind`.
fn failed_of_a(ms: u64, kind: FailureKind) -> Line {
    Line::PollFailed(PollFailed {
        t: Timestamp(at(0).0 + ms),
        node: NodeRef {
            addr: addr(A),
            id: None,
        },
        step: "INFO".into(),
        kind,
        error: "INFO: connection lost: unexpected end of file".into(),
    })
}

/// Incident 2 with `lines` folded in (the builder's poll: every 1 s, 800 ms timeout).
fn incident2_with(lines: &[Line]) -> SimCluster {
    let mut builder: SimClusterBuilder = incident2_builder();
    for l in lines {
        builder.push(l);
    }
    builder.build()
}

#[test]
fn a_node_killed_between_two_polls_is_replayed_at_the_moments_between_and_the_majority_answers() {
    // A remapped redis-py 5.0.0 storm (every answer collapsed onto A, a reset about every
    // 100 ms): A answered at +3.0 s and its connection was found lost at +3.5 s, A down from
    // then on. A connection error in one of the storm's commands pops A, the only startup node
    // (wedged); one in its initialisation keeps it (every later command fails all the same, but
    // in initialize()). Where in the storm's cycle the death came decides: the replay tries 15
    // places of the half second, answers with the majority and says how many wedged.
    let cluster = incident2_with(&[
        info_of_a(2_500, 300),
        info_of_a(3_000, 300),
        failed_of_a(3_500, FailureKind::Io),
    ]);
    let faults = cluster.faults();
    assert_eq!(faults.len(), 1);
    assert_eq!(faults[0].kind, FaultKind::ConnectionError);
    assert_eq!(faults[0].span.start, Timestamp(at(0).0 + 3_250));
    assert!(faults[0].span.end > at(3_600), "down past the end");
    assert!(cluster.has_uncertain_moments());
    let w = paced(8, 57);
    let opts = remapped_py5_options();
    let build = || model("redis-py@5.0.0", opts.clone());
    let each: Vec<bool> = (0..MOMENTS)
        .map(|i| {
            let placed = cluster.at_moment(i, MOMENTS);
            let start = placed.faults()[0].span.start;
            assert!(
                start > at(3) && start <= Timestamp(at(3).0 + 500),
                "{start:?}"
            );
            replay(&placed, &w, build().unwrap().as_mut()).wedged
        })
        .collect();
    assert!(each.contains(&true) && each.contains(&false), "{each:?}");
    let r = replay_over_moments(&cluster, &w, build).unwrap();
    let k = r.moments.expect("replayed at the window's moments");
    assert_eq!(u64::from(k.tried), MOMENTS);
    assert_eq!(
        usize::try_from(k.wedged).unwrap(),
        each.iter().filter(|&&w| w).count()
    );
    assert_eq!(r.wedged, 2 * k.wedged > k.tried);
    // Ranking stops once the majority is known: the same answer, the same report.
    let mut m = replay_majority(&cluster, &w, build).unwrap();
    let km = m.moments.take().expect("replayed at the window's moments");
    assert!(km.tried >= 8 && km.tried <= k.tried, "{km:?}");
    assert!(km.wedged >= 8 || km.tried - km.wedged >= 8, "{km:?}");
    let mut full = r.clone();
    full.moments = None;
    assert_eq!(m, full);
}

#[test]
fn a_stall_ends_at_the_answer_that_waited_for_it() {
    // A stopped answering after +3.0 s: the polls sent at +3.2 s and +4.2 s timed out (800 ms);
    // the one sent at +5.2 s waited 400 ms, far slower than A's healthy answers (300 µs): A
    // came back at +5.6 s.
    let cluster = incident2_with(&[
        info_of_a(3_000, 300),
        failed_of_a(4_000, FailureKind::Timeout),
        failed_of_a(5_000, FailureKind::Timeout),
        info_of_a(5_600, 400_000),
        info_of_a(6_200, 250),
    ]);
    let span = cluster.faults()[0].span;
    assert_eq!(span.start, Timestamp(at(0).0 + 3_100));
    assert_eq!(span.end, Timestamp(at(0).0 + 5_600));
    for k in [0, MOMENTS - 1] {
        assert_eq!(cluster.at_moment(k, MOMENTS).faults()[0].span.end, span.end);
    }
}

#[test]
fn a_stall_answered_at_once_ended_before_that_poll_was_sent() {
    // The same stall, but the poll at +5.6 s answered in 300 µs like any other: A was back
    // somewhere between the last timeout (+5.0 s) and that poll.
    let cluster = incident2_with(&[
        info_of_a(3_000, 300),
        failed_of_a(4_000, FailureKind::Timeout),
        failed_of_a(5_000, FailureKind::Timeout),
        info_of_a(5_600, 300),
    ]);
    let span = cluster.faults()[0].span;
    assert_eq!(span.end, Timestamp(at(0).0 + 5_300));
    let first = cluster.at_moment(0, MOMENTS).faults()[0].span.end;
    let last = cluster.at_moment(MOMENTS - 1, MOMENTS).faults()[0].span.end;
    assert!(first >= at(5) && first < span.end, "{first:?}");
    assert!(
        last > span.end && last < Timestamp(at(0).0 + 5_600),
        "{last:?}"
    );
}
