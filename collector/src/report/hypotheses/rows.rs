//! The rows of `slotscope hypotheses`' report: the workload, what the recording shows, and one
//! row a variant with its predictions, built once from the ranking and written as text or as
//! Markdown.

use std::fmt::Write as _;

use slotscope_core::float;
use slotscope_core::hypothesis::{Hypotheses, MetricScore, Ranked, Value, METRICS};

use crate::report::replay::rows::mix;
use crate::report::table::{Cell, Column, Table, TableRow};

/// A metric's short name, as the reports' columns show it.
pub(super) fn short(metric: &str) -> &'static str {
    match metric {
        "moved_share" => "MOVED share",
        "moved_per_sec" => "MOVED/s",
        "new_connections_per_sec" => "new conn/s",
        "cluster_slots_per_sec" => "CLUSTER SLOTS/s",
        "traffic_ended" => "traffic ended",
        _ => "?",
    }
}

/// A metric's value: `yes`/`no`, a percentage for the MOVED share, else two decimals.
fn value(v: Value, metric: &str) -> String {
    match v {
        Value::Flag(b) => if b { "yes" } else { "no" }.to_owned(),
        Value::Number(x) if metric == "moved_share" => format!("{:.1}%", x * 100.0),
        Value::Number(x) => format!("{x:.2}"),
    }
}

/// What was replayed.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadRow {
    /// The command mix (see [`mix`]), or the one command.
    pub mix: String,
    /// Commands per second.
    pub rate: u32,
    /// Seconds of the recording the evidence covers.
    pub secs: f64,
}

impl WorkloadRow {
    /// One line.
    pub fn text(&self) -> String {
        format!(
            "workload: {} at {} commands/s over {:.0} s\n",
            self.mix, self.rate, self.secs
        )
    }

    /// One paragraph.
    pub fn markdown(&self) -> String {
        format!(
            "Workload: `{}` at {} commands/s over {:.0} s.\n\n",
            self.mix, self.rate, self.secs
        )
    }
}

/// What the recording shows, metric by metric (in [`METRICS`] order).
#[derive(Clone, Debug, PartialEq)]
pub struct ObservedRow {
    /// Each metric's short name and observed value (empty without variants).
    pub values: Vec<(&'static str, String)>,
    /// The MOVED share of each business command (text only).
    pub by_command: Vec<(String, f64)>,
}

impl ObservedRow {
    /// A titled block: one line a metric, then the MOVED share of each command.
    pub fn text(&self) -> String {
        let mut s = "observed (MOVED share: all business commands):\n".to_owned();
        for (name, v) in &self.values {
            let _ = writeln!(s, "  {name:<16} {v}");
        }
        for (cmd, share) in &self.by_command {
            let _ = writeln!(s, "    MOVED share {cmd}: {:.1}%", share * 100.0);
        }
        s
    }

    /// The ranking table's first row, in italics.
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells = vec![Cell::of(""), Cell::of("*observed*"), Cell::of("")];
        cells.extend(
            self.values
                .iter()
                .map(|(_, v)| Cell::Text(format!("*{v}*"))),
        );
        cells
    }
}

/// One variant: its rank, score and each metric's prediction with its agreement.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantRow {
    /// Its rank, from 1.
    pub rank: usize,
    /// `0..=1`.
    pub score: f64,
    /// Model, configuration and faults: `redis-py@8.0.0 socket_timeout=1 faults=none`.
    pub label: String,
    /// Each metric's short name and `predicted (agreement%)` (empty when not scored).
    pub cells: Vec<(&'static str, String)>,
}

impl VariantRow {
    /// The row of `r`, ranked `rank`.
    pub fn of(rank: usize, r: &Ranked) -> VariantRow {
        let mut label = r.model.clone();
        for (k, v) in &r.config {
            let _ = write!(label, " {k}={v}");
        }
        if r.faults != "recorded" {
            let _ = write!(label, " faults={}", r.faults);
        }
        let cell = |m: Option<&MetricScore>, metric: &str| {
            m.map_or_else(String::new, |m| {
                format!(
                    "{} ({:.0}%)",
                    value(m.predicted, metric),
                    m.agreement * 100.0
                )
            })
        };
        VariantRow {
            rank,
            score: r.score,
            label,
            cells: METRICS
                .iter()
                .map(|m| (short(m), cell(r.metrics.get(*m), m)))
                .collect(),
        }
    }

    /// The text's header line (after an empty line).
    pub const TEXT_HEADER: &'static str =
        "\nrank  score  variant  |  predicted (agreement) per metric\n";

    /// Two lines: rank, score and label; then the predictions.
    pub fn text(&self) -> String {
        let cells: Vec<String> = self
            .cells
            .iter()
            .map(|(name, c)| format!("{name}: {c}"))
            .collect();
        format!(
            "{:>4}  {:>4.0}%  {}\n             {}\n",
            self.rank,
            self.score * 100.0,
            self.label,
            cells.join(" | ")
        )
    }
}

impl TableRow for VariantRow {
    /// The Markdown table's columns: rank, variant, score, then one a metric (the text shows
    /// each variant in two lines).
    fn columns() -> Vec<Column> {
        let mut columns = vec![
            Column::right("rank"),
            Column::left("variant"),
            Column::right("score"),
        ];
        columns.extend(METRICS.iter().map(|m| Column::left(short(m))));
        columns
    }

    fn cells(&self) -> Vec<Cell> {
        let mut cells = vec![
            Cell::of(self.rank),
            Cell::Code(self.label.clone()),
            Cell::Text(format!("{:.0}%", self.score * 100.0)),
        ];
        cells.extend(self.cells.iter().map(|(_, c)| Cell::Text(c.clone())));
        cells
    }
}

/// Every row of the report, built once from the ranking.
#[derive(Clone, Debug, PartialEq)]
pub struct Rows {
    /// What was replayed.
    pub workload: WorkloadRow,
    /// What the recording shows.
    pub observed: ObservedRow,
    /// The variants, best first.
    pub variants: Vec<VariantRow>,
}

impl Rows {
    /// The rows of `h`.
    pub fn of(h: &Hypotheses) -> Rows {
        let total: u64 = h.evidence.mix.values().sum();
        let workload = if total == 0 {
            h.command.clone()
        } else {
            mix(h.evidence.mix.iter().map(|(c, n)| {
                (
                    c.as_str(),
                    float::from_u64(*n) * 100.0 / float::from_u64(total),
                )
            }))
        };
        let observed = |metric: &str| {
            h.variants
                .first()
                .and_then(|r| r.metrics.get(metric))
                .map_or_else(String::new, |m| value(m.observed, metric))
        };
        Rows {
            workload: WorkloadRow {
                mix: workload,
                rate: h.rate_per_sec,
                secs: h.evidence.secs,
            },
            observed: ObservedRow {
                values: METRICS.iter().map(|m| (short(m), observed(m))).collect(),
                by_command: h
                    .evidence
                    .moved_share_by_command
                    .iter()
                    .map(|(c, s)| (c.clone(), *s))
                    .collect(),
            },
            variants: h
                .variants
                .iter()
                .enumerate()
                .map(|(i, r)| VariantRow::of(i + 1, r))
                .collect(),
        }
    }

    /// The ranking as text: the evidence, then one row per variant with each predicted value
    /// and its agreement.
    pub fn text(&self) -> String {
        let mut s = self.workload.text();
        s.push_str(&self.observed.text());
        s.push_str(VariantRow::TEXT_HEADER);
        for v in &self.variants {
            s.push_str(&v.text());
        }
        s
    }

    /// The ranking as a Markdown table, the observed values first.
    pub fn markdown(&self) -> String {
        let mut table = Table::new(VariantRow::columns());
        table.push(self.observed.cells());
        for v in &self.variants {
            table.push(v.cells());
        }
        let mut s = self.workload.markdown();
        s.push_str(&table.render_markdown());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed() -> ObservedRow {
        ObservedRow {
            values: vec![
                ("MOVED share", "16.1%".into()),
                ("traffic ended", "no".into()),
            ],
            by_command: vec![("get".into(), 0.379)],
        }
    }

    #[test]
    fn values_as_the_columns_show_them() {
        assert_eq!(value(Value::Number(0.1612), "moved_share"), "16.1%");
        assert_eq!(value(Value::Number(24.083), "moved_per_sec"), "24.08");
        assert_eq!(value(Value::Flag(true), "traffic_ended"), "yes");
        assert_eq!(short("cluster_slots_per_sec"), "CLUSTER SLOTS/s");
        assert_eq!(short("unknown"), "?");
    }

    #[test]
    fn workload_as_text_and_markdown() {
        let w = WorkloadRow {
            mix: "get 60 %, set 40 %".into(),
            rate: 145,
            secs: 22.7,
        };
        assert_eq!(
            w.text(),
            "workload: get 60 %, set 40 % at 145 commands/s over 23 s\n"
        );
        assert_eq!(
            w.markdown(),
            "Workload: `get 60 %, set 40 %` at 145 commands/s over 23 s.\n\n"
        );
    }

    #[test]
    fn observed_as_text_and_markdown() {
        let o = observed();
        assert_eq!(
            o.text(),
            "observed (MOVED share: all business commands):\n  \
             MOVED share      16.1%\n  \
             traffic ended    no\n    \
             MOVED share get: 37.9%\n"
        );
        let mut table = Table::new(vec![Column::left(""); 5]);
        table.push(o.cells());
        assert!(table
            .render_markdown()
            .ends_with("|  | *observed* |  | *16.1%* | *no* |\n"));
    }

    #[test]
    fn variant_as_text_and_markdown() {
        let v = VariantRow {
            rank: 3,
            score: 0.574,
            label: "redis-py@5.0.0 faults=none".into(),
            cells: vec![
                ("MOVED share", "37.2% (79%)".into()),
                ("traffic ended", String::new()),
            ],
        };
        assert_eq!(
            v.text(),
            "   3    57%  redis-py@5.0.0 faults=none\n             \
             MOVED share: 37.2% (79%) | traffic ended: \n"
        );
        let mut table = Table::new(VariantRow::columns());
        table.push(v.cells());
        assert_eq!(
            table.render_markdown(),
            "| rank | variant | score | MOVED share | MOVED/s | new conn/s | CLUSTER SLOTS/s | \
             traffic ended |\n|---:|---|---:|---|---|---|---|---|\n\
             | 3 | `redis-py@5.0.0 faults=none` | 57% | 37.2% (79%) |  | – | – | – |\n"
        );
    }

    #[test]
    fn the_whole_ranking_as_text_and_markdown() {
        let rows = Rows {
            workload: WorkloadRow {
                mix: "zadd".into(),
                rate: 100,
                secs: 10.0,
            },
            observed: observed(),
            variants: vec![],
        };
        assert_eq!(
            rows.text(),
            "workload: zadd at 100 commands/s over 10 s\n\
             observed (MOVED share: all business commands):\n  \
             MOVED share      16.1%\n  \
             traffic ended    no\n    \
             MOVED share get: 37.9%\n\
             \nrank  score  variant  |  predicted (agreement) per metric\n"
        );
        assert!(rows.markdown().ends_with(
            "|---:|---|---:|---|---|---|---|---|\n|  | *observed* |  | *16.1%* | *no* | – | – | – |\n"
        ));
    }
}
