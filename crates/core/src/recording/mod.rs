//! The recording schema: one JSON object per line, the first a [`Header`], every other an event ([`Line`]).
//!
//! Every line carries a `"type"` tag. Counters are stored as the server reported them (cumulative);
//! rates are derived later. Every per-node event carries the node's address and, once known, its
//! cluster id, and the wall-clock time the reply arrived. Secrets (passwords, AUTH arguments) and key
//! values are never part of the schema.
//!
//! ```text
//! {"type":"header","schema":1,"collector":"slotscope 0.1.0","seed":"127.0.0.1:7000",...}
//! {"type":"node_discovered","t":1732000000000,"node":{"addr":"127.0.0.1:7000"},"via":{"kind":"seed"}}
//! {"type":"topology","t":1732000000003,"node":{...},"view":{...}}
//! {"type":"info","t":1732000000004,"node":{...},"latency_us":812,"info":{...}}
//! ```
//!
//! The lines `slotscope tap` writes ([`TapConn`], [`TapCommand`]) are declared in [`mod@tap`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::client_list::ClientEntry;
use crate::info::InfoReport;
use crate::node::{NodeAddr, NodeRef};
use crate::time::Timestamp;
use crate::topology::TopologyView;

pub mod tap;
mod tap_line;

pub use self::tap::{ConnEvent, ReplyClass, TapCommand, TapConn};

/// The schema version this crate writes. Readers accept every version listed in
/// [`SUPPORTED_SCHEMAS`].
pub const SCHEMA_VERSION: u32 = 1;

/// Schema versions the reader accepts.
pub const SUPPORTED_SCHEMAS: &[u32] = &[1];

/// The first line of a recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Schema version of the lines that follow.
    pub schema: u32,
    /// Name and version of the program that wrote the file, e.g. `slotscope 0.1.0`.
    pub collector: String,
    /// The address the collector started discovery from (often a configuration endpoint).
    pub seed: NodeAddr,
    /// When recording started.
    pub started: Timestamp,
    /// The options the recording was made with (never secrets).
    pub options: RecordOptions,
    /// Where the lines came from when no collector polled the cluster: a recording made by
    /// `slotscope import-metrics` says so here (`prometheus query_range, step 15s`, with any gaps
    /// in the series). Absent in recordings the collector wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// Collector options, as recorded in the header.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordOptions {
    /// Time between polls of one node, in milliseconds.
    pub interval_ms: u64,
    /// Time after which a poll of a node is abandoned and recorded as a timeout, in milliseconds.
    pub timeout_ms: u64,
    /// Planned length of the recording in milliseconds; absent when open-ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Whether connections used TLS.
    pub tls: bool,
    /// The ACL user name, if one was given (the password never is recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Whether a password was used (the password itself never is recorded).
    #[serde(default)]
    pub auth: bool,
    /// `CLIENT LIST` is taken every this many polls of a node.
    #[serde(default = "one")]
    pub client_list_every: u32,
    /// A node's whole topology (`CLUSTER NODES`, `CLUSTER SHARDS`/`SLOTS`) is asked on its first
    /// poll, when its `CLUSTER INFO` (epochs, state, slot counts, known nodes, size), its slot
    /// commands or its `ASK` replies change, and at the latest every this many polls. Absent in
    /// recordings that asked it every poll (before `record --topology-every`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_every: Option<u32>,
}

fn one() -> u32 {
    1
}

/// One line of a recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    /// The header; only as the first line.
    Header(Header),
    /// A node appears in the recording.
    NodeDiscovered(NodeDiscovered),
    /// A node leaves the recording.
    NodeGone(NodeGone),
    /// A node's view of the cluster, recorded when it differs from the node's previous view.
    Topology(TopologySample),
    /// A node's `INFO` reply.
    Info(InfoSample),
    /// A node's `CLIENT LIST` reply.
    ClientList(ClientListSample),
    /// A node's `CLIENT LIST` reply written as the changes since its previous one (see
    /// [`crate::client_delta`]); [`crate::reader::RecordingReader`] gives it as a whole
    /// [`Line::ClientList`].
    ClientListDelta(ClientListDelta),
    /// A poll of a node failed or timed out.
    PollFailed(PollFailed),
    /// One poll interval ended: how many nodes answered.
    PollRound(PollRound),
    /// Evidence from outside the cluster: an operator's note, a cloud event, an application error.
    Annotation(Annotation),
    /// A client connection through `slotscope tap` opened or closed.
    TapConn(TapConn),
    /// A command a client sent through `slotscope tap`, and its reply.
    TapCommand(TapCommand),
    /// The recording ended normally.
    End(End),
}

impl Line {
    /// The time of the line (the header's start time for the header).
    pub fn time(&self) -> Timestamp {
        match self {
            Line::Header(h) => h.started,
            Line::NodeDiscovered(e) => e.t,
            Line::NodeGone(e) => e.t,
            Line::Topology(e) => e.t,
            Line::Info(e) => e.t,
            Line::ClientList(e) => e.t,
            Line::ClientListDelta(e) => e.t,
            Line::PollFailed(e) => e.t,
            Line::PollRound(e) => e.t,
            Line::Annotation(e) => e.t,
            Line::TapConn(e) => e.t,
            Line::TapCommand(e) => e.t,
            Line::End(e) => e.t,
        }
    }

    /// Every `"type"` tag [`Line::kind`] gives, in the order of the variants.
    pub const KINDS: [&'static str; 13] = [
        "header",
        "node_discovered",
        "node_gone",
        "topology",
        "info",
        "client_list",
        "client_list_delta",
        "poll_failed",
        "poll_round",
        "annotation",
        "tap_conn",
        "tap_command",
        "end",
    ];

    /// The line's `"type"` tag, as written in the file.
    pub fn kind(&self) -> &'static str {
        match self {
            Line::Header(_) => "header",
            Line::NodeDiscovered(_) => "node_discovered",
            Line::NodeGone(_) => "node_gone",
            Line::Topology(_) => "topology",
            Line::Info(_) => "info",
            Line::ClientList(_) => "client_list",
            Line::ClientListDelta(_) => "client_list_delta",
            Line::PollFailed(_) => "poll_failed",
            Line::PollRound(_) => "poll_round",
            Line::Annotation(_) => "annotation",
            Line::TapConn(_) => "tap_conn",
            Line::TapCommand(_) => "tap_command",
            Line::End(_) => "end",
        }
    }

    /// The line as one JSON text, without the trailing newline.
    pub fn to_json(&self) -> String {
        // Serialising cannot fail: the types hold only strings, numbers, sequences and maps with
        // string keys.
        serde_json::to_string(self).expect("a recording line serialises to JSON")
    }
}

/// How a node came to be polled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Discovery {
    /// It is the seed address given on the command line.
    Seed,
    /// It appeared in the topology reported by another node.
    Topology {
        /// The node whose topology listed it.
        from: NodeAddr,
    },
    /// It had been recorded as gone and answered again.
    Recovered,
}

/// A node appears in the recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeDiscovered {
    /// When.
    pub t: Timestamp,
    /// The node.
    pub node: NodeRef,
    /// How it was found.
    pub via: Discovery,
}

/// Why a node left the recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoneReason {
    /// No node's topology lists it any more; polling stopped.
    LeftTopology,
    /// It failed several polls in a row; polling continues and a recovery is recorded.
    Unreachable,
}

/// A node leaves the recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeGone {
    /// When.
    pub t: Timestamp,
    /// The node.
    pub node: NodeRef,
    /// Why.
    pub reason: GoneReason,
}

/// A node's view of the cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopologySample {
    /// When the reply arrived.
    pub t: Timestamp,
    /// The node that reported it.
    pub node: NodeRef,
    /// Its view.
    pub view: TopologyView,
}

/// A node's `INFO` reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InfoSample {
    /// When the reply arrived.
    pub t: Timestamp,
    /// The node.
    pub node: NodeRef,
    /// Round-trip time of the `INFO` command, in microseconds.
    pub latency_us: u64,
    /// The parsed reply, counters as reported.
    pub info: InfoReport,
}

/// A node's `CLIENT LIST` reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientListSample {
    /// When the reply arrived.
    pub t: Timestamp,
    /// The node.
    pub node: NodeRef,
    /// Every connection, with every field the server gives.
    pub clients: Vec<ClientEntry>,
}

/// A node's `CLIENT LIST` reply as the changes since the node's previous sample: the connections
/// that are new or whose lasting fields changed (whole), and those that closed (by id). The
/// others are as before, their `age` grown with the time that passed (see
/// [`crate::client_delta`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientListDelta {
    /// When the reply arrived.
    pub t: Timestamp,
    /// The node.
    pub node: NodeRef,
    /// The time of the node's previous sample, which this one changes.
    pub since: Timestamp,
    /// Connections new since then, or whose lasting fields changed, with every field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<ClientEntry>,
    /// Ids of the connections closed since then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gone: Vec<u64>,
}

/// What kind of failure a poll met.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// No reply within the timeout.
    Timeout,
    /// The TCP (or TLS) connection could not be made.
    Connect,
    /// Login was refused.
    Auth,
    /// The connection broke mid-poll.
    Io,
    /// The server answered with an error.
    ServerError,
    /// The reply could not be understood.
    Protocol,
}

/// A poll of a node failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PollFailed {
    /// When the failure was noticed.
    pub t: Timestamp,
    /// The node.
    pub node: NodeRef,
    /// The step that failed: `connect`, `auth`, or the command name.
    pub step: String,
    /// What kind of failure.
    pub kind: FailureKind,
    /// The error, as text (never containing secrets).
    pub error: String,
}

/// One poll interval ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PollRound {
    /// When the round began (rounds begin every interval, whatever their nodes do).
    pub t: Timestamp,
    /// How long the round took, until its last node answered or timed out, in milliseconds.
    #[serde(default)]
    pub elapsed_ms: u64,
    /// Round number, from 0.
    pub round: u64,
    /// Nodes polled.
    pub nodes: u32,
    /// Nodes whose poll succeeded.
    pub ok: u32,
    /// Nodes whose poll failed.
    pub failed: u32,
}

/// Evidence from outside the cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    /// When it happened (or began).
    pub t: Timestamp,
    /// Where it came from: `operator`, `cloud_event_log`, `app_log`, …
    pub source: String,
    /// What it says.
    pub text: String,
    /// When it ended, for evidence that spans time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Timestamp>,
    /// Extra named values (error class, count per second, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
}

/// Why a recording ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The requested duration passed.
    Duration,
    /// SIGINT or SIGTERM.
    Signal,
    /// The collector stopped on an error.
    Error,
    /// The period of an always-on recording ended (`record --rotate`): the recording goes on in
    /// the next file, which starts with its own header and the state at that moment.
    Rotated,
    /// The file was cut from longer recordings (`slotscope cut`) at the end of the asked window.
    Cut,
    /// The recorder stopped without ending the file (killed, or the machine went down): the next
    /// `record` into the same directory ended it after its last complete line.
    Crashed,
}

/// The recording ended normally; a file without this line was cut short.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct End {
    /// When.
    pub t: Timestamp,
    /// Why.
    pub reason: EndReason,
    /// Poll rounds completed.
    pub rounds: u64,
}
