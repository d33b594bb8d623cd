//! Outside evidence turned into [`Annotation`]s: a cloud provider's event log, or an application's
//! error log. Sans-IO: [`parse`] reads text handed to it and returns annotations; it opens no file
//! and reads no clock.
//!
//! # Cloud provider event logs ([`Format::Cloud`])
//!
//! One event per line, a timestamp first, then the message:
//!
//! ```text
//! 05:17:18  Migrating slots from node groups 0001 to 0002 to rebalance slots
//! 2025-03-14 05:17:18    Migrating slots from node groups 0001 to 0002 to rebalance slots
//! 2025-03-14T05:17:18Z Migrating slots from node groups 0001 to 0002 to rebalance slots
//! "2025-03-14 05:17:18","Migrating slots from node groups 0001 to 0002 to rebalance slots"
//! EVENTS    2025-03-14T05:17:18.123Z    Migrating slots …    my-cluster    replication-group
//! ```
//!
//! The time and message may be separated by spaces or a tab. Columns after the timestamp separated
//! by tabs (as in the output of `aws elasticache describe-events --output text`, last line above)
//! or by CSV commas are joined with ` | `. The JSON document `aws elasticache describe-events`
//! prints by default (`{"Events": [{"Date": …, "Message": …}]}`) is read as well. Lines without a
//! timestamp (a CSV heading) are skipped. Every event becomes one annotation whose `text` is the
//! message; `fields.kind` names what kind of event it is when the message matches
//! [`CLOUD_KINDS`].
//!
//! # Application error logs ([`Format::AppLog`])
//!
//! Timestamped text lines (Python's `%(asctime)s` format `2025-03-14 05:17:30,123`, ISO 8601,
//! optionally in brackets) or JSON objects, one per line, with common key names: the time in
//! `@timestamp` / `timestamp` / `time` / `ts` / `asctime` / `datetime` (text, or seconds /
//! milliseconds since the epoch), the message in `message` / `msg` / `event`, the error class in
//! `exc_type` / `error.type` / `exception` / `error` / `err.type` / `exc_info`, the level in
//! `level` / `severity` / `levelname` (text, or pino/bunyan numbers: 50 and up are errors).
//!
//! A line is an error when it carries an error class — a `WordError` / `WordException` token such as
//! `RedisClusterException`, `ConnectionError`, `MovedError` (a dotted module prefix is dropped) — or
//! an error level (`ERROR`, `CRITICAL`, `FATAL`, …). The message is what follows `Class:`, else what
//! follows the level. Lines without a timestamp continue the line before (a traceback): they are not
//! counted, but when the timestamped line named no class, the last `Class: message` line of its
//! traceback supplies one. Errors are counted per second per (class, message with its numbers
//! blanked); each group becomes one annotation spanning that second, `text` like
//! `12 × RedisClusterException: Redis Cluster cannot be connected…`, `fields` `kind` = `app_error`,
//! `class`, `count` and `example` (the first message of the group, in full).
//!
//! # Dates and zones
//!
//! Times without a zone are UTC. A time of day alone (`05:17:18`) takes its date from
//! [`Options::date`], else from [`Options::recording_start`]; in the second case it is placed within
//! 12 hours of the recording's start (so a time more than 12 h earlier than the start's time of day
//! is on the next day, more than 12 h later on the day before). Each further time of day is placed
//! within 12 hours of the line before it, so a log that runs past midnight moves on to the next day.
//!
//! # Detection ([`Format::Auto`], see [`detect`])
//!
//! JSON lines, any line with an error class token, or a timestamped line with an upper-case log level
//! (`2025-03-14 05:17:30,123 ERROR …`) make an application log; anything else is a cloud event log.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::recording::Annotation;
use crate::time::Timestamp;

/// `source` of annotations from a cloud provider's event log.
pub const CLOUD_SOURCE: &str = "cloud_event_log";
/// `source` of annotations from an application log.
pub const APP_SOURCE: &str = "app_log";
/// `fields.kind` of the per-second error counts of an application log.
pub const APP_ERROR_KIND: &str = "app_error";

/// What kind of cloud event a message reports, by keywords: for each kind (tried in this order,
/// first match wins), alternatives of lower-case fragments that must all appear in the message.
pub const CLOUD_KINDS: &[(&str, &[&[&str]])] = &[
    (
        "migration_done",
        &[
            &["migrat", "complet"],
            &["migrat", "finished"],
            &["slots moved"],
        ],
    ),
    (
        "scaling_done",
        &[
            &["scal", "complet"],
            &["scal", "finished"],
            &["finished modifying"],
        ],
    ),
    (
        "node_group_added",
        &[&["node group", "added"], &["shard", "added"]],
    ),
    (
        "node_group_removed",
        &[
            &["node group", "removed"],
            &["node group", "deleted"],
            &["shard", "removed"],
        ],
    ),
    ("node_added", &[&["node", "added"]]),
    ("migration_start", &[&["migrat", "slot"], &["rebalanc"]]),
    (
        "scaling_start",
        &[
            &["scaling"],
            &["scale out"],
            &["scale in"],
            &["scale-out"],
            &["scale-in"],
            &["modifying", "node group"],
        ],
    ),
    ("failover", &[&["failover"], &["failed over"]]),
];

/// Levels that make a log line an error on their own (compared without case).
const ERROR_LEVELS: &[&str] = &[
    "error",
    "err",
    "critical",
    "crit",
    "fatal",
    "severe",
    "alert",
    "emerg",
    "emergency",
    "panic",
];

/// Every level word recognised in a text line's first tokens.
const LEVELS: &[&str] = &[
    "trace",
    "debug",
    "info",
    "notice",
    "warn",
    "warning",
    "error",
    "err",
    "critical",
    "crit",
    "fatal",
    "severe",
    "alert",
    "emerg",
    "emergency",
    "panic",
];

const TIME_KEYS: &[&str] = &[
    "@timestamp",
    "timestamp",
    "time",
    "ts",
    "asctime",
    "datetime",
];
const MESSAGE_KEYS: &[&str] = &["message", "msg", "event", "error.message", "err.message"];
const CLASS_KEYS: &[&str] = &[
    "exc_type",
    "error.type",
    "error.kind",
    "error.class",
    "err.type",
    "exception.type",
    "exception.class",
    "error_type",
    "exception",
    "error",
    "err",
    "exc_info",
    "stack_trace",
    "stack",
];
const LEVEL_KEYS: &[&str] = &["level", "severity", "levelname", "log.level", "lvl"];

const DAY_MS: i64 = 86_400_000;
const HALF_DAY_MS: i64 = 43_200_000;
/// Longest message kept in an annotation's `text` (the full one is in `fields.example`).
const TEXT_CHARS: usize = 160;

/// The kind of outside evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Decide from the text (see [`detect`]).
    Auto,
    /// A cloud provider's event log: one event per line.
    Cloud,
    /// An application's log: errors are counted per second.
    AppLog,
}

impl Format {
    /// The default `source` of annotations of this format.
    pub fn default_source(self) -> &'static str {
        match self {
            Format::AppLog => APP_SOURCE,
            Format::Cloud | Format::Auto => CLOUD_SOURCE,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Auto => "auto",
            Format::Cloud => "cloud event log",
            Format::AppLog => "application log",
        })
    }
}

/// A calendar date (UTC), for logs whose lines carry only a time of day.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: i64,
    month: u32,
    day: u32,
}

impl Date {
    /// The date, if it exists (1970 or later).
    pub fn new(year: i64, month: u32, day: u32) -> Option<Date> {
        Timestamp::from_civil(year, month, day, 0, 0, 0, 0)?;
        Some(Date { year, month, day })
    }

    /// Milliseconds since the epoch at 00:00 UTC of the date.
    fn midnight(self) -> Option<i64> {
        let t = Timestamp::from_civil(self.year, self.month, self.day, 0, 0, 0, 0)?;
        i64::try_from(t.as_millis()).ok()
    }
}

impl FromStr for Date {
    type Err = EvidenceError;

    /// Parses `YYYY-MM-DD`.
    fn from_str(s: &str) -> Result<Date, EvidenceError> {
        let bad = || EvidenceError::BadDate(s.to_string());
        let b = s.trim().as_bytes();
        let (year, i) = number(b, 0, 4, 4).ok_or_else(bad)?;
        let (month, i) = sep(b, i, b'-')
            .and_then(|i| number(b, i, 1, 2))
            .ok_or_else(bad)?;
        let (day, i) = sep(b, i, b'-')
            .and_then(|i| number(b, i, 1, 2))
            .ok_or_else(bad)?;
        if i != b.len() {
            return Err(bad());
        }
        Date::new(i64::from(year), month, day).ok_or_else(bad)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Why outside evidence could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvidenceError {
    /// A line carries a time of day only, and neither a date nor the recording's start was given.
    #[error("line {line}: `{time}` is a time of day without a date, and no date was given")]
    DateNeeded {
        /// 1-based line number.
        line: u64,
        /// The time as written.
        time: String,
    },
    /// A timestamp has the right shape but impossible values (month 13, 25:00, 30 February, …).
    #[error("line {line}: `{text}` is not a valid date and time")]
    BadTimestamp {
        /// 1-based line number (for a JSON document of events: the event's number).
        line: u64,
        /// The timestamp as written.
        text: String,
    },
    /// A timestamp lies before 1970 or too far in the future.
    #[error("line {line}: `{text}` lies outside the range of timestamps")]
    OutOfRange {
        /// 1-based line number.
        line: u64,
        /// The timestamp as written.
        text: String,
    },
    /// Not a single line had a timestamp.
    #[error(
        "no timestamps found in {lines} lines (expected lines like `05:17:18 Migrating slots …`, \
         `2025-03-14 05:17:30,123 ERROR …` or JSON with a `timestamp` key)"
    )]
    NoTimestamps {
        /// Non-blank lines read.
        lines: u64,
    },
    /// A date given by the caller is not `YYYY-MM-DD`, or does not exist.
    #[error("`{0}` is not a date (expected YYYY-MM-DD, e.g. 2025-03-14)")]
    BadDate(String),
}

/// How to read outside evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The format, or [`Format::Auto`] to detect it.
    pub format: Format,
    /// Date of lines that carry a time of day only.
    pub date: Option<Date>,
    /// Start of the recording the evidence goes with: dates time-of-day lines when `date` is absent.
    pub recording_start: Option<Timestamp>,
    /// `source` of every annotation; by default [`CLOUD_SOURCE`] or [`APP_SOURCE`].
    pub source: Option<String>,
}

/// Annotations read from outside evidence, and what the reading met.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    /// The format read (never [`Format::Auto`]).
    pub format: Format,
    /// The annotations, in time order.
    pub annotations: Vec<Annotation>,
    /// Non-blank lines read (events, for a JSON document of events).
    pub lines: u64,
    /// Lines (events) that went into an annotation.
    pub used: u64,
    /// Application log: timestamped lines that are not errors.
    pub not_errors: u64,
    /// Application log: lines without a timestamp following a timestamped one (tracebacks).
    pub continuation: u64,
    /// Lines that could not be used: no timestamp (and not a continuation), or broken JSON.
    pub skipped: u64,
    /// Number of the first skipped line.
    pub first_skipped: Option<u64>,
}

impl Evidence {
    fn new(format: Format) -> Evidence {
        Evidence {
            format,
            annotations: Vec::new(),
            lines: 0,
            used: 0,
            not_errors: 0,
            continuation: 0,
            skipped: 0,
            first_skipped: None,
        }
    }

    fn skip(&mut self, line: u64) {
        self.skipped = self.skipped.saturating_add(1);
        self.first_skipped.get_or_insert(line);
    }
}

/// Reads outside evidence from `text` into annotations, in time order.
pub fn parse(text: &str, opts: &Options) -> Result<Evidence, EvidenceError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let format = match opts.format {
        Format::Auto => detect(text),
        f => f,
    };
    let source = opts
        .source
        .clone()
        .unwrap_or_else(|| format.default_source().to_string());
    let mut clock = Clock::new(opts)?;
    let mut ev = match format {
        Format::AppLog => parse_app_log(text, &mut clock, &source)?,
        Format::Cloud | Format::Auto => match describe_events(text) {
            Some(events) => parse_cloud_json(&events, &mut clock, &source)?,
            None => parse_cloud(text, &mut clock, &source)?,
        },
    };
    if !clock.any {
        return Err(EvidenceError::NoTimestamps { lines: ev.lines });
    }
    ev.annotations.sort_by_key(|a| a.t);
    Ok(ev)
}

/// The format of `text`: JSON lines, a line with an error class token, or a timestamped line whose
/// first words hold an upper-case log level (`ERROR`, `INFO`, …) make an application log; anything
/// else (including the JSON document of `aws elasticache describe-events`) a cloud event log.
pub fn detect(text: &str) -> Format {
    if describe_events(text).is_some() {
        return Format::Cloud;
    }
    let mut json = 0u32;
    let mut other = 0u32;
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(200)
    {
        if json_object(line).is_some() {
            json += 1;
        } else {
            other += 1;
        }
        if find_class(line).is_some() || is_app_text_line(line) {
            return Format::AppLog;
        }
    }
    if json > 0 && json >= other {
        Format::AppLog
    } else {
        Format::Cloud
    }
}

/// The kind of a cloud event message, from [`CLOUD_KINDS`].
pub fn cloud_kind(message: &str) -> Option<&'static str> {
    let lower = message.to_lowercase();
    CLOUD_KINDS
        .iter()
        .find(|(_, alternatives)| {
            alternatives
                .iter()
                .any(|all| all.iter().all(|frag| lower.contains(frag)))
        })
        .map(|(kind, _)| *kind)
}

/// The error class named in `text` (`RedisClusterException`, `ConnectionError`, …, without a
/// module prefix) and, when it is written `Class: message`, the message. A class followed by `:` is
/// preferred over one that is not; in a multi-line text (a traceback) the last `Class: message`
/// line wins.
pub fn error_class(text: &str) -> Option<(String, Option<String>)> {
    if text.contains('\n') {
        if let Some(found) = text.lines().rev().find_map(class_line) {
            return Some(found);
        }
    }
    find_class(text)
}

// ---------------------------------------------------------------------------------------------
// Cloud event logs

fn parse_cloud(text: &str, clock: &mut Clock, source: &str) -> Result<Evidence, EvidenceError> {
    let mut ev = Evidence::new(Format::Cloud);
    let mut n: u64 = 0;
    for raw in text.lines() {
        n = n.saturating_add(1);
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        ev.lines = ev.lines.saturating_add(1);
        let body = line.strip_prefix("EVENTS\t").unwrap_or(line);
        let (quoted, body) = match body.strip_prefix(['"', '\'']) {
            Some(rest) => (true, rest),
            None => (false, body),
        };
        let Some((stamp, len)) = stamp_prefix(body) else {
            ev.skip(n);
            continue;
        };
        let shown = &body[..len];
        let stamp = stamp.ok_or_else(|| EvidenceError::BadTimestamp {
            line: n,
            text: shown.to_string(),
        })?;
        let t = clock.place(stamp, n, shown)?;
        let message = cloud_message(&body[len..], quoted);
        if message.is_empty() {
            ev.skip(n);
            continue;
        }
        ev.used = ev.used.saturating_add(1);
        ev.annotations.push(cloud_annotation(t, source, message));
    }
    Ok(ev)
}

fn cloud_annotation(t: Timestamp, source: &str, message: String) -> Annotation {
    let mut fields = BTreeMap::new();
    if let Some(kind) = cloud_kind(&message) {
        fields.insert("kind".to_string(), kind.to_string());
    }
    Annotation {
        t,
        source: source.to_string(),
        text: message,
        end: None,
        fields,
    }
}

/// The message after a cloud line's timestamp: columns (tabs or CSV) joined with ` | `.
fn cloud_message(rest: &str, quoted: bool) -> String {
    // The closing quote of a quoted timestamp field.
    let rest = if quoted {
        rest.strip_prefix(['"', '\'']).unwrap_or(rest)
    } else {
        rest
    };
    let after_spaces = rest.trim_start_matches(' ');
    let fields: Vec<String> = if let Some(csv) = after_spaces.strip_prefix([',', ';']) {
        csv_fields(csv)
    } else if rest.contains('\t') {
        rest.split('\t').map(unquote).collect()
    } else {
        let mut one = rest.trim();
        if quoted {
            one = one.strip_suffix(['"', '\'']).unwrap_or(one);
        }
        vec![one.to_string()]
    };
    fields
        .iter()
        .map(|f| f.trim())
        .filter(|f| !f.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

fn unquote(field: &str) -> String {
    let f = field.trim();
    match f.strip_prefix('"').and_then(|f| f.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => f.to_string(),
    }
}

/// Splits the rest of a CSV line into fields (quoted fields may hold commas and `""`).
fn csv_fields(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        let mut field = String::new();
        let mut more = false;
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                if c != '"' {
                    field.push(c);
                } else if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    break;
                }
            }
            // Anything between the closing quote and the next comma is dropped.
            more = chars.any(|c| c == ',');
        } else {
            for c in chars.by_ref() {
                if c == ',' {
                    more = true;
                    break;
                }
                field.push(c);
            }
        }
        out.push(field);
        if !more {
            return out;
        }
    }
}

/// The `Events` of the JSON document `aws elasticache describe-events` prints.
fn describe_events(text: &str) -> Option<Vec<Value>> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        return None;
    }
    let doc: Value = serde_json::from_str(trimmed).ok()?;
    match doc.get("Events")? {
        Value::Array(events) => Some(events.clone()),
        _ => None,
    }
}

fn parse_cloud_json(
    events: &[Value],
    clock: &mut Clock,
    source: &str,
) -> Result<Evidence, EvidenceError> {
    let mut ev = Evidence::new(Format::Cloud);
    let mut n: u64 = 0;
    for event in events {
        n = n.saturating_add(1);
        ev.lines = ev.lines.saturating_add(1);
        let Some(obj) = event.as_object() else {
            ev.skip(n);
            continue;
        };
        let Some(date) = ["Date", "date", "Time", "time", "timestamp"]
            .iter()
            .find_map(|k| obj.get(*k))
        else {
            ev.skip(n);
            continue;
        };
        let stamp = json_time(date).ok_or_else(|| EvidenceError::BadTimestamp {
            line: n,
            text: date.to_string(),
        })?;
        let t = clock.place(stamp, n, &date.to_string())?;
        let mut message = ["Message", "message"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(Value::as_str))
            .unwrap_or("")
            .trim()
            .to_string();
        if message.is_empty() {
            ev.skip(n);
            continue;
        }
        if let Some(id) = obj.get("SourceIdentifier").and_then(Value::as_str) {
            message = format!("{message} | {id}");
        }
        ev.used = ev.used.saturating_add(1);
        ev.annotations.push(cloud_annotation(t, source, message));
    }
    Ok(ev)
}

// ---------------------------------------------------------------------------------------------
// Application logs

/// One error line (with its traceback) of an application log.
struct Entry {
    t: Timestamp,
    class: Option<String>,
    message: String,
    /// The class came from the timestamped line itself (a traceback does not override it).
    class_from_head: bool,
    error_level: bool,
}

#[derive(Default)]
struct Group {
    count: u64,
    example: String,
}

fn parse_app_log(text: &str, clock: &mut Clock, source: &str) -> Result<Evidence, EvidenceError> {
    let mut ev = Evidence::new(Format::AppLog);
    let mut groups: BTreeMap<(Timestamp, String, String), Group> = BTreeMap::new();
    let mut pending: Option<Entry> = None;
    let mut n: u64 = 0;
    for raw in text.lines() {
        n = n.saturating_add(1);
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        ev.lines = ev.lines.saturating_add(1);
        if line.starts_with('{') {
            let Some(obj) = json_object(line) else {
                ev.skip(n);
                continue;
            };
            flush(pending.take(), &mut groups, &mut ev);
            match json_entry(&obj, clock, n)? {
                Some(entry) => pending = Some(entry),
                None => ev.skip(n),
            }
            continue;
        }
        let body = line.strip_prefix(['[', '"', '\'']).unwrap_or(line);
        match stamp_prefix(body) {
            None => match pending.as_mut() {
                Some(entry) => {
                    ev.continuation = ev.continuation.saturating_add(1);
                    if !entry.class_from_head {
                        if let Some((class, message)) = class_line(line) {
                            entry.class = Some(class);
                            if let Some(m) = message {
                                entry.message = m;
                            }
                        }
                    }
                }
                None => ev.skip(n),
            },
            Some((stamp, len)) => {
                let shown = &body[..len];
                let stamp = stamp.ok_or_else(|| EvidenceError::BadTimestamp {
                    line: n,
                    text: shown.to_string(),
                })?;
                let t = clock.place(stamp, n, shown)?;
                flush(pending.take(), &mut groups, &mut ev);
                pending = Some(text_entry(t, &body[len..]));
            }
        }
    }
    flush(pending.take(), &mut groups, &mut ev);
    for ((t, class, _), group) in groups {
        let mut fields = BTreeMap::new();
        fields.insert("kind".to_string(), APP_ERROR_KIND.to_string());
        fields.insert("class".to_string(), class.clone());
        fields.insert("count".to_string(), group.count.to_string());
        fields.insert("example".to_string(), group.example.clone());
        let text = if group.example.is_empty() {
            format!("{} × {class}", group.count)
        } else {
            format!("{} × {class}: {}", group.count, shorten(&group.example))
        };
        ev.annotations.push(Annotation {
            t,
            source: source.to_string(),
            text,
            end: Some(Timestamp(t.as_millis().saturating_add(1000))),
            fields,
        });
    }
    Ok(ev)
}

/// Counts a finished entry if it is an error.
fn flush(
    entry: Option<Entry>,
    groups: &mut BTreeMap<(Timestamp, String, String), Group>,
    ev: &mut Evidence,
) {
    let Some(entry) = entry else { return };
    let class = match entry.class {
        Some(c) => c,
        None if entry.error_level => "ERROR".to_string(),
        None => {
            ev.not_errors = ev.not_errors.saturating_add(1);
            return;
        }
    };
    ev.used = ev.used.saturating_add(1);
    let second = Timestamp(entry.t.as_millis() - entry.t.as_millis() % 1000);
    let key = (second, class, blank_numbers(&entry.message));
    let group = groups.entry(key).or_default();
    if group.count == 0 {
        group.example = entry.message;
    }
    group.count = group.count.saturating_add(1);
}

/// An entry from the text after a line's timestamp.
fn text_entry(t: Timestamp, rest: &str) -> Entry {
    let rest = after_stamp(rest);
    let (level, after_level) = match find_level(rest) {
        Some((level, after)) => (Some(level), after),
        None => (None, rest),
    };
    let error_level =
        level.is_some_and(|l| ERROR_LEVELS.contains(&l.to_ascii_lowercase().as_str()));
    let (class, message) = match find_class(rest) {
        Some((class, Some(message))) => (Some(class), message),
        Some((class, None)) => (Some(class), after_level.trim().to_string()),
        None => (None, after_level.trim().to_string()),
    };
    Entry {
        t,
        class_from_head: class.is_some(),
        class,
        message,
        error_level,
    }
}

/// The text after a line's timestamp, without the separators that follow it.
fn after_stamp(rest: &str) -> &str {
    rest.trim_start_matches([']', '"', '\''])
        .trim_start_matches([' ', '\t', '|', '-', ':', ','])
        .trim_end()
}

/// A log level word (all upper or all lower case, punctuation aside) among the first five tokens
/// of `rest`, and the text after it.
fn find_level(rest: &str) -> Option<(&str, &str)> {
    let mut offset = 0;
    for token in rest.split_whitespace().take(5) {
        let start = rest[offset..].find(token).map_or(offset, |p| offset + p);
        offset = start + token.len();
        let word = token.trim_matches(|c: char| !c.is_ascii_alphabetic());
        let one_case = word.chars().all(|c| c.is_ascii_uppercase())
            || word.chars().all(|c| c.is_ascii_lowercase());
        if !word.is_empty() && one_case && LEVELS.contains(&word.to_ascii_lowercase().as_str()) {
            let after = rest[offset..].trim_start_matches([' ', '\t', '|', '-', ':', ']', ')']);
            return Some((word, after));
        }
    }
    None
}

/// Whether a text line looks like an application log line: a timestamp, then an upper-case level.
fn is_app_text_line(line: &str) -> bool {
    let body = line.strip_prefix(['[', '"', '\'']).unwrap_or(line);
    let Some((_, len)) = stamp_prefix(body) else {
        return false;
    };
    find_level(after_stamp(&body[len..]))
        .is_some_and(|(level, _)| level.chars().all(|c| c.is_ascii_uppercase()))
}

/// An entry from one JSON object; `None` when it has no time.
fn json_entry(
    obj: &Map<String, Value>,
    clock: &mut Clock,
    line: u64,
) -> Result<Option<Entry>, EvidenceError> {
    let Some(time) = TIME_KEYS.iter().find_map(|k| lookup(obj, k)) else {
        return Ok(None);
    };
    let shown = match time {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let stamp = json_time(time).ok_or_else(|| EvidenceError::BadTimestamp {
        line,
        text: shown.clone(),
    })?;
    let t = clock.place(stamp, line, &shown)?;
    let message = MESSAGE_KEYS
        .iter()
        .find_map(|k| lookup(obj, k).and_then(Value::as_str))
        .unwrap_or("")
        .trim()
        .to_string();
    let mut class: Option<(String, Option<String>)> = CLASS_KEYS
        .iter()
        .filter_map(|k| lookup(obj, k).and_then(Value::as_str))
        .find_map(|v| {
            let v = v.trim();
            let last = v.trim_end_matches('.').rsplit('.').next().unwrap_or(v);
            if is_class_name(last) {
                Some((last.to_string(), None))
            } else {
                error_class(v)
            }
        });
    if class.is_none() {
        class = find_class(&message);
    }
    let error_level = LEVEL_KEYS
        .iter()
        .find_map(|k| lookup(obj, k))
        .is_some_and(|v| match v {
            Value::String(s) => ERROR_LEVELS.contains(&s.trim().to_ascii_lowercase().as_str()),
            Value::Number(n) => n.as_f64().is_some_and(|n| n >= 50.0),
            _ => false,
        });
    let (class, message) = match class {
        Some((class, from_class)) => {
            // `Class: message` in the message itself: keep what follows the class.
            let prefix = format!("{class}:");
            let message = match message.find(&prefix) {
                Some(p) => message[p + prefix.len()..].trim().to_string(),
                None if message.is_empty() => from_class.unwrap_or_default(),
                None => message,
            };
            (Some(class), message)
        }
        None => (None, message),
    };
    Ok(Some(Entry {
        t,
        class_from_head: true,
        class,
        message,
        error_level,
    }))
}

/// `key` in `obj`, as a literal key (`error.type`) or as a path into nested objects.
fn lookup<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if let Some(v) = obj.get(key) {
        return Some(v);
    }
    let (head, tail) = key.split_once('.')?;
    match obj.get(head)? {
        Value::Object(inner) => lookup(inner, tail),
        _ => None,
    }
}

fn json_object(line: &str) -> Option<Map<String, Value>> {
    if !line.starts_with('{') {
        return None;
    }
    match serde_json::from_str(line) {
        Ok(Value::Object(obj)) => Some(obj),
        _ => None,
    }
}

/// A time value of a JSON log: a timestamp text, or seconds / ms / µs / ns since the epoch.
fn json_time(v: &Value) -> Option<Stamp> {
    match v {
        Value::String(s) => {
            let s = s.trim();
            match stamp_prefix(s) {
                Some((stamp, len)) if len == s.len() => stamp,
                _ => None,
            }
        }
        Value::Number(n) => {
            let f = n.as_f64()?;
            if !f.is_finite() || f <= 0.0 {
                return None;
            }
            let ms = if f >= 1e17 {
                f / 1e6
            } else if f >= 1e14 {
                f / 1e3
            } else if f >= 1e11 {
                f
            } else {
                f * 1e3
            };
            if ms >= 9.0e15 {
                return None;
            }
            // In range: the cast cannot truncate.
            #[allow(clippy::cast_possible_truncation)]
            let ms = ms.round() as i64;
            Some(Stamp::At(ms))
        }
        _ => None,
    }
}

/// Whether `s` is an error class name: an upper-case initial, word characters, ending in `Error`
/// or `Exception` after at least one more character.
fn is_class_name(s: &str) -> bool {
    let starts_upper = s.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    let word = s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let suffix = ["Error", "Exception"]
        .iter()
        .any(|suf| s.len() > suf.len() && s.ends_with(suf));
    starts_upper && word && suffix
}

/// The first error class token of `text` followed by `:` (with the message after it), else the
/// first one at all.
fn find_class(text: &str) -> Option<(String, Option<String>)> {
    let mut first: Option<String> = None;
    let is_token = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let mut rest = text;
    let mut consumed = 0;
    while let Some(start) = rest.find(is_token) {
        let len = rest[start..]
            .find(|c: char| !is_token(c))
            .unwrap_or(rest.len() - start);
        let token = &rest[start..start + len];
        let after = &rest[start + len..];
        let clean = token.trim_end_matches('.');
        let last = clean.rsplit('.').next().unwrap_or(clean);
        if is_class_name(last) {
            if token.len() == clean.len() {
                if let Some(message) = after.strip_prefix(':') {
                    return Some((last.to_string(), Some(message.trim().to_string())));
                }
            }
            first.get_or_insert_with(|| last.to_string());
        }
        consumed += start + len;
        rest = &text[consumed..];
    }
    first.map(|c| (c, None))
}

/// A traceback's `module.Class: message` line (the class at the start of the line).
fn class_line(line: &str) -> Option<(String, Option<String>)> {
    let line = line.trim();
    let end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(line.len());
    let token = &line[..end];
    let last = token.rsplit('.').next().unwrap_or(token);
    if !is_class_name(last) {
        return None;
    }
    let after = &line[end..];
    if after.is_empty() {
        return Some((last.to_string(), None));
    }
    let message = after.strip_prefix(':')?;
    Some((last.to_string(), Some(message.trim().to_string())))
}

/// The message with every run of digits replaced by `#`, for grouping.
fn blank_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut in_digits = false;
    for c in message.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

fn shorten(message: &str) -> String {
    match message.char_indices().nth(TEXT_CHARS) {
        Some((cut, _)) => format!("{}…", message[..cut].trim_end()),
        None => message.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Timestamps

/// A timestamp as read from a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stamp {
    /// A full date and time: milliseconds since the epoch (may be negative before conversion).
    At(i64),
    /// A time of day only, in milliseconds after midnight UTC (zone applied: may leave 0..24 h).
    TimeOfDay(i64),
}

/// Places timestamps on the time line: dates times of day, checks the range.
struct Clock {
    /// Midnight of the given date, for the first time of day.
    midnight: Option<i64>,
    /// The time a time of day is placed near (the previous line's, first the recording's start).
    anchor: Option<i64>,
    /// Whether any timestamp was placed.
    any: bool,
}

impl Clock {
    fn new(opts: &Options) -> Result<Clock, EvidenceError> {
        let midnight = match opts.date {
            Some(d) => Some(
                d.midnight()
                    .ok_or_else(|| EvidenceError::BadDate(d.to_string()))?,
            ),
            None => None,
        };
        let anchor = match (midnight, opts.recording_start) {
            (None, Some(start)) => i64::try_from(start.as_millis()).ok(),
            _ => None,
        };
        Ok(Clock {
            midnight,
            anchor,
            any: false,
        })
    }

    fn place(&mut self, stamp: Stamp, line: u64, shown: &str) -> Result<Timestamp, EvidenceError> {
        let ms = match stamp {
            Stamp::At(ms) => ms,
            Stamp::TimeOfDay(tod) => match (self.anchor, self.midnight) {
                (Some(anchor), _) => nearest(anchor, tod),
                (None, Some(midnight)) => midnight.checked_add(tod).unwrap_or(i64::MIN),
                (None, None) => {
                    return Err(EvidenceError::DateNeeded {
                        line,
                        time: shown.to_string(),
                    })
                }
            },
        };
        let t = u64::try_from(ms).map_err(|_| EvidenceError::OutOfRange {
            line,
            text: shown.to_string(),
        })?;
        self.anchor = Some(ms);
        self.any = true;
        Ok(Timestamp(t))
    }
}

/// The time `tod` after some midnight that lies within 12 hours of `anchor`.
fn nearest(anchor: i64, tod: i64) -> i64 {
    let mut t = anchor.div_euclid(DAY_MS) * DAY_MS + tod;
    while t - anchor > HALF_DAY_MS {
        t -= DAY_MS;
    }
    while anchor - t > HALF_DAY_MS {
        t += DAY_MS;
    }
    t
}

/// A timestamp at the start of `s`: `None` when there is none; `Some((None, len))` when its shape
/// is right but its values impossible; `len` is the length of the timestamp text.
///
/// Accepted: `HH:MM:SS`, `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DDTHH:MM:SS` (also with `/` in the date),
/// each with optional fractional seconds (`.123` or `,123`) and zone (`Z`, `+01:00`, `+0100`,
/// ` UTC`, ` GMT`).
fn stamp_prefix(s: &str) -> Option<(Option<Stamp>, usize)> {
    let b = s.as_bytes();
    let (date, i) = match date_at(b) {
        Some((y, mo, d, i)) => match b.get(i) {
            Some(b'T' | b't' | b' ' | b'_') => (Some((y, mo, d)), i + 1),
            _ => return None,
        },
        None => (None, 0),
    };
    let (h, i) = number(b, i, 1, 2)?;
    let (mi, i) = sep(b, i, b':').and_then(|i| number(b, i, 2, 2))?;
    let (sec, mut i) = sep(b, i, b':').and_then(|i| number(b, i, 2, 2))?;
    let mut ms = 0u32;
    if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        let mut digits = 0;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            if digits < 3 {
                ms = ms * 10 + u32::from(c - b'0');
            }
            digits += 1;
            i += 1;
        }
        for _ in digits..3 {
            ms *= 10;
        }
    }
    let (offset_min, i) = zone_at(s, i);
    if b.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    if h > 23 || mi > 59 || sec > 60 {
        return Some((None, i));
    }
    let tod =
        i64::from(h) * 3_600_000 + i64::from(mi) * 60_000 + i64::from(sec) * 1000 + i64::from(ms);
    let tod = tod - i64::from(offset_min) * 60_000;
    let stamp = match date {
        None => Some(Stamp::TimeOfDay(tod)),
        Some((y, mo, d)) => Date::new(i64::from(y), mo, d)
            .and_then(Date::midnight)
            .and_then(|m| m.checked_add(tod))
            .map(Stamp::At),
    };
    Some((stamp, i))
}

/// `YYYY-MM-DD` (or `YYYY/MM/DD`) at the start of `b`: year, month, day and the index after it.
fn date_at(b: &[u8]) -> Option<(u32, u32, u32, usize)> {
    let (y, i) = number(b, 0, 4, 4)?;
    let dash = *b.get(i)?;
    if dash != b'-' && dash != b'/' {
        return None;
    }
    let (mo, i) = number(b, i + 1, 2, 2)?;
    let (d, i) = sep(b, i, dash).and_then(|i| number(b, i, 2, 2))?;
    Some((y, mo, d, i))
}

/// A zone at `i`: its offset east of UTC in minutes (0 when absent) and the index after it.
fn zone_at(s: &str, i: usize) -> (i32, usize) {
    let b = s.as_bytes();
    match b.get(i) {
        Some(b'Z' | b'z') => (0, i + 1),
        Some(&sign @ (b'+' | b'-')) => {
            let Some((hh, j)) = number(b, i + 1, 2, 2) else {
                return (0, i);
            };
            let (mm, k) = match sep(b, j, b':').and_then(|j| number(b, j, 2, 2)) {
                Some(found) => found,
                None => number(b, j, 2, 2).unwrap_or((0, j)),
            };
            if hh > 14 || mm > 59 {
                return (0, i);
            }
            // hh <= 14 and mm <= 59: fits an i32.
            let minutes = i32::try_from(hh * 60 + mm).unwrap_or(0);
            (if sign == b'-' { -minutes } else { minutes }, k)
        }
        _ => {
            for name in [" UTC", " GMT", "UTC", "GMT"] {
                if s.get(i..).is_some_and(|r| r.starts_with(name))
                    && !b
                        .get(i + name.len())
                        .is_some_and(|c| c.is_ascii_alphanumeric())
                {
                    return (0, i + name.len());
                }
            }
            (0, i)
        }
    }
}

/// A decimal number of `min..=max` digits at `i`, and the index after it.
fn number(b: &[u8], i: usize, min: usize, max: usize) -> Option<(u32, usize)> {
    let mut v: u32 = 0;
    let mut n = 0;
    while n < max {
        match b.get(i + n) {
            Some(c) if c.is_ascii_digit() => {
                v = v * 10 + u32::from(c - b'0');
                n += 1;
            }
            _ => break,
        }
    }
    if n < min || b.get(i + n).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    Some((v, i + n))
}

fn sep(b: &[u8], i: usize, c: u8) -> Option<usize> {
    (b.get(i) == Some(&c)).then_some(i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2025-03-14 05:05:00 UTC: the recording of incident 1 starts a few minutes before the scale-out.
    fn start() -> Timestamp {
        Timestamp::from_civil(2025, 3, 14, 5, 5, 0, 0).unwrap()
    }

    fn at(h: u32, mi: u32, s: u32) -> Timestamp {
        Timestamp::from_civil(2025, 3, 14, h, mi, s, 0).unwrap()
    }

    fn opts(format: Format) -> Options {
        Options {
            format,
            date: None,
            recording_start: Some(start()),
            source: None,
        }
    }

    fn kinds(ev: &Evidence) -> Vec<(Timestamp, Option<&str>)> {
        ev.annotations
            .iter()
            .map(|a| (a.t, a.fields.get("kind").map(String::as_str)))
            .collect()
    }

    const INCIDENT_CLOUD: &str = "\
05:11:29  Scaling out from 1 to 2 node groups
05:15:39  node group 0002 added
05:17:18  Migrating slots from node groups 0001 to 0002 to rebalance slots
05:21:24  Completed migrating 8192 of 8192 slots
";

    #[test]
    fn incident_1_cloud_timeline_time_only() {
        let ev = parse(INCIDENT_CLOUD, &opts(Format::Auto)).unwrap();
        assert_eq!(ev.format, Format::Cloud);
        assert_eq!(
            kinds(&ev),
            vec![
                (at(5, 11, 29), Some("scaling_start")),
                (at(5, 15, 39), Some("node_group_added")),
                (at(5, 17, 18), Some("migration_start")),
                (at(5, 21, 24), Some("migration_done")),
            ]
        );
        let a = &ev.annotations[2];
        assert_eq!(a.source, CLOUD_SOURCE);
        assert_eq!(
            a.text,
            "Migrating slots from node groups 0001 to 0002 to rebalance slots"
        );
        assert_eq!(a.end, None);
        assert_eq!((ev.lines, ev.used, ev.skipped), (4, 4, 0));
    }

    #[test]
    fn cloud_lines_in_every_accepted_form() {
        let want = at(5, 17, 18);
        let msg = "Migrating slots from node groups 0001 to 0002 to rebalance slots";
        for line in [
            format!("2025-03-14 05:17:18\t{msg}"),
            format!("2025-03-14T05:17:18Z {msg}"),
            format!("2025-03-14T05:17:18+00:00   {msg}"),
            format!("2025-03-14T07:17:18.000+02:00 {msg}"),
            format!("2025/03/14 05:17:18 UTC  {msg}"),
            format!("\"2025-03-14 05:17:18\",\"{msg}\""),
            format!("2025-03-14 05:17:18,{msg}"),
            format!("\"05:17:18  {msg}\""),
        ] {
            let ev = parse(&line, &opts(Format::Cloud)).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(ev.annotations.len(), 1, "{line}");
            assert_eq!(ev.annotations[0].t, want, "{line}");
            assert_eq!(ev.annotations[0].text, msg, "{line}");
        }
    }

    #[test]
    fn cloud_columns_and_headings() {
        let text = "\
\"Date\",\"Message\",\"Source\"
\"2025-03-14 05:15:39\",\"Added node group 0002, with 1 replica\",\"my-rg\"
EVENTS\t2025-03-14T05:21:24.123Z\tCompleted migrating 8192 of 8192 slots\tmy-rg\treplication-group
";
        let ev = parse(text, &opts(Format::Auto)).unwrap();
        assert_eq!(ev.format, Format::Cloud);
        assert_eq!((ev.skipped, ev.first_skipped), (1, Some(1)));
        assert_eq!(
            ev.annotations[0].text,
            "Added node group 0002, with 1 replica | my-rg"
        );
        assert_eq!(ev.annotations[0].fields["kind"], "node_group_added");
        assert_eq!(
            ev.annotations[1].text,
            "Completed migrating 8192 of 8192 slots | my-rg | replication-group"
        );
        assert_eq!(
            ev.annotations[1].t.as_millis(),
            at(5, 21, 24).as_millis() + 123
        );
    }

    #[test]
    fn aws_describe_events_json() {
        let text = r#"{
    "Events": [
        {
            "SourceIdentifier": "my-rg",
            "SourceType": "replication-group",
            "Message": "Completed migrating 8192 of 8192 slots",
            "Date": "2025-03-14T05:21:24.210000+00:00"
        },
        {
            "SourceIdentifier": "my-rg",
            "SourceType": "replication-group",
            "Message": "Migrating slots from node groups 0001 to 0002 to rebalance slots",
            "Date": "2025-03-14T05:17:18.000000+00:00"
        }
    ]
}"#;
        assert_eq!(detect(text), Format::Cloud);
        let ev = parse(text, &opts(Format::Auto)).unwrap();
        assert_eq!(
            kinds(&ev),
            vec![
                (at(5, 17, 18), Some("migration_start")),
                (
                    Timestamp(at(5, 21, 24).as_millis() + 210),
                    Some("migration_done")
                ),
            ],
            "sorted by time"
        );
        assert!(ev.annotations[0].text.ends_with(" | my-rg"));
    }

    #[test]
    fn keyword_table() {
        for (msg, kind) in [
            ("Scaling out from 1 to 2 node groups", Some("scaling_start")),
            (
                "Modifying number of node groups to 2",
                Some("scaling_start"),
            ),
            ("Added node group 0002", Some("node_group_added")),
            ("node group 0002 added", Some("node_group_added")),
            (
                "Added cache node 0002-002 in availability zone eu-west-1b",
                Some("node_added"),
            ),
            (
                "Migrating slots from node groups 0001 to 0002",
                Some("migration_start"),
            ),
            (
                "Completed migrating 8192 of 8192 slots",
                Some("migration_done"),
            ),
            ("Slots moved to node group 0002", Some("migration_done")),
            (
                "Scaling completed for replication group my-rg",
                Some("scaling_done"),
            ),
            (
                "Failover to replica node 0001-002 completed",
                Some("failover"),
            ),
            ("Snapshot succeeded for snapshot group my-rg", None),
        ] {
            assert_eq!(cloud_kind(msg), kind, "{msg}");
        }
    }

    #[test]
    fn times_of_day_are_dated_near_the_start_and_follow_midnight() {
        // Recording from 23:50; the log runs past midnight.
        let late = Timestamp::from_civil(2025, 3, 13, 23, 50, 0, 0).unwrap();
        let o = Options {
            recording_start: Some(late),
            ..opts(Format::Cloud)
        };
        let ev = parse("23:55:00 Scaling out\n00:05:00 node group 0002 added\n", &o).unwrap();
        assert_eq!(
            ev.annotations[0].t,
            Timestamp::from_civil(2025, 3, 13, 23, 55, 0, 0).unwrap()
        );
        assert_eq!(
            ev.annotations[1].t,
            Timestamp::from_civil(2025, 3, 14, 0, 5, 0, 0).unwrap()
        );
        // A first time more than 12 h earlier than the start's time of day is on the next day.
        let ev = parse("05:17:18 Migrating slots\n", &o).unwrap();
        assert_eq!(ev.annotations[0].t, at(5, 17, 18));
        // An explicit date is taken as given.
        let o = Options {
            date: Some("2025-03-20".parse().unwrap()),
            ..o
        };
        let ev = parse("05:17:18 Migrating slots\n", &o).unwrap();
        assert_eq!(
            ev.annotations[0].t,
            Timestamp::from_civil(2025, 3, 20, 5, 17, 18, 0).unwrap()
        );
    }

    #[test]
    fn errors_name_their_line() {
        let none = Options {
            recording_start: None,
            ..opts(Format::Cloud)
        };
        assert_eq!(
            parse("# events\n05:17:18 Migrating slots\n", &none).unwrap_err(),
            EvidenceError::DateNeeded {
                line: 2,
                time: "05:17:18".into()
            }
        );
        // A full date needs no date option.
        assert!(parse("2025-03-14 05:17:18 Migrating slots\n", &none).is_ok());
        let e = parse(
            "2025-03-14 05:17:18 ok\n2025-02-30 05:17:18 Migrating\n",
            &none,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: `2025-02-30 05:17:18` is not a valid date and time"
        );
        let e = parse("25:17:18 Migrating\n", &opts(Format::Cloud)).unwrap_err();
        assert!(
            matches!(e, EvidenceError::BadTimestamp { line: 1, .. }),
            "{e}"
        );
        let e = parse("Migrating slots\nno time here\n\n", &opts(Format::Cloud)).unwrap_err();
        assert_eq!(e, EvidenceError::NoTimestamps { lines: 2 });
        assert!(e.to_string().contains("no timestamps found"));
        assert!(matches!(
            "2025-02-29".parse::<Date>(),
            Err(EvidenceError::BadDate(_))
        ));
        assert!("2024-02-29".parse::<Date>().is_ok());
        assert!("14.03.2025".parse::<Date>().is_err());
        assert_eq!(
            "2025-3-4".parse::<Date>().unwrap().to_string(),
            "2025-03-04"
        );
    }

    const INCIDENT_APP: &str = "\
2025-03-14 05:17:29,870 INFO app.web GET /checkout 200
2025-03-14 05:17:30,123 ERROR app.cache RedisClusterException: Redis Cluster cannot be connected. Please provide at least one reachable node: None
2025-03-14 05:17:30,456 ERROR app.cache RedisClusterException: Redis Cluster cannot be connected. Please provide at least one reachable node: None
2025-03-14 05:17:30,789 ERROR app.cache request failed
Traceback (most recent call last):
  File \"/app/cache.py\", line 42, in get
    return self.client.get(key)
redis.exceptions.ConnectionError: Error 111 connecting to 10.0.1.17:6379. Connection refused.
2025-03-14 05:17:30,901 - app.cache - ERROR - Timeout reading from 10.0.1.18:6379 TimeoutError
2025-03-14 05:17:31,010 ERROR app.cache RedisClusterException: Redis Cluster cannot be connected. Please provide at least one reachable node: None
";

    #[test]
    fn incident_1_app_errors_are_counted_per_second_and_class() {
        let ev = parse(INCIDENT_APP, &opts(Format::Auto)).unwrap();
        assert_eq!(ev.format, Format::AppLog);
        let rows: Vec<(Timestamp, &str, &str)> = ev
            .annotations
            .iter()
            .map(|a| (a.t, a.fields["class"].as_str(), a.fields["count"].as_str()))
            .collect();
        assert_eq!(
            rows,
            vec![
                (at(5, 17, 30), "ConnectionError", "1"),
                (at(5, 17, 30), "RedisClusterException", "2"),
                (at(5, 17, 30), "TimeoutError", "1"),
                (at(5, 17, 31), "RedisClusterException", "1"),
            ]
        );
        let a = &ev.annotations[1];
        assert_eq!(a.source, APP_SOURCE);
        assert_eq!(a.end, Some(at(5, 17, 31)));
        assert_eq!(a.fields["kind"], APP_ERROR_KIND);
        assert_eq!(
            a.text,
            "2 × RedisClusterException: Redis Cluster cannot be connected. Please provide at least one reachable node: None"
        );
        // The traceback's last line names the class of an error line that named none.
        assert_eq!(
            ev.annotations[0].fields["example"],
            "Error 111 connecting to 10.0.1.17:6379. Connection refused."
        );
        assert_eq!(
            ev.annotations[2].fields["example"],
            "Timeout reading from 10.0.1.18:6379 TimeoutError"
        );
        assert_eq!((ev.used, ev.not_errors, ev.continuation), (5, 1, 4));
    }

    #[test]
    fn messages_differing_only_in_numbers_count_together() {
        let text = "\
2025-03-14T05:17:40.001Z ERROR MovedError: 3999 10.0.1.18:6379
2025-03-14T05:17:40.002Z ERROR MovedError: 12182 10.0.1.17:6379
2025-03-14T05:17:40.003Z ERROR MovedError: slot moved elsewhere
";
        let ev = parse(text, &opts(Format::AppLog)).unwrap();
        assert_eq!(ev.annotations.len(), 2);
        let counts: Vec<&str> = ev
            .annotations
            .iter()
            .map(|a| a.fields["count"].as_str())
            .collect();
        assert!(counts.contains(&"2") && counts.contains(&"1"), "{counts:?}");
        let two = ev
            .annotations
            .iter()
            .find(|a| a.fields["count"] == "2")
            .unwrap();
        assert_eq!(two.fields["example"], "3999 10.0.1.18:6379");
    }

    #[test]
    fn json_lines_with_common_key_names() {
        let text = r#"{"timestamp": "2025-03-14T05:17:30.123Z", "level": "error", "message": "Redis Cluster cannot be connected. Please provide at least one reachable node: None", "exc_type": "RedisClusterException"}
{"@timestamp": "2025-03-14T05:17:30.500+00:00", "log.level": "ERROR", "msg": "cache read failed", "error": {"type": "redis.exceptions.ConnectionError", "message": "Connection refused"}}
{"ts": 1741929450.9, "severity": "ERROR", "message": "AttributeError: 'NoneType' object has no attribute 'get_node'"}
{"time": 1741929451200, "level": 50, "msg": "timed out", "err": {"type": "TimeoutError"}}
{"time": "2025-03-14T05:17:31.300Z", "level": "info", "msg": "retrying"}
{"time": "2025-03-14T05:17:31.400Z", "level": "error", "msg": "no class here"}
{"msg": "no time"}
{"time": "2025-03-14T05:17:3
"#;
        assert_eq!(detect(text), Format::AppLog);
        let ev = parse(text, &opts(Format::Auto)).unwrap();
        let rows: Vec<(Timestamp, &str, &str)> = ev
            .annotations
            .iter()
            .map(|a| {
                (
                    a.t,
                    a.fields["class"].as_str(),
                    a.fields["example"].as_str(),
                )
            })
            .collect();
        // 1741929450 = 2025-03-14T05:17:30Z.
        assert_eq!(
            rows,
            vec![
                (at(5, 17, 30), "AttributeError", "'NoneType' object has no attribute 'get_node'"),
                (at(5, 17, 30), "ConnectionError", "cache read failed"),
                (
                    at(5, 17, 30),
                    "RedisClusterException",
                    "Redis Cluster cannot be connected. Please provide at least one reachable node: None"
                ),
                (at(5, 17, 31), "ERROR", "no class here"),
                (at(5, 17, 31), "TimeoutError", "timed out"),
            ]
        );
        assert_eq!(
            (ev.not_errors, ev.skipped, ev.first_skipped),
            (1, 2, Some(7))
        );
    }

    #[test]
    fn detection() {
        assert_eq!(detect(INCIDENT_CLOUD), Format::Cloud);
        assert_eq!(detect(INCIDENT_APP), Format::AppLog);
        assert_eq!(detect("{\"time\": 1, \"msg\": \"x\"}\n"), Format::AppLog);
        assert_eq!(
            detect("2025-03-14 05:17:30,123 ERROR app request failed\n"),
            Format::AppLog
        );
        assert_eq!(
            detect("[2025-03-14 05:17:30,123] INFO in app: started\n"),
            Format::AppLog
        );
        assert_eq!(
            detect("05:21:24  Failover to replica node 0001-002 completed\n"),
            Format::Cloud
        );
        assert_eq!(detect(""), Format::Cloud);
    }

    #[test]
    fn class_tokens() {
        let c = |s: &str| error_class(s).map(|(c, m)| (c, m.unwrap_or_default()));
        assert_eq!(
            c("rediscluster.exceptions.RedisClusterException: cannot connect"),
            Some(("RedisClusterException".into(), "cannot connect".into()))
        );
        assert_eq!(
            c("caught ConnectionError while reading"),
            Some(("ConnectionError".into(), String::new()))
        );
        assert_eq!(c("ERROR Error: Exception: nothing"), None);
        assert_eq!(
            c("a ValueError. then KeyError: k"),
            Some(("KeyError".into(), "k".into()))
        );
        assert_eq!(
            c("Traceback (most recent call last):\n  File \"x\"\nredis.exceptions.MovedError: 3999 10.0.1.18:6379"),
            Some(("MovedError".into(), "3999 10.0.1.18:6379".into()))
        );
    }

    #[test]
    fn custom_source_and_long_messages() {
        let long = "x".repeat(500);
        let text = format!("2025-03-14 05:17:30 ERROR ConnectionError: {long}\n");
        let o = Options {
            source: Some("checkout-api".into()),
            ..opts(Format::Auto)
        };
        let ev = parse(&text, &o).unwrap();
        let a = &ev.annotations[0];
        assert_eq!(a.source, "checkout-api");
        assert!(
            a.text.ends_with('…') && a.text.chars().count() < 200,
            "{}",
            a.text
        );
        assert_eq!(a.fields["example"], long);
    }
}
