//! `slotscope summary`: reads a recording through the core reader and prints what it holds.

use std::fmt::Write as _;
use std::path::Path;

use slotscope_core::recording::{Discovery, GoneReason};
use slotscope_core::summary::{Summary, SummaryBuilder};
use slotscope_core::time::format_millis;
use slotscope_core::{NodeId, Timestamp};

use crate::input::{read_recording, Input, InputError};
use crate::progress::human_bytes;

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

fn at(t: Timestamp, start: Timestamp) -> String {
    format!(
        "{} (+{})",
        t.time_of_day(),
        format_millis(t.millis_since(start))
    )
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
        (Some((t, reason)), _) => format!("{reason:?} at {}", at(*t, start)).to_lowercase(),
        (None, Some(line)) => format!("cut short (partial line {line} skipped)"),
        (None, None) => "cut short (no end line)".to_owned(),
    };
    let _ = writeln!(o, "ended       {ended}");

    let _ = writeln!(o, "\nnodes ({})", s.nodes.len());
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
        let _ = writeln!(
            o,
            "  {:<21} {:<8} {:<14} seen {} {}  samples {}  failures {}",
            n.addr.to_string(),
            short(&n.id),
            server,
            at(n.discovered, start),
            via,
            n.samples,
            n.failures
        );
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
        let ranges: Vec<String> = m.ranges.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            o,
            "  {} slots {} -> {}  [{}]  from {} to {} ({})",
            m.slots,
            short(&m.from),
            short(&m.to),
            abbreviate(&ranges),
            at(m.span.start, start),
            at(m.span.end, start),
            format_millis(m.span.millis())
        );
    }
    if !s.migrations.is_empty() {
        let _ = writeln!(o, "\nslots seen migrating ({})", s.migrations.len());
        for m in &s.migrations {
            let ranges: Vec<String> = m.ranges.iter().map(ToString::to_string).collect();
            let _ = writeln!(
                o,
                "  {} slots {} -> {}  [{}]  from {} to {}",
                m.slots,
                m.from.short(),
                m.to.short(),
                abbreviate(&ranges),
                at(m.span.start, start),
                at(m.span.end, start)
            );
        }
    }

    let total: u64 = s.failures.iter().map(|f| f.count).sum();
    let _ = writeln!(o, "\npoll failures ({total})");
    for f in &s.failures {
        let _ = writeln!(
            o,
            "  {:<21} {:<12} x{:<5} {} .. {}  e.g. {}",
            f.addr.to_string(),
            format!("{:?}", f.kind).to_lowercase(),
            f.count,
            at(f.span.start, start),
            at(f.span.end, start),
            f.example
        );
    }
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

fn abbreviate(ranges: &[String]) -> String {
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
