//! A report's table, filled once and written either as text columns for a terminal or as a
//! Markdown table, so the two always show the same columns in the same order.
//!
//! Text columns are as wide as their widest cell (or header, or the column's least width), so a
//! long host name widens its column instead of pushing the rest of its line out of line. In
//! Markdown every `|` of a cell is escaped (it would end the cell, even inside backticks).

use std::fmt::Write as _;

/// How a column's cells sit in its width (text) and its separator (Markdown: `---` or `---:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Against the left edge: names.
    Left,
    /// Against the right edge: figures.
    Right,
}

/// One column: its header, alignment, least text width and the spaces before it in text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    header: String,
    align: Align,
    width: usize,
    gap: usize,
}

impl Column {
    /// A column of names, left-aligned, one space after the previous column.
    pub fn left(header: &str) -> Column {
        Column::new(header, Align::Left)
    }

    /// A column of figures, right-aligned, one space after the previous column.
    pub fn right(header: &str) -> Column {
        Column::new(header, Align::Right)
    }

    fn new(header: &str, align: Align) -> Column {
        Column {
            header: header.to_owned(),
            align,
            width: 0,
            gap: 1,
        }
    }

    /// The least width of its text cells (the column widens for a wider cell or header).
    pub fn width(mut self, width: usize) -> Column {
        self.width = width;
        self
    }

    /// How many spaces separate it from the previous column in text.
    pub fn gap(mut self, gap: usize) -> Column {
        self.gap = gap;
        self
    }
}

/// One cell: what it says, each format writing it its own way.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Words or a figure, the same in both formats.
    Text(String),
    /// A name from the cluster (a node id, a command): in backticks in Markdown.
    Code(String),
    /// Names from the cluster: comma-separated in text, each in backticks in Markdown.
    CodeList(Vec<String>),
    /// A rate before and after a change, one decimal: `117.7 ->     0.0` in text (each side as
    /// wide as the column's widest), `117.7 → 0.0` in Markdown.
    Change(f64, f64),
    /// No figure: `-` in text, `–` in Markdown.
    Absent,
}

impl Cell {
    /// A cell of `value`'s `Display`.
    pub fn of(value: impl ToString) -> Cell {
        Cell::Text(value.to_string())
    }

    /// The cell in text, a [`Cell::Change`]'s sides each `side` wide.
    fn text(&self, side: usize) -> String {
        match self {
            Cell::Text(s) | Cell::Code(s) => s.clone(),
            Cell::CodeList(names) => names.join(","),
            Cell::Change(before, after) => format!("{before:>side$.1} -> {after:>side$.1}"),
            Cell::Absent => "-".to_owned(),
        }
    }

    /// The cell in Markdown, its `|` escaped.
    fn markdown(&self) -> String {
        match self {
            Cell::Text(s) => escape(s),
            Cell::Code(s) => format!("`{}`", escape(s)),
            Cell::CodeList(names) => names
                .iter()
                .map(|n| format!("`{}`", escape(n)))
                .collect::<Vec<_>>()
                .join(", "),
            Cell::Change(before, after) => format!("{before:.1} → {after:.1}"),
            Cell::Absent => "–".to_owned(),
        }
    }

    /// The width of a [`Cell::Change`]'s wider side in text (0 for other cells).
    fn side(&self) -> usize {
        match self {
            Cell::Change(before, after) => format!("{before:.1}")
                .len()
                .max(format!("{after:.1}").len()),
            _ => 0,
        }
    }
}

/// A `|` would end a Markdown table cell, even inside backticks.
fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A report's row that a table is made of: the table's columns and the row's cells.
pub trait TableRow {
    /// The columns, the same for every row.
    fn columns() -> Vec<Column>;

    /// One cell a column.
    fn cells(&self) -> Vec<Cell>;
}

/// Columns and rows of cells, one cell a column.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table of `columns`.
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            columns,
            rows: Vec::new(),
        }
    }

    /// The table of `rows`.
    pub fn of<'a, R: TableRow + 'a>(rows: impl IntoIterator<Item = &'a R>) -> Table {
        let mut t = Table::new(R::columns());
        for r in rows {
            t.push(r.cells());
        }
        t
    }

    /// Appends a row, one cell a column (missing cells are [`Cell::Absent`], extra ones dropped).
    pub fn push(&mut self, mut cells: Vec<Cell>) {
        cells.resize(self.columns.len(), Cell::Absent);
        self.rows.push(cells);
    }

    /// The header line (unless every header is empty) and one line a row, each after `indent`,
    /// every column as wide as its widest cell or header. A left-aligned last column is not
    /// padded (no trailing spaces).
    pub fn render_text(&self, indent: &str) -> String {
        let sides: Vec<usize> = (0..self.columns.len())
            .map(|i| {
                let least = self.columns[i].width.saturating_sub(4) / 2;
                self.rows
                    .iter()
                    .map(|r| r[i].side())
                    .fold(least, usize::max)
            })
            .collect();
        let lines: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().zip(&sides).map(|(c, s)| c.text(*s)).collect())
            .collect();
        let headers: Vec<String> = self.columns.iter().map(|c| c.header.clone()).collect();
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                lines
                    .iter()
                    .map(|l| l[i].chars().count())
                    .fold(c.width.max(c.header.chars().count()), usize::max)
            })
            .collect();
        let mut out = String::new();
        let show_headers = headers.iter().any(|h| !h.is_empty());
        for line in show_headers.then_some(&headers).into_iter().chain(&lines) {
            out.push_str(indent);
            let last = self.columns.len().saturating_sub(1);
            for (i, (cell, column)) in line.iter().zip(&self.columns).enumerate() {
                if i > 0 {
                    out.push_str(&" ".repeat(column.gap));
                }
                let w = widths[i];
                let _ = match column.align {
                    Align::Right => write!(out, "{cell:>w$}"),
                    Align::Left if i == last => write!(out, "{cell}"),
                    Align::Left => write!(out, "{cell:<w$}"),
                };
            }
            out.push('\n');
        }
        out
    }

    /// The header line, the separator line (`---` or `---:` by alignment) and one line a row.
    pub fn render_markdown(&self) -> String {
        let mut out = String::new();
        let line = |out: &mut String, cells: &mut dyn Iterator<Item = String>| {
            out.push('|');
            for c in cells {
                let _ = write!(out, " {c} |");
            }
            out.push('\n');
        };
        line(
            &mut out,
            &mut self.columns.iter().map(|c| escape(&c.header)),
        );
        out.push('|');
        for c in &self.columns {
            out.push_str(match c.align {
                Align::Left => "---|",
                Align::Right => "---:|",
            });
        }
        out.push('\n');
        for r in &self.rows {
            line(&mut out, &mut r.iter().map(Cell::markdown));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new(vec![
            Column::left("node").width(8),
            Column::right("slots").width(6),
            Column::right("executed/s").width(12).gap(2),
        ]);
        t.push(vec![
            Cell::of("10.0.0.1:6379"),
            Cell::of(8192),
            Cell::Change(100.0, 0.0),
        ]);
        t.push(vec![
            Cell::Code("a|b".into()),
            Cell::Absent,
            Cell::Change(12345.25, 3.0),
        ]);
        t
    }

    #[test]
    fn text_columns_are_as_wide_as_their_widest_cell() {
        assert_eq!(
            table().render_text("  "),
            "  node           slots          executed/s\n\
             \x20 10.0.0.1:6379   8192    100.0 ->     0.0\n\
             \x20 a|b                -  12345.2 ->     3.0\n"
        );
    }

    #[test]
    fn markdown_shows_the_same_columns_with_pipes_escaped() {
        assert_eq!(
            table().render_markdown(),
            "| node | slots | executed/s |\n|---|---:|---:|\n\
             | 10.0.0.1:6379 | 8192 | 100.0 → 0.0 |\n\
             | `a\\|b` | – | 12345.2 → 3.0 |\n"
        );
    }

    #[test]
    fn headerless_text_and_an_unpadded_last_column() {
        let mut t = Table::new(vec![Column::left("").width(4), Column::left("")]);
        t.push(vec![
            Cell::of("a"),
            Cell::CodeList(vec!["x".into(), "y".into()]),
        ]);
        t.push(vec![Cell::of("long name")]);
        assert_eq!(t.render_text(""), "a         x,y\nlong name -\n");
    }
}
