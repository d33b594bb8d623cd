//! Findings and outside evidence (cloud events, application errors: the recording's
//! annotations) set against each other and against the topology changes.

use crate::evidence::APP_ERROR_KIND;
use crate::recording::Annotation;
use crate::summary::Summary;
use crate::time::{format_millis, TimeSpan};

/// The first application error after each other piece of evidence that precedes it (cloud events
/// such as a migration start), and after the first slot move the collector saw.
pub(super) fn relate_evidence(annotations: &[Annotation], summary: &Summary) -> Vec<String> {
    let is_error =
        |a: &Annotation| a.fields.get("kind").map(String::as_str) == Some(APP_ERROR_KIND);
    let Some(first_error) = annotations
        .iter()
        .filter(|a| is_error(a))
        .min_by_key(|a| a.t)
    else {
        return Vec::new();
    };
    let class = first_error
        .fields
        .get("class")
        .map_or_else(String::new, |c| format!(" ({c})"));
    let mut out = Vec::new();
    let mut before: Vec<&Annotation> = annotations
        .iter()
        .filter(|a| !is_error(a) && a.t <= first_error.t)
        .collect();
    before.sort_by_key(|a| a.t);
    for a in before.iter().rev().take(3).rev() {
        out.push(format!(
            "first client error{class} {} after \"{}\" ({})",
            format_millis(first_error.t.millis_since(a.t)),
            a.text,
            a.source
        ));
    }
    if let Some(m) = summary.slot_moves.iter().min_by_key(|m| m.span.start) {
        let (gap, side) = if first_error.t >= m.span.start {
            (first_error.t.millis_since(m.span.start), "after")
        } else {
            (m.span.start.millis_since(first_error.t), "before")
        };
        out.push(format!(
            "first client error{class} {} {side} the collector saw slots begin to move",
            format_millis(gap)
        ));
    }
    out
}

/// Places a finding relative to outside evidence and to the topology changes.
pub(super) fn relate(span: TimeSpan, annotations: &[Annotation], summary: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(a) = annotations
        .iter()
        .filter(|a| a.t <= span.start)
        .max_by_key(|a| a.t)
    {
        out.push(format!(
            "starts {} after \"{}\" ({})",
            format_millis(span.start.millis_since(a.t)),
            a.text,
            a.source
        ));
    }
    if let Some(a) = annotations
        .iter()
        .filter(|a| a.t > span.start && a.t < span.end)
        .min_by_key(|a| a.t)
    {
        out.push(format!(
            "\"{}\" ({}) follows {} after it starts",
            a.text,
            a.source,
            format_millis(a.t.millis_since(span.start))
        ));
    }
    if let Some(m) = summary
        .slot_moves
        .iter()
        .filter(|m| m.span.start <= span.start)
        .max_by_key(|m| m.span.start)
    {
        out.push(format!(
            "starts {} after slots began moving ({} slots)",
            format_millis(span.start.millis_since(m.span.start)),
            m.slots
        ));
    }
    out
}
