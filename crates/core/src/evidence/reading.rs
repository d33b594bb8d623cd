//! What reading outside evidence gives: its annotations and counts of what the lines held.

use crate::recording::Annotation;

use super::format::Format;

/// Annotations read from outside evidence, and what the reading met.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    /// The format read (never [`Format::Auto`]).
    pub format: Format,
    /// The annotations, in time order.
    pub annotations: Vec<Annotation>,
    /// Non-blank lines read (events, for a JSON document of events).
    pub lines: u64,
    /// Lines (events) that went into an annotation.
    pub used: u64,
    /// Application log: timestamped lines that are not errors.
    pub not_errors: u64,
    /// Application log: lines without a timestamp following a timestamped one (tracebacks).
    pub continuation: u64,
    /// Lines that could not be used: no timestamp (and not a continuation), or broken JSON.
    pub skipped: u64,
    /// Number of the first skipped line.
    pub first_skipped: Option<u64>,
}

impl Evidence {
    /// Nothing read yet, in `format`.
    pub(super) fn new(format: Format) -> Evidence {
        Evidence {
            format,
            annotations: Vec::new(),
            lines: 0,
            used: 0,
            not_errors: 0,
            continuation: 0,
            skipped: 0,
            first_skipped: None,
        }
    }

    /// Counts line `line` as skipped.
    pub(super) fn skip(&mut self, line: u64) {
        self.skipped = self.skipped.saturating_add(1);
        self.first_skipped.get_or_insert(line);
    }

    /// The non-blank lines of `text`, trimmed, with their line numbers (from 1), each counted as
    /// read.
    pub(super) fn read_lines<'t>(&mut self, text: &'t str) -> Vec<(u64, &'t str)> {
        let lines: Vec<(u64, &str)> = (1u64..)
            .zip(text.lines())
            .map(|(n, raw)| (n, raw.trim()))
            .filter(|(_, line)| !line.is_empty())
            .collect();
        self.lines = self
            .lines
            .saturating_add(u64::try_from(lines.len()).unwrap_or(u64::MAX));
        lines
    }
}
