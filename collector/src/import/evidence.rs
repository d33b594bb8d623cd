//! `slotscope import`: outside evidence (a cloud event log, an application error log) appended to
//! a recording as `annotation` lines.
//!
//! The recording is read once through the core reader, to get its start (which dates time-of-day
//! lines), to find annotations already imported, and to make sure it ends cleanly. The new lines
//! are then appended: to a plain file as lines, to a zstd file as one new zstd frame (the reader
//! reads concatenated frames). Existing bytes are never rewritten; on any error before writing the
//! file is left untouched.

use std::cell::Cell;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, SystemTime};

use clap::ValueEnum;
use slotscope_core::evidence::{self, Date, EvidenceError, Format, Options};
use slotscope_core::reader::{ReadError, RecordingReader, ZSTD_MAGIC};
use slotscope_core::recording::{Annotation, Header, Line};
use slotscope_core::time::Timestamp;

use crate::store::sink::ZSTD_LEVEL;

/// A recording without an end line that was written to more recently than this (or than three
/// poll intervals) is taken to be still recording.
const STILL_WRITING: Duration = Duration::from_secs(10);

/// What the events file is, as chosen on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ImportFormat {
    /// Detect: JSON lines, error class names or log levels make an application log, else a cloud
    /// event log.
    Auto,
    /// A cloud provider's event log: one event per line.
    Cloud,
    /// An application's log: errors counted per second per class.
    Applog,
}

impl From<ImportFormat> for Format {
    fn from(f: ImportFormat) -> Format {
        match f {
            ImportFormat::Auto => Format::Auto,
            ImportFormat::Cloud => Format::Cloud,
            ImportFormat::Applog => Format::AppLog,
        }
    }
}

/// Parses `--date`.
pub fn parse_date(s: &str) -> Result<Date, String> {
    s.parse().map_err(|e: EvidenceError| e.to_string())
}

/// Parses `--source`: any non-empty name.
pub fn parse_source(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.is_empty() {
        Err("the source name must not be empty".into())
    } else {
        Ok(s.to_string())
    }
}

/// One `slotscope import`.
#[derive(Clone, Debug)]
pub struct Request {
    /// The recording to append to.
    pub file: PathBuf,
    /// The events file (`-`: standard input).
    pub events: PathBuf,
    /// Its format.
    pub format: ImportFormat,
    /// Date of time-of-day lines.
    pub date: Option<Date>,
    /// `source` of the annotations.
    pub source: Option<String>,
    /// Print, do not write.
    pub dry_run: bool,
}

/// What an import did: the report for standard output, and warnings.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The report.
    pub report: String,
    /// Things the user should check.
    pub warnings: Vec<String>,
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The events file could not be read.
    #[error("cannot read the events file {path}: {source}")]
    Events {
        /// The file.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// The events could not be understood.
    #[error("{path}: {source}{hint}")]
    Evidence {
        /// The events file.
        path: String,
        /// Why.
        source: EvidenceError,
        /// What to do about it.
        hint: &'static str,
    },
    /// The recording could not be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The recording.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// The recording cannot safely be appended to.
    #[error("{path}: {message}; nothing was written")]
    Recording {
        /// The recording.
        path: String,
        /// Why.
        message: String,
    },
    /// Appending failed.
    #[error("appending to {path} failed: {source} (the lines before the new ones are unchanged)")]
    Write {
        /// The recording.
        path: String,
        /// Why.
        source: io::Error,
    },
}

impl ImportError {
    /// The exit status: 2 when nothing was written, 1 when writing failed.
    pub fn exit_code(&self) -> u8 {
        match self {
            ImportError::Write { .. } => 1,
            _ => 2,
        }
    }
}

/// Reads the events, and appends them to the recording unless it is a dry run.
pub fn run(req: &Request) -> Result<Outcome, ImportError> {
    let events_shown = req.events.display().to_string();
    let file_shown = req.file.display().to_string();
    let text = read_events(&req.events).map_err(|source| ImportError::Events {
        path: events_shown.clone(),
        source,
    })?;
    let scan = scan(&req.file)?;
    let opts = Options {
        format: req.format.into(),
        date: req.date,
        recording_start: Some(scan.header.started),
        source: req.source.clone(),
    };
    let ev = evidence::parse(&text, &opts).map_err(|source| ImportError::Evidence {
        path: events_shown.clone(),
        hint: match source {
            EvidenceError::DateNeeded { .. } => " (pass --date YYYY-MM-DD)",
            EvidenceError::NoTimestamps { .. } => "; is it the right file?",
            _ => "",
        },
        source,
    })?;

    let mut out = Outcome::default();
    let detected = if req.format == ImportFormat::Auto {
        " (detected)"
    } else {
        ""
    };
    let article = if ev.format == Format::AppLog {
        "an"
    } else {
        "a"
    };
    let _ = write!(
        out.report,
        "{events_shown}: {} read as {article} {}{detected}",
        counted(ev.lines, "line"),
        ev.format
    );
    match ev.format {
        Format::AppLog => {
            let _ = write!(
                out.report,
                ": {} counted into {}, {}, {}",
                counted(ev.used, "error line"),
                counted(ev.annotations.len(), "annotation"),
                counted(ev.not_errors, "other line"),
                counted(ev.continuation, "traceback line")
            );
        }
        _ => {
            let _ = write!(out.report, ": {}", counted(ev.used, "event"));
        }
    }
    if let Some(first) = ev.first_skipped {
        let _ = write!(
            out.report,
            ", {} skipped (no timestamp or unreadable; first: line {first})",
            ev.skipped
        );
    }
    out.report.push('\n');

    let (fresh, dupes): (Vec<Annotation>, Vec<Annotation>) = ev
        .annotations
        .into_iter()
        .partition(|a| !scan.existing.contains(&key(a)));
    if !dupes.is_empty() {
        out.warnings.push(format!(
            "{} of these annotations are already in {file_shown} (imported before?) and are left out",
            dupes.len()
        ));
    }
    if scan.bad_lines > 0 {
        out.warnings.push(format!(
            "{file_shown} has {} unreadable lines (see `slotscope summary`); they are left as they are",
            scan.bad_lines
        ));
    }
    if !scan.has_end && !req.dry_run && !fresh.is_empty() {
        // The recorder writes at its own offset: lines appended while it runs would be overwritten.
        let quiet_for = scan
            .modified
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .unwrap_or(Duration::ZERO);
        let interval = Duration::from_millis(scan.header.options.interval_ms);
        if quiet_for < interval.saturating_mul(3).max(STILL_WRITING) {
            return Err(ImportError::Recording {
                path: file_shown,
                message: format!(
                    "it has no end line and was written to {:.0}s ago: `slotscope record` seems to \
                     be still writing it, and would overwrite the appended lines. Let it end (or stop \
                     it with Ctrl-C / SIGTERM) and import again",
                    quiet_for.as_secs_f64()
                ),
            });
        }
    }
    let span_end = scan.last.max(scan.header.started);
    let outside = fresh
        .iter()
        .filter(|a| a.t < scan.header.started || a.t > span_end)
        .count();
    if outside > 0 {
        out.warnings.push(format!(
            "{outside} of {} annotations fall outside the recording ({} to {}); check --date and the \
             log's zone (times without a zone are read as UTC)",
            fresh.len(),
            scan.header.started,
            span_end
        ));
    }

    if fresh.is_empty() {
        let _ = writeln!(
            out.report,
            "nothing to add: {file_shown} was left unchanged"
        );
        return Ok(out);
    }
    if req.dry_run {
        let _ = writeln!(
            out.report,
            "dry run: {} would be added to {file_shown} (nothing was written):",
            counted(fresh.len(), "annotation")
        );
        for a in &fresh {
            let kind = a.fields.get("kind").map_or("-", String::as_str);
            let _ = writeln!(out.report, "  {}  {:<18} {}", a.t, kind, a.text);
        }
    } else {
        append(&req.file, &scan, &fresh)?;
        let (first, last) = (fresh[0].t, fresh[fresh.len() - 1].t);
        let source = &fresh[0].source;
        let _ = writeln!(
            out.report,
            "added {} (source {source}) to {file_shown}, from {first} to {last}",
            counted(fresh.len(), "annotation")
        );
    }
    for line in per_kind(&fresh) {
        let _ = writeln!(out.report, "  {line}");
    }
    Ok(out)
}

/// `kind: N annotations`, and for application errors the errors per class.
fn per_kind(annotations: &[Annotation]) -> Vec<String> {
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    let mut classes: BTreeMap<&str, u64> = BTreeMap::new();
    for a in annotations {
        let kind = a.fields.get("kind").map_or("other", String::as_str);
        *kinds.entry(kind).or_default() += 1;
        if let (Some(class), Some(count)) = (a.fields.get("class"), a.fields.get("count")) {
            *classes.entry(class).or_default() += count.parse::<u64>().unwrap_or(0);
        }
    }
    let mut lines: Vec<String> = kinds.iter().map(|(k, n)| format!("{k:<18} {n}")).collect();
    lines.extend(
        classes
            .iter()
            .map(|(c, n)| format!("  {c}: {}", counted(*n, "error"))),
    );
    lines
}

/// `1 line`, `2 lines`.
fn counted(n: impl std::fmt::Display, what: &str) -> String {
    if n.to_string() == "1" {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn key(a: &Annotation) -> (u64, String, String) {
    (a.t.as_millis(), a.source.clone(), a.text.clone())
}

fn read_events(path: &Path) -> io::Result<String> {
    let bytes = if path.as_os_str() == "-" {
        let mut b = Vec::new();
        io::stdin().lock().read_to_end(&mut b)?;
        b
    } else {
        std::fs::read(path)?
    };
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What reading the recording found.
struct Scan {
    header: Header,
    compressed: bool,
    /// Size of the file when it was read.
    len: u64,
    /// When the file was last written to.
    modified: Option<SystemTime>,
    /// The (decompressed) content ends in a complete line without its newline.
    needs_newline: bool,
    /// Time of the latest line recorded from the cluster (annotations aside).
    last: Timestamp,
    has_end: bool,
    bad_lines: usize,
    existing: HashSet<(u64, String, String)>,
}

/// Remembers the last byte that went through.
struct LastByte<R> {
    inner: R,
    last: Rc<Cell<Option<u8>>>,
}

impl<R: Read> Read for LastByte<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(&b) = buf[..n].last() {
            self.last.set(Some(b));
        }
        Ok(n)
    }
}

fn scan(path: &Path) -> Result<Scan, ImportError> {
    let shown = path.display().to_string();
    let open_err = |source| ImportError::Open {
        path: shown.clone(),
        source,
    };
    let refuse = |message: String| ImportError::Recording {
        path: shown.clone(),
        message,
    };
    let file = File::open(path).map_err(open_err)?;
    let meta = file.metadata().map_err(open_err)?;
    let (len, modified) = (meta.len(), meta.modified().ok());
    let mut src = BufReader::with_capacity(256 * 1024, file);
    let compressed = src.fill_buf().map_err(open_err)?.starts_with(&ZSTD_MAGIC);
    let inner: Box<dyn Read> = if compressed {
        Box::new(zstd::stream::read::Decoder::with_buffer(src).map_err(open_err)?)
    } else {
        Box::new(src)
    };
    let last_byte = Rc::new(Cell::new(None));
    let mut reader = RecordingReader::new(BufReader::with_capacity(
        64 * 1024,
        LastByte {
            inner,
            last: last_byte.clone(),
        },
    ));
    let cut_short = |line: u64| {
        let fix = if compressed {
            format!("decompress what it holds (`zstd -dc {shown} > copy.jsonl`, which reports the cut) and import into the copy")
        } else {
            format!(
                "import into a copy without it (`head -n {} {shown} > copy.jsonl`)",
                line.saturating_sub(1)
            )
        };
        let what = if compressed {
            "a partial zstd frame".to_string()
        } else {
            format!("a partial line (line {line})")
        };
        refuse(format!(
            "it ends in {what}: the recording was cut short, or is still being written, and lines \
             appended after it could not be read. Stop the recorder if it runs, or {fix}"
        ))
    };
    let header = match reader.header() {
        Ok(h) => h.clone(),
        Err(ReadError::Io { line, .. }) if compressed => return Err(cut_short(line)),
        Err(e) => return Err(refuse(e.to_string())),
    };
    let mut scan = Scan {
        last: header.started,
        header,
        compressed,
        len,
        modified,
        needs_newline: false,
        has_end: false,
        bad_lines: 0,
        existing: HashSet::new(),
    };
    for item in reader.by_ref() {
        match item {
            Ok((_, line)) => match line {
                Line::Annotation(a) => {
                    scan.existing.insert(key(&a));
                }
                other => {
                    scan.last = scan.last.max(other.time());
                    scan.has_end |= matches!(other, Line::End(_));
                }
            },
            Err(ReadError::Io { line, .. }) if compressed => return Err(cut_short(line)),
            Err(e @ ReadError::Io { .. }) => {
                return Err(refuse(format!(
                    "cannot be read to its end ({e}); appending to it would not be safe"
                )))
            }
            Err(_) => scan.bad_lines += 1,
        }
    }
    if let Some(line) = reader.truncated_tail() {
        return Err(cut_short(line));
    }
    scan.needs_newline = last_byte.get().is_some_and(|b| b != b'\n');
    Ok(scan)
}

fn append(path: &Path, scan: &Scan, annotations: &[Annotation]) -> Result<(), ImportError> {
    let shown = path.display().to_string();
    let mut lines = Vec::with_capacity(annotations.len() * 200 + 1);
    if scan.needs_newline {
        lines.push(b'\n');
    }
    for a in annotations {
        lines.extend_from_slice(Line::Annotation(a.clone()).to_json().as_bytes());
        lines.push(b'\n');
    }
    let file = OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|source| ImportError::Open {
            path: shown.clone(),
            source,
        })?;
    let now = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    if now != scan.len {
        return Err(ImportError::Recording {
            path: shown,
            message: format!(
                "it changed while it was being read ({} bytes, now {now}): is `slotscope record` \
                 still writing it?",
                scan.len
            ),
        });
    }
    let write_err = |source| ImportError::Write {
        path: shown.clone(),
        source,
    };
    let file = if scan.compressed {
        let mut enc = zstd::Encoder::new(BufWriter::new(file), ZSTD_LEVEL).map_err(write_err)?;
        // As the recorder does: a content checksum lets readers detect damage.
        enc.include_checksum(true).map_err(write_err)?;
        enc.write_all(&lines).map_err(write_err)?;
        enc.finish()
            .map_err(write_err)?
            .into_inner()
            .map_err(|e| write_err(e.into_error()))?
    } else {
        let mut file = file;
        file.write_all(&lines).map_err(write_err)?;
        file
    };
    file.sync_all().map_err(write_err)
}
