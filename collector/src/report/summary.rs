//! `slotscope summary`: reads a recording through the core reader and prints what it holds.

use std::fmt::Write as _;
use std::path::Path;

use slotscope_core::moment::at;
use slotscope_core::recording::{Discovery, EndReason, GoneReason};
use slotscope_core::summary::{Summary, SummaryBuilder};
use slotscope_core::time::format_millis;
use slotscope_core::{NodeId, SlotRange};

use slotscope_core::quantity::human_bytes;

use crate::report::table::{Cell, Column, Table};
use crate::store::input::{read_recording, Input, InputError};

/// A summary and what reading the file met.
pub struct Summarised {
    /// What the recording holds.
    pub summary: Summary,
    /// Bad lines, truncation, file size.
    pub input: Input,
}

/// Reads `path` (plain or zstd) and folds it into a summary, collecting bad lines.
pub fn read(path: &Path) -> Result<Summarised, InputError> {
    let (builder, input) = read_recording(
        path,
        |h| SummaryBuilder::new(h.clone()),
        |b, line| b.push(line),
    )?;
    let mut builder = builder;
    builder.set_truncated_tail(input.truncated_tail);
    Ok(Summarised {
        summary: builder.finish(),
        input,
    })
}

fn short(id: &Option<NodeId>) -> String {
    id.as_ref()
        .map_or_else(|| "(unassigned)".to_owned(), |i| i.short().to_owned())
}

/// A run of slots that changed hands (or were seen migrating): one line of the summary.
#[derive(Clone, Debug, PartialEq)]
struct MoveRow {
    /// How many slots.
    slots: usize,
    /// The owner before (or the migration's source).
    from: String,
    /// The owner after (or the migration's target).
    to: String,
    /// The slot ranges, abbreviated past six.
    ranges: String,
    /// When it was first seen (see [`at`]).
    first: String,
    /// When it was last seen.
    last: String,
    /// How long it took, shown for topology changes only.
    took: Option<String>,
}

impl MoveRow {
    /// One indented line.
    fn text(&self) -> String {
        let mut o = format!(
            "  {} slots {} -> {}  [{}]  from {} to {}",
            self.slots, self.from, self.to, self.ranges, self.first, self.last
        );
        if let Some(took) = &self.took {
            let _ = write!(o, " ({took})");
        }
        o.push('\n');
        o
    }
}

/// The summary as text for a terminal.
pub fn render_text(read: &Summarised) -> String {
    let s = &read.summary;
    let h = &s.header;
    let start = h.started;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "recording   {} ({})",
        h.collector,
        human_bytes(read.input.file_bytes)
    );
    let _ = writeln!(o, "seed        {}", h.seed);
    let _ = writeln!(o, "started     {}", h.started);
    match s.span {
        Some(span) => {
            let _ = writeln!(
                o,
                "duration    {}",
                format_millis(span.end.millis_since(start))
            );
        }
        None => {
            let _ = writeln!(o, "duration    (no events)");
        }
    }
    let _ = writeln!(
        o,
        "interval    {}  timeout {}{}{}",
        format_millis(h.options.interval_ms),
        format_millis(h.options.timeout_ms),
        if h.options.tls { "  tls" } else { "" },
        if h.options.auth { "  auth" } else { "" }
    );
    let _ = writeln!(
        o,
        "polls       {} rounds, {} INFO samples, {} CLIENT LIST samples, {} topology samples (recorded on change)",
        s.rounds, s.info_samples, s.client_list_samples, s.topology_samples
    );
    let ended = match (&s.end, s.truncated_tail) {
        (Some((t, EndReason::Crashed)), _) => format!(
            "by a crash after {} (the next record into its directory ended the file there)",
            at(*t, start)
        ),
        (Some((t, reason)), _) => format!("{reason:?} at {}", at(*t, start)).to_lowercase(),
        (None, Some(line)) => format!("cut short (partial line {line} skipped)"),
        (None, None) => "cut short (no end line)".to_owned(),
    };
    let _ = writeln!(o, "ended       {ended}");

    let _ = writeln!(o, "\nnodes ({})", s.nodes.len());
    let mut nodes = Table::new(vec![
        Column::left("").width(21),
        Column::left("").width(8),
        Column::left("").width(14),
        Column::left(""),
    ]);
    for n in &s.nodes {
        let server = n.server.as_ref().map_or_else(
            || "?".to_owned(),
            |sv| format!("{:?} {}", sv.name, sv.version).to_lowercase(),
        );
        let via = match &n.via {
            Discovery::Seed => "seed".to_owned(),
            Discovery::Topology { from } => format!("via {from}"),
            Discovery::Recovered => "recovered".to_owned(),
        };
        nodes.push(vec![
            Cell::of(&n.addr),
            Cell::of(short(&n.id)),
            Cell::of(server),
            Cell::Text(format!(
                "seen {} {via}  samples {}  failures {}",
                at(n.discovered, start),
                n.samples,
                n.failures
            )),
        ]);
    }
    // Each node's line, then when it went and came back.
    for (line, n) in nodes.render_text("  ").lines().zip(&s.nodes) {
        let _ = writeln!(o, "{line}");
        for (t, reason) in &n.gone {
            let why = match reason {
                GoneReason::LeftTopology => "left the topology",
                GoneReason::Unreachable => "unreachable",
            };
            let _ = writeln!(o, "      gone at {}: {why}", at(*t, start));
        }
        for t in &n.recovered {
            let _ = writeln!(o, "      answering again at {}", at(*t, start));
        }
    }

    let _ = writeln!(o, "\ntopology changes ({})", s.slot_moves.len());
    for m in &s.slot_moves {
        let row = MoveRow {
            slots: m.slots,
            from: short(&m.from),
            to: short(&m.to),
            ranges: abbreviate(&m.ranges),
            first: at(m.span.start, start),
            last: at(m.span.end, start),
            took: Some(format_millis(m.span.millis())),
        };
        o.push_str(&row.text());
    }
    if !s.migrations.is_empty() {
        let _ = writeln!(o, "\nslots seen migrating ({})", s.migrations.len());
        for m in &s.migrations {
            let row = MoveRow {
                slots: m.slots,
                from: m.from.short().to_owned(),
                to: m.to.short().to_owned(),
                ranges: abbreviate(&m.ranges),
                first: at(m.span.start, start),
                last: at(m.span.end, start),
                took: None,
            };
            o.push_str(&row.text());
        }
    }

    let total: u64 = s.failures.iter().map(|f| f.count).sum();
    let _ = writeln!(o, "\npoll failures ({total})");
    let mut failures = Table::new(vec![
        Column::left("").width(21),
        Column::left("").width(12),
        Column::left("").width(6),
        Column::left(""),
    ]);
    for f in &s.failures {
        failures.push(vec![
            Cell::of(&f.addr),
            Cell::Text(format!("{:?}", f.kind).to_lowercase()),
            Cell::Text(format!("x{}", f.count)),
            Cell::Text(format!(
                "{} .. {}  e.g. {}",
                at(f.span.start, start),
                at(f.span.end, start),
                f.example
            )),
        ]);
    }
    o.push_str(&failures.render_text("  "));
    if !s.annotations.is_empty() {
        let _ = writeln!(o, "\nannotations ({})", s.annotations.len());
        for (t, source, text) in &s.annotations {
            let _ = writeln!(o, "  {}  [{source}] {text}", at(*t, start));
        }
    }
    if !read.input.bad_lines.is_empty() {
        let _ = writeln!(o, "\nunreadable lines ({})", read.input.bad_lines.len());
        for e in read.input.bad_lines.iter().take(20) {
            let _ = writeln!(o, "  {e}");
        }
    }
    o
}

/// The ranges comma-separated; past six, the first three, how many more, and the last.
fn abbreviate(ranges: &[SlotRange]) -> String {
    let ranges: Vec<String> = ranges.iter().map(ToString::to_string).collect();
    if ranges.len() <= 6 {
        ranges.join(",")
    } else {
        format!(
            "{},… {} more …,{}",
            ranges[..3].join(","),
            ranges.len() - 4,
            ranges[ranges.len() - 1]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotscope_core::Slot;

    #[test]
    fn a_move_as_text() {
        let mut m = MoveRow {
            slots: 5461,
            from: "43a2635e".into(),
            to: "(unassigned)".into(),
            ranges: "0-5460".into(),
            first: "05:17:18 (+4.2s)".into(),
            last: "05:17:20 (+6.0s)".into(),
            took: Some("1.8s".into()),
        };
        assert_eq!(
            m.text(),
            "  5461 slots 43a2635e -> (unassigned)  [0-5460]  from 05:17:18 (+4.2s) to 05:17:20 (+6.0s) (1.8s)\n"
        );
        m.took = None;
        assert_eq!(
            m.text(),
            "  5461 slots 43a2635e -> (unassigned)  [0-5460]  from 05:17:18 (+4.2s) to 05:17:20 (+6.0s)\n"
        );
    }

    #[test]
    fn ranges_past_six_are_abbreviated() {
        let r: Vec<SlotRange> = (0..8u16)
            .map(|i| {
                SlotRange::new(Slot::new(i * 10).unwrap(), Slot::new(i * 10 + 1).unwrap()).unwrap()
            })
            .collect();
        assert_eq!(abbreviate(&r[..2]), "0-1,10-11");
        assert_eq!(abbreviate(&r), "0-1,10-11,20-21,… 4 more …,70-71");
    }
}
