//! The subcommands, one module each, holding its arguments, its help text and its `run`.
//!
//! Help texts follow one convention: the one-line summary is the doc comment of the subcommand's
//! `Args`; a longer description, when there is one, is the module's `LONG_ABOUT`
//! (`#[command(long_about)]`), and what follows the options (examples, lists) its `AFTER_HELP`
//! (`#[command(after_help)]`), both on the `Args`. Options are described by their doc comments.

pub mod analyze;
pub mod cut;
pub mod hypotheses;
pub mod import;
pub mod import_metrics;
pub mod index;
pub mod preflight;
pub mod record;
pub mod replay;
pub mod serve;
pub mod summary;
pub mod tap;

mod exchange;
mod format;
mod output;
mod recording_report;
pub(crate) mod runtime;
mod shaping;
pub(crate) mod value_parser;
