//! What a client model reports of itself: its state after each command ([`ClientState`]) and
//! what it holds at one moment ([`ClientSnapshot`]).

use serde::Serialize;

use crate::timeline::{NodeIdx, SlotTable};

/// A client's state, sampled after each command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClientState {
    /// Entries of `nodes_manager.startup_nodes`.
    pub startup_nodes: usize,
    /// True when the client needs a re-initialisation and has no startup node left: every
    /// later command fails, forever.
    pub wedged: bool,
    /// Successful full initialisations so far (one `CLUSTER SLOTS` answer each).
    pub full_reinits: u64,
    /// `CLUSTER SLOTS` calls sent so far (including failed ones).
    pub cluster_slots_calls: u64,
    /// Connections opened so far.
    pub new_connections: u64,
}

/// What a client holds at one moment, sampled once per second of a replay (it takes a pass over
/// the slot table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClientSnapshot {
    /// Connections open now.
    pub open_connections: u64,
    /// Distinct nodes the slot table points to.
    pub table_nodes: usize,
    /// Slots the table gives to the node it names most (16384 when a table has collapsed onto
    /// one address; about 16384 ÷ shards when healthy).
    pub top_node_slots: usize,
    /// Slots the table has no node for.
    pub unmapped_slots: usize,
}

impl ClientSnapshot {
    /// The snapshot of a slot table and a count of open connections.
    pub fn of_table(table: &SlotTable, open_connections: u64) -> ClientSnapshot {
        let mut counts: Vec<(NodeIdx, usize)> = Vec::new();
        let mut unmapped = 0;
        for run in table.as_slice().chunk_by(|a, b| a == b) {
            match run[0] {
                None => unmapped += run.len(),
                Some(n) => match counts.iter_mut().find(|c| c.0 == n) {
                    Some(c) => c.1 += run.len(),
                    None => counts.push((n, run.len())),
                },
            }
        }
        ClientSnapshot {
            open_connections,
            table_nodes: counts.len(),
            top_node_slots: counts.iter().map(|c| c.1).max().unwrap_or(0),
            unmapped_slots: unmapped,
        }
    }
}
