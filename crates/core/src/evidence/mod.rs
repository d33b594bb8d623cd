//! Outside evidence turned into [`Annotation`](crate::recording::Annotation)s: a cloud provider's event log, or an application's
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

mod app_log;
mod cloud;
mod date;
mod detection;
mod error;
#[cfg(test)]
mod fixture;
mod format;
mod options;
mod placement;
mod reading;
mod stamp;
#[cfg(test)]
mod stamp_oracle;

pub use app_log::error_class;
pub use cloud::{cloud_kind, CLOUD_KINDS};
pub use date::Date;
pub use detection::detect;
pub use error::EvidenceError;
pub use format::{Format, APP_ERROR_KIND, APP_SOURCE, CLOUD_SOURCE};
pub use options::Options;
pub use reading::Evidence;

use placement::Clock;

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
        Format::AppLog => app_log::parse(text, &mut clock, &source)?,
        Format::Cloud | Format::Auto => match cloud::describe_events(text) {
            Some(events) => cloud::parse_json(&events, &mut clock, &source)?,
            None => cloud::parse(text, &mut clock, &source)?,
        },
    };
    if !clock.any {
        return Err(EvidenceError::NoTimestamps { lines: ev.lines });
    }
    ev.annotations.sort_by_key(|a| a.t);
    Ok(ev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::fixture::opts;

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
}
