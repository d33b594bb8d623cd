//! Cloud provider event logs ([`Format::Cloud`]): one event per line, a timestamp then the
//! message (columns joined with ` | `), or the JSON document of `aws elasticache describe-events`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::EvidenceError;
use super::format::Format;
use super::placement::Clock;
use super::reading::Evidence;
use super::stamp::{json_time, stamp_prefix};
use crate::recording::Annotation;
use crate::time::Timestamp;

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

/// Reads a cloud event log, one event per line.
pub(super) fn parse(
    text: &str,
    clock: &mut Clock,
    source: &str,
) -> Result<Evidence, EvidenceError> {
    let mut ev = Evidence::new(Format::Cloud);
    for (n, line) in ev.read_lines(text) {
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

/// The annotation of one event: `fields.kind` from [`cloud_kind`].
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

/// A tab-separated column without its surrounding spaces and quotes (`""` inside is `"`).
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
pub(super) fn describe_events(text: &str) -> Option<Vec<Value>> {
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

/// Reads the `Events` of `aws elasticache describe-events`' JSON document.
pub(super) fn parse_json(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::fixture::{at, opts, INCIDENT_CLOUD};
    use crate::evidence::{detect, parse, CLOUD_SOURCE};

    fn kinds(ev: &Evidence) -> Vec<(Timestamp, Option<&str>)> {
        ev.annotations
            .iter()
            .map(|a| (a.t, a.fields.get("kind").map(String::as_str)))
            .collect()
    }

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
}
