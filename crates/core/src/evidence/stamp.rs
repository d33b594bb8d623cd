//! Timestamps as written at the start of a line or in a JSON value, read into a [`Stamp`]: a full
//! date and time, or a time of day still to be placed (see [`super::placement`]).

use serde_json::Value;

use crate::time::rfc3339::{self, Shapes};
use crate::time::Timestamp;

/// A timestamp as read from a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stamp {
    /// A full date and time: milliseconds since the epoch (may be negative before conversion).
    At(i64),
    /// A time of day only, in milliseconds after midnight UTC (zone applied: may leave 0..24 h).
    TimeOfDay(i64),
}

pub(super) fn json_time(v: &Value) -> Option<Stamp> {
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

/// A timestamp at the start of `s`: `None` when there is none; `Some((None, len))` when its shape
/// is right but its values impossible; `len` is the length of the timestamp text.
///
/// Accepted: `HH:MM:SS`, `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DDTHH:MM:SS` (also with `/` in the date),
/// each with optional fractional seconds (`.123` or `,123`) and zone (`Z`, `+01:00`, `+01`,
/// ` UTC`, ` GMT`; not `+0100`, whose hours run into its minutes). The date, the time and the
/// offset are read by [`rfc3339`]'s pieces.
pub(super) fn stamp_prefix(s: &str) -> Option<(Option<Stamp>, usize)> {
    let b = s.as_bytes();
    let (date, i) = match rfc3339::date_at(b, 0, LENIENT) {
        Some((date, i)) => (Some(date), rfc3339::one_of(b, i, b"Tt _")?),
        None => (None, 0),
    };
    let (clock, i) = rfc3339::clock_at(b, i, LENIENT)?;
    let (offset_min, i) = zone_at(s, i);
    if b.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    if !clock.in_range() {
        return Some((None, i));
    }
    let tod = clock.millis_of_day() - i64::from(offset_min) * 60_000;
    let stamp = match date {
        None => Some(Stamp::TimeOfDay(tod)),
        Some(d) => midnight(i64::from(d.year), d.month, d.day)
            .and_then(|m| m.checked_add(tod))
            .map(Stamp::At),
    };
    Some((stamp, i))
}

/// The shapes read beyond RFC 3339's: `/` in dates, a one-digit hour, `,` before the fraction, an
/// offset without minutes.
const LENIENT: Shapes = Shapes {
    date_separators: b"-/",
    date_time_separators: b"Tt _",
    hour_digits: 1,
    fraction_marks: b".,",
    offset_minutes_optional: true,
};

/// The largest offset read, in whole hours (real zones go to +14:00).
const MAX_OFFSET_HOURS: i32 = 14;

/// A zone at `i`: its offset east of UTC in minutes (0 when absent) and the index after it. An
/// RFC 3339 zone (`Z`, `+01:00`, also `+01`) of at most [`MAX_OFFSET_HOURS`] hours, or ` UTC`,
/// ` GMT` (also without the space).
fn zone_at(s: &str, i: usize) -> (i32, usize) {
    let b = s.as_bytes();
    if matches!(b.get(i), Some(b'+' | b'-')) {
        return match rfc3339::offset_at(b, i, LENIENT) {
            Some((minutes, j)) if minutes.abs() / 60 <= MAX_OFFSET_HOURS => (minutes, j),
            _ => (0, i),
        };
    }
    if let Some(found) = rfc3339::offset_at(b, i, LENIENT) {
        return found;
    }
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

/// Milliseconds since the epoch at 00:00 UTC of a date; `None` if the date does not exist or lies
/// outside the range of timestamps.
pub(super) fn midnight(year: i64, month: u32, day: u32) -> Option<i64> {
    let t = Timestamp::from_civil(year, month, day, 0, 0, 0, 0)?;
    i64::try_from(t.as_millis()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIDNIGHT: i64 = 1_741_910_400_000; // 2025-03-14T00:00:00Z

    #[test]
    fn line_prefixes() {
        let tod = |h: i64, m: i64, s: i64| h * 3_600_000 + m * 60_000 + s * 1000;
        let at = |ms: i64| Some((Some(Stamp::At(MIDNIGHT + ms)), 0));
        let len = |r: Option<(Option<Stamp>, usize)>| r.map(|(s, _)| (s, 0));
        assert_eq!(
            stamp_prefix("05:17:18  Migrating"),
            Some((Some(Stamp::TimeOfDay(tod(5, 17, 18))), 8))
        );
        assert_eq!(
            len(stamp_prefix("2025-03-14 05:17:30,123 ERROR")),
            at(tod(5, 17, 30) + 123)
        );
        assert_eq!(
            len(stamp_prefix("2025/03/14T07:17:18.5+02:00 x")),
            at(tod(5, 17, 18) + 500)
        );
        assert_eq!(
            stamp_prefix("2025-03-14 05:17:18 UTC  x"),
            Some((Some(Stamp::At(MIDNIGHT + tod(5, 17, 18))), 23))
        );
        // The right shape with impossible values: a bad timestamp, not a missing one.
        assert_eq!(
            stamp_prefix("2025-02-30 05:17:18 x").map(|(s, _)| s),
            Some(None)
        );
        assert_eq!(stamp_prefix("25:17:18 x").map(|(s, _)| s), Some(None));
        // Not a timestamp at all.
        assert_eq!(stamp_prefix("Migrating slots"), None);
        assert_eq!(stamp_prefix("05:17:18x"), None);
    }

    #[test]
    fn json_values() {
        let secs = Value::from(1_741_929_450.9);
        assert_eq!(json_time(&secs), Some(Stamp::At(1_741_929_450_900)));
        let ms = Value::from(1_741_929_451_200_u64);
        assert_eq!(json_time(&ms), Some(Stamp::At(1_741_929_451_200)));
        let text = Value::from("2025-03-14T00:00:00Z");
        assert_eq!(json_time(&text), Some(Stamp::At(MIDNIGHT)));
        assert_eq!(
            json_time(&Value::from("2025-03-14T00:00:00Z trailing")),
            None
        );
        assert_eq!(json_time(&Value::from(-1)), None);
    }

    #[test]
    fn midnight_of_real_dates_only() {
        assert_eq!(midnight(2025, 3, 14), Some(MIDNIGHT));
        assert_eq!(midnight(2025, 2, 29), None);
        assert_eq!(midnight(1969, 12, 31), None);
    }
}
