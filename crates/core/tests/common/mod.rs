//! Building blocks of synthetic recordings shared by the core's tests: two nodes A
//! (10.0.0.1:7000) and B (10.0.0.1:7001), a header polled every second, topology, `INFO`,
//! `CLIENT LIST`, poll-round and annotation lines. The integration tests include it as `mod
//! common`; the analysis's unit tests as `analysis/fixture.rs`'s `common` (through `#[path]`).

#![allow(dead_code)] // each test binary uses a part

use std::collections::BTreeMap;

use slotscope_core::client_list::parse_client_list;
use slotscope_core::info::{CommandStat, InfoReport, KeyspaceStat};
use slotscope_core::recording::{
    Annotation, ClientListSample, Header, InfoSample, Line, PollRound, RecordOptions,
    TopologySample,
};
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
            topology_every: None,
        },
        source: None,
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

/// Cumulative counters of one node at one moment.
#[derive(Clone, Default)]
pub struct Counters {
    /// `uptime_in_seconds`.
    pub uptime: u64,
    /// `(command, calls, rejected_calls)`.
    pub commands: Vec<(&'static str, u64, u64)>,
    /// MOVED errors.
    pub moved: u64,
    /// `total_connections_received`.
    pub conns_received: u64,
    /// `connected_clients`.
    pub connected: u64,
    /// Keys in db 0.
    pub keys: u64,
}

/// An `INFO` line of the node at `port` with counters `c`.
pub fn info(t: u64, port: u16, id: &str, c: &Counters) -> Line {
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
pub fn clients(t: u64, port: u16, id: &str, text: &str) -> Line {
    Line::ClientList(ClientListSample {
        t: Timestamp(t),
        node: node(port, id),
        clients: parse_client_list(text).unwrap(),
    })
}

/// Poll round `k`, both nodes answered.
pub fn round(t: u64, k: u64) -> Line {
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
pub fn note(t: u64, source: &str, text: &str, kind: &str, class: Option<&str>) -> Line {
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

/// The seed of a drawn test: `SLOTSCOPE_SEED` when set (to replay a run), else the clock.
pub fn seed() -> u64 {
    std::env::var("SLOTSCOPE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.subsec_nanos().into())
        })
}
