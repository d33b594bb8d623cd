//! What a reset (`close()` / `aclose()`, every connection dropped) does to a command whose reply
//! it finds on a closed connection.

use super::settings::Cpu;
use super::{Exception, Flavor};
use crate::timeline::NodeIdx;

/// How one attempt ended, when not with a reply.
pub(super) enum Fail {
    /// Another failure on that node (a timeout): retryable, its exception `error_cpu_ms`.
    Node(Exception, NodeIdx),
    /// The command's open connection to that node ended under it (its reply lost to a reset, a
    /// `CLIENT KILL` or the node's end: the stream read at its end): a `ConnectionError` on
    /// that node, retryable, whose exception costs less than a failed connect or a timeout
    /// (`closed_error_cpu_ms`).
    Closed(NodeIdx),
    /// A new connection to that node refused: a `ConnectionError` on that node, retryable, the
    /// whole attempt's work `refused_cpu_ms` (no handshake done).
    Refused(NodeIdx),
    /// Raised to the application at once.
    Raise(Exception),
}

impl Fail {
    /// The exception and the node of a failure retried on its node (`None`: raised at once).
    pub(super) fn retried(&self) -> Option<(Exception, NodeIdx)> {
        match *self {
            Fail::Node(class, node) => Some((class, node)),
            Fail::Closed(node) | Fail::Refused(node) => Some((Exception::ConnectionError, node)),
            Fail::Raise(_) => None,
        }
    }

    /// The client's own work its exception costs, held after the attempt's reply (whose own
    /// `reply_us` was held when it came: a refused attempt's whole cost is `refused_us`).
    pub(super) fn cpu_us(&self, cpu: &Cpu) -> u64 {
        match self {
            Fail::Node(..) => cpu.error_us,
            Fail::Closed(_) => cpu.closed_us,
            Fail::Refused(_) => cpu.refused_us.saturating_sub(cpu.reply_us),
            Fail::Raise(_) => 0,
        }
    }
}

/// What a command of `target` whose connection a reset closed under it (at `closed`, µs) meets;
/// `connect`: the command opened that connection. A reply the event loop had taken in before the
/// reset is read all the same (measured on 5.0.0 and 8.1.0: a reply in the stream's buffer was
/// read after `ClusterNode.disconnect()` in every trial, `tests/scenarios/buffered_probe.py`),
/// but the loop takes a reply in only at its next turn after it arrived (`select`, then the
/// protocol's `data_received`), and a busy loop's turn lasts as long as the work queued before
/// it: the model takes the reply in when the command resumes (`arrives` + `waited`), so a reset
/// before then loses it (`None` after). A lost reply is in 4.4-7.1 a `ConnectionError`, which
/// pops the node; in 7.2+ mostly a `ConnectionError` too (the parser reads the end of the
/// stream, `_parsers/base.py` l. 577-590), retried. But a new connection whose handshake reply
/// had arrived and waited for the event loop, when the reset came in that wait, next writes to
/// the `None` writer the closing task left: the `AttributeError` of redis-py #4028, raised to
/// the application. The handshake's reply arrived at `written` (the command's own write); the
/// loop held it about as long as it held the command's reply (`waited`), so that is the window.
pub(super) fn lost(
    flavor: Flavor,
    target: NodeIdx,
    connect: bool,
    closed: u64,
    written: u64,
    arrives: u64,
    waited: u64,
) -> Option<Fail> {
    let in_the_wait = connect && closed >= written && closed < written.saturating_add(waited);
    if flavor == Flavor::Py8 && in_the_wait {
        Some(Fail::Raise(Exception::AttributeError))
    } else if closed < arrives.saturating_add(waited) {
        Some(Fail::Closed(target))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::replay::outcome::ClientError;

    fn n() -> NodeIdx {
        NodeIdx::new(0).unwrap()
    }

    /// The exception's name, and whether it is retried on its node.
    fn class(f: Option<Fail>) -> Option<(&'static str, bool)> {
        f.map(|f| match (f.retried(), f) {
            (Some((e, _)), _) => (ClientError::from(e).name, true),
            (None, Fail::Raise(e)) => (ClientError::from(e).name, false),
            (None, _) => unreachable!("every failure but a raise is retried"),
        })
    }

    #[test]
    fn a_reply_taken_in_before_the_reset_is_read() {
        // Written at 100, the reply in at 200 and taken in at 900: a reset from 900 on finds it
        // read; one at 500 comes before the loop took it in.
        for flavor in [Flavor::Py5, Flavor::Py8] {
            assert!(lost(flavor, n(), false, 900, 100, 200, 700).is_none());
            assert!(lost(flavor, n(), false, 500, 100, 200, 700).is_some());
        }
    }

    #[test]
    fn a_reply_still_on_its_way_is_a_connection_error_on_that_node() {
        for flavor in [Flavor::Py5, Flavor::Py8] {
            let f = lost(flavor, n(), false, 150, 100, 200, 700);
            assert_eq!(class(f), Some(("ConnectionError", true)), "{flavor:?}");
        }
    }

    #[test]
    fn a_new_connection_reset_while_its_handshake_waited_raises_attribute_error_in_7_2_and_later() {
        let f = lost(Flavor::Py8, n(), true, 500, 100, 200, 700);
        assert_eq!(class(f), Some(("AttributeError", false)));
        // 5.0.0 has no such window: the reply not yet taken in is a ConnectionError.
        let f = lost(Flavor::Py5, n(), true, 500, 100, 200, 700);
        assert_eq!(class(f), Some(("ConnectionError", true)));
        // After the command resumed, its reply was read.
        assert!(lost(Flavor::Py8, n(), true, 950, 100, 200, 700).is_none());
    }
}
