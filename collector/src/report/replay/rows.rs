//! The rows of `slotscope replay`'s report: the workload, the client's figures, one row a
//! command and one a node, built once from the replay and written as text or as Markdown.

use std::fmt::Write as _;

use slotscope_core::replay::{CommandStats, NodeStats, ReplayReport, Shape};

use super::replayed::Replayed;
use crate::report::table::{Cell, Column, Table, TableRow};

/// A command mix as `get 60 %, set 40 %`: each command with its share in percent.
pub fn mix<'a>(parts: impl IntoIterator<Item = (&'a str, f64)>) -> String {
    parts
        .into_iter()
        .map(|(c, percent)| format!("{c} {percent:.0} %"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What was replayed.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadRow {
    /// Commands per second.
    pub rate: u32,
    /// Where the rate came from (`option`, `observed`, `default`).
    pub rate_source: &'static str,
    /// The command mix (see [`mix`]).
    pub mix: String,
    /// How the application issues them (see [`shape`]).
    pub shape: String,
    /// The span replayed and why (see [`Window::text`](super::window::Window::text)).
    pub window: String,
    /// How long exchanges take, when the shape uses it (commands in flight).
    pub timing: Option<String>,
}

/// The application shape in words: `8 in flight at most` (lanes) or `tasks, at most 64 in
/// flight`.
pub fn shape(shape: Shape, lanes: u32) -> String {
    match shape {
        Shape::Lanes => format!("{lanes} in flight at most"),
        Shape::InFlight(n) => format!("tasks, at most {n} in flight"),
    }
}

impl WorkloadRow {
    /// A line, then the window's and the timing's.
    pub fn text(&self) -> String {
        let mut s = format!(
            "workload: {} commands/s ({}) of {}, {}\nwindow: {}\n",
            self.rate, self.rate_source, self.mix, self.shape, self.window
        );
        if let Some(t) = &self.timing {
            let _ = writeln!(s, "timing: {t}");
        }
        s
    }

    /// One paragraph.
    pub fn markdown(&self) -> String {
        let timing = self
            .timing
            .as_ref()
            .map(|t| format!(" Timing: {t}."))
            .unwrap_or_default();
        format!(
            "Workload: {} commands/s ({}) of {}, {}. Window: {}.{timing}\n\n",
            self.rate, self.rate_source, self.mix, self.shape, self.window
        )
    }
}

/// The client's figures over the whole replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// Whether the client ended wedged.
    pub wedged: bool,
    /// Since when (RFC 3339), if it stayed wedged.
    pub wedged_since: Option<String>,
    /// `wedged at n of m moments of the kill and failure windows`, when a kill's moment or a
    /// failure's start was uncertain.
    pub moments: Option<String>,
    /// `issued (n succeeded, n failed)`, and the commands not issued while every task waited.
    pub commands: String,
    /// Exceptions the application saw, by class (text only).
    pub errors: Vec<(String, u64)>,
    /// MOVED replies.
    pub moved: u64,
    /// ASK replies.
    pub ask: u64,
    /// Full re-initialisations.
    pub full_reinits: u64,
    /// `CLUSTER SLOTS` calls.
    pub cluster_slots_calls: u64,
    /// Connections opened.
    pub new_connections: u64,
    /// Startup nodes left at the end.
    pub startup_nodes: usize,
    /// What the client held at the end.
    pub held: String,
}

impl Figures {
    /// The figures of `r`.
    pub fn of(r: &ReplayReport) -> Figures {
        let skipped = if r.skipped_while_waiting == 0 {
            String::new()
        } else {
            format!(
                ", {} not issued while every task waited",
                r.skipped_while_waiting
            )
        };
        let h = &r.held;
        Figures {
            wedged: r.wedged,
            wedged_since: r.wedged_since.map(|t| t.to_rfc3339()),
            moments: r.moments.map(|k| {
                format!(
                    "wedged at {} of {} moments of the kill and failure windows",
                    k.wedged, k.tried
                )
            }),
            commands: format!(
                "{} ({} succeeded, {} failed){skipped}",
                r.commands, r.succeeded, r.failed
            ),
            errors: r.errors.iter().map(|(k, n)| (k.clone(), *n)).collect(),
            moved: r.moved,
            ask: r.ask,
            full_reinits: r.full_reinits,
            cluster_slots_calls: r.cluster_slots_calls,
            new_connections: r.new_connections,
            startup_nodes: r.startup_nodes,
            held: format!(
                "{} connections open; slot table on {} node(s), {} slots on the node it names most, {} unmapped",
                h.open_connections, h.table_nodes, h.top_node_slots, h.unmapped_slots
            ),
        }
    }

    /// `wedged: …` and `commands: …` lines, then one line an error class.
    pub fn text_head(&self) -> String {
        let mut s = format!(
            "wedged: {}{}{}\ncommands: {}\n",
            if self.wedged { "yes" } else { "no" },
            self.wedged_since
                .as_ref()
                .map(|t| format!(" (since {t})"))
                .unwrap_or_default(),
            self.moments
                .as_ref()
                .map(|k| format!(" ({k})"))
                .unwrap_or_default(),
            self.commands
        );
        for (class, n) in &self.errors {
            let _ = writeln!(s, "  {class}: {n}");
        }
        s
    }

    /// The counts in one line, then what the client held at the end.
    pub fn text_tail(&self) -> String {
        format!(
            "MOVED {}, ASK {}, full re-initialisations {}, CLUSTER SLOTS calls {}, new connections {}, startup nodes at end {}\nat the end: {}\n",
            self.moved,
            self.ask,
            self.full_reinits,
            self.cluster_slots_calls,
            self.new_connections,
            self.startup_nodes,
            self.held
        )
    }

    /// A two-column table, one row a figure.
    pub fn table(&self) -> Table {
        let wedged = match (self.wedged, &self.wedged_since) {
            (true, Some(t)) => format!("**yes**, since {t}"),
            (true, None) => "**yes**".to_owned(),
            (false, _) => "no".to_owned(),
        };
        let wedged = match &self.moments {
            Some(k) => format!("{wedged} ({k})"),
            None => wedged,
        };
        let rows = [
            ("wedged", wedged),
            ("commands", self.commands.clone()),
            ("MOVED / ASK", format!("{} / {}", self.moved, self.ask)),
            ("full re-initialisations", self.full_reinits.to_string()),
            ("CLUSTER SLOTS calls", self.cluster_slots_calls.to_string()),
            ("new connections", self.new_connections.to_string()),
            ("startup nodes at the end", self.startup_nodes.to_string()),
            ("at the end", self.held.clone()),
        ];
        let mut t = Table::new(vec![Column::left("figure"), Column::left("value")]);
        for (k, v) in rows {
            t.push(vec![Cell::of(k), Cell::Text(v)]);
        }
        t
    }
}

/// One command of the workload.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandRow {
    /// The command.
    pub cmd: String,
    /// Issued by the application.
    pub issued: u64,
    /// Of which succeeded.
    pub succeeded: u64,
    /// `moved / calls`.
    pub moved_share: f64,
    /// Exceptions the application saw, `Class n`.
    pub errors: Vec<String>,
}

impl CommandRow {
    /// The row of `cmd`.
    pub fn of(cmd: &str, c: &CommandStats) -> CommandRow {
        CommandRow {
            cmd: cmd.to_owned(),
            issued: c.issued,
            succeeded: c.succeeded,
            moved_share: c.moved_share,
            errors: c.errors.iter().map(|(k, n)| format!("{k} {n}")).collect(),
        }
    }

    /// Its MOVED share in one line.
    pub fn text(&self) -> String {
        format!(
            "MOVED share {}: {:.1} %\n",
            self.cmd,
            self.moved_share * 100.0
        )
    }
}

impl TableRow for CommandRow {
    /// The Markdown table's columns (the text shows each command's MOVED share in a line).
    fn columns() -> Vec<Column> {
        ["command", "issued", "succeeded", "MOVED share", "errors"]
            .into_iter()
            .map(Column::left)
            .collect()
    }

    fn cells(&self) -> Vec<Cell> {
        vec![
            Cell::of(&self.cmd),
            Cell::of(self.issued),
            Cell::of(self.succeeded),
            Cell::Text(format!("{:.1} %", self.moved_share * 100.0)),
            Cell::Text(self.errors.join(", ")),
        ]
    }
}

/// What one node got from the client.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRow {
    /// The node's address.
    pub addr: String,
    /// Its figures (calls, ok, MOVED, ASK, failed attempts, `CLUSTER SLOTS`).
    pub stats: NodeStats,
}

impl NodeRow {
    /// The row of `addr`.
    pub fn of(addr: &str, n: &NodeStats) -> NodeRow {
        NodeRow {
            addr: addr.to_owned(),
            stats: n.clone(),
        }
    }

    /// One indented line.
    pub fn text(&self) -> String {
        let n = &self.stats;
        format!(
            "  {}: {} calls ({} ok, {} MOVED, {} ASK), {} failed attempts, {} CLUSTER SLOTS\n",
            self.addr, n.calls, n.ok, n.moved, n.ask, n.failed, n.cluster_slots
        )
    }
}

impl TableRow for NodeRow {
    /// The Markdown table's columns (the text shows each node in a line).
    fn columns() -> Vec<Column> {
        [
            "node",
            "calls",
            "ok",
            "MOVED",
            "ASK",
            "failed attempts",
            "CLUSTER SLOTS",
        ]
        .into_iter()
        .map(Column::left)
        .collect()
    }

    fn cells(&self) -> Vec<Cell> {
        let n = &self.stats;
        vec![
            Cell::of(&self.addr),
            Cell::of(n.calls),
            Cell::of(n.ok),
            Cell::of(n.moved),
            Cell::of(n.ask),
            Cell::of(n.failed),
            Cell::of(n.cluster_slots),
        ]
    }
}

/// Every row of the report, built once from the replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Rows {
    /// The client model.
    pub model: String,
    /// What was replayed.
    pub workload: WorkloadRow,
    /// The client's figures.
    pub figures: Figures,
    /// One row a command.
    pub commands: Vec<CommandRow>,
    /// One row a node.
    pub nodes: Vec<NodeRow>,
}

impl Rows {
    /// The rows of `replayed`.
    pub fn of(replayed: &Replayed) -> Rows {
        let r = &replayed.report;
        Rows {
            model: r.model.clone(),
            workload: WorkloadRow {
                rate: replayed.rate,
                rate_source: replayed.rate_source.name(),
                mix: if replayed.mix.is_empty() {
                    "zadd".to_owned()
                } else {
                    mix(replayed
                        .mix
                        .iter()
                        .map(|(c, share)| (c.as_str(), share * 100.0)))
                },
                shape: if replayed.poisson {
                    format!("{}, Poisson arrivals", shape(replayed.shape, r.concurrency))
                } else {
                    shape(replayed.shape, r.concurrency)
                },
                window: replayed.window.text(),
                timing: matches!(replayed.shape, Shape::InFlight(_))
                    .then(|| replayed.timing.text()),
            },
            figures: Figures::of(r),
            commands: r
                .per_command
                .iter()
                .map(|(cmd, c)| CommandRow::of(cmd, c))
                .collect(),
            nodes: r.nodes.iter().map(|(a, n)| NodeRow::of(a, n)).collect(),
        }
    }

    /// The report as text.
    pub fn text(&self) -> String {
        let mut s = format!("model: {}\n", self.model);
        s.push_str(&self.workload.text());
        s.push_str(&self.figures.text_head());
        for c in &self.commands {
            s.push_str(&c.text());
        }
        s.push_str(&self.figures.text_tail());
        s.push_str("per node:\n");
        for n in &self.nodes {
            s.push_str(&n.text());
        }
        s
    }

    /// The report as Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!("## Replay: `{}`\n\n", self.model);
        s.push_str(&self.workload.markdown());
        s.push_str(&self.figures.table().render_markdown());
        s.push('\n');
        s.push_str(&Table::of(&self.commands).render_markdown());
        s.push('\n');
        s.push_str(&Table::of(&self.nodes).render_markdown());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Markdown line of `r` alone, after the header and separator lines.
    fn md_row<R: TableRow>(r: &R) -> String {
        let table = Table::of([r]).render_markdown();
        format!("{}\n", table.lines().nth(2).unwrap_or_default())
    }

    fn figures() -> Figures {
        Figures {
            wedged: true,
            wedged_since: Some("2025-03-14T05:17:18.250Z".into()),
            moments: None,
            commands: "10 (7 succeeded, 3 failed)".into(),
            errors: vec![("ConnectionError".into(), 3)],
            moved: 4,
            ask: 1,
            full_reinits: 2,
            cluster_slots_calls: 5,
            new_connections: 6,
            startup_nodes: 0,
            held: "1 connections open".into(),
        }
    }

    #[test]
    fn a_mix_in_percent() {
        assert_eq!(mix([("get", 60.4), ("set", 39.6)]), "get 60 %, set 40 %");
        assert_eq!(mix([]), "");
    }

    #[test]
    fn workload_as_text_and_markdown() {
        let mut w = WorkloadRow {
            rate: 145,
            rate_source: "observed",
            mix: "get 60 %, set 40 %".into(),
            shape: shape(Shape::Lanes, 8),
            window: "W".into(),
            timing: None,
        };
        assert_eq!(
            w.text(),
            "workload: 145 commands/s (observed) of get 60 %, set 40 %, 8 in flight at most\n\
             window: W\n"
        );
        assert_eq!(
            w.markdown(),
            "Workload: 145 commands/s (observed) of get 60 %, set 40 %, 8 in flight at most. \
             Window: W.\n\n"
        );
        w.shape = shape(Shape::InFlight(64), 1);
        w.timing = Some("T".into());
        assert!(w
            .text()
            .ends_with("tasks, at most 64 in flight\nwindow: W\ntiming: T\n"));
        assert!(w.markdown().ends_with("Window: W. Timing: T.\n\n"));
    }

    #[test]
    fn figures_as_text_and_markdown() {
        let mut f = figures();
        assert_eq!(
            f.text_head(),
            "wedged: yes (since 2025-03-14T05:17:18.250Z)\ncommands: 10 (7 succeeded, 3 failed)\n  \
             ConnectionError: 3\n"
        );
        assert_eq!(
            f.text_tail(),
            "MOVED 4, ASK 1, full re-initialisations 2, CLUSTER SLOTS calls 5, new connections 6, \
             startup nodes at end 0\nat the end: 1 connections open\n"
        );
        assert_eq!(
            f.table().render_markdown(),
            "| figure | value |\n|---|---|\n\
             | wedged | **yes**, since 2025-03-14T05:17:18.250Z |\n\
             | commands | 10 (7 succeeded, 3 failed) |\n\
             | MOVED / ASK | 4 / 1 |\n\
             | full re-initialisations | 2 |\n\
             | CLUSTER SLOTS calls | 5 |\n\
             | new connections | 6 |\n\
             | startup nodes at the end | 0 |\n\
             | at the end | 1 connections open |\n"
        );
        f.wedged_since = None;
        assert!(f.text_head().starts_with("wedged: yes\n"));
        assert!(f
            .table()
            .render_markdown()
            .contains("| wedged | **yes** |\n"));
        f.wedged = false;
        assert!(f.text_head().starts_with("wedged: no\n"));
        assert!(f.table().render_markdown().contains("| wedged | no |\n"));
    }

    #[test]
    fn command_row_as_text_and_markdown() {
        let mut c = CommandRow {
            cmd: "get".into(),
            issued: 10,
            succeeded: 7,
            moved_share: 0.1234,
            errors: vec!["ConnectionError 3".into(), "TimeoutError 1".into()],
        };
        assert_eq!(c.text(), "MOVED share get: 12.3 %\n");
        assert_eq!(
            md_row(&c),
            "| get | 10 | 7 | 12.3 % | ConnectionError 3, TimeoutError 1 |\n"
        );
        c.errors.clear();
        assert_eq!(md_row(&c), "| get | 10 | 7 | 12.3 % |  |\n");
    }

    #[test]
    fn node_row_as_text_and_markdown() {
        let n = NodeRow {
            addr: "10.0.0.1:6379".into(),
            stats: NodeStats {
                calls: 9,
                ok: 5,
                moved: 3,
                ask: 1,
                failed: 2,
                cluster_slots: 4,
            },
        };
        assert_eq!(
            n.text(),
            "  10.0.0.1:6379: 9 calls (5 ok, 3 MOVED, 1 ASK), 2 failed attempts, 4 CLUSTER SLOTS\n"
        );
        assert_eq!(md_row(&n), "| 10.0.0.1:6379 | 9 | 5 | 3 | 1 | 2 | 4 |\n");
    }
}
