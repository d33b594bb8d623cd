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
    if let Some(m) = summary.changes().min_by_key(|m| m.span.start) {
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

/// Places a finding relative to outside evidence (the recording's annotations).
pub(super) fn relate(span: TimeSpan, annotations: &[Annotation]) -> Vec<String> {
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{finishing, note, reshard_lines, T0};
    use crate::recording::Line;
    use crate::time::Timestamp;

    fn annotations(lines: &[Line]) -> Vec<Annotation> {
        lines
            .iter()
            .filter_map(|l| match l {
                Line::Annotation(a) => Some(a.clone()),
                _ => None,
            })
            .collect()
    }

    /// The summary of a recording in which slots begin to move at `T0 + 10 s`.
    fn summary() -> Summary {
        let s = finishing(&reshard_lines(true)).summary;
        assert_eq!(s.slot_moves[0].span.start, Timestamp(T0 + 10_000));
        s
    }

    #[test]
    fn a_finding_is_placed_after_the_evidence_and_the_slot_move_before_it() {
        let notes = annotations(&[
            note(
                T0 + 2_000,
                "cloud_event_log",
                "Scaling started",
                "migration_start",
                None,
            ),
            note(
                T0 + 12_000,
                "cloud_event_log",
                "Failover started",
                "failover",
                None,
            ),
            note(T0 + 17_000, "monitor", "Alarm", "alarm", None),
            note(T0 + 30_000, "monitor", "Later", "alarm", None),
        ]);
        let span = TimeSpan::new(Timestamp(T0 + 15_000), Timestamp(T0 + 20_000));
        assert_eq!(
            relate(span, &notes),
            vec![
                "starts 3.0s after \"Failover started\" (cloud_event_log)".to_owned(),
                "\"Alarm\" (monitor) follows 2.0s after it starts".to_owned(),
            ]
        );
    }

    #[test]
    fn a_finding_before_everything_is_placed_nowhere() {
        let notes = annotations(&[note(T0 + 30_000, "monitor", "Later", "alarm", None)]);
        let span = TimeSpan::new(Timestamp(T0 + 1_000), Timestamp(T0 + 2_000));
        assert!(relate(span, &notes).is_empty());
    }

    #[test]
    fn the_first_client_error_is_set_against_the_last_three_events_and_the_slot_move() {
        let notes = annotations(&[
            note(T0, "cloud_event_log", "one", "event", None),
            note(T0 + 1_000, "cloud_event_log", "two", "event", None),
            note(T0 + 2_000, "cloud_event_log", "three", "event", None),
            note(T0 + 3_000, "cloud_event_log", "four", "event", None),
            note(
                T0 + 4_000,
                "app_log",
                "boom",
                APP_ERROR_KIND,
                Some("ConnectionError"),
            ),
            note(T0 + 9_000, "app_log", "boom again", APP_ERROR_KIND, None),
        ]);
        assert_eq!(
            relate_evidence(&notes, &summary()),
            vec![
                "first client error (ConnectionError) 3.0s after \"two\" (cloud_event_log)".to_owned(),
                "first client error (ConnectionError) 2.0s after \"three\" (cloud_event_log)".to_owned(),
                "first client error (ConnectionError) 1.0s after \"four\" (cloud_event_log)".to_owned(),
                "first client error (ConnectionError) 6.0s before the collector saw slots begin to move"
                    .to_owned(),
            ]
        );
    }

    #[test]
    fn without_a_client_error_there_is_nothing_to_relate() {
        let notes = annotations(&[note(T0, "cloud_event_log", "one", "event", None)]);
        assert!(relate_evidence(&notes, &summary()).is_empty());
    }
}
