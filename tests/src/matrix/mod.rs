//! The fidelity matrix (issue 12, build point 5): live scenarios drawn at random over the axes of
//! [`case`], each run with a real cluster, `slotscope record` and a real instrumented application
//! (a separate program, [`app`]), then replayed through the model of the application's library and
//! compared metric by metric ([`compare`]).
//!
//! - [`rng`]: the seeded generator; [`case`]: one drawn case;
//! - [`app`]: the application program and the JSON line it reports (the plug-in contract);
//! - [`fault`], [`migration`]: what a case does to the cluster; [`live`]: the live run;
//! - [`calibration`]: the library's CPU costs timed on this machine, given to every replay;
//! - [`replay`]: `slotscope replay` of the recording, with fallbacks for options the binary lacks;
//! - [`compare`]: real against model; [`runner`]: one case end to end ([`panic_payload`]: a
//!   caught panic kept as its error); [`repeat`]: the same case
//!   live twice (how far the real library repeats itself); [`rescore`]: kept cases replayed again;
//! - [`table`]: progress lines and the Markdown report.
//!
//! Entry points: `scripts/fidelity` (the `fidelity` binary of this crate, a long draw) and
//! `tests/tests/fidelity_matrix.rs` (two cases a run).
//!
//! The story check (issue 13) runs the same cases, with in about half of them a healthy
//! application beside the drawn one ([`companion`]), and judges `slotscope analyze` and
//! `slotscope hypotheses` on the recording against what the applications reported:
//!
//! - [`truth`]: hurt, healthy or neither, from an application's report;
//! - [`analysis`]: the analysis's two JSON answers, read tolerantly;
//! - [`criteria`]: the criteria (a) to (d) and their verdicts ([`defect_claim`], [`failover_told`]:
//!   (e) and (f); [`judge`]: all six); [`story`]:
//!   one case end to end;
//! - [`story_table`]: progress lines and the Markdown report; [`story_rescore`]: kept cases
//!   judged again by the current analysis.
//!
//! Entry points: `scripts/story` (the `story` binary) and `tests/tests/story_matrix.rs`.
//!
//! The pre-flight check (issue 25) runs the same cases, cuts each recording where the change
//! began and asks `slotscope preflight` what the change will do, then judges that against what it
//! did: [`preflight_input`] (the cut and the plan), [`preflight_truth`] (the real verdict),
//! [`preflight_check`] (one case end to end), [`preflight_table`] (the report). Entry points:
//! `scripts/preflight` (the `preflight` binary) and `tests/tests/preflight_matrix.rs`.

pub mod analysis;
pub mod app;
pub mod calibration;
pub mod case;
pub mod companion;
pub mod compare;
pub mod criteria;
pub mod defect_claim;
pub mod draw;
pub mod failover_told;
pub mod fault;
pub mod judge;
pub mod library;
pub mod live;
pub mod migration;
pub mod panic_payload;
pub mod preflight_check;
pub mod preflight_input;
pub mod preflight_table;
pub mod preflight_truth;
pub mod repeat;
pub mod replay;
pub mod rescore;
pub mod rng;
pub mod runner;
pub mod story;
pub mod story_rescore;
pub mod story_table;
pub mod table;
pub mod timing;
pub mod truth;
