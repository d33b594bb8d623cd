//! Synthetic recordings for the analysis's unit tests: two nodes A (10.0.0.1:7000) and B
//! (10.0.0.1:7001) polled every second, `INFO` counters, client lists, topology views and
//! annotations; and the analysis of such lines finished up to the detectors. (The integration
//! tests in `crates/core/tests` build the same shapes with `tests/common`.)

use std::collections::BTreeMap;

use crate::client_list::parse_client_list;
use crate::finding::Finding;
use crate::info::{CommandStat, InfoReport, KeyspaceStat};
use crate::node::{NodeAddr, NodeId, NodeRef};
use crate::recording::{
    Annotation, ClientListSample, Header, InfoSample, Line, PollRound, RecordOptions,
    TopologySample,
};
use crate::time::Timestamp;
use crate::topology::TopologyView;

use super::{Analyzer, Detector, Finishing};

/// Node A's id.
pub(super) const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
/// Node B's id.
pub(super) const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
/// Start of every synthetic recording.
pub(super) const T0: u64 = 1_700_000_000_000;

/// `10.0.0.1:port`.
pub(super) fn addr(port: u16) -> NodeAddr {
    NodeAddr::new("10.0.0.1", port).unwrap()
}

/// The node at `port` with id `id`.
pub(super) fn node(port: u16, id: &str) -> NodeRef {
    NodeRef {
        addr: addr(port),
        id: NodeId::new(id),
    }
}

/// A recording header: seed A, polled every second.
pub(super) fn header() -> Header {
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
pub(super) fn view(me: &str, a_slots: &str, b_slots: &str) -> TopologyView {
    let flag = |id: &str| if id == me { "myself,master" } else { "master" };
    let text = format!(
        "{A} 10.0.0.1:7000@17000 {} - 0 0 1 connected {a_slots}\n{B} 10.0.0.1:7001@17001 {} - 0 0 2 connected {b_slots}\n",
        flag(A),
        flag(B)
    );
    TopologyView::from_nodes(&text).unwrap()
}

/// A topology line: `v` as reported by the node at `port` with id `id`.
pub(super) fn topology(t: u64, port: u16, id: &str, v: TopologyView) -> Line {
    Line::Topology(TopologySample {
        t: Timestamp(t),
        node: node(port, id),
        view: v,
    })
}

/// Cumulative counters of one node at one moment.
#[derive(Clone, Default)]
pub(super) struct Counters {
    /// `uptime_in_seconds`.
    pub(super) uptime: u64,
    /// `(command, calls, rejected_calls)`.
    pub(super) commands: Vec<(&'static str, u64, u64)>,
    /// MOVED errors.
    pub(super) moved: u64,
    /// `total_connections_received`.
    pub(super) conns_received: u64,
    /// `connected_clients`.
    pub(super) connected: u64,
    /// Keys in db 0.
    pub(super) keys: u64,
}

/// An `INFO` line of the node at `port` with counters `c`.
pub(super) fn info(t: u64, port: u16, id: &str, c: &Counters) -> Line {
    let mut r = InfoReport::default();
    r.sections.insert(
        "server".into(),
        [
            ("uptime_in_seconds".to_owned(), c.uptime.to_string()),
            ("redis_version".to_owned(), "7.0.15".to_owned()),
        ]
        .into(),
    );
    r.sections.insert(
        "stats".into(),
        [(
            "total_connections_received".to_owned(),
            c.conns_received.to_string(),
        )]
        .into(),
    );
    r.sections.insert(
        "clients".into(),
        [("connected_clients".to_owned(), c.connected.to_string())].into(),
    );
    for (name, calls, rejected) in &c.commands {
        r.commandstats.insert(
            (*name).to_owned(),
            CommandStat {
                calls: *calls,
                usec: *calls,
                rejected_calls: Some(*rejected),
                failed_calls: Some(0),
            },
        );
    }
    if c.moved > 0 {
        r.errorstats.insert("MOVED".into(), c.moved);
    }
    r.keyspace.insert(
        0,
        KeyspaceStat {
            keys: c.keys,
            expires: 0,
            avg_ttl: 0,
        },
    );
    Line::Info(InfoSample {
        t: Timestamp(t),
        node: node(port, id),
        latency_us: 300,
        info: r,
    })
}

/// A `CLIENT LIST` line of the node at `port`.
pub(super) fn clients(t: u64, port: u16, id: &str, text: &str) -> Line {
    Line::ClientList(ClientListSample {
        t: Timestamp(t),
        node: node(port, id),
        clients: parse_client_list(text).unwrap(),
    })
}

/// Poll round `k`, both nodes answered.
pub(super) fn round(t: u64, k: u64) -> Line {
    Line::PollRound(PollRound {
        t: Timestamp(t),
        elapsed_ms: 5,
        round: k,
        nodes: 2,
        ok: 2,
        failed: 0,
    })
}

/// An annotation from `source`, with the field `kind` (and `class` when given).
pub(super) fn note(t: u64, source: &str, text: &str, kind: &str, class: Option<&str>) -> Line {
    let mut fields = BTreeMap::from([("kind".to_owned(), kind.to_owned())]);
    if let Some(c) = class {
        fields.insert("class".to_owned(), c.to_owned());
    }
    Line::Annotation(Annotation {
        t: Timestamp(t),
        source: source.into(),
        text: text.into(),
        end: None,
        fields,
    })
}

/// 30 polls; at poll 10 slots 8192–16383 move from A to B. Before, A executes 200 `set`/s.
/// After, with `split`, A and B execute 100/s each (B holding 500 keys); without, the clients
/// keep sending everything to A, which executes 100/s and rejects 100/s with MOVED.
pub(super) fn reshard_lines(split: bool) -> Vec<Line> {
    let mut lines = vec![
        topology(T0, 7000, A, view(A, "0-16383", "")),
        topology(T0, 7001, B, view(B, "0-16383", "")),
    ];
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
        if k == 10 {
            lines.push(topology(t, 7000, A, view(A, "0-8191", "8192-16383")));
            lines.push(topology(t, 7001, B, view(B, "0-8191", "8192-16383")));
        }
        if k > 0 && k <= 10 {
            a_ok += 200;
        } else if k > 10 {
            a_ok += 100;
            if split {
                b_ok += 100;
            } else {
                a_rej += 100;
            }
        }
        a.uptime += 1;
        b.uptime += 1;
        a.commands = vec![("set", a_ok, a_rej)];
        a.moved = a_rej;
        b.commands = vec![("set", b_ok, 0)];
        b.keys = if k >= 10 && split { 500 } else { 0 };
        lines.push(info(t, 7000, A, &a));
        lines.push(info(t, 7001, B, &b));
        lines.push(round(t, k));
    }
    lines
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
