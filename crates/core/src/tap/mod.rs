//! The sans-IO half of `slotscope tap`, a RESP proxy that records a real client's routing: which
//! node it sent each command to and what came back.
//!
//! - [`frame`]: frame boundaries in a RESP2/RESP3 byte stream, fed in pieces of any size, with
//!   bounded memory on hostile lengths; a lossless frame tree for the replies that are rewritten.
//! - [`command`]: a request's command name, first key and slot (from the command's key positions),
//!   and how its replies arrive.
//! - [`reply`]: the reply class of a reply frame (ok, MOVED, ASK, TRYAGAIN, CLUSTERDOWN, other
//!   error), pub/sub frames.
//! - [`rewrite`]: node addresses in `MOVED` / `ASK` and `CLUSTER SLOTS|SHARDS|NODES` replies
//!   rewritten to the tap's listeners.
//! - [`summary`]: tap lines folded into per-command and per-node counts (the MOVED share a client
//!   really saw).
//! - [`mod@versus`]: those counts beside the servers' `commandstats` for the same commands.
//!
//! The recording lines a tap writes ([`TapConn`](crate::recording::TapConn),
//! [`TapCommand`](crate::recording::TapCommand) and their
//! [`ReplyClass`](crate::recording::ReplyClass)) are part of the recording schema,
//! [`crate::recording::tap`]; redirections are [`crate::redirect::Redirect`].

pub mod command;
pub mod frame;
pub mod reply;
pub mod rewrite;
pub mod summary;
pub mod versus;

pub use command::{Command, Expect, TopologyQuery};
pub use frame::{FrameError, FrameSplitter, RawFrame};
pub use reply::{pubsub_kind, PubSub};
pub use summary::{TapCounts, TapSummary};
pub use versus::{versus, Versus};
