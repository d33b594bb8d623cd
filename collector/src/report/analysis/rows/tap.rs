//! The client-side section of `slotscope analyze`: what a client recorded through `slotscope tap`
//! got, beside what every client got from the servers.

use slotscope_core::tap::versus::Versus;
use slotscope_core::NodeAddr;

use super::super::analysed::Analysed;
use super::share;
use crate::report::table::{Cell, Column, Table, TableRow};

/// What the tapped client sent: the figures of the client-side section's introduction.
#[derive(Clone, Debug, PartialEq)]
pub struct TapHeading {
    /// Commands sent.
    pub sent: u64,
    /// Connections opened.
    pub connections: u64,
    /// Commands forwarded but not recorded (the tap's writer fell behind).
    pub not_recorded: u64,
}

impl TapHeading {
    /// The section's title line.
    pub fn text(&self) -> String {
        format!(
            "\nCLIENT-SIDE EVIDENCE (slotscope tap: {} commands on {} connections{}; client share = \
             MOVED / commands sent, server = rejected_calls / (calls + rejected_calls) of every \
             client)\n",
            self.sent,
            self.connections,
            self.unrecorded(),
        )
    }

    /// The section's title and introduction.
    pub fn markdown(&self) -> String {
        format!(
            "### Client-side evidence (slotscope tap)\n\n{} commands on {} connections{}. Client \
             share = MOVED / commands sent by the tapped client; server share = rejected_calls / \
             (calls + rejected_calls) of every client.\n\n",
            self.sent,
            self.connections,
            self.unrecorded()
        )
    }

    /// What the tap forwarded and could not record, if anything.
    fn unrecorded(&self) -> String {
        if self.not_recorded == 0 {
            return String::new();
        }
        format!(
            ", and {} more forwarded but not recorded (the tap's writer fell behind)",
            self.not_recorded
        )
    }
}

/// One command: what the tapped client got beside what every client got from the servers.
#[derive(Clone, Debug, PartialEq)]
pub struct VersusRow {
    /// The command.
    pub cmd: String,
    /// Sent by the tapped client.
    pub sent: u64,
    /// MOVED replies it got.
    pub moved: u64,
    /// ASK replies it got.
    pub ask: u64,
    /// Error replies it got.
    pub errors: u64,
    /// `moved / sent`.
    pub client_share: f64,
    /// The servers' calls plus rejected calls, every client; `None` without `INFO` figures.
    pub server_attempts: Option<u64>,
    /// The servers' rejected share.
    pub server_share: Option<f64>,
}

impl VersusRow {
    /// The row of `v`.
    pub fn of(v: &Versus) -> VersusRow {
        VersusRow {
            cmd: v.cmd.clone(),
            sent: v.sent,
            moved: v.moved,
            ask: v.ask,
            errors: v.errors,
            client_share: v.client_moved_share,
            server_attempts: v.server.map(|d| d.attempts()),
            server_share: v.server_share(),
        }
    }
}

impl TableRow for VersusRow {
    /// The command, what the tapped client got, then what the servers counted for every client.
    fn columns() -> Vec<Column> {
        vec![
            Column::left("command").width(22),
            Column::right("sent").width(9),
            Column::right("MOVED").width(8),
            Column::right("ASK").width(6),
            Column::right("errors").width(7),
            Column::right("client share").width(13),
            Column::right("server attempts").width(15).gap(2),
            Column::right("server share").width(13),
        ]
    }

    fn cells(&self) -> Vec<Cell> {
        vec![
            Cell::Code(self.cmd.clone()),
            Cell::of(self.sent),
            Cell::of(self.moved),
            Cell::of(self.ask),
            Cell::of(self.errors),
            Cell::Text(format!("{:.3}", self.client_share)),
            self.server_attempts.map_or(Cell::Absent, Cell::of),
            Cell::Text(share(self.server_share)),
        ]
    }
}

/// What the tapped client sent to one node (text only).
#[derive(Clone, Debug, PartialEq)]
pub struct TapNodeRow {
    /// The node.
    pub node: NodeAddr,
    /// Commands sent to it.
    pub sent: u64,
    /// MOVED replies it gave.
    pub moved: u64,
    /// ASK replies it gave.
    pub ask: u64,
    /// Mean latency, microseconds.
    pub mean_latency_us: f64,
}

impl TapNodeRow {
    /// The nodes as text: one line a node, each figure after its name (no header), every
    /// column as wide as its widest cell (a long host name pushes no line out of line).
    pub fn text(rows: &[TapNodeRow]) -> String {
        let mut t = Table::new(vec![
            Column::left(""),
            Column::left("").width(21),
            Column::left(""),
            Column::right("").width(9),
            Column::left("").gap(2),
            Column::right("").width(8),
            Column::left("").gap(2),
            Column::right("").width(6),
            Column::left("").gap(2),
        ]);
        for r in rows {
            t.push(vec![
                Cell::of("node"),
                Cell::of(&r.node),
                Cell::of("sent"),
                Cell::of(r.sent),
                Cell::of("MOVED"),
                Cell::of(r.moved),
                Cell::of("ASK"),
                Cell::of(r.ask),
                Cell::Text(format!("mean latency {:.0} µs", r.mean_latency_us)),
            ]);
        }
        t.render_text("  ")
    }
}

/// The client-side section (present when the recording holds tap lines).
#[derive(Clone, Debug, PartialEq)]
pub struct TapSection {
    /// Its introduction.
    pub heading: TapHeading,
    /// One row a command.
    pub commands: Vec<VersusRow>,
    /// One row a node.
    pub nodes: Vec<TapNodeRow>,
}

impl TapSection {
    /// The section of `a`, `None` without tap lines.
    pub fn of(a: &Analysed) -> Option<TapSection> {
        let t = &a.analysis.tap;
        if t.is_empty() {
            return None;
        }
        Some(TapSection {
            heading: TapHeading {
                sent: t.total.sent,
                connections: t.connections_opened,
                not_recorded: t.not_recorded,
            },
            commands: a.analysis.versus().iter().map(VersusRow::of).collect(),
            nodes: t
                .per_node
                .iter()
                .map(|(node, c)| TapNodeRow {
                    node: node.clone(),
                    sent: c.sent,
                    moved: c.moved,
                    ask: c.ask,
                    mean_latency_us: c.mean_latency_us(),
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versus_row_as_text_and_markdown() {
        let mut r = VersusRow {
            cmd: "cluster|slots".into(),
            sent: 1200,
            moved: 300,
            ask: 2,
            errors: 1,
            client_share: 0.25,
            server_attempts: Some(5000),
            server_share: Some(0.1234),
        };
        assert_eq!(
            Table::of([&r]).render_text("  "),
            "  command                     sent    MOVED    ASK  errors  client share  server attempts  server share\n\
             \x20 cluster|slots               1200      300      2       1         0.250             5000         0.123\n"
        );
        assert_eq!(
            Table::of([&r]).render_markdown(),
            "| command | sent | MOVED | ASK | errors | client share | server attempts | server share |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|\n\
             | `cluster\\|slots` | 1200 | 300 | 2 | 1 | 0.250 | 5000 | 0.123 |\n"
        );
        r.server_attempts = None;
        r.server_share = None;
        assert!(Table::of([&r])
            .render_text("  ")
            .ends_with("             -             -\n"));
        assert!(Table::of([&r])
            .render_markdown()
            .ends_with("| 0.250 | – | - |\n"));
    }

    #[test]
    fn tap_heading_and_node_as_text() {
        let mut h = TapHeading {
            sent: 10,
            connections: 2,
            not_recorded: 0,
        };
        assert!(h
            .text()
            .starts_with("\nCLIENT-SIDE EVIDENCE (slotscope tap: 10 commands on 2 connections;"));
        assert!(h.markdown().ends_with(" of every client.\n\n"));
        h.not_recorded = 7;
        assert!(h.text().contains(
            "10 commands on 2 connections, and 7 more forwarded but not recorded (the tap's writer \
             fell behind);"
        ));
        assert!(h
            .markdown()
            .contains("and 7 more forwarded but not recorded"));
        let n = TapNodeRow {
            node: "10.0.0.1:6379".parse().unwrap(),
            sent: 7,
            moved: 1,
            ask: 0,
            mean_latency_us: 251.6,
        };
        assert_eq!(
            TapNodeRow::text(&[n]),
            "  node 10.0.0.1:6379         sent         7  MOVED        1  ASK      0  mean latency 252 µs\n"
        );
    }
}
