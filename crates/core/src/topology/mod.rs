//! One node's view of the cluster, normalised from `CLUSTER SHARDS`, `CLUSTER SLOTS` or
//! `CLUSTER NODES`.
//!
//! The view holds only what describes the topology: who owns which slots, who replicates whom,
//! addresses, health and flags. Counters that move on every poll (replication offsets, the
//! `ping_sent` / `pong_recv` times of `CLUSTER NODES`) are dropped, and shards, nodes and slot
//! ranges are put in a canonical order (servers list them in hash-table order, which changes when
//! a node joins), so two views compare equal with `==` exactly when the topology is the same.
//!
//! Typical use: parse `CLUSTER NODES` (the only source of the node's own id, its flags and the
//! slots it is migrating or importing) and `CLUSTER SHARDS` (endpoints, health), then
//! [`TopologyView::merge_nodes`] and [`TopologyView::fill_own_address`].
//!
//! One file per concept: [`TopologyView`] and its shards (`view`), the nodes they list (`node`),
//! and one parser per reply: `CLUSTER SHARDS` (`shards`), `CLUSTER SLOTS` (`slots`) and
//! `CLUSTER NODES` (`nodes`), the first two reading RESP replies through `reply`.

#[cfg(test)]
mod fixture;
mod node;
mod nodes;
mod reply;
mod shards;
mod slots;
mod view;

pub use node::{NodeHealth, NodeRole, TopoNode};
pub use view::{Shard, SlotMigration, TopologySource, TopologyView};

/// Why a cluster reply could not be read as a topology.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// The server answered with an error instead of a topology.
    #[error("{command}: the server replied with an error: {message}")]
    ErrorReply {
        /// The command.
        command: &'static str,
        /// The error text.
        message: String,
    },
    /// A part of the reply has the wrong type or size.
    #[error("{context}: expected {expected}, got {got}")]
    Shape {
        /// Where in the reply.
        context: String,
        /// What was expected.
        expected: &'static str,
        /// What came.
        got: String,
    },
    /// A required field is missing.
    #[error("{context}: missing `{field}`")]
    MissingField {
        /// Where in the reply.
        context: String,
        /// The field.
        field: &'static str,
    },
    /// A field has a value out of range or of the wrong form.
    #[error("{context}: bad {field} `{value}`")]
    BadValue {
        /// Where in the reply.
        context: String,
        /// The field.
        field: &'static str,
        /// The value as received.
        value: String,
    },
    /// A line of `CLUSTER NODES` is malformed. Line numbers count from 1.
    #[error("CLUSTER NODES line {line}: {reason}: `{text}`")]
    NodesLine {
        /// Line number.
        line: usize,
        /// What is wrong.
        reason: String,
        /// The line.
        text: String,
    },
}
