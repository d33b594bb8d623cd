//! Application error logs ([`Format::AppLog`]): timestamped text lines or JSON objects; error
//! lines (an error class or an error level) are counted per second per class and message.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::error::EvidenceError;
use super::format::{Format, APP_ERROR_KIND};
use super::placement::Clock;
use super::reading::Evidence;
use super::stamp::{json_time, stamp_prefix};
use crate::recording::Annotation;
use crate::time::Timestamp;

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

/// Level words that do not make a line an error.
const OTHER_LEVELS: &[&str] = &["trace", "debug", "info", "notice", "warn", "warning"];

/// Whether `word` (lower case) is a level word a text line may start with.
fn is_level(word: &str) -> bool {
    OTHER_LEVELS.contains(&word) || ERROR_LEVELS.contains(&word)
}

/// Keys of a JSON line's time (the first present wins).
const TIME_KEYS: &[&str] = &[
    "@timestamp",
    "timestamp",
    "time",
    "ts",
    "asctime",
    "datetime",
];
/// Keys of a JSON line's message.
const MESSAGE_KEYS: &[&str] = &["message", "msg", "event", "error.message", "err.message"];
/// Keys of a JSON line's error class (a class name, or a text naming one).
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
/// Keys of a JSON line's level.
const LEVEL_KEYS: &[&str] = &["level", "severity", "levelname", "log.level", "lvl"];
/// Longest message kept in an annotation's `text` (the full one is in `fields.example`).
const TEXT_CHARS: usize = 160;

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

/// One error line (with its traceback) of an application log.
struct Entry {
    t: Timestamp,
    class: Option<String>,
    message: String,
    /// The class came from the timestamped line itself (a traceback does not override it).
    class_from_head: bool,
    error_level: bool,
}

/// The errors of one second, class and message.
#[derive(Default)]
struct Group {
    count: u64,
    example: String,
}

/// Reads an application log: one annotation per second, error class and message.
pub(super) fn parse(
    text: &str,
    clock: &mut Clock,
    source: &str,
) -> Result<Evidence, EvidenceError> {
    let mut ev = Evidence::new(Format::AppLog);
    let mut groups: BTreeMap<(Timestamp, String, String), Group> = BTreeMap::new();
    let mut pending: Option<Entry> = None;
    for (n, line) in ev.read_lines(text) {
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
        if !word.is_empty() && one_case && is_level(&word.to_ascii_lowercase()) {
            let after = rest[offset..].trim_start_matches([' ', '\t', '|', '-', ':', ']', ')']);
            return Some((word, after));
        }
    }
    None
}

/// Whether a text line looks like an application log line: a timestamp, then an upper-case level.
pub(super) fn is_app_text_line(line: &str) -> bool {
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

/// `line` as a JSON object, if it is one.
pub(super) fn json_object(line: &str) -> Option<Map<String, Value>> {
    if !line.starts_with('{') {
        return None;
    }
    match serde_json::from_str(line) {
        Ok(Value::Object(obj)) => Some(obj),
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
pub(super) fn find_class(text: &str) -> Option<(String, Option<String>)> {
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

/// `message` cut to [`TEXT_CHARS`] characters, with `…` when cut.
fn shorten(message: &str) -> String {
    match message.char_indices().nth(TEXT_CHARS) {
        Some((cut, _)) => format!("{}…", message[..cut].trim_end()),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::fixture::{at, opts, INCIDENT_APP};
    use crate::evidence::{detect, parse, Options, APP_SOURCE};

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
