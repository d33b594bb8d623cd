//! Where the bytes of the plain recording go (by line type, INFO part and CLIENT LIST field, each
//! part also compressed on its own), and the plain recording compressed again with the
//! collector's zstd settings and a few others.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::Instant;

use serde_json::Value as Json;

use crate::file_figures::FileFigures;
use crate::report::mean_max;
use crate::to_f64;

/// zstd level of the collector (`collector/src/sink.rs`), used for the per-part compression figures.
const ZSTD_LEVEL: i32 = 9;

/// Bytes of one part of the recording, and the part's lines compressed on their own.
#[derive(Default)]
struct Part {
    /// Lines (or entries) added.
    lines: u64,
    /// Bytes they take in the recording.
    bytes: u64,
    /// Their text, one per line, to compress on its own.
    text: Vec<u8>,
}

impl Part {
    /// Adds one entry of `bytes` bytes in the recording, whose text is `text`.
    fn add(&mut self, bytes: usize, text: &str) {
        self.lines += 1;
        self.bytes += bytes as u64;
        self.text.extend_from_slice(text.as_bytes());
        self.text.push(b'\n');
    }
}

/// Size of `text` compressed alone with the collector's zstd settings.
fn zstd_len(text: &[u8]) -> u64 {
    let mut enc = zstd::Encoder::new(Vec::new(), ZSTD_LEVEL).expect("zstd encoder");
    enc.long_distance_matching(true).expect("zstd ldm");
    enc.window_log(24).expect("zstd window");
    std::io::Write::write_all(&mut enc, text).expect("zstd write");
    enc.finish().expect("zstd finish").len() as u64
}

/// `"key":value` plus its separating comma, as it sits in the line.
fn member_len(key: &str, value: &Json) -> usize {
    serde_json::to_string(key).expect("json").len() + 1 + value.to_string().len() + 1
}

/// Prints a table of `parts` by size, those under `min_share` of the file as one row.
fn print_parts(title: &str, parts: &BTreeMap<String, Part>, file_bytes: u64, min_share: f64) {
    let mut rows: Vec<(&String, &Part)> = parts.iter().collect();
    rows.sort_by_key(|(_, p)| std::cmp::Reverse(p.bytes));
    println!(
        "  {title:<34} {:>7} {:>12} {:>7} {:>12} {:>7}",
        "lines", "bytes", "share", "zstd alone", "ratio"
    );
    let mut hidden = 0u64;
    for (name, p) in rows {
        let share = to_f64(p.bytes) / to_f64(file_bytes);
        if share < min_share {
            hidden += p.bytes;
            continue;
        }
        let z = zstd_len(&p.text);
        println!(
            "  {name:<34} {:>7} {:>12} {:>6.1}% {:>12} {:>7.1}",
            p.lines,
            p.bytes,
            share * 100.0,
            z,
            to_f64(p.bytes) / to_f64(z.max(1))
        );
    }
    if hidden > 0 {
        println!(
            "  {:<34} {:>7} {:>12} {:>6.1}%",
            "(smaller parts)",
            "",
            hidden,
            to_f64(hidden) / to_f64(file_bytes) * 100.0
        );
    }
}

/// Prints the plain recording's bytes by line type, INFO part and CLIENT LIST field, each part
/// also compressed on its own (same zstd settings as the collector).
pub fn breakdown(path: &Path) {
    let file = File::open(path).expect("open the plain recording");
    let mut by_type: BTreeMap<String, Part> = BTreeMap::new();
    let mut info_parts: BTreeMap<String, Part> = BTreeMap::new();
    let mut client_fields: BTreeMap<String, Part> = BTreeMap::new();
    let mut file_bytes = 0u64;
    let mut clients_per_line = Vec::new();
    for line in BufReader::new(file).lines() {
        let line = line.expect("read the plain recording");
        let bytes = line.len() + 1;
        file_bytes += bytes as u64;
        let v: Json = serde_json::from_str(&line).expect("a JSON line");
        let kind = v["type"].as_str().unwrap_or("?").to_owned();
        by_type.entry(kind.clone()).or_default().add(bytes, &line);
        match kind.as_str() {
            "info" => {
                let info = &v["info"];
                let mut inside = 0;
                if let Some(obj) = info.as_object() {
                    for (k, part) in obj {
                        if k == "sections" {
                            for (s, fields) in part.as_object().into_iter().flatten() {
                                let n = member_len(s, fields);
                                inside += n;
                                info_parts
                                    .entry(format!("info.sections.{s}"))
                                    .or_default()
                                    .add(n, &fields.to_string());
                            }
                            inside += "\"sections\":{},".len();
                        } else {
                            let n = member_len(k, part);
                            inside += n;
                            info_parts
                                .entry(format!("info.{k}"))
                                .or_default()
                                .add(n, &part.to_string());
                        }
                    }
                }
                let mut rest = v.clone();
                if let Some(o) = rest.as_object_mut() {
                    o.remove("info");
                }
                info_parts
                    .entry("(t, node, latency_us, type, braces)".to_owned())
                    .or_default()
                    .add(bytes.saturating_sub(inside), &rest.to_string());
            }
            "client_list" => {
                let clients = v["clients"].as_array().cloned().unwrap_or_default();
                clients_per_line.push(clients.len());
                let mut inside = 0;
                let mut per_field: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for c in &clients {
                    for (k, val) in c.as_object().into_iter().flatten() {
                        let n = member_len(k, val);
                        inside += n;
                        per_field
                            .entry(k.clone())
                            .or_default()
                            .push(val.as_str().unwrap_or_default().to_owned());
                        client_fields
                            .entry(format!("clients[].{k}"))
                            .or_default()
                            .bytes += n as u64;
                    }
                }
                for (k, vals) in per_field {
                    let p = client_fields.entry(format!("clients[].{k}")).or_default();
                    p.lines += 1;
                    p.text.extend_from_slice(vals.join(" ").as_bytes());
                    p.text.push(b'\n');
                }
                let mut rest = v.clone();
                if let Some(o) = rest.as_object_mut() {
                    o.remove("clients");
                }
                client_fields
                    .entry("(t, node, type, braces, commas)".to_owned())
                    .or_default()
                    .add(bytes.saturating_sub(inside), &rest.to_string());
            }
            _ => {}
        }
    }
    println!();
    println!(
        "where the bytes of the plain recording go ({file_bytes} bytes; zstd alone = that part's lines \
         compressed by themselves at level {ZSTD_LEVEL}, long window):"
    );
    print_parts("line type", &by_type, file_bytes, 0.0);
    println!();
    print_parts("info line part", &info_parts, file_bytes, 0.002);
    println!();
    let (mean, max) = mean_max(clients_per_line.iter().map(|&n| n as f64));
    println!("client_list lines: {mean:.1} clients per line (max {max:.0}); per field (values only in the zstd column):");
    print_parts("client_list part", &client_fields, file_bytes, 0.002);
}

/// The plain recording compressed again the way the collector does it (a stream flushed after
/// every poll round), with the collector's zstd settings and a few others: size, the encoder's
/// memory (`ZSTD_sizeof_CCtx`, which the RSS includes as pages get touched) and time.
pub fn zstd_settings(path: &Path, plain: &FileFigures) {
    use std::io::Write;
    use zstd::zstd_safe::{CCtx, CParameter};

    let text = fs::read(path).expect("read the plain recording");
    let settings: [(&str, i32, Option<u32>, bool); 5] = [
        (
            "level 9, window 2^24, long-distance (collector)",
            ZSTD_LEVEL,
            Some(24),
            true,
        ),
        ("level 9, window 2^24", ZSTD_LEVEL, Some(24), false),
        ("level 9, default window (2^22)", ZSTD_LEVEL, None, false),
        ("level 9, window 2^20", ZSTD_LEVEL, Some(20), false),
        ("level 3, default window (2^21)", 3, None, false),
    ];
    println!();
    println!(
        "the plain recording compressed again, flushed after every poll round like the collector:"
    );
    println!(
        "  {:<48} {:>10} {:>14} {:>13} {:>8}",
        "zstd settings", "bytes", "MB/node-hour", "encoder MiB", "ms"
    );
    for (name, level, window, ldm) in settings {
        let mut cctx = CCtx::create();
        let started = Instant::now();
        let compressed = {
            let mut enc = zstd::Encoder::with_context(Vec::new(), &mut cctx);
            enc.set_parameter(CParameter::CompressionLevel(level))
                .expect("zstd level");
            enc.include_checksum(true).expect("zstd checksum");
            if let Some(w) = window {
                enc.window_log(w).expect("zstd window");
            }
            enc.long_distance_matching(ldm).expect("zstd ldm");
            for line in text.split_inclusive(|&b| b == b'\n') {
                enc.write_all(line).expect("zstd write");
                if line.starts_with(br#"{"type":"poll_round""#) {
                    enc.flush().expect("zstd flush");
                }
            }
            enc.finish().expect("zstd finish")
        };
        let ms = started.elapsed().as_millis();
        let bytes = compressed.len() as u64;
        let per_node_hour = FileFigures {
            bytes,
            nodes: plain.nodes,
            span_ms: plain.span_ms,
            rounds: plain.rounds,
            failures: plain.failures,
        }
        .per_node_hour();
        println!(
            "  {name:<48} {bytes:>10} {:>14.2} {:>13.1} {ms:>8}",
            per_node_hour / 1e6,
            cctx.sizeof() as f64 / 1024.0 / 1024.0
        );
    }
}
