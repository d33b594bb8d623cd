//! `slotscope analyze`: the analysis of a recording as text for a terminal, markdown for a
//! postmortem, or JSON for tools.

use std::fmt::Write as _;
use std::path::Path;

use slotscope_core::analysis::{Analysis, Analyzer};
use slotscope_core::finding::{number, Finding};
use slotscope_core::recording::Discovery;
use slotscope_core::time::format_millis;
use slotscope_core::{NodeId, Timestamp};

use crate::input::{read_recording, Input, InputError};

/// An analysis and what reading the file met.
pub struct Analysed {
    /// The analysis.
    pub analysis: Analysis,
    /// Bad lines, truncation, file size.
    pub input: Input,
}

/// Reads and analyses `path`.
pub fn analyse(path: &Path) -> Result<Analysed, InputError> {
    let (mut analyzer, input) =
        read_recording(path, |h| Analyzer::new(h.clone()), |a, line| a.push(line))?;
    analyzer.set_truncated_tail(input.truncated_tail);
    Ok(Analysed {
        analysis: analyzer.finish(),
        input,
    })
}

fn share(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |s| format!("{s:.3}"))
}

fn tap_text(a: &Analysed) -> String {
    let t = &a.analysis.tap;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nCLIENT-SIDE EVIDENCE (slotscope tap: {} commands on {} connections; MOVED share = MOVED / \
         commands sent, server = rejected_calls / (calls + rejected_calls) of every client)",
        t.total.sent, t.connections_opened
    );
    let _ = writeln!(
        o,
        "  {:<22} {:>9} {:>8} {:>6} {:>7} {:>13}  {:>15} {:>13}",
        "command",
        "sent",
        "MOVED",
        "ASK",
        "errors",
        "client share",
        "server attempts",
        "server share"
    );
    for r in a.analysis.versus() {
        let _ = writeln!(
            o,
            "  {:<22} {:>9} {:>8} {:>6} {:>7} {:>13.3}  {:>15} {:>13}",
            r.cmd,
            r.sent,
            r.moved,
            r.ask,
            r.errors,
            r.client_moved_share,
            r.server
                .map_or_else(|| "-".to_owned(), |d| d.attempts().to_string()),
            share(r.server_share())
        );
    }
    for (node, c) in &t.per_node {
        let _ = writeln!(
            o,
            "  node {:<21} sent {:>9}  MOVED {:>8}  ASK {:>6}  mean latency {:.0} µs",
            node.to_string(),
            c.sent,
            c.moved,
            c.ask,
            c.mean_latency_us()
        );
    }
    o
}

fn short(id: Option<&NodeId>) -> String {
    id.map_or_else(|| "?".to_owned(), |i| i.short().to_owned())
}

fn at(t: Timestamp, start: Timestamp) -> String {
    format!(
        "{} (+{})",
        t.time_of_day(),
        format_millis(t.millis_since(start))
    )
}

fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
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

fn numbers(f: &Finding) -> String {
    f.numbers
        .iter()
        .map(|(k, v)| format!("{k}={}", number(*v)))
        .collect::<Vec<_>>()
        .join("  ")
}

/// The analysis as text for a terminal.
pub fn render_text(a: &Analysed) -> String {
    let s = &a.analysis.summary;
    let start = s.header.started;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "recording of {} from {}, {}, {} nodes, polled every {}",
        s.header.seed,
        s.header.started,
        s.span.map_or_else(
            || "empty".to_owned(),
            |sp| format_millis(sp.end.millis_since(start))
        ),
        s.nodes.len(),
        format_millis(s.header.options.interval_ms)
    );
    let findings = &a.analysis.findings;
    let _ = writeln!(o, "\nFINDINGS ({})", findings.len());
    if findings.is_empty() {
        let _ = writeln!(
            o,
            "  none: no idle shard, redirect storm, churn, lost client group or known defect seen"
        );
    }
    for (n, f) in findings.iter().enumerate() {
        let _ = writeln!(
            o,
            "{:>3}. [{:?}] {}  {} .. {}",
            n + 1,
            f.severity,
            f.kind.name(),
            at(f.span.start, start),
            at(f.span.end, start)
        );
        o.push_str(&wrap(&f.title, 100, "     "));
        o.push_str(&wrap(&f.explanation, 100, "       "));
        if let Some(attr) = &f.attribution {
            let _ = writeln!(o, "     attributed to: {}", attr.describe());
        }
        for c in &f.context {
            let _ = writeln!(o, "     context: {c}");
        }
        o.push_str(&wrap(&numbers(f), 100, "     numbers: "));
    }
    if !a.analysis.evidence.is_empty() {
        let _ = writeln!(o, "\nEVIDENCE");
        for e in &a.analysis.evidence {
            let _ = writeln!(o, "  {e}");
        }
    }
    if !a.analysis.tap.is_empty() {
        o.push_str(&tap_text(a));
    }
    o.push_str(&timeline_text(a));
    let _ = writeln!(
        o,
        "\nPER-SHARD TRAFFIC (business commands/s, before -> after the topology change)"
    );
    let _ = writeln!(
        o,
        "  {:<21} {:<8} {:>6} {:>9}  {:>17}  {:>17}  {:>15}",
        "node", "id", "slots", "keys", "executed/s", "rejected/s", "MOVED/s"
    );
    for t in &a.analysis.shard_traffic {
        let _ = writeln!(
            o,
            "  {:<21} {:<8} {:>6} {:>9}  {:>7.1} -> {:>7.1}  {:>7.1} -> {:>7.1}  {:>6.1} -> {:>6.1}",
            t.addr.to_string(),
            short(t.id.as_ref()),
            t.slots,
            t.keys,
            t.before.calls,
            t.after.calls,
            t.before.rejected,
            t.after.rejected,
            t.before.moved,
            t.after.moved
        );
    }
    let _ = writeln!(
        o,
        "\nCLIENT CENSUS ({} groups)",
        a.analysis.census.groups.len()
    );
    for g in &a.analysis.census.groups {
        let _ = writeln!(
            o,
            "  {:<36} hosts {:<3} seen {:<5} open {:<4} new/s {:<6.2} lifetime {:<6} cmds {}",
            g.key.label(),
            g.hosts.len(),
            g.connections_seen,
            g.open_last,
            g.new_per_sec,
            g.median_lifetime_secs()
                .map_or_else(|| "-".to_owned(), |l| format!("{l}s")),
            g.commands.keys().cloned().collect::<Vec<_>>().join(",")
        );
    }
    append_bad_lines(&mut o, a);
    o
}

fn timeline_text(a: &Analysed) -> String {
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
        events.push((
            m.span.start,
            format!(
                "{} slots move {} -> {} (until {})",
                m.slots,
                short(m.from.as_ref()),
                short(m.to.as_ref()),
                at(m.span.end, start)
            ),
        ));
    }
    for (t, source, text) in &s.annotations {
        events.push((*t, format!("[{source}] {text}")));
    }
    events.sort_by_key(|e| e.0);
    let mut o = String::new();
    let _ = writeln!(o, "\nTIMELINE");
    for (t, e) in events {
        let _ = writeln!(o, "  {}  {e}", at(t, start));
    }
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
    let s = &a.analysis.summary;
    let start = s.header.started;
    let mut o = String::new();
    let _ = writeln!(o, "## Cluster evidence (slotscope)\n");
    let _ = writeln!(
        o,
        "Recording of `{}` from {} for {}, {} nodes polled every {} ({}).\n",
        s.header.seed,
        s.header.started,
        s.span.map_or_else(
            || "0s".to_owned(),
            |sp| format_millis(sp.end.millis_since(start))
        ),
        s.nodes.len(),
        format_millis(s.header.options.interval_ms),
        s.header.collector
    );
    let _ = writeln!(o, "### Findings\n");
    if a.analysis.findings.is_empty() {
        let _ = writeln!(o, "No finding: no idle shard, redirect storm, connection churn, lost client group or known client defect.\n");
    }
    for (n, f) in a.analysis.findings.iter().enumerate() {
        let _ = writeln!(
            o,
            "{}. **{}** (`{}`, {:?}, {} – {}): {}\n",
            n + 1,
            f.title,
            f.kind.name(),
            f.severity,
            at(f.span.start, start),
            at(f.span.end, start),
            f.explanation
        );
        if let Some(attr) = &f.attribution {
            let _ = writeln!(o, "   - Attributed to: {}", attr.describe());
        }
        for c in &f.context {
            let _ = writeln!(o, "   - Context: {c}");
        }
        let _ = writeln!(o, "   - Numbers: {}\n", numbers(f).replace("  ", ", "));
    }
    if !a.analysis.tap.is_empty() {
        let _ = writeln!(
            o,
            "### Client-side evidence (slotscope tap)\n\n{} commands on {} connections. Client MOVED \
             share = MOVED / commands sent by the tapped client; server share = rejected_calls / \
             (calls + rejected_calls) of every client.\n",
            a.analysis.tap.total.sent, a.analysis.tap.connections_opened
        );
        let _ = writeln!(
            o,
            "| command | sent | MOVED | ASK | errors | client MOVED share | server attempts | server share |"
        );
        let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---:|");
        for r in a.analysis.versus() {
            let _ = writeln!(
                o,
                "| `{}` | {} | {} | {} | {} | {:.3} | {} | {} |",
                r.cmd.replace('|', "\\|"),
                r.sent,
                r.moved,
                r.ask,
                r.errors,
                r.client_moved_share,
                r.server
                    .map_or_else(|| "–".to_owned(), |d| d.attempts().to_string()),
                share(r.server_share())
            );
        }
        let _ = writeln!(o);
    }
    if !a.analysis.evidence.is_empty() {
        let _ = writeln!(o, "### Outside evidence\n");
        for e in &a.analysis.evidence {
            let _ = writeln!(o, "- {e}");
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "### Timeline (UTC)\n");
    for line in timeline_text(a).lines().skip(2) {
        let _ = writeln!(o, "- {}", line.trim());
    }
    let _ = writeln!(
        o,
        "\n### Per-shard traffic before → after the topology change\n"
    );
    let _ = writeln!(
        o,
        "| node | id | slots | keys | executed/s | rejected/s | MOVED/s | new conns/s |"
    );
    let _ = writeln!(o, "|---|---|---:|---:|---:|---:|---:|---:|");
    for t in &a.analysis.shard_traffic {
        let _ = writeln!(
            o,
            "| {} | `{}` | {} | {} | {:.1} → {:.1} | {:.1} → {:.1} | {:.1} → {:.1} | {:.1} → {:.1} |",
            t.addr,
            short(t.id.as_ref()),
            t.slots,
            t.keys,
            t.before.calls,
            t.after.calls,
            t.before.rejected,
            t.after.rejected,
            t.before.moved,
            t.after.moved,
            t.before.new_connections,
            t.after.new_connections
        );
    }
    let _ = writeln!(o, "\n### Client census\n");
    let _ = writeln!(o, "| client group | hosts | connections seen | open at end | new/s | median lifetime | commands |");
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---|");
    for g in &a.analysis.census.groups {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {:.2} | {} | {} |",
            g.key.label(),
            g.hosts.len(),
            g.connections_seen,
            g.open_last,
            g.new_per_sec,
            g.median_lifetime_secs()
                .map_or_else(|| "–".to_owned(), |l| format!("{l} s")),
            // A `|` would end the table cell, even inside backticks.
            g.commands
                .keys()
                .map(|c| format!("`{}`", c.replace('|', "\\|")))
                .collect::<Vec<_>>()
                .join(", ")
        );
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
