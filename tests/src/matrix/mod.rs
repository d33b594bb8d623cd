//! The fidelity matrix (issue 12, build point 5): live scenarios drawn at random over the axes of
//! [`case`], each run with a real cluster, `slotscope record` and a real instrumented application
//! (a separate program, [`app`]), then replayed through the model of the application's library and
//! compared metric by metric ([`compare`]).
//!
//! - [`rng`]: the seeded generator; [`case`]: one drawn case;
//! - [`app`]: the application program and the JSON line it reports (the plug-in contract);
//! - [`fault`], [`migration`]: what a case does to the cluster; [`live`]: the live run;
//! - [`replay`]: `slotscope replay` of the recording, with fallbacks for options the binary lacks;
//! - [`compare`]: real against model; [`runner`]: one case end to end;
//! - [`table`]: progress lines and the Markdown report.
//!
//! Entry points: `scripts/fidelity` (the `fidelity` binary of this crate, a long draw) and
//! `tests/tests/fidelity_matrix.rs` (two cases a run).

pub mod app;
pub mod case;
pub mod compare;
pub mod fault;
pub mod live;
pub mod migration;
pub mod replay;
pub mod rng;
pub mod runner;
pub mod table;
