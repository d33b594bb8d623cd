//! What a replay reports ([`ReplayReport`]): in all, per node, per command and per second.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::client_state::ClientSnapshot;
use super::outcome::Failure;
use crate::time::Timestamp;

/// What one node received, in collector units (as `INFO commandstats` / `errorstats` count).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NodeStats {
    /// Commands that reached the node (served or rejected), `CLUSTER SLOTS` excluded.
    pub calls: u64,
    /// Of which served.
    pub ok: u64,
    /// Of which rejected with `MOVED`.
    pub moved: u64,
    /// Of which rejected with `ASK`.
    pub ask: u64,
    /// Attempts that met a connection error or a timeout.
    pub failed: u64,
    /// `CLUSTER SLOTS` calls.
    pub cluster_slots: u64,
}

/// One command's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CommandStats {
    /// Commands the application issued.
    pub issued: u64,
    /// Of which succeeded.
    pub succeeded: u64,
    /// Attempts that reached a server (served or rejected).
    pub calls: u64,
    /// `MOVED` replies.
    pub moved: u64,
    /// `ASK` replies.
    pub ask: u64,
    /// `moved / calls` (0 without calls): the share `INFO commandstats` would show rejected.
    pub moved_share: f64,
    /// Exceptions the application saw, by class.
    pub errors: BTreeMap<String, u64>,
}

/// One second of the replay.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Second {
    /// Start of the second.
    pub t: Timestamp,
    /// Commands issued.
    pub commands: u64,
    /// Commands of the workload not issued because the client was waiting out a timeout (only
    /// with `socket_timeout` set).
    pub skipped_while_waiting: u64,
    /// Commands that succeeded.
    pub ok: u64,
    /// Commands that raised.
    pub errors: u64,
    /// Commands that ended in this second and succeeded, whenever they were issued (an
    /// application's own outcome counts go by when each command ended; `ok` goes by when it was
    /// issued). A command that ended after the last second of the timeline is in none.
    pub ended_ok: u64,
    /// Commands that ended in this second and raised, whenever they were issued (see
    /// `ended_ok`).
    pub ended_errors: u64,
    /// `MOVED` replies.
    pub moved: u64,
    /// `ASK` replies.
    pub ask: u64,
    /// Full initialisations.
    pub full_reinits: u64,
    /// Connections opened.
    pub new_connections: u64,
    /// Startup nodes at the end of the second.
    pub startup_nodes: usize,
    /// Whether the client was wedged at the end of the second.
    pub wedged: bool,
    /// Connections open at the end of the second.
    pub open_connections: u64,
    /// Distinct nodes the client's slot table pointed to at the end of the second.
    pub table_nodes: usize,
    /// Slots the client's table gave to the node it named most, at the end of the second.
    pub top_node_slots: usize,
    /// Slots the client's table had no node for at the end of the second.
    pub unmapped_slots: usize,
    /// Attempts that reached a server, per workload command name (commands issued this second).
    #[serde(skip)]
    pub calls_by_command: Vec<u64>,
    /// `MOVED` replies per workload command name (commands issued this second).
    #[serde(skip)]
    pub moved_by_command: Vec<u64>,
    /// `CLUSTER SLOTS` calls of the commands issued this second.
    #[serde(skip)]
    pub cluster_slots_calls: u64,
}

impl Second {
    /// Sets what the client held at the end of the second.
    pub(super) fn set_snapshot(&mut self, s: ClientSnapshot) {
        self.open_connections = s.open_connections;
        self.table_nodes = s.table_nodes;
        self.top_node_slots = s.top_node_slots;
        self.unmapped_slots = s.unmapped_slots;
    }
}

/// A replay's timeline is cut after this many seconds (about 11.5 days).
pub(super) const MAX_SECONDS: usize = 1_000_000;

/// The width of [`Outcomes`]' buckets, ms: the applications' (docs/FIDELITY.md's contract).
pub const OUTCOME_BUCKET_MS: u64 = 250;

/// The commands that ended, per bucket of [`OUTCOME_BUCKET_MS`] from the first command, by the
/// moment each ended: the shape the matrix's applications count theirs in (`outcomes`), so the
/// moments failures began and ended are read alike on both sides. Four buckets for each second of
/// the timeline (commands that ended after its last second are in none, as in the timeline).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Outcomes {
    /// The width of a bucket, ms.
    pub bucket_ms: u64,
    /// Commands that succeeded, per bucket.
    pub ok: Vec<u64>,
    /// Commands that raised, per bucket.
    pub failed: Vec<u64>,
}

/// The result of a replay.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReplayReport {
    /// The client model.
    pub model: String,
    /// Commands in flight at most (the workload's concurrency, or its cap in flight).
    pub concurrency: u32,
    /// The cap on commands in flight, when the application sent commands as tasks
    /// ([`Shape::InFlight`](super::Shape::InFlight)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<u32>,
    /// The most commands that were in flight at once (with
    /// [`Shape::InFlight`](super::Shape::InFlight)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_in_flight: Option<u32>,
    /// Whether the client ended wedged (no startup node left, re-initialisation pending).
    pub wedged: bool,
    /// When it became wedged for good, if it did.
    pub wedged_since: Option<Timestamp>,
    /// Commands issued.
    pub commands: u64,
    /// Commands of the workload not issued because the client was waiting out a timeout (only
    /// with `socket_timeout` set).
    pub skipped_while_waiting: u64,
    /// Commands that succeeded.
    pub succeeded: u64,
    /// Commands that raised.
    pub failed: u64,
    /// `MOVED` replies, all nodes.
    pub moved: u64,
    /// `ASK` replies, all nodes.
    pub ask: u64,
    /// MOVED share per command (`moved / calls`).
    pub moved_share: BTreeMap<String, f64>,
    /// Exceptions the application saw, by the library's name.
    pub errors: BTreeMap<String, u64>,
    /// The same failures by their common class (what compares across libraries).
    #[serde(skip)]
    pub failures: BTreeMap<Failure, u64>,
    /// Successful full initialisations (each one `CLUSTER SLOTS` answer).
    pub full_reinits: u64,
    /// `CLUSTER SLOTS` calls, failed ones included.
    pub cluster_slots_calls: u64,
    /// Connections opened.
    pub new_connections: u64,
    /// Startup nodes at the end.
    pub startup_nodes: usize,
    /// The client's own CPU time the model charged over the run (initialisations, connects,
    /// replies, errors: the costs of its options), in milliseconds; 0 in the instant clock.
    pub client_cpu_ms: f64,
    /// What the client held at the end: open connections, its slot table's nodes.
    pub held: ClientSnapshot,
    /// Per node address.
    pub nodes: BTreeMap<String, NodeStats>,
    /// Per command name.
    pub per_command: BTreeMap<String, CommandStats>,
    /// Per second from the first command.
    pub timeline: Vec<Second>,
    /// The commands that ended, per quarter second from the first command.
    pub outcomes: Outcomes,
    /// When a kill's moment or a failure's edge was known only within a window, the replays at
    /// other moments of it and how many of them ended wedged (`moments.rs`); this report is one
    /// of the majority.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moments: Option<Moments>,
}

/// The replays of one workload at several moments of the recording's kill and failure windows
/// ([`replay_over_moments`](super::replay_over_moments), [`replay_majority`](super::replay_majority)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moments {
    /// Moments tried: even places in every window, each kill and edge at the same place of its
    /// own (all 15, or until the majority was known).
    pub tried: u32,
    /// How many of those replays ended with the client wedged.
    pub wedged: u32,
}
