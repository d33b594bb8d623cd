//! When a node's failure began and ended, as far as the polls tell.
//!
//! A `poll_failed` line says the node failed by its moment `t`; its last answer before that says
//! it was well then. Between the two lies the failure's start: a node that stopped answering
//! (a timeout) did so before the poll that timed out was sent (`t - timeout`); a node whose
//! connection broke or was refused (killed, its process gone) did so before `t`, when the
//! collector next read from it or connected to it.
//!
//! The end lies between the last failure and the node's next answer. An `INFO` sent while the
//! node was still silent waits for it: an answer far slower than the node's healthy ones came
//! when the node came back (a `SIGSTOP` of 1.24 s live: the poll after the one that timed out
//! waited 365 ms, and the node resumed at its answer). A quick answer says only that the node was
//! back before the request was sent (`t - latency`).
//!
//! A client whose own cycle is shorter than such a window (a remapped redis-py 5.0.0 storm
//! re-initialises every ~100 ms; a connection error in its initialisation keeps its startup node,
//! one in a command pops it) meets the failure in a different step of its cycle at different
//! moments of it. So the replay places each edge in the middle of its window, and `moments.rs`
//! replays other places of it too, as it does for a `CLIENT KILL`'s window (`kills.rs`).

use crate::recording::FailureKind;
use crate::time::{TimeSpan, Timestamp};
use crate::timeline::NodeIdx;

use super::places::place;

/// Which edge of a fault window an [`Edge`] moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    /// When the failure began.
    Start,
    /// When it ended.
    End,
}

/// An uncertain edge of one fault window: the window (by its index in the cluster's faults),
/// which edge, and the first and last moment it may have been at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Edge {
    /// Index of the fault window.
    pub(super) fault: usize,
    /// Its start or its end.
    pub(super) side: Side,
    /// The earliest moment.
    pub(super) from: Timestamp,
    /// The latest moment.
    pub(super) to: Timestamp,
}

/// The window a failure seen at `t` began in: from the node's last answer before it to the
/// moment the failed request was sent (`t - timeout_ms` for a timeout) or read (`t` for a
/// connection lost or refused). An answer more than two poll intervals before that end (or none)
/// leaves one interval: the previous poll's answer is about one interval before, give or take
/// the rounds' own time.
pub(super) fn start_window(
    kind: FailureKind,
    t: Timestamp,
    timeout_ms: u64,
    interval_ms: u64,
    answered: Option<Timestamp>,
) -> (Timestamp, Timestamp) {
    let latest = match kind {
        FailureKind::Timeout => Timestamp(t.0.saturating_sub(timeout_ms)),
        _ => t,
    };
    let earliest = match answered {
        Some(a) if a.0.saturating_add(2 * interval_ms) >= latest.0 => a.0.min(latest.0),
        _ => latest.0.saturating_sub(interval_ms),
    };
    (Timestamp(earliest), latest)
}

/// The node's first `INFO` answer after a failure: when it came and how long it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct NextAnswer {
    /// When the answer came.
    pub(super) t: Timestamp,
    /// How long the request waited for it.
    pub(super) latency_us: u64,
}

/// The window a failure whose last sign came at `last` ended in, given the node's next answer
/// and the slowest of its healthy answers (µs): at the answer when the request waited longer
/// than any healthy one did (it was sent while the node was still silent), else between
/// `last` and the moment that request was sent.
pub(super) fn end_window(
    last: Timestamp,
    next: NextAnswer,
    slowest_healthy_us: u64,
) -> (Timestamp, Timestamp) {
    let answer = next.t.max(last);
    if next.latency_us > slowest_healthy_us {
        (answer, answer)
    } else {
        let sent = Timestamp(next.t.0.saturating_sub(next.latency_us / 1000));
        (last, sent.clamp(last, answer))
    }
}

/// Moves every edge of `faults` (`(node, span, kind)`) that `edges` names to the `k`-th of `n`
/// places of its window (an end never before its window's start, a start never past its end;
/// ends first).
pub(super) fn place_edges<K>(
    faults: &mut [(NodeIdx, TimeSpan, K)],
    edges: &[Edge],
    k: u64,
    n: u64,
) {
    for side in [Side::End, Side::Start] {
        for e in edges.iter().filter(|e| e.side == side) {
            if let Some((_, span, _)) = faults.get_mut(e.fault) {
                let at = place(e.from, e.to, k, n);
                *span = match side {
                    Side::Start => TimeSpan::new(at.min(span.end), span.end),
                    Side::End => TimeSpan::new(span.start, at.max(span.start)),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_began_between_the_last_answer_and_the_sending_of_the_poll_that_timed_out() {
        let w = start_window(
            FailureKind::Timeout,
            Timestamp(10_000),
            400,
            500,
            Some(Timestamp(9_150)),
        );
        assert_eq!(w, (Timestamp(9_150), Timestamp(9_600)));
    }

    #[test]
    fn a_lost_connection_began_before_it_was_read() {
        let w = start_window(
            FailureKind::Io,
            Timestamp(10_000),
            400,
            500,
            Some(Timestamp(9_510)),
        );
        assert_eq!(w, (Timestamp(9_510), Timestamp(10_000)));
    }

    #[test]
    fn an_answer_a_little_more_than_an_interval_before_is_the_start_of_the_window() {
        // The rounds' own time: the last answer 513 ms before the failed poll went out.
        let w = start_window(
            FailureKind::Timeout,
            Timestamp(10_000),
            400,
            500,
            Some(Timestamp(9_087)),
        );
        assert_eq!(w, (Timestamp(9_087), Timestamp(9_600)));
    }

    #[test]
    fn an_answer_long_before_or_never_leaves_one_interval() {
        for answered in [None, Some(Timestamp(1_000))] {
            let w = start_window(FailureKind::Connect, Timestamp(10_000), 400, 500, answered);
            assert_eq!(w, (Timestamp(9_500), Timestamp(10_000)), "{answered:?}");
        }
        // An answer after the request was sent (a topology sample of the same round) leaves
        // only that moment.
        let w = start_window(
            FailureKind::Timeout,
            Timestamp(10_000),
            400,
            500,
            Some(Timestamp(9_700)),
        );
        assert_eq!(w, (Timestamp(9_600), Timestamp(9_600)));
    }

    #[test]
    fn an_answer_that_waited_for_the_node_is_when_it_came_back() {
        // The live stall above: the last timeout at ...2_774, the next INFO sent at ...2_873 and
        // answered 365 ms later, healthy answers under 2 ms.
        let next = NextAnswer {
            t: Timestamp(3_238),
            latency_us: 365_230,
        };
        let w = end_window(Timestamp(2_774), next, 1_702);
        assert_eq!(w, (Timestamp(3_238), Timestamp(3_238)));
    }

    #[test]
    fn a_quick_answer_says_the_node_was_back_before_it_was_asked() {
        let next = NextAnswer {
            t: Timestamp(3_100),
            latency_us: 900,
        };
        assert_eq!(
            end_window(Timestamp(2_774), next, 1_702),
            (Timestamp(2_774), Timestamp(3_100))
        );
        let next = NextAnswer {
            t: Timestamp(3_100),
            latency_us: 1_500,
        };
        assert_eq!(
            end_window(Timestamp(2_774), next, 1_702),
            (Timestamp(2_774), Timestamp(3_099))
        );
    }

    #[test]
    fn edges_are_placed_within_their_window_and_never_cross() {
        let n = NodeIdx::new(0).unwrap();
        let mut f = [(
            n,
            TimeSpan::new(Timestamp(900), Timestamp(1_100)),
            "connection error",
        )];
        let start = Edge {
            fault: 0,
            side: Side::Start,
            from: Timestamp(1_000),
            to: Timestamp(2_000),
        };
        let end = Edge {
            fault: 0,
            side: Side::End,
            from: Timestamp(1_100),
            to: Timestamp(1_300),
        };
        place_edges(&mut f, &[start, end], 0, 1);
        assert_eq!(f[0].1, TimeSpan::new(Timestamp(1_200), Timestamp(1_200)));
        let mut f = [(
            n,
            TimeSpan::new(Timestamp(900), Timestamp(1_100)),
            "timeout",
        )];
        place_edges(&mut f, &[end], 14, 15);
        assert_eq!(f[0].1, TimeSpan::new(Timestamp(900), Timestamp(1_293)));
    }
}
