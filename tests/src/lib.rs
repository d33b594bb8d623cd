//! Real-cluster harness for slotscope integration tests.
//!
//! Starts real `redis-server` / `valkey-server` processes on 127.0.0.1 (see [`kind`] for where the
//! binaries come from; `scripts/setup` installs them), builds clusters with the cluster protocol,
//! migrates slots, and drives load against them. Every process is a child of the test and is killed
//! when its handle drops; every wait is bounded.
//!
//! - [`port`]: free client/bus port pairs.
//! - [`kind`]: Redis or Valkey, and the binary of each.
//! - [`client`]: a synchronous RESP client.
//! - [`server`]: one server process.
//! - [`topology`]: parsed `CLUSTER NODES` / `CLUSTER SLOTS`.
//! - [`cluster`]: a cluster of servers; slot migration.
//! - [`router`]: a cluster-aware client following `MOVED` / `ASK`.
//! - [`load`]: a bounded background writer.
//! - [`collector`]: the real `slotscope` binary as a child process, and its recordings read back.
//! - [`crash`]: slotscope's commands killed at drawn moments, a full disk, and the files they left.
//! - [`fault`]: faults injected on one node while `slotscope record` runs.
//! - [`matrix`]: the fidelity matrix, live cases drawn at random and replayed.
//! - [`memory`]: a process's resident memory.
//! - [`program`]: a program run as a bounded child process.
//! - [`tls_cluster`]: a Redis cluster with TLS client ports (and a TLS bus).
//! - [`python`]: real redis-py cluster clients (pinned releases, `tests/scenarios/*.py`) as child
//!   processes.

pub mod client;
pub mod cluster;
pub mod collector;
pub mod cpu;
pub mod crash;
pub mod fault;
pub mod fixture;
pub mod kind;
pub mod load;
pub mod matrix;
pub mod memory;
pub mod pki;
pub mod port;
pub mod program;
pub mod python;
pub mod router;
pub mod server;
pub mod started;
pub mod tls_cluster;
pub mod topology;
pub mod wedge;

pub use client::Client;
pub use cluster::{Cluster, ClusterOptions};
pub use collector::{run_slotscope, slotscope_bin, Recorder, Recording};
pub use kind::ServerKind;
pub use load::{Load, LoadOptions, LoadReport};
pub use router::{Routed, Router};
pub use server::{Server, ServerOptions, ServerState};
