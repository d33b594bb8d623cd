//! Building blocks of synthetic recordings shared by the core's integration tests: two nodes A
//! (10.0.0.1:7000) and B (10.0.0.1:7001), a header polled every second, topology lines.

#![allow(dead_code)] // each test binary uses a part

use slotscope_core::recording::{Header, Line, RecordOptions, TopologySample};
use slotscope_core::topology::TopologyView;
use slotscope_core::{NodeAddr, NodeId, NodeRef, Timestamp};

/// Node A's id.
pub const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
/// Node B's id.
pub const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
/// Start of every synthetic recording.
pub const T0: u64 = 1_700_000_000_000;

/// `10.0.0.1:port`.
pub fn addr(port: u16) -> NodeAddr {
    NodeAddr::new("10.0.0.1", port).unwrap()
}

/// The node at `port` with id `id`.
pub fn node(port: u16, id: &str) -> NodeRef {
    NodeRef {
        addr: addr(port),
        id: NodeId::new(id),
    }
}

/// A recording header: seed A, polled every second.
pub fn header() -> Header {
    Header {
        schema: 1,
        collector: "slotscope test".into(),
        seed: addr(7000),
        started: Timestamp(T0),
        options: RecordOptions {
            interval_ms: 1000,
            timeout_ms: 800,
            duration_ms: None,
            tls: false,
            user: None,
            auth: false,
            client_list_every: 1,
        },
    }
}

/// `CLUSTER NODES` as seen by `me`: A on 7000 owning `a_slots`, B on 7001 owning `b_slots`.
pub fn view(me: &str, a_slots: &str, b_slots: &str) -> TopologyView {
    let flag = |id: &str| if id == me { "myself,master" } else { "master" };
    let text = format!(
        "{A} 10.0.0.1:7000@17000 {} - 0 0 1 connected {a_slots}\n{B} 10.0.0.1:7001@17001 {} - 0 0 2 connected {b_slots}\n",
        flag(A),
        flag(B)
    );
    TopologyView::from_nodes(&text).unwrap()
}

/// A topology line: `v` as reported by the node at `port` with id `id`.
pub fn topology(t: u64, port: u16, id: &str, v: TopologyView) -> Line {
    Line::Topology(TopologySample {
        t: Timestamp(t),
        node: node(port, id),
        view: v,
    })
}
