//! What a reader takes away from the viewer: a Markdown report of the recording (its story, the
//! findings with their figures, the client census, and the tracks of the window shown as PNG
//! files beside it) and the visible series as CSV. Plain text from the dataset and the view, so
//! both are tested natively; the browser only saves them ([`crate::view::export`]).

use std::fmt::Write as _;

use slotscope_core::analysis::Role;
use slotscope_core::finding::Severity;
use slotscope_core::moment::at_clock;
use slotscope_core::quantity::labelled;
use slotscope_core::time::format_millis;
use slotscope_core::track::Series;
use slotscope_core::Timestamp;

use crate::clock;
use crate::dataset::Dataset;
use crate::draw::series::of;
use crate::draw::TrackKind;

/// The stem of the files a report of recording `name` is saved as: its file name without
/// directories and without `.jsonl` / `.zst` (`demo/incident1.jsonl.zst` → `incident1`), with
/// anything but letters, digits, `-`, `_` and `.` turned into `_`.
pub fn file_stem(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let base = base.strip_suffix(".zst").unwrap_or(base);
    let base = base.strip_suffix(".jsonl").unwrap_or(base);
    let stem: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        "recording".to_owned()
    } else {
        stem
    }
}

/// The file name of the PNG of track `kind` in a report saved as `stem`.
pub fn image_name(stem: &str, kind: TrackKind) -> String {
    format!("{stem}-{}.png", kind.name())
}

/// Text from the recording (a connection or library name, and every sentence that quotes one)
/// as Markdown text: each `<` backslash-escaped, so that no renderer takes markup in a name for
/// an HTML tag (it renders as the `<` it was).
fn text(s: &str) -> String {
    s.replace('<', "\\<")
}

/// `s` as a Markdown code span's content: a backquote would end the span, so it becomes `'`.
fn code(s: &str) -> String {
    s.replace('`', "'")
}

/// [`text`], with the characters that would break a Markdown table cell escaped.
fn cell(s: &str) -> String {
    text(s).replace('|', "\\|").replace('\n', " ")
}

/// The Markdown report of `data` as shown over `window`, times in `offset` (minutes east of
/// UTC, `None` for UTC), with the reader's `notes`; `images` names the tracks saved beside it as
/// PNG files.
pub fn markdown(
    data: &Dataset,
    window: (u64, u64),
    offset: Option<i32>,
    images: &[TrackKind],
    notes: &[(u64, String)],
) -> String {
    let (start, end) = data.span();
    let t0 = Timestamp(start);
    let when = |ms: u64| at_clock(&clock::format(ms, offset), Timestamp(ms), t0);
    let stem = file_stem(&data.name);
    let a = &data.analysis;
    let mut md = String::new();
    let _ = writeln!(md, "# slotscope report: {stem}\n");
    let _ = writeln!(
        md,
        "Recording `{}`: {} → {} ({}, {} nodes). Window shown: {} → {}.\n",
        code(&data.name),
        clock::format(start, offset),
        clock::format(end, offset),
        format_millis(end.saturating_sub(start)),
        data.tracks.nodes.len(),
        clock::format(window.0, offset),
        clock::format(window.1, offset),
    );
    if let Some(cut) = &a.story.cut_short {
        let _ = writeln!(md, "> **Cut short.** {}\n", text(&cut.text(t0)));
    }

    let _ = writeln!(md, "## What happened\n");
    if a.story.steps.is_empty() {
        let _ = writeln!(
            md,
            "Nothing to tell: no node stopped, no slots moved and no finding.\n"
        );
    } else {
        let _ = writeln!(md, "| when | what happened | part |\n| --- | --- | --- |");
        for s in &a.story.steps {
            let part = match s.role {
                Role::RootCause => format!("**root cause**, {}", s.confidence.word()),
                Role::Trigger => format!("trigger, {}", s.confidence.word()),
                Role::Effect => format!("effect, {}", s.confidence.word()),
                Role::Context => s.confidence.word().to_owned(),
            };
            let text = if s.role == Role::RootCause {
                format!("**{}**", cell(&s.text))
            } else {
                cell(&s.text)
            };
            let _ = writeln!(
                md,
                "| {} | {text} | {part} |",
                cell(&when(s.at.as_millis()))
            );
        }
        md.push('\n');
    }
    if !notes.is_empty() {
        let _ = writeln!(md, "## Notes\n");
        for (t, note) in notes {
            let _ = writeln!(md, "- {}: {}", when(*t), text(note));
        }
        md.push('\n');
    }
    if !a.story.limits.is_empty() {
        let _ = writeln!(md, "What the recording cannot tell:\n");
        for l in &a.story.limits {
            let _ = writeln!(md, "- {}", text(l));
        }
        md.push('\n');
    }

    let _ = writeln!(md, "## Findings ({})\n", a.findings.len());
    for (i, f) in a.findings.iter().enumerate() {
        let severity = match f.severity {
            Severity::Critical => "Critical",
            Severity::Warning => "Warning",
            Severity::Info => "Info",
        };
        let (fa, fb) = (f.span.start.as_millis(), f.span.end.as_millis());
        let _ = writeln!(
            md,
            "### {}. [{severity}] {}\n\n{}, for {}{}\n",
            i + 1,
            text(&f.title),
            when(fa),
            format_millis(fb.saturating_sub(fa)),
            f.node
                .as_ref()
                .map_or_else(String::new, |n| format!(" · node {n}"))
        );
        let _ = writeln!(md, "{}\n", text(&f.explanation));
        if let Some(att) = &f.attribution {
            let _ = writeln!(md, "- attributed to: {}", text(&att.describe()));
        }
        for (k, v) in &f.numbers {
            let _ = writeln!(md, "- {}", labelled(k, *v));
        }
        for c in &f.context {
            let _ = writeln!(md, "- {}", text(c));
        }
        md.push('\n');
    }

    let census = &a.census;
    let _ = writeln!(md, "## Client census ({} groups)\n", census.groups.len());
    if !census.groups.is_empty() {
        let _ = writeln!(
            md,
            "| group | library | connections seen | open at the end | new/s | commands |\n\
             | --- | --- | ---: | ---: | ---: | --- |"
        );
        for g in &census.groups {
            let mut cmds: Vec<(&String, &u64)> = g.commands.iter().collect();
            cmds.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
            let cmds: Vec<String> = cmds
                .iter()
                .take(6)
                .map(|(c, n)| format!("{c} ({n})"))
                .collect();
            let _ = writeln!(
                md,
                "| {} | {}/{} | {} | {} | {:.1} | {} |",
                cell(&g.key.label()),
                cell(g.key.lib_name.as_deref().unwrap_or("?")),
                cell(g.key.lib_ver.as_deref().unwrap_or("?")),
                g.connections_seen,
                g.open_last,
                g.new_per_sec,
                cell(&cmds.join(", "))
            );
        }
        md.push('\n');
    }
    for g in &census.inferred {
        let _ = writeln!(
            md,
            "- inferred from counters: **{}** from {}: {}",
            text(&g.label()),
            when(g.span.start.as_millis()),
            text(&g.reason)
        );
    }
    if !census.inferred.is_empty() {
        md.push('\n');
    }

    if !images.is_empty() {
        let _ = writeln!(md, "## Tracks (the window shown)\n");
        for kind in images {
            let _ = writeln!(md, "![{}]({})\n", kind.title(), image_name(&stem, *kind));
        }
    }
    let _ = writeln!(
        md,
        "---\nMade with the slotscope viewer from `{}`; every figure is the analysis's, as in \
         `slotscope analyze`.",
        code(&data.name)
    );
    md
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// The series of the line tracks over `window` as CSV: one row per time bucket that overlaps the
/// window (`time` in ISO 8601 UTC and `epoch_ms` of its start), one column per series, named
/// `track: series` with the track's unit; empty where a bucket has no value.
pub fn csv(data: &Dataset, window: (u64, u64)) -> String {
    let grid = &data.tracks.grid;
    let kinds = [
        TrackKind::NodeRate,
        TrackKind::MovedShare,
        TrackKind::Errors,
        TrackKind::Connections,
        TrackKind::Refreshes,
    ];
    let columns: Vec<(String, &Series)> = kinds
        .iter()
        .flat_map(|&k| {
            of(k, &data.tracks).into_iter().map(move |(_, s)| {
                let name = if std::ptr::eq(s, &data.tracks.open_connections) {
                    "open connections".to_owned()
                } else {
                    format!("{}: {}", column_track(k), s.label)
                };
                (name, s)
            })
        })
        .collect();
    let mut out = String::from("time,epoch_ms");
    for (name, _) in &columns {
        out.push(',');
        out.push_str(&field(name));
    }
    out.push('\n');
    let bucket = grid.bucket_ms.max(1);
    for i in 0..grid.buckets {
        let t = grid.start.as_millis() + bucket * i as u64;
        if t + bucket <= window.0 || t > window.1 {
            continue;
        }
        let _ = write!(out, "{},{t}", clock::format(t, None));
        for (_, s) in &columns {
            out.push(',');
            if let Some(v) = s.values.get(i).filter(|v| !v.is_nan()) {
                let _ = write!(out, "{v}");
            }
        }
        out.push('\n');
    }
    out
}

/// The track part of a CSV column name, with its unit.
fn column_track(kind: TrackKind) -> &'static str {
    match kind {
        TrackKind::NodeRate => "commands/s",
        TrackKind::MovedShare => "MOVED share (0-1)",
        TrackKind::Errors => "errors/s",
        TrackKind::Connections => "new connections/s",
        TrackKind::Refreshes => "topology refreshes/s",
        TrackKind::Topology | TrackKind::Events => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::fixture;

    #[test]
    fn file_stems_are_safe_names() {
        assert_eq!(file_stem("demo/incident1.jsonl.zst"), "incident1");
        assert_eq!(file_stem("C:\\x\\my run.jsonl"), "my_run");
        assert_eq!(file_stem(""), "recording");
        assert_eq!(
            image_name("incident1", TrackKind::NodeRate),
            "incident1-node-rate.png"
        );
    }

    #[test]
    fn the_report_of_incident_1_tells_the_story_with_the_root_cause_marked() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let note = (data.span().0 + 5_000, "pager fired".to_owned());
        let md = markdown(&data, data.span(), None, &TrackKind::ALL, &[note]);
        assert!(md.contains("## Notes\n\n- "), "{md}");
        assert!(md.contains(": pager fired\n"), "{md}");
        assert!(md.starts_with("# slotscope report: incident1-redis-py-5.0.0-valkey\n"));
        let story = md.split("## What happened").nth(1).unwrap();
        let root = story
            .lines()
            .find(|l| l.contains("**root cause**"))
            .expect("a root-cause row");
        assert!(
            root.contains("exposure") && root.contains("stops"),
            "{root}"
        );
        // Every finding, in the analysis's order, with its figures labelled.
        for (i, f) in data.analysis.findings.iter().enumerate() {
            assert!(md.contains(&format!("### {}. ", i + 1)), "finding {i}");
            assert!(md.contains(&f.title), "{}", f.title);
        }
        assert!(md.contains("- successful commands before: "), "{md}");
        assert!(md.contains("## Client census (2 groups)"), "{md}");
        assert!(md.contains("](incident1-redis-py-5.0.0-valkey-topology.png)"));
        assert!(!md.contains("Cut short"));
    }

    #[test]
    fn markup_in_the_recordings_names_is_text_in_the_report() {
        let mut data = fixture("incident2-valkey");
        let img = "<img src=x onerror=alert(1)>";
        data.name = format!("a`{img}.jsonl");
        data.analysis.census.groups[0].key.name = Some(img.to_owned());
        data.analysis.census.groups[0].key.lib_name = Some("<b>lib</b>".to_owned());
        data.analysis.findings[0].title = format!("group {img} keeps being redirected");
        let md = markdown(
            &data,
            data.span(),
            None,
            &[],
            &[(data.span().0, img.to_owned())],
        );
        // No `<` left unescaped outside the code spans: no renderer sees a tag.
        let outside_code: String = md.split('`').step_by(2).collect();
        let bare = outside_code
            .match_indices('<')
            .filter(|&(i, _)| !outside_code[..i].ends_with('\\'))
            .count();
        assert_eq!(bare, 0, "{md}");
        assert!(md.contains("\\<img src=x onerror=alert(1)>"), "{md}");
        assert!(md.contains("\\<b>lib\\</b>"), "{md}");
        // The file name's backquote does not end its code span early.
        assert!(
            md.contains("Recording `a'<img src=x onerror=alert(1)>.jsonl`"),
            "{md}"
        );
    }

    #[test]
    fn the_csv_holds_the_visible_buckets_of_every_series() {
        let data = fixture("incident2-valkey");
        let (a, b) = data.span();
        let mid = a + (b - a) / 2;
        let text = csv(&data, (mid, b));
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(&header[..2], ["time", "epoch_ms"]);
        assert!(
            header
                .iter()
                .any(|h| h.starts_with("MOVED share (0-1): zrevrange")),
            "{header:?}"
        );
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert!(rows.len() > 5, "{}", rows.len());
        let bucket = data.tracks.grid.bucket_ms;
        for r in &rows {
            assert_eq!(r.len(), header.len(), "{r:?}");
            let t: u64 = r[1].parse().unwrap();
            assert!(t + bucket > mid && t <= b, "{t} outside the window");
        }
        // The storm is there: some zrevrange share above 20 %.
        let col = header
            .iter()
            .position(|h| h.starts_with("MOVED share (0-1): zrevrange"))
            .unwrap();
        assert!(rows
            .iter()
            .any(|r| r[col].parse::<f32>().is_ok_and(|v| v > 0.2)));
    }
}
