//! What a recording cannot tell: a recording cut short (no end line, or a partial last line), one
//! that began mid-migration or with clients already failing, nodes never reached, and one imported
//! from metrics (no topology, no `CLIENT LIST`, coarse steps).

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, Severity};
use crate::moment::at;
use crate::time::Timestamp;

use super::super::context::Context;
use super::step::{Confidence, Role, Step, StepKind};

/// How the sentence of [`CutShort::text`] begins.
pub(super) const CUT_TEXT_START: &str = "The recording has no end line";

/// How the sentence on a recording made from metrics (`slotscope import-metrics`) begins.
pub(super) const IMPORTED_TEXT_START: &str = "Imported from metrics, not recorded by the collector";

/// A recording that ends without its end line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CutShort {
    /// Its last line's time: the analysis covers the recording up to here.
    pub last_line: Timestamp,
    /// The partial last line's number, when the file ends mid-line.
    pub partial_line: Option<u64>,
}

impl CutShort {
    /// One sentence saying so.
    pub fn text(&self, start: Timestamp) -> String {
        let partial = self.partial_line.map_or_else(String::new, |l| {
            format!(" Its last line ({l}) is partial and was left out.")
        });
        format!(
            "{CUT_TEXT_START}: it was cut short (the collector was killed, the disk \
             filled, or the file was copied while recording). Everything up to {} is analysed; \
             what happened after is not known.{partial}",
            at(self.last_line, start)
        )
    }
}

/// Whether the recording of `ctx` was cut short.
pub(super) fn cut_short(ctx: &Context<'_>) -> Option<CutShort> {
    let s = ctx.summary;
    if s.end.is_some() && s.truncated_tail.is_none() {
        return None;
    }
    Some(CutShort {
        last_line: s.span.map_or(s.header.started, |sp| sp.end),
        partial_line: s.truncated_tail,
    })
}

/// The story's last step for a recording cut short.
pub(super) fn cut_step(c: &CutShort) -> Step {
    Step {
        at: c.last_line,
        until: None,
        kind: StepKind::RecordingCut,
        finding_kind: None,
        text: "the recording stops here without an end line: it was cut short".to_owned(),
        evidence: vec![c.partial_line.map_or_else(
            || "no end line".to_owned(),
            |l| format!("line {l} is partial"),
        )],
        confidence: Confidence::Certain,
        role: Role::Context,
        root_cause: false,
        group: None,
        finding: None,
    }
}

/// What the recording of `ctx` cannot tell, one sentence each.
pub(super) fn limits(
    ctx: &Context<'_>,
    findings: &[Finding],
    cut: Option<&CutShort>,
) -> Vec<String> {
    let start = ctx.span.start;
    let early = Timestamp(start.0 + 2 * ctx.interval_ms);
    let mut out = Vec::new();
    if let Some(source) = &ctx.summary.header.source {
        let clients = if ctx.summary.client_list_samples > 0 {
            "client groups only from the exporter's client list (no library, no connection id)"
        } else {
            "no CLIENT LIST, so no client groups"
        };
        out.push(format!(
            "{IMPORTED_TEXT_START} ({source}): no topology, so no slot moves and an idle shard \
             only from the keys a node gained; {clients}; rates are averaged over each step."
        ));
    }
    if let Some(m) = ctx
        .summary
        .migrations
        .iter()
        .find(|m| m.span.start <= early)
    {
        out.push(format!(
            "The recording begins during a slot migration ({} slots in MIGRATING/IMPORTING at its \
             start): slots that moved before it are not seen, and \"before the change\" means \
             from the recording's start.",
            m.slots
        ));
    }
    for f in findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning && f.span.start <= early)
    {
        out.push(format!(
            "\"{}\" was already under way at the recording's start: what set it off is not in the \
             recording.",
            f.title
        ));
    }
    for n in ctx.summary.nodes.iter().filter(|n| n.samples == 0) {
        out.push(format!(
            "Node {} never answered the collector: its counters, clients and topology are missing.",
            n.addr
        ));
    }
    if ctx.census.groups.is_empty() && ctx.summary.client_list_samples == 0 {
        out.push(
            "No CLIENT LIST was recorded: findings cannot be tied to client groups.".to_owned(),
        );
    }
    if let Some(c) = cut {
        out.push(c.text(start));
    }
    out
}
