//! `slotscope summary`: reads a recording through the core reader and prints what it holds.

use std::fmt::Write as _;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use slotscope_core::reader::{ReadError, RecordingReader};
use slotscope_core::recording::{Discovery, GoneReason};
use slotscope_core::summary::{Summary, SummaryBuilder};
use slotscope_core::time::format_millis;
use slotscope_core::{NodeId, Timestamp};

use crate::progress::human_bytes;

/// A summary and the bad lines met while reading.
pub struct Read {
    /// What the recording holds.
    pub summary: Summary,
    /// Lines that could not be read (line number and message).
    pub bad_lines: Vec<ReadError>,
    /// Size of the file.
    pub file_bytes: u64,
}

/// Why a recording could not be summarised at all.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// The file could not be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a recording.
    #[error("{path}: {source}")]
    NotARecording {
        /// The file.
        path: String,
        /// Why.
        source: ReadError,
    },
}

/// Reads `path` (plain or zstd) and folds it into a summary, collecting bad lines.
pub fn read(path: &Path) -> Result<Read, SummaryError> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|source| SummaryError::Open {
        path: shown.clone(),
        source,
    })?;
    let file_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut reader =
        RecordingReader::detect(BufReader::with_capacity(256 * 1024, file)).map_err(|source| {
            SummaryError::Open {
                path: shown.clone(),
                source,
            }
        })?;
    let header = reader
        .header()
        .map_err(|source| SummaryError::NotARecording {
            path: shown.clone(),
            source,
        })?
        .clone();
    let mut builder = SummaryBuilder::new(header);
    let mut bad_lines = Vec::new();
    for item in reader.by_ref() {
        match item {
            Ok((_, line)) => builder.push(&line),
            Err(e) => bad_lines.push(e),
        }
    }
    builder.set_truncated_tail(reader.truncated_tail());
    Ok(Read {
        summary: builder.finish(),
        bad_lines,
        file_bytes,
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
pub fn render_text(read: &Read) -> String {
    let s = &read.summary;
    let h = &s.header;
    let start = h.started;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "recording   {} ({})",
        h.collector,
        human_bytes(read.file_bytes)
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
    if !read.bad_lines.is_empty() {
        let _ = writeln!(o, "\nunreadable lines ({})", read.bad_lines.len());
        for e in read.bad_lines.iter().take(20) {
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
