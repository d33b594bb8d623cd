//! Synthetic recordings for the analysis's unit tests: two nodes A (10.0.0.1:7000) and B
//! (10.0.0.1:7001) polled every second, `INFO` counters, client lists, topology views and
//! annotations (the building blocks are `tests/common`, shared with the integration tests); and
//! the analysis of such lines finished up to the detectors.

use crate::finding::Finding;
use crate::recording::Line;

use super::{Analyzer, Detector, Finishing};

#[path = "../../tests/common/mod.rs"]
mod common;

pub(super) use common::{
    addr, clients, header, info, note, round, topology, view, Counters, A, B, T0,
};

/// What happens after poll 10 in [`two_nodes`]: each node's `set` executed and rejected per
/// second, B's keys at each poll, whether B answers polls after poll 10, and whether the topology
/// is recorded (the move of slots 8192–16383 from A to B at poll 10).
pub(super) struct After {
    /// A's executed `set`/s.
    pub(super) a: u64,
    /// A's rejected (MOVED) `set`/s.
    pub(super) a_rejected: u64,
    /// B's executed `set`/s.
    pub(super) b: u64,
    /// B's keys at poll k.
    pub(super) b_keys: fn(u64) -> u64,
    /// B answers no poll after poll 10.
    pub(super) b_dies: bool,
    /// Topology lines are written (a recording made by the collector, not imported).
    pub(super) topology: bool,
}

/// 30 polls of A and B. Before poll 10, A executes 200 `set`/s and B nothing; from then on as
/// `after` says.
pub(super) fn two_nodes(after: &After) -> Vec<Line> {
    let mut lines = Vec::new();
    if after.topology {
        lines.push(topology(T0, 7000, A, view(A, "0-16383", "")));
        lines.push(topology(T0, 7001, B, view(B, "0-16383", "")));
    }
    let mut a = Counters {
        uptime: 1000,
        connected: 10,
        keys: 1000,
        ..Counters::default()
    };
    let mut b = Counters {
        uptime: 10,
        connected: 1,
        ..Counters::default()
    };
    let (mut a_ok, mut a_rej, mut b_ok) = (0u64, 0u64, 0u64);
    for k in 0..30u64 {
        let t = T0 + k * 1000;
        if k == 10 && after.topology {
            lines.push(topology(t, 7000, A, view(A, "0-8191", "8192-16383")));
            lines.push(topology(t, 7001, B, view(B, "0-8191", "8192-16383")));
        }
        if k > 0 && k <= 10 {
            a_ok += 200;
        } else if k > 10 {
            a_ok += after.a;
            a_rej += after.a_rejected;
            b_ok += after.b;
        }
        a.uptime += 1;
        b.uptime += 1;
        a.commands = vec![("set", a_ok, a_rej)];
        a.moved = a_rej;
        b.commands = vec![("set", b_ok, 0)];
        b.keys = (after.b_keys)(k);
        lines.push(info(t, 7000, A, &a));
        if !(after.b_dies && k > 10) {
            lines.push(info(t, 7001, B, &b));
        }
        lines.push(round(t, k));
    }
    lines
}

/// 30 polls; at poll 10 slots 8192–16383 move from A to B. Before, A executes 200 `set`/s.
/// After, with `split`, A and B execute 100/s each (B holding 500 keys); without, the clients
/// keep sending everything to A, which executes 100/s and rejects 100/s with MOVED.
pub(super) fn reshard_lines(split: bool) -> Vec<Line> {
    two_nodes(&After {
        a: 100,
        a_rejected: if split { 0 } else { 100 },
        b: if split { 100 } else { 0 },
        b_keys: if split {
            |k| if k >= 10 { 500 } else { 0 }
        } else {
            |_| 0
        },
        b_dies: false,
        topology: true,
    })
}

/// The analysis of `lines`, finished up to the detectors (the shard traffic derived).
pub(super) fn finishing(lines: &[Line]) -> Finishing {
    let mut a = Analyzer::new(header());
    for l in lines {
        a.push(l);
    }
    let mut f = a.finishing();
    f.step();
    assert_eq!(
        f.steps_done(),
        1,
        "the first step derives the shard traffic"
    );
    f
}

/// What `detector` alone finds in `lines`.
pub(super) fn found(detector: &dyn Detector, lines: &[Line]) -> Vec<Finding> {
    detector.detect(&finishing(lines).context())
}
