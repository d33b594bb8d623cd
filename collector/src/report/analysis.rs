//! `slotscope analyze`: the analysis of a recording as text for a terminal, markdown for a
//! postmortem, or JSON for tools.

use std::fmt::Write as _;

mod analysed;
mod rows;

pub use analysed::{analyse, Analysed};
use rows::{CensusRow, Rows, TapNodeRow};

use crate::report::table::Table;

/// The analysis as text for a terminal.
pub fn render_text(a: &Analysed) -> String {
    let rows = Rows::of(a);
    let mut o = rows.heading.text();
    o.push_str(&rows.story.text());
    let _ = writeln!(
        o,
        "\nFINDINGS ({}, the one the root cause rests on first)",
        rows.findings.len()
    );
    if rows.findings.is_empty() {
        let _ = writeln!(
            o,
            "  none: no idle shard, redirect storm, churn, lost client group or known defect seen"
        );
    }
    for f in &rows.findings {
        o.push_str(&f.text());
    }
    if !rows.evidence.is_empty() {
        let _ = writeln!(o, "\nEVIDENCE");
        for e in &rows.evidence {
            let _ = writeln!(o, "  {e}");
        }
    }
    if let Some(tap) = &rows.tap {
        o.push_str(&tap.heading.text());
        o.push_str(&Table::of(&tap.commands).render_text("  "));
        o.push_str(&TapNodeRow::text(&tap.nodes));
    }
    let _ = writeln!(o, "\nTIMELINE");
    for t in &rows.timeline {
        o.push_str(&t.text());
    }
    let _ = writeln!(
        o,
        "\nPER-SHARD TRAFFIC (business commands/s, before -> after the topology change)"
    );
    o.push_str(&Table::of(&rows.shards).render_text("  "));
    let _ = writeln!(o, "\nCLIENT CENSUS ({} groups)", rows.census.len());
    o.push_str(&CensusRow::text(&rows.census));
    for g in rows::inferred_rows(a) {
        let _ = writeln!(o, "  {g}");
    }
    let _ = writeln!(o, "  columns:");
    for l in rows::census_legend() {
        let _ = writeln!(o, "    {l}");
    }
    append_bad_lines(&mut o, a);
    o
}

fn append_bad_lines(o: &mut String, a: &Analysed) {
    if let Some(line) = a.input.truncated_tail {
        let _ = writeln!(
            o,
            "\nThe file ends in a partial line ({line}): the recording was cut short."
        );
    }
    if !a.input.bad_lines.is_empty() {
        let _ = writeln!(
            o,
            "\nUNREADABLE LINES ({}), analysis used the rest",
            a.input.bad_lines.len()
        );
        for e in a.input.bad_lines.iter().take(20) {
            let _ = writeln!(o, "  {e}");
        }
    }
}

/// The analysis as markdown, ready to paste into a postmortem.
pub fn render_markdown(a: &Analysed) -> String {
    let rows = Rows::of(a);
    let mut o = String::new();
    let _ = writeln!(o, "## Cluster evidence (slotscope)\n");
    o.push_str(&rows.heading.markdown());
    o.push_str(&rows.story.markdown());
    let _ = writeln!(o, "### Findings\n");
    if rows.findings.is_empty() {
        let _ = writeln!(o, "No finding: no idle shard, redirect storm, connection churn, lost client group or known client defect.\n");
    }
    for f in &rows.findings {
        o.push_str(&f.markdown());
    }
    if let Some(tap) = &rows.tap {
        o.push_str(&tap.heading.markdown());
        o.push_str(&Table::of(&tap.commands).render_markdown());
        let _ = writeln!(o);
    }
    if !rows.evidence.is_empty() {
        let _ = writeln!(o, "### Outside evidence\n");
        for e in &rows.evidence {
            let _ = writeln!(o, "- {e}");
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "### Timeline (UTC)\n");
    for t in &rows.timeline {
        o.push_str(&t.markdown());
    }
    let _ = writeln!(
        o,
        "\n### Per-shard traffic before → after the topology change\n"
    );
    o.push_str(&Table::of(&rows.shards).render_markdown());
    let _ = writeln!(o, "\n### Client census\n");
    o.push_str(&Table::of(&rows.census).render_markdown());
    let inferred = rows::inferred_rows(a);
    if !inferred.is_empty() {
        let _ = writeln!(
            o,
            "\nInferred from counters (no CLIENT LIST poll saw them):\n"
        );
        for g in inferred {
            let _ = writeln!(o, "- {g}");
        }
    }
    let _ = writeln!(o, "\nColumns:\n");
    for l in rows::census_legend() {
        let _ = writeln!(o, "- {l}");
    }
    append_bad_lines(&mut o, a);
    o
}

/// The analysis as JSON: summary, findings (most important first), shard traffic, census, and
/// the unreadable lines.
pub fn render_json(a: &Analysed) -> String {
    let mut v = serde_json::to_value(&a.analysis).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        let bad: Vec<String> = a.input.bad_lines.iter().map(ToString::to_string).collect();
        obj.insert("bad_lines".into(), bad.into());
        if !a.analysis.tap.is_empty() {
            let mut tap = serde_json::to_value(&a.analysis.tap).unwrap_or_default();
            let rows: serde_json::Map<String, serde_json::Value> = a
                .analysis
                .versus()
                .into_iter()
                .map(|r| {
                    let v = serde_json::json!({
                        "sent": r.sent,
                        "moved": r.moved,
                        "ask": r.ask,
                        "errors": r.errors,
                        "client_moved_share": r.client_moved_share,
                        "server_attempts": r.server.map(|d| d.attempts()),
                        "server_rejected": r.server.map(|d| d.rejected),
                        "server_rejected_share": r.server_share(),
                    });
                    (r.cmd, v)
                })
                .collect();
            if let Some(t) = tap.as_object_mut() {
                t.insert("versus_server".into(), rows.into());
            }
            obj.insert("tap".into(), tap);
        }
    }
    serde_json::to_string_pretty(&v).unwrap_or_default()
}
