//! The per-group part of `slotscope hypotheses`' report: for each client group its workload,
//! where its traffic lands, what the recording shows of it and its top variants with why each
//! wins; then the recommendation (each group's best), as text or as Markdown.

use std::fmt::Write as _;

use super::rows::short;
use crate::report::table::{Cell, Column, Table};
use slotscope_core::hypothesis::{GroupHypotheses, GroupRanked, Grouped, Source, Value, METRICS};

/// Variants shown per group.
pub const TOP: usize = 3;

/// A value: `yes`/`no`, a percentage for shares, else two decimals.
fn value(v: Value, share: bool) -> String {
    match v {
        Value::Flag(b) => if b { "yes" } else { "no" }.to_owned(),
        Value::Number(x) if share => format!("{:.1}%", x * 100.0),
        Value::Number(x) => format!("{x:.2}"),
    }
}

/// `census group`, or what the workload stands for.
fn source(s: Source) -> &'static str {
    match s {
        Source::Census => "census group",
        Source::Unattributed => "no census group",
        Source::NoCensus => "no census: one workload",
        Source::NoGroupExplains => "no group explains it: one workload",
    }
}

/// The head line of a group: label, commands, rates.
fn head(g: &GroupHypotheses) -> String {
    format!(
        "{} ({}): {} at {:.1} commands/s ({:.1} attempts/s)",
        g.group,
        source(g.source),
        g.commands.join(", "),
        g.rate_per_sec,
        g.attempts_per_sec
    )
}

/// Where the traffic lands: each node's attempts and attempts per command of the group.
fn landing(g: &GroupHypotheses) -> String {
    g.landing
        .iter()
        .map(|l| {
            format!(
                "{} {:.0} attempts ({:.2} per command, {:.0} rejected)",
                l.node, l.attempts, l.per_command, l.rejected
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The remap candidate in words.
fn remap(g: &GroupHypotheses) -> String {
    g.remap_target.as_ref().map_or_else(
        || {
            "none (no node takes an attempt of every command, nor keeps rejecting the group once \
             the slot layout settled)"
                .to_owned()
        },
        |t| {
            format!(
                "{t} (takes an attempt of every command, or the most of them and keeps rejecting \
                 the group once the slot layout settled, while other nodes serve too)"
            )
        },
    )
}

/// What the recording shows of the group.
fn observed(g: &GroupHypotheses) -> String {
    let e = &g.evidence;
    let per: Vec<String> = e
        .by_command
        .iter()
        .map(|(c, ce)| format!("{c} {:.1}%", ce.moved_share * 100.0))
        .collect();
    format!(
        "MOVED share {:.1}% ({}), MOVED/s {:.2}, traffic ended {}",
        e.moved_share * 100.0,
        per.join(", "),
        e.moved_per_sec,
        if e.traffic_ended { "yes" } else { "no" }
    )
}

/// Each metric's prediction and agreement: `MOVED share: 37.0% (99%)`, joined by `sep`.
fn cells(r: &GroupRanked, sep: &str) -> String {
    METRICS
        .iter()
        .filter_map(|m| {
            r.metrics.get(*m).map(|s| {
                format!(
                    "{}: {} ({:.0}%)",
                    short(m),
                    value(s.predicted, *m == "moved_share"),
                    s.agreement * 100.0
                )
            })
        })
        .collect::<Vec<_>>()
        .join(sep)
}

/// `covers 7.2.0–8.x`, or empty.
fn covers(r: &GroupRanked) -> String {
    r.covers
        .as_ref()
        .map_or_else(String::new, |c| format!(" [covers {c}]"))
}

/// Every group's block, then the recommendation.
pub fn text(g: &Grouped) -> String {
    let mut s = String::new();
    for group in &g.groups {
        let _ = writeln!(s, "group {}", head(group));
        let _ = writeln!(s, "  lands on: {}", landing(group));
        let _ = writeln!(s, "  remap target: {}", remap(group));
        let _ = writeln!(s, "  observed: {}", observed(group));
        for (i, r) in group.ranked.iter().take(TOP).enumerate() {
            let _ = writeln!(
                s,
                "  {:>2}  {:>4.0}%  {}{}\n             {}\n             why: {}",
                i + 1,
                r.score * 100.0,
                r.label,
                covers(r),
                cells(r, " | "),
                r.why
            );
        }
        s.push('\n');
    }
    let _ = writeln!(s, "best variant per group: {}", g.recommendation);
    s
}

/// Every group as a heading, its evidence and a table of its top variants; then the
/// recommendation.
pub fn markdown(g: &Grouped) -> String {
    let mut s = String::new();
    for group in &g.groups {
        let _ = writeln!(s, "### {}\n", head(group));
        let _ = writeln!(s, "Lands on: {}.  ", landing(group));
        let _ = writeln!(s, "Remap target: {}.  ", remap(group));
        let _ = writeln!(s, "Observed: {}.\n", observed(group));
        let mut table = Table::new(vec![
            Column::right("rank"),
            Column::left("variant"),
            Column::left("covers"),
            Column::right("score"),
            Column::left("predicted (agreement)"),
            Column::left("why"),
        ]);
        for (i, r) in group.ranked.iter().take(TOP).enumerate() {
            table.push(vec![
                Cell::of(i + 1),
                Cell::Code(r.label.clone()),
                Cell::of(r.covers.as_deref().unwrap_or("—")),
                Cell::Text(format!("{:.0}%", r.score * 100.0)),
                Cell::Text(cells(r, "; ")),
                Cell::of(&r.why),
            ]);
        }
        s.push_str(&table.render_markdown());
        s.push('\n');
    }
    let _ = writeln!(s, "**Best variant per group:** {}", g.recommendation);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_sources_in_words() {
        assert_eq!(value(Value::Number(0.372), true), "37.2%");
        assert_eq!(value(Value::Number(3.456), false), "3.46");
        assert_eq!(value(Value::Flag(false), false), "no");
        assert_eq!(source(Source::Census), "census group");
        assert_eq!(short("moved_per_sec"), "MOVED/s");
    }
}
