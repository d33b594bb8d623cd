//! Recordings made of real lines, structure-aware: the lines of `fuzz/templates/recording.jsonl`
//! (one or more of every kind the collector, the tap and the importers write, taken from the
//! fixtures) in an order, on a clock, about nodes and with values the input chooses. Every input
//! is a recording of well-formed JSON lines, so each execution reaches the summary and the
//! analysis (topology timeline, counters, census, findings, tracks, overview), which the
//! byte-level `recording` target seldom gets past the JSON to. Read as `summary` and `analyze`
//! read a file (bad lines skipped); never panics, never loops, never allocates without bound
//! (libFuzzer's `-rss_limit_mb`). With `SLOTSCOPE_FUZZ_DUMP=FILE`, the recording an input makes
//! is written to FILE (to read a crash's recording, or keep it as a test).
#![no_main]

use std::io::Cursor;
use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Number, Value};
use slotscope_core::analysis::Analyzer;
use slotscope_core::overview::Overview;
use slotscope_core::reader::RecordingReader;
use slotscope_core::summary::SummaryBuilder;
use slotscope_core::track::TracksBuilder;

/// The lines the recordings are made of.
const TEMPLATES: &str = include_str!("../templates/recording.jsonl");

/// At most this many lines a recording (the analysis' cost grows with them; the bugs it finds
/// need a few).
const MOST_LINES: usize = 64;

/// At most this many poll intervals (of at most a second each) a recording spans, else it is
/// not read. A span of decades, or a header whose interval is a millisecond, makes the tracks,
/// the streams and the detectors' per-second buckets grids of up to a million buckets a series:
/// bounded (the byte-level `recording` target reads those), but a hundred times the cost of a
/// recording of minutes: three fifths of this target's time went to the 5 % of its corpus that
/// made one. At the templates' 500 ms, 16,384 buckets are 2 h 16 min: 64 lines at their widest
/// steps still fit.
const MOST_BUCKETS: u64 = 16_384;

/// A line's fields that hold its times.
const TIMES: [&str; 4] = ["t", "started", "since", "end"];

/// The templates, by kind.
struct Templates {
    /// The header (the first template line).
    header: Value,
    /// Every other template line, grouped by its `type`, in the file's order.
    kinds: Vec<Vec<Value>>,
    /// Every `node` object the templates hold (`{"addr", "id"}`).
    nodes: Vec<Value>,
    /// Every node address the templates hold.
    addrs: Vec<String>,
}

fn templates() -> &'static Templates {
    static T: OnceLock<Templates> = OnceLock::new();
    T.get_or_init(|| {
        let mut lines = TEMPLATES
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("a template line is JSON"));
        let header = lines.next().expect("the templates start with a header");
        let mut kinds: Vec<Vec<Value>> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut nodes = Vec::new();
        let mut addrs = Vec::new();
        for line in lines {
            let kind = line["type"].as_str().expect("a line has a type").to_owned();
            match &line["node"] {
                Value::Object(_) if !nodes.contains(&line["node"]) => {
                    nodes.push(line["node"].clone())
                }
                Value::String(a) if !addrs.contains(a) => addrs.push(a.clone()),
                _ => {}
            }
            match names.iter().position(|n| *n == kind) {
                Some(i) => kinds[i].push(line),
                None => {
                    names.push(kind);
                    kinds.push(vec![line]);
                }
            }
        }
        for n in &nodes {
            let a = n["addr"].as_str().expect("a node has an address").to_owned();
            if !addrs.contains(&a) {
                addrs.push(a);
            }
        }
        Templates {
            header,
            kinds,
            nodes,
            addrs,
        }
    })
}

/// The next line's time: mostly the recording's pace, sometimes a jump or a step back; in a
/// `wild` recording (one in 32) also decades on or anything at all (such a recording is then
/// mostly not read, see [`MOST_BUCKETS`]). Saturating: a wild time near the ends of `i64` and a
/// step after it once overflowed the harness itself (`fuzz/regressions/recording_lines/`).
fn step(u: &mut Unstructured, now: i64, wild: bool) -> Result<i64> {
    Ok(match u.int_in_range(0u8..=15)? {
        0 => now,
        1..=11 => now.saturating_add(u.int_in_range(0..=1_000)?),
        12 | 13 => now.saturating_add(u.int_in_range(0..=60_000)?),
        14 => now.saturating_sub(u.int_in_range(0..=5_000)?),
        _ if !wild => now.saturating_add(u.int_in_range(0..=10_000)?),
        _ if u.arbitrary::<bool>()? => {
            now.saturating_add(i64::from(u.arbitrary::<u32>()?) * 1_000)
        }
        _ => u.arbitrary::<i64>()?,
    })
}

/// A number the input chooses: small, near the old one, or anything JSON holds.
fn number(u: &mut Unstructured, old: &Number) -> Result<Value> {
    Ok(match u.int_in_range(0u8..=5)? {
        0 => Value::from(u.int_in_range(0u64..=16)?),
        1 => Value::from(
            old.as_i64()
                .unwrap_or(0)
                .saturating_add(u.int_in_range(-64i64..=64)?),
        ),
        2 => Value::from(u.arbitrary::<u64>()?),
        3 => Value::from(u.arbitrary::<i64>()?),
        4 => Number::from_f64(u.arbitrary::<f64>()?).map_or(Value::Null, Value::Number),
        _ => Value::from(u.int_in_range(0u64..=16_384)?),
    })
}

/// Changes some of a line's values in place (a few of them: the line keeps its shape mostly).
fn mutate(u: &mut Unstructured, v: &mut Value, depth: u32) -> Result<()> {
    if depth > 8 || u.is_empty() {
        return Ok(());
    }
    match v {
        Value::Number(n) => {
            if u.ratio(1u8, 6)? {
                *v = number(u, n)?;
            }
        }
        Value::String(s) => {
            if u.ratio(1u8, 8)? {
                *s = match u.int_in_range(0u8..=3)? {
                    0 => u.choose(&templates().addrs)?.clone(),
                    1 => String::new(),
                    2 => s.chars().take(u.int_in_range(0..=8)?).collect(),
                    _ => u.arbitrary::<&str>()?.to_owned(),
                };
            }
        }
        Value::Bool(b) => {
            if u.ratio(1u8, 8)? {
                *b = !*b;
            }
        }
        Value::Array(items) => {
            if !items.is_empty() && u.ratio(1u8, 6)? {
                let keep = u.int_in_range(0..=items.len())?;
                items.truncate(keep);
            }
            if !items.is_empty() && u.ratio(1u8, 8)? {
                let i = u.choose_index(items.len())?;
                let copy = items[i].clone();
                items.push(copy);
            }
            for item in items.iter_mut() {
                mutate(u, item, depth + 1)?;
            }
        }
        Value::Object(fields) => {
            if !fields.is_empty() && u.ratio(1u8, 16)? {
                let i = u.choose_index(fields.len())?;
                let key = fields.keys().nth(i).cloned();
                if let Some(key) = key {
                    fields.remove(&key);
                }
            }
            for (key, item) in fields.iter_mut() {
                // A line's times are the clock's (`step`), not the values'.
                if depth == 0 && TIMES.contains(&key.as_str()) {
                    continue;
                }
                mutate(u, item, depth + 1)?;
            }
        }
        Value::Null => {}
    }
    Ok(())
}

/// A recording the input chooses: the bytes of a file, and how many of its header's poll
/// intervals (a second at most) the times its lines carry span.
fn recording(u: &mut Unstructured) -> Result<(Vec<u8>, u64)> {
    let t = templates();
    let mut out = Vec::new();
    let mut header = t.header.clone();
    if u.ratio(1u8, 8)? {
        mutate(u, &mut header, 0)?;
    }
    let mut now = header["started"].as_i64().unwrap_or(0);
    let (mut first, mut last_t) = (now, now);
    let wild = u.ratio(1u8, 32)?;
    if !u.ratio(1u8, 32)? {
        push(&mut out, &header);
    }
    // When each node's last line was, for the `since` of a client list delta.
    let mut last: Vec<(Value, i64)> = Vec::new();
    let lines = u.int_in_range(0..=MOST_LINES)?;
    for _ in 0..lines {
        if u.is_empty() {
            break;
        }
        let kind = u.choose(&t.kinds)?;
        let mut line = u.choose(kind)?.clone();
        now = step(u, now, wild)?;
        (first, last_t) = (first.min(now), last_t.max(now));
        line["t"] = Value::from(now);
        match &line["node"] {
            Value::Object(_) => line["node"] = u.choose(&t.nodes)?.clone(),
            Value::String(_) => line["node"] = Value::from(u.choose(&t.addrs)?.clone()),
            _ => {}
        }
        if line.get("since").is_some() {
            let before = last.iter().rev().find(|(n, _)| *n == line["node"]);
            line["since"] = Value::from(before.map_or(now, |(_, at)| *at));
        }
        if line.get("end").is_some() {
            let end = step(u, now, wild)?;
            (first, last_t) = (first.min(end), last_t.max(end));
            line["end"] = Value::from(end);
        }
        if u.ratio(1u8, 4)? {
            mutate(u, &mut line, 0)?;
        }
        last.push((line["node"].clone(), now));
        push(&mut out, &line);
    }
    if u.ratio(3u8, 4)? {
        let end = serde_json::json!({"type": "end", "t": now, "reason": "duration", "rounds": lines});
        push(&mut out, &end);
    } else if u.ratio(1u8, 2)? {
        // Cut short mid-line, as a crash leaves a file.
        let cut = u.int_in_range(0..=out.len())?;
        out.truncate(cut);
    }
    let interval = header["options"]["interval_ms"].as_u64().unwrap_or(1).clamp(1, 1_000);
    let span = last_t.abs_diff(first).saturating_add(1);
    Ok((out, span / interval))
}

fn push(out: &mut Vec<u8>, line: &Value) {
    serde_json::to_writer(&mut *out, line).expect("a value serialises");
    out.push(b'\n');
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok((bytes, buckets)) = recording(&mut u) else {
        return;
    };
    if buckets > MOST_BUCKETS {
        return;
    }
    if let Some(path) = std::env::var_os("SLOTSCOPE_FUZZ_DUMP") {
        // The recording an input makes, to read or keep as a test (`SLOTSCOPE_FUZZ_DUMP=FILE
        // fuzz/target/…/recording_lines INPUT`).
        std::fs::write(path, &bytes).expect("write the recording");
    }
    let len = bytes.len() as u64;
    let Ok(mut reader) = RecordingReader::detect(Cursor::new(bytes)) else {
        return;
    };
    let Ok(header) = reader.header().cloned() else {
        return;
    };
    let mut summary = SummaryBuilder::new(header.clone());
    let mut tracks = TracksBuilder::new(&header);
    let mut analyzer = Analyzer::new(header);
    for (_, line) in reader.by_ref().flatten() {
        summary.push(&line);
        tracks.push(&line);
        analyzer.push_owned(line);
    }
    summary.set_truncated_tail(reader.truncated_tail());
    analyzer.set_truncated_tail(reader.truncated_tail());
    let summary = summary.finish();
    serde_json::to_vec(&summary).expect("a summary serialises");
    let analysis = analyzer.finish();
    let tracks = tracks.finish(&analysis.metrics, &analysis.timeline);
    let overview = Overview::new(&tracks, &analysis, reader.lines_read(), len);
    Overview::from_json(&overview.to_json()).expect("an overview reads back");
});
