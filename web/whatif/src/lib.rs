//! The viewer's what-if: a client model replayed against the cluster a recording describes, and
//! its prediction turned into series on the viewer's grid so they can be drawn over the observed
//! data.
//!
//! The viewer (`slotscope-web`) links this crate for its types only; the replay itself runs in a
//! second wasm module built from this crate with the `module` feature (`src/module.rs`), fetched when the
//! what-if panel first runs. The replay engine and its client models are about a fifth of the
//! viewer's code, so the first download stays smaller. Requests and predictions cross between the
//! two modules as JSON.
//!
//! A plan (`slotscope preflight` in the browser, [`preflight`]) is replayed against each client
//! group after the recording's end, each group's series on a longer grid.
//!
//! The replay is set up as `slotscope replay` sets it up (collector/src/replay_report.rs): the
//! simulated cluster from the recording's lines with a per-key migration coin, the workload at the
//! observed business rate with the observed command mix, `key:{n}` keys over 10 000 keys, seed 1.

mod digest;
#[cfg(feature = "module")]
pub mod module;
mod options;
mod overlay;
mod preflight;
mod run;

pub use digest::Digest;
pub use options::parse_options;
pub use overlay::Overlay;
pub use preflight::{preflight, PlanGroup, PlanPrediction, PlanRequest, DEFAULT_IN_FLIGHT};
pub use run::{run, Prediction, Request, DEFAULT_RATE, KEYS, SEED};
