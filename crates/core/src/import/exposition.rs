//! Saved scrapes: the Prometheus text exposition format (what redis_exporter serves on
//! `/metrics`) and OpenMetrics (the same lines, ending in `# EOF`).
//!
//! ```text
//! # TYPE redis_commands_total counter
//! redis_commands_total{cmd="get"} 1234
//! redis_errors_total{err="MOVED"} 17 1796160396000
//! # EOF
//! ```
//!
//! A scrape is one instant. A sample's own timestamp wins when it has one (milliseconds in the
//! Prometheus text format, seconds in OpenMetrics); otherwise the sample is at the instant the
//! caller gives (the time the scrape was saved). An OpenMetrics text (it has `# EOF`) without its
//! `# EOF` last line was cut short and is refused.

use std::collections::BTreeMap;

use crate::time::Timestamp;

use super::{parse_value, ImportError, Series};

/// The samples of one scrape, each a one-point [`Series`]; samples without their own timestamp
/// are at `at`. `what` names the text in errors.
///
/// # Errors
///
/// A line that is not a sample or a comment, or an OpenMetrics text cut before its `# EOF`.
pub fn parse_scrape(what: &str, text: &str, at: Timestamp) -> Result<Vec<Series>, ImportError> {
    let err = |line: usize, detail: String| ImportError::Exposition {
        what: what.to_owned(),
        line,
        detail,
    };
    let open_metrics = text.lines().any(|l| l.trim_end() == "# EOF");
    if open_metrics && text.lines().rev().find(|l| !l.trim().is_empty()) != Some("# EOF") {
        return Err(err(
            text.lines().count(),
            "lines after `# EOF`: not one OpenMetrics scrape".to_owned(),
        ));
    }
    let mut out = Vec::new();
    for (k, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, labels, rest) = split_sample(line).map_err(|d| err(k + 1, d))?;
        let mut fields = rest.split_whitespace();
        let value = fields
            .next()
            .and_then(parse_value)
            .ok_or_else(|| err(k + 1, format!("no value in `{line}`")))?;
        let t = match fields.next() {
            None => at,
            Some(ts) if open_metrics => ts
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| Timestamp(super::to_count(s * 1000.0)))
                .ok_or_else(|| err(k + 1, format!("bad timestamp `{ts}`")))?,
            Some(ts) => ts
                .parse::<u64>()
                .map(Timestamp)
                .map_err(|_| err(k + 1, format!("bad timestamp `{ts}`")))?,
        };
        out.push(Series {
            name,
            labels,
            points: vec![(t, value)],
        });
    }
    if !open_metrics && !text.is_empty() && !text.ends_with('\n') {
        return Err(err(
            text.lines().count(),
            "the last line has no newline: the scrape was cut short".to_owned(),
        ));
    }
    Ok(out)
}

type Sample = (String, BTreeMap<String, String>, String);

/// `name{a="x",b="y"} rest` → name, labels, rest.
fn split_sample(line: &str) -> Result<Sample, String> {
    let end = line
        .find(|c: char| c == '{' || c.is_whitespace())
        .ok_or_else(|| format!("no value in `{line}`"))?;
    let name = line[..end].to_owned();
    if name.is_empty() {
        return Err(format!("no metric name in `{line}`"));
    }
    let mut labels = BTreeMap::new();
    let mut rest = &line[end..];
    if let Some(body) = rest.strip_prefix('{') {
        let mut chars = body.char_indices().peekable();
        let mut key = String::new();
        loop {
            let Some((i, c)) = chars.next() else {
                return Err(format!("unclosed `{{` in `{line}`"));
            };
            match c {
                '}' => {
                    rest = &body[i + 1..];
                    break;
                }
                ',' | ' ' => {}
                '=' => {
                    if chars.next().map(|(_, c)| c) != Some('"') {
                        return Err(format!("label {key} has no quoted value in `{line}`"));
                    }
                    let mut value = String::new();
                    loop {
                        match chars.next() {
                            Some((_, '"')) => break,
                            Some((_, '\\')) => match chars.next() {
                                Some((_, 'n')) => value.push('\n'),
                                Some((_, c)) => value.push(c),
                                None => return Err(format!("unclosed label value in `{line}`")),
                            },
                            Some((_, c)) => value.push(c),
                            None => return Err(format!("unclosed label value in `{line}`")),
                        }
                    }
                    labels.insert(std::mem::take(&mut key), value);
                }
                c => key.push(c),
            }
        }
    }
    Ok((name, labels, rest.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_labels_and_timestamps() {
        let text = "# TYPE redis_commands_total counter\n\
                    redis_commands_total{cmd=\"cluster|slots\",x=\"a\\\"b\"} 12\n\
                    redis_memory_used_bytes 1.8978e+06\n\
                    redis_errors_total{err=\"MOVED\"} 4 1796160396000\n";
        let s = parse_scrape("t", text, Timestamp(5)).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].labels["cmd"], "cluster|slots");
        assert_eq!(s[0].labels["x"], "a\"b");
        assert_eq!(s[0].points, vec![(Timestamp(5), 12.0)]);
        assert_eq!(s[1].points[0].1, 1_897_800.0);
        assert_eq!(s[2].points[0].0, Timestamp(1_796_160_396_000));
    }

    #[test]
    fn openmetrics_timestamps_are_seconds_and_eof_is_required() {
        let text = "redis_connected_clients 3 1796160396.5\n# EOF\n";
        let s = parse_scrape("t", text, Timestamp(5)).unwrap();
        assert_eq!(s[0].points[0].0, Timestamp(1_796_160_396_500));
        assert!(parse_scrape("t", "# EOF\nredis_connected_clients 3\n", Timestamp(5)).is_err());
        // A text-format scrape cut mid-line.
        assert!(parse_scrape("t", "redis_connected_clients 3\nredis_comm", Timestamp(5)).is_err());
        assert!(parse_scrape("t", "redis_x{cmd=\"get\" 3\n", Timestamp(5)).is_err());
    }
}
