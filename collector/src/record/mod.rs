//! `slotscope record`'s engine: one seed discovered, every node polled each interval, the cluster's
//! membership followed, the lines stamped by one clock.
//!
//! - [`recorder`]: the rounds, the nodes' tasks, the sink they write to.
//! - [`poll`]: one node's poll, the only place that talks to a server while recording.
//! - [`membership`]: which nodes are polled and when one counts as gone (sans IO).
//! - [`topology_watch`]: when a poll asks a node for its whole topology.
//! - [`clock`]: the wall clock every line is stamped by.

pub mod clock;
pub mod membership;
pub mod poll;
pub mod recorder;
pub mod topology_watch;
