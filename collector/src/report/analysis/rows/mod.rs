//! The rows of `slotscope analyze`'s report: one plain struct per table row or section, built
//! once from the analysis, each written as text (for a terminal) or as Markdown (for a
//! postmortem).

use std::fmt::Write as _;

use slotscope_core::analysis::{Rates, ShardTraffic};
use slotscope_core::census::ClientGroup;
use slotscope_core::moment::at;
use slotscope_core::recording::Discovery;
use slotscope_core::time::format_millis;
use slotscope_core::{NodeId, Timestamp};

use super::analysed::Analysed;
use crate::report::table::{Cell, Column, Table, TableRow};

mod finding;
mod story;
mod tap;

pub use finding::FindingEntry;
pub use story::StorySection;
pub use tap::{TapNodeRow, TapSection};

/// A node id's short form, `?` when unknown.
fn short(id: Option<&NodeId>) -> String {
    id.map_or_else(|| "?".to_owned(), |i| i.short().to_owned())
}

/// A share with three decimals, `-` when there is none.
fn share(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |s| format!("{s:.3}"))
}

/// `text` in lines of at most `width` characters (a longer word stands alone), each after
/// `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    hang(text, width, indent, indent)
}

/// `text` in lines of at most `width` characters, the first after `first`, the others after
/// `rest` (a hanging indent: `- ` on the first line, spaces on the others).
fn hang(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    let mut indent = first;
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
            indent = rest;
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
    out
}

/// What was recorded: the report's first lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Heading {
    /// The seed address.
    pub seed: String,
    /// When the recording started (RFC 3339).
    pub started: String,
    /// How long it runs, `None` without events.
    pub duration: Option<String>,
    /// Nodes seen.
    pub nodes: usize,
    /// The poll interval.
    pub interval: String,
    /// The collector that wrote the recording.
    pub collector: String,
}

impl Heading {
    /// The heading of `a`.
    pub fn of(a: &Analysed) -> Heading {
        let s = &a.analysis.summary;
        let start = s.header.started;
        Heading {
            seed: s.header.seed.to_string(),
            started: s.header.started.to_string(),
            duration: s.span.map(|sp| format_millis(sp.end.millis_since(start))),
            nodes: s.nodes.len(),
            interval: format_millis(s.header.options.interval_ms),
            collector: s.header.collector.clone(),
        }
    }

    /// One line.
    pub fn text(&self) -> String {
        format!(
            "recording of {} from {}, {}, {} nodes, polled every {}\n",
            self.seed,
            self.started,
            self.duration.as_deref().unwrap_or("empty"),
            self.nodes,
            self.interval
        )
    }

    /// One paragraph.
    pub fn markdown(&self) -> String {
        format!(
            "Recording of `{}` from {} for {}, {} nodes polled every {} ({}).\n\n",
            self.seed,
            self.started,
            self.duration.as_deref().unwrap_or("0s"),
            self.nodes,
            self.interval,
            self.collector
        )
    }
}

/// One event of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineRow {
    /// When (see [`at`]).
    pub at: String,
    /// What happened.
    pub event: String,
}

impl TimelineRow {
    /// The timeline of `a`: nodes appearing, going and answering again, slot moves and
    /// annotations, in time order.
    pub fn all(a: &Analysed) -> Vec<TimelineRow> {
        let s = &a.analysis.summary;
        let start = s.header.started;
        let mut events: Vec<(Timestamp, String)> = Vec::new();
        for n in &s.nodes {
            let how = match &n.via {
                Discovery::Seed => "seed".to_owned(),
                Discovery::Topology { from } => format!("listed by {from}"),
                Discovery::Recovered => "recovered".to_owned(),
            };
            events.push((
                n.discovered,
                format!("node {} ({}) appears, {how}", n.addr, short(n.id.as_ref())),
            ));
            for (t, why) in &n.gone {
                events.push((*t, format!("node {} gone: {why:?}", n.addr).to_lowercase()));
            }
            for t in &n.recovered {
                events.push((*t, format!("node {} answers again", n.addr)));
            }
        }
        for m in &s.slot_moves {
            let what = if m.creation {
                format!(
                    "{} slots assigned to {} (the cluster's creation)",
                    m.slots,
                    short(m.to.as_ref())
                )
            } else {
                format!(
                    "{} slots move {} -> {}",
                    m.slots,
                    short(m.from.as_ref()),
                    short(m.to.as_ref())
                )
            };
            events.push((
                m.span.start,
                format!("{what} (until {})", at(m.span.end, start)),
            ));
        }
        for (t, source, text) in &s.annotations {
            events.push((*t, format!("[{source}] {text}")));
        }
        events.sort_by_key(|e| e.0);
        events
            .into_iter()
            .map(|(t, event)| TimelineRow {
                at: at(t, start),
                event,
            })
            .collect()
    }

    /// One indented line.
    pub fn text(&self) -> String {
        format!("  {}  {}\n", self.at, self.event)
    }

    /// A list item for each line of [`TimelineRow::text`], trimmed (an event's text may hold
    /// line breaks: an annotation's).
    pub fn markdown(&self) -> String {
        let mut o = String::new();
        for line in self.text().lines() {
            let _ = writeln!(o, "- {}", line.trim());
        }
        o
    }
}

/// One shard's traffic before and after the topology change.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardRow {
    /// The node.
    pub addr: String,
    /// Its id's short form, `?` when unknown.
    pub id: String,
    /// Slots it owns.
    pub slots: usize,
    /// Keys it holds.
    pub keys: u64,
    /// Rates before the change.
    pub before: Rates,
    /// Rates after it.
    pub after: Rates,
}

impl ShardRow {
    /// The row of `t`.
    pub fn of(t: &ShardTraffic) -> ShardRow {
        ShardRow {
            addr: t.addr.to_string(),
            id: short(t.id.as_ref()),
            slots: t.slots,
            keys: t.keys,
            before: t.before.clone(),
            after: t.after.clone(),
        }
    }
}

impl TableRow for ShardRow {
    /// Node, id, slots, keys, then executed, rejected, MOVED and new connections per second,
    /// before -> after.
    fn columns() -> Vec<Column> {
        vec![
            Column::left("node").width(21),
            Column::left("id").width(8),
            Column::right("slots").width(6),
            Column::right("keys").width(9),
            Column::right("executed/s").width(18).gap(2),
            Column::right("rejected/s").width(18).gap(2),
            Column::right("MOVED/s").width(16).gap(2),
            Column::right("new conns/s").width(16).gap(2),
        ]
    }

    fn cells(&self) -> Vec<Cell> {
        let (b, a) = (&self.before, &self.after);
        vec![
            Cell::of(&self.addr),
            Cell::Code(self.id.clone()),
            Cell::of(self.slots),
            Cell::of(self.keys),
            Cell::Change(b.calls, a.calls),
            Cell::Change(b.rejected, a.rejected),
            Cell::Change(b.moved, a.moved),
            Cell::Change(b.new_connections, a.new_connections),
        ]
    }
}

/// One client group of the census.
#[derive(Clone, Debug, PartialEq)]
pub struct CensusRow {
    /// The group's label.
    pub label: String,
    /// Client hosts in it.
    pub hosts: usize,
    /// Connections seen.
    pub seen: u64,
    /// Connections open at the end.
    pub open: u64,
    /// New connections per second.
    pub new_per_sec: f64,
    /// Median connection lifetime, seconds.
    pub lifetime_secs: Option<u64>,
    /// Commands it sent.
    pub commands: Vec<String>,
    /// Connections seen mid-handshake counted in it.
    pub merged: u64,
}

impl CensusRow {
    /// The row of `g`.
    pub fn of(g: &ClientGroup) -> CensusRow {
        CensusRow {
            label: g.key.label(),
            hosts: g.hosts.len(),
            seen: g.connections_seen,
            open: g.open_last,
            new_per_sec: g.new_per_sec,
            lifetime_secs: g.median_lifetime_secs(),
            commands: g.commands.keys().cloned().collect(),
            merged: g.merged_connections(),
        }
    }

    /// The census as text: one line a group, each figure named in its cell (no header), every
    /// column as wide as its widest cell (a long label pushes no line out of line).
    pub fn text(rows: &[CensusRow]) -> String {
        let mut t = Table::new(vec![
            Column::left("").width(36),
            Column::left("").width(9),
            Column::left("").width(10),
            Column::left("").width(9),
            Column::left("").width(12),
            Column::left("").width(15),
            Column::left(""),
        ]);
        for r in rows {
            t.push(vec![
                Cell::of(&r.label),
                Cell::Text(format!("hosts {}", r.hosts)),
                Cell::Text(format!("seen {}", r.seen)),
                Cell::Text(format!("open {}", r.open)),
                Cell::Text(format!("new/s {:.2}", r.new_per_sec)),
                Cell::Text(format!(
                    "lifetime {}",
                    r.lifetime_secs
                        .map_or_else(|| "-".to_owned(), |l| format!("{l}s"))
                )),
                Cell::Text(format!(
                    "cmds {}{}",
                    r.commands.join(","),
                    if r.merged > 0 {
                        format!(" (merged {})", r.merged)
                    } else {
                        String::new()
                    }
                )),
            ]);
        }
        t.render_text("  ")
    }
}

impl TableRow for CensusRow {
    /// The Markdown table's columns (the text shows each row as one labelled line).
    fn columns() -> Vec<Column> {
        vec![
            Column::left("client group"),
            Column::right("hosts"),
            Column::right("connections seen"),
            Column::right("open at end"),
            Column::right("new/s"),
            Column::right("median lifetime"),
            Column::left("commands"),
            Column::right("merged"),
        ]
    }

    fn cells(&self) -> Vec<Cell> {
        vec![
            Cell::of(&self.label),
            Cell::of(self.hosts),
            Cell::of(self.seen),
            Cell::of(self.open),
            Cell::Text(format!("{:.2}", self.new_per_sec)),
            self.lifetime_secs
                .map_or(Cell::Absent, |l| Cell::Text(format!("{l} s"))),
            Cell::CodeList(self.commands.clone()),
            Cell::of(self.merged),
        ]
    }
}

/// What each census column means, one line each (the census's own legend).
pub fn census_legend() -> Vec<String> {
    slotscope_core::census::COLUMNS
        .iter()
        .map(|(name, meaning)| format!("{name}: {meaning}"))
        .collect()
}

/// The groups inferred from counters (no poll saw them), one line each.
pub fn inferred_rows(a: &Analysed) -> Vec<String> {
    let start = a.analysis.summary.header.started;
    a.analysis
        .census
        .inferred
        .iter()
        .map(|g| {
            format!(
                "{} (inferred, {} .. {}): {}",
                g.label(),
                at(g.span.start, start),
                at(g.span.end, start),
                g.reason
            )
        })
        .collect()
}

/// Every row of the report, built once from the analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct Rows {
    /// What was recorded.
    pub heading: Heading,
    /// What happened.
    pub story: StorySection,
    /// The findings, most important first.
    pub findings: Vec<FindingEntry>,
    /// Outside evidence, one line each.
    pub evidence: Vec<String>,
    /// The tapped client's figures.
    pub tap: Option<TapSection>,
    /// The timeline.
    pub timeline: Vec<TimelineRow>,
    /// Traffic per shard.
    pub shards: Vec<ShardRow>,
    /// The client census.
    pub census: Vec<CensusRow>,
}

impl Rows {
    /// The rows of `a`.
    pub fn of(a: &Analysed) -> Rows {
        let start = a.analysis.summary.header.started;
        Rows {
            heading: Heading::of(a),
            story: StorySection::of(&a.analysis.story, start),
            findings: a
                .analysis
                .findings
                .iter()
                .enumerate()
                .map(|(i, f)| FindingEntry::of(i + 1, f, start))
                .collect(),
            evidence: a
                .analysis
                .evidence
                .iter()
                .map(ToString::to_string)
                .collect(),
            tap: TapSection::of(a),
            timeline: TimelineRow::all(a),
            shards: a.analysis.shard_traffic.iter().map(ShardRow::of).collect(),
            census: a.analysis.census.groups.iter().map(CensusRow::of).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(calls: f64, rejected: f64, moved: f64, new_connections: f64) -> Rates {
        Rates {
            calls,
            rejected,
            moved,
            new_connections,
            ..Rates::default()
        }
    }

    #[test]
    fn heading_as_text_and_markdown() {
        let mut h = Heading {
            seed: "10.0.0.1:6379".into(),
            started: "2025-03-14T05:17:14.000Z".into(),
            duration: Some("2m05s".into()),
            nodes: 3,
            interval: "1.0s".into(),
            collector: "slotscope 0.1.0".into(),
        };
        assert_eq!(
            h.text(),
            "recording of 10.0.0.1:6379 from 2025-03-14T05:17:14.000Z, 2m05s, 3 nodes, polled every 1.0s\n"
        );
        assert_eq!(
            h.markdown(),
            "Recording of `10.0.0.1:6379` from 2025-03-14T05:17:14.000Z for 2m05s, 3 nodes polled \
             every 1.0s (slotscope 0.1.0).\n\n"
        );
        h.duration = None;
        assert!(h.text().contains(", empty, 3 nodes"));
        assert!(h.markdown().contains(" for 0s, 3 nodes"));
    }

    #[test]
    fn text_wraps_at_a_hundred_characters() {
        let words = ["word"; 30].join(" ");
        let wrapped = wrap(&words, 100, "  ");
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), 2 + 99);
        assert_eq!(wrap("", 100, "  "), "");
    }

    #[test]
    fn timeline_row_as_text_and_markdown() {
        let mut t = TimelineRow {
            at: "05:17:18 (+4.2s)".into(),
            event: "node 10.0.0.2:6379 answers again".into(),
        };
        assert_eq!(
            t.text(),
            "  05:17:18 (+4.2s)  node 10.0.0.2:6379 answers again\n"
        );
        assert_eq!(
            t.markdown(),
            "- 05:17:18 (+4.2s)  node 10.0.0.2:6379 answers again\n"
        );
        t.event = "[ops] two\nlines ".into();
        assert_eq!(t.markdown(), "- 05:17:18 (+4.2s)  [ops] two\n- lines\n");
    }

    #[test]
    fn shard_rows_show_the_same_columns_as_text_and_markdown() {
        let r = ShardRow {
            addr: "10.0.0.1:6379".into(),
            id: "43a2635e".into(),
            slots: 8192,
            keys: 5000,
            before: rates(100.0, 0.0, 0.0, 0.5),
            after: rates(0.0, 12.25, 12.25, 3.0),
        };
        let long = ShardRow {
            addr: "redis-shard-7.cache.eu-west-1.internal:6379".into(),
            ..r.clone()
        };
        assert_eq!(
            Table::of([&r]).render_text("  "),
            "  node                  id        slots      keys          executed/s          rejected/s           MOVED/s       new conns/s\n\
             \x20 10.0.0.1:6379         43a2635e   8192      5000    100.0 ->     0.0      0.0 ->    12.2     0.0 ->   12.2     0.5 ->    3.0\n"
        );
        let text = Table::of([&r, &long]).render_text("  ");
        let arrows: Vec<Option<usize>> = text.lines().map(|l| l.rfind("->")).collect();
        assert_eq!(arrows[1], arrows[2], "{text}");
        assert_eq!(
            Table::of([&r]).render_markdown(),
            "| node | id | slots | keys | executed/s | rejected/s | MOVED/s | new conns/s |\n\
             |---|---|---:|---:|---:|---:|---:|---:|\n\
             | 10.0.0.1:6379 | `43a2635e` | 8192 | 5000 | 100.0 → 0.0 | 0.0 → 12.2 | 0.0 → 12.2 | 0.5 → 3.0 |\n"
        );
    }

    #[test]
    fn census_row_as_text_and_markdown() {
        let mut r = CensusRow {
            label: "redis-py 8.0.0 \"api\"".into(),
            hosts: 2,
            seen: 14,
            open: 3,
            new_per_sec: 0.125,
            lifetime_secs: Some(12),
            commands: vec!["cluster|slots".into(), "get".into()],
            merged: 0,
        };
        assert_eq!(
            CensusRow::text(&[r.clone()]),
            "  redis-py 8.0.0 \"api\"                 hosts 2   seen 14    open 3    new/s 0.12   lifetime 12s    cmds cluster|slots,get\n"
        );
        assert_eq!(
            Table::of([&r]).render_markdown(),
            "| client group | hosts | connections seen | open at end | new/s | median lifetime | commands | merged |\n\
             |---|---:|---:|---:|---:|---:|---|---:|\n\
             | redis-py 8.0.0 \"api\" | 2 | 14 | 3 | 0.12 | 12 s | `cluster\\|slots`, `get` | 0 |\n"
        );
        r.merged = 5;
        let text = CensusRow::text(&[r.clone()]);
        assert!(
            text.ends_with("cmds cluster|slots,get (merged 5)\n"),
            "{text}"
        );
        r.lifetime_secs = None;
        assert!(CensusRow::text(&[r.clone()]).contains(" lifetime -      cmds "));
        let long = CensusRow {
            label: "host checkout-worker-17.payments.eu-west-1.internal".into(),
            ..r.clone()
        };
        let text = CensusRow::text(&[r.clone(), long]);
        let hosts: Vec<Option<usize>> = text.lines().map(|l| l.find(" hosts ")).collect();
        assert_eq!(hosts[0], hosts[1], "{text}");
        assert!(Table::of([&r]).render_markdown().contains("| 0.12 | – | "));
    }
}
