//! RFC 3339 timestamps (`2025-03-14T05:17:14.250+01:00`) read into a [`Timestamp`]: the one
//! parser of the project ([`parse`], [`parse_or_utc`]) and the pieces it is made of, which the
//! lenient readers of log lines reuse for their wider shapes.
//!
//! Accepted by [`parse`]: `YYYY-MM-DD`, then `T`, `t` or a space, then `HH:MM:SS`, optional
//! fractional seconds (`.` and one or more digits; the first three are the milliseconds, the
//! rest are dropped), then the zone: `Z`, `z` or `±HH:MM` (hours up to 23, minutes up to 59).
//! Nothing may follow. [`parse_or_utc`] also takes a timestamp without a zone, as UTC.
//!
//! The values are checked by [`Timestamp::from_civil`]: the date must exist, second 60 (a leap
//! second) reads as the first second of the next minute, and the instant must not be before the
//! epoch (neither in local time nor in UTC).

use super::Timestamp;

/// Whether a timestamp must name its zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// `Z` or `±HH:MM` must follow the time (RFC 3339).
    Required,
    /// The zone may be left out: the time is then UTC (ISO 8601 as CloudWatch writes it).
    OptionalUtc,
}

/// A date as written, its fields not yet checked: `2025-03-14` is `(2025, 3, 14)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Date {
    /// Four digits.
    pub year: u32,
    /// Two digits.
    pub month: u32,
    /// Two digits.
    pub day: u32,
}

/// A time of day as written, its fields not yet checked: `05:17:14.25` is `(5, 17, 14, 250)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// The hour.
    pub hour: u32,
    /// The minute.
    pub minute: u32,
    /// The second (60 for a leap second).
    pub second: u32,
    /// The first three digits of the fraction, padded with zeros (`.5` is 500).
    pub millis: u32,
}

impl Clock {
    /// Whether the hour, minute and second are in range (second 60 allowed).
    pub fn in_range(self) -> bool {
        self.hour <= 23 && self.minute <= 59 && self.second <= 60
    }

    /// Milliseconds after midnight (a leap second counts as the next minute's first).
    pub fn millis_of_day(self) -> i64 {
        i64::from(self.hour) * 3_600_000
            + i64::from(self.minute) * 60_000
            + i64::from(self.second) * 1000
            + i64::from(self.millis)
    }
}

/// The shapes a reader accepts beyond RFC 3339's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shapes {
    /// The characters that may separate the date's fields (RFC 3339: `-`); both separators must
    /// be the same.
    pub date_separators: &'static [u8],
    /// The characters that may separate the date from the time (RFC 3339: `T`, `t`, a space).
    pub date_time_separators: &'static [u8],
    /// The fewest digits of the hour (RFC 3339: 2).
    pub hour_digits: usize,
    /// The characters that may start the fraction (RFC 3339: `.`).
    pub fraction_marks: &'static [u8],
    /// Whether a numeric offset may leave out its minutes (`+01`).
    pub offset_minutes_optional: bool,
}

impl Shapes {
    /// RFC 3339's own shapes.
    pub const RFC3339: Shapes = Shapes {
        date_separators: b"-",
        date_time_separators: b"Tt ",
        hour_digits: 2,
        fraction_marks: b".",
        offset_minutes_optional: false,
    };
}

/// Parses an RFC 3339 timestamp (see the module's notes); `None` for anything else, a date that
/// does not exist, or an instant before the epoch.
pub fn parse(s: &str) -> Option<Timestamp> {
    parse_with(s, Zone::Required)
}

/// [`parse`], with the zone optional: a timestamp without one is UTC.
pub fn parse_or_utc(s: &str) -> Option<Timestamp> {
    parse_with(s, Zone::OptionalUtc)
}

/// [`parse`] with the zone [required or not](Zone).
pub fn parse_with(s: &str, zone: Zone) -> Option<Timestamp> {
    let b = s.as_bytes();
    let shapes = Shapes::RFC3339;
    let (date, i) = date_at(b, 0, shapes)?;
    let i = one_of(b, i, shapes.date_time_separators)?;
    let (clock, i) = clock_at(b, i, shapes)?;
    let (offset_min, i) = match offset_at(b, i, shapes) {
        Some(found) => found,
        None if zone == Zone::OptionalUtc => (0, i),
        None => return None,
    };
    if i != b.len() {
        return None;
    }
    let local = Timestamp::from_civil(
        i64::from(date.year),
        date.month,
        date.day,
        clock.hour,
        clock.minute,
        clock.second,
        clock.millis,
    )?;
    let utc = i64::try_from(local.0).ok()? - i64::from(offset_min) * 60_000;
    u64::try_from(utc).ok().map(Timestamp)
}

/// The date at `i` (`YYYY-MM-DD`, with any one of `shapes`' date separators twice) and the index
/// after it; the fields are not checked.
pub fn date_at(b: &[u8], i: usize, shapes: Shapes) -> Option<(Date, usize)> {
    let (year, i) = number(b, i, 4, 4)?;
    let dash = *b.get(i)?;
    if !shapes.date_separators.contains(&dash) {
        return None;
    }
    let (month, i) = number(b, i + 1, 2, 2)?;
    let (day, i) = sep(b, i, dash).and_then(|i| number(b, i, 2, 2))?;
    Some((Date { year, month, day }, i))
}

/// The time of day at `i` (`HH:MM:SS`, the hour of `shapes.hour_digits` or 2 digits, then
/// optional fractional seconds) and the index after it; the fields are not checked.
pub fn clock_at(b: &[u8], i: usize, shapes: Shapes) -> Option<(Clock, usize)> {
    let (hour, i) = number(b, i, shapes.hour_digits, 2)?;
    let (minute, i) = sep(b, i, b':').and_then(|i| number(b, i, 2, 2))?;
    let (second, i) = sep(b, i, b':').and_then(|i| number(b, i, 2, 2))?;
    let (millis, i) = fraction_at(b, i, shapes);
    Some((
        Clock {
            hour,
            minute,
            second,
            millis,
        },
        i,
    ))
}

/// Fractional seconds at `i`: one of `shapes`' fraction marks and one or more digits, read as
/// milliseconds (the first three digits, padded with zeros), and the index after them; `(0, i)`
/// when there are none (a mark without a digit is left where it is).
pub fn fraction_at(b: &[u8], i: usize, shapes: Shapes) -> (u32, usize) {
    let marked = b.get(i).is_some_and(|c| shapes.fraction_marks.contains(c));
    if !marked || !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        return (0, i);
    }
    let mut i = i + 1;
    let mut ms = 0u32;
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
    (ms, i)
}

/// A zone at `i`: `Z`, `z` or `±HH:MM` (with `shapes.offset_minutes_optional`, also `±HH`
/// alone), hours up to 23 and minutes up to 59; its offset east of UTC in minutes and the index
/// after it, or `None` when there is no such zone there.
pub fn offset_at(b: &[u8], i: usize, shapes: Shapes) -> Option<(i32, usize)> {
    match b.get(i) {
        Some(b'Z' | b'z') => Some((0, i + 1)),
        Some(&sign @ (b'+' | b'-')) => {
            let (hh, j) = number(b, i + 1, 2, 2)?;
            let (mm, k) = match sep(b, j, b':').and_then(|j| number(b, j, 2, 2)) {
                Some(found) => found,
                None if shapes.offset_minutes_optional => (0, j),
                None => return None,
            };
            if hh > 23 || mm > 59 {
                return None;
            }
            // hh <= 23 and mm <= 59: fits an i32.
            let minutes = i32::try_from(hh * 60 + mm).ok()?;
            Some((if sign == b'-' { -minutes } else { minutes }, k))
        }
        _ => None,
    }
}

/// A decimal number of `min..=max` digits at `i` not followed by another digit, and the index
/// after it.
pub fn number(b: &[u8], i: usize, min: usize, max: usize) -> Option<(u32, usize)> {
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

/// The index after `c` at `i`, if `c` is there.
pub fn sep(b: &[u8], i: usize, c: u8) -> Option<usize> {
    (b.get(i) == Some(&c)).then_some(i + 1)
}

/// The index after any one of `cs` at `i`, if one is there.
pub fn one_of(b: &[u8], i: usize, cs: &[u8]) -> Option<usize> {
    b.get(i).filter(|c| cs.contains(c)).map(|_| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 1_741_929_434_000; // 2025-03-14T05:17:14Z

    #[test]
    fn rfc3339_shapes() {
        let ok = |s: &str, t: u64| assert_eq!(parse(s), Some(Timestamp(t)), "{s}");
        ok("2025-03-14T05:17:14Z", T);
        ok("2025-03-14t05:17:14z", T);
        ok("2025-03-14 05:17:14Z", T);
        ok("2025-03-14T05:17:14.25Z", T + 250);
        ok("2025-03-14T05:17:14.2509Z", T + 250);
        ok("2025-03-14T06:17:14+01:00", T);
        ok("2025-03-14T04:47:14-00:30", T);
        ok("2025-03-14T23:59:60Z", 1_741_996_800_000);
        for bad in [
            "2025-03-14T05:17:14",
            "2025-03-14T05:17:14.Z",
            "2025-03-14T05:17:14+0100",
            "2025-03-14T05:17:14+01",
            "2025-03-14T05:17:14+24:00",
            "2025-03-14T05:17:14Z ",
            "2025-03-14_05:17:14Z",
            "2025/03/14T05:17:14Z",
            "2025-03-14T5:17:14Z",
            "2025-02-29T05:17:14Z",
            "2025-03-14T24:00:00Z",
            "1970-01-01T00:30:00+01:00",
            "",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(parse_or_utc("2025-03-14T05:17:14"), Some(Timestamp(T)));
        assert_eq!(
            parse_or_utc("2025-03-14T05:17:14.5"),
            Some(Timestamp(T + 500))
        );
    }

    #[test]
    fn pieces() {
        let lenient = Shapes {
            date_separators: b"-/",
            hour_digits: 1,
            fraction_marks: b".,",
            offset_minutes_optional: true,
            ..Shapes::RFC3339
        };
        assert_eq!(
            date_at(b"2025/03/14", 0, lenient),
            Some((
                Date {
                    year: 2025,
                    month: 3,
                    day: 14
                },
                10
            ))
        );
        assert_eq!(date_at(b"2025/03-14", 0, lenient), None);
        assert_eq!(
            clock_at(b"5:17:18,5", 0, lenient).map(|(c, i)| (c.millis, i)),
            Some((500, 9))
        );
        assert_eq!(clock_at(b"5:17:18", 0, Shapes::RFC3339), None);
        assert_eq!(offset_at(b"+01", 0, lenient), Some((60, 3)));
        assert_eq!(offset_at(b"+01", 0, Shapes::RFC3339), None);
        assert_eq!(offset_at(b"-01:30x", 0, Shapes::RFC3339), Some((-90, 6)));
        assert_eq!(fraction_at(b". ", 0, Shapes::RFC3339), (0, 0));
        assert_eq!(number(b"123", 0, 2, 2), None);
    }
}
