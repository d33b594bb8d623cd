//! What the reading subcommands print: a recording's summary, its analysis, a replay and the
//! ranked hypotheses, each as text, Markdown or JSON.
//!
//! - [`summary`]: `slotscope summary`.
//! - [`analysis`]: `slotscope analyze`.
//! - [`replay`]: `slotscope replay`.
//! - [`hypotheses`]: `slotscope hypotheses`.
//! - [`preflight`]: `slotscope preflight`.
//! - [`table`]: the tables they show, one model written as text or Markdown.

pub mod analysis;
pub mod hypotheses;
pub mod preflight;
pub mod replay;
pub mod summary;
pub mod table;
