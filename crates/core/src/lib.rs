//! # slotscope-core
//!
//! The sans-IO heart of slotscope, shared by the native collector and the WASM viewer.
//!
//! This crate performs no networking, no file access and never reads a clock or a global random
//! generator: every input (bytes of a recording, replies of a server, the current time) is handed in
//! by the caller, and every output is a value. The same events always fold into the same state, so
//! whatever the collector computes natively, the viewer computes identically in the browser.
//!
//! - [`slot`]: key → slot (CRC16-XMODEM with hash tags), slot ranges.
//! - [`node`]: node ids and addresses.
//! - [`time`]: timestamps and spans as plain data, and the calendar; [`moment`]: a time of a
//!   recording as text, `05:17:18 (+4.2s)`.
//! - [`float`]: the one conversion of counts and lengths of time (`u64`) to `f64`.
//! - [`heap`]: the wasm heap grown ahead in doublings (the browser modules' allocator).
//! - [`resp`]: RESP2/RESP3 parsing and command encoding.
//! - [`redirect`]: `MOVED` / `ASK` redirections, parsed from a server's error line in one place.
//! - [`info`], [`client_list`], [`topology`]: parsers of the replies the collector records;
//!   [`field_map`]: their raw text fields, kept in one buffer per map.
//! - [`recording`]: the schema of a recording (header and events, one JSON object per line),
//!   the tap's lines included.
//! - [`reader`]: streaming reader of recordings, plain or zstd, tolerant of a cut-short tail.
//! - [`timeline`]: the cluster over time: nodes numbered once, slot owners, migrations and
//!   membership at every instant; the one place slot ownership is computed.
//! - [`summary`]: what a recording holds (nodes, slot moves, failures), folded from its lines.
//! - [`metrics`], [`census`]: counter deltas per node over time; client groups from `CLIENT LIST`;
//!   [`bus`]: the cluster bus messages a failover shows in.
//! - [`finding`], [`analysis`], [`defect`]: findings derived from a recording, with their evidence.
//! - [`evidence`]: cloud event logs and application error logs read into annotations.
//! - [`replay`]: a workload replayed against a simulated cluster through client library models.
//! - [`tap`]: the sans-IO half of `slotscope tap` (RESP frames, key positions, reply
//!   classification, address rewriting, the summary of the tap's recording lines).
//! - [`hypothesis`]: client variants replayed against one recording, ranked by how well each
//!   reproduces the recorded evidence.
//! - [`preflight`]: a planned change (add a master, move slots, a failover, …) checked and
//!   written out on the cluster a recording ends with.

// The shared test building blocks (`tests/common`) name the crate as its tests do.
#[cfg(test)]
extern crate self as slotscope_core;
pub mod analysis;
pub mod bus;
pub mod census;
pub mod client_delta;
pub mod client_list;
pub mod defect;
pub mod evidence;
pub mod field_map;
pub mod finding;
pub mod fingerprint;
pub mod float;
pub mod heap;
pub mod hypothesis;
pub mod import;
pub mod info;
pub mod metrics;
pub mod moment;
pub mod node;
pub mod overview;
pub mod percent;
pub mod preflight;
pub mod quantity;
pub mod reader;
pub mod recording;
pub mod redirect;
pub mod replay;
pub mod resp;
pub mod signal;
pub mod slot;
pub mod summary;
pub mod tap;
pub mod time;
pub mod timeline;
pub mod topology;
pub mod track;

pub use node::{NodeAddr, NodeId, NodeRef};
pub use slot::{Slot, SlotRange, SLOT_COUNT};
pub use time::{TimeSpan, Timestamp};
