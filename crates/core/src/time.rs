//! Time as data: wall-clock milliseconds given by the caller (the core never reads a clock).

pub mod rfc3339;

use std::fmt;

use serde::{Deserialize, Serialize};

/// Milliseconds since the Unix epoch, UTC.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// Milliseconds since the epoch.
    pub fn as_millis(self) -> u64 {
        self.0
    }

    /// Milliseconds from `earlier` to `self` (0 if `earlier` is later).
    pub fn millis_since(self, earlier: Timestamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// The time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub fn to_rfc3339(self) -> String {
        let (y, mo, d, h, mi, s, ms) = self.civil();
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
    }

    /// The time of day as `HH:MM:SS`, UTC.
    pub fn time_of_day(self) -> String {
        let (_, _, _, h, mi, s, _) = self.civil();
        format!("{h:02}:{mi:02}:{s:02}")
    }

    /// The timestamp of a UTC civil date and time (proleptic Gregorian calendar); `None` for a
    /// date that does not exist (month 13, day 0, 31 April, 29 February outside leap years), a
    /// time out of range (hour 24, minute 60, second 61, millisecond 1000) or an instant before
    /// the epoch or too late for a `u64` of milliseconds. Second 60 (a leap second) is accepted
    /// and reads as the first second of the next minute.
    pub fn from_civil(
        y: i64,
        mo: u32,
        d: u32,
        h: u32,
        mi: u32,
        s: u32,
        ms: u32,
    ) -> Option<Timestamp> {
        if d == 0 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 60 || ms > 999 {
            return None;
        }
        // Howard Hinnant's days_from_civil.
        let y = if mo <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = i64::from((mo + 9) % 12);
        let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        let secs = days * 86_400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(s);
        let ms_total = secs.checked_mul(1000)?.checked_add(i64::from(ms))?;
        u64::try_from(ms_total).ok().map(Timestamp)
    }

    fn civil(self) -> (i64, u32, u32, u32, u32, u32, u32) {
        let ms = (self.0 % 1000) as u32;
        let secs = self.0 / 1000;
        let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
        let rem = (secs % 86_400) as u32;
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let y = yoe + era * 400 + i64::from(m <= 2);
        (y, m, d, rem / 3600, rem / 60 % 60, rem % 60, ms)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

/// Whether `year` is a leap year of the proleptic Gregorian calendar: divisible by 4, except
/// centuries not divisible by 400 (2024 and 2000 are, 2023 and 1900 are not).
pub fn is_leap_year(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

/// The number of days of `month` (1 = January … 12 = December) in `year`; 0 for a month that does
/// not exist.
pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// A half-open span of time `[start, end)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TimeSpan {
    /// First instant in the span.
    pub start: Timestamp,
    /// First instant after the span.
    pub end: Timestamp,
}

impl TimeSpan {
    /// The span from `start` to `end`; the ends are swapped if given in the wrong order.
    pub fn new(start: Timestamp, end: Timestamp) -> TimeSpan {
        if start <= end {
            TimeSpan { start, end }
        } else {
            TimeSpan {
                start: end,
                end: start,
            }
        }
    }

    /// Length in milliseconds.
    pub fn millis(self) -> u64 {
        self.end.millis_since(self.start)
    }

    /// Whether `t` lies in `[start, end)`.
    pub fn contains(self, t: Timestamp) -> bool {
        self.start <= t && t < self.end
    }
}

/// Formats a length of time in milliseconds as `1h02m03s`, `2m05s`, `4.2s` or `350ms`.
pub fn format_millis(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else if ms >= 1000 {
        format!("{}.{}s", s, ms % 1000 / 100)
    } else {
        format!("{ms}ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        let t = Timestamp::from_civil(2025, 3, 14, 5, 17, 18, 250).unwrap();
        assert_eq!(t.to_rfc3339(), "2025-03-14T05:17:18.250Z");
        assert_eq!(t.time_of_day(), "05:17:18");
        assert_eq!(Timestamp(0).to_rfc3339(), "1970-01-01T00:00:00.000Z");
        let leap = Timestamp::from_civil(2024, 2, 29, 23, 59, 59, 999).unwrap();
        assert_eq!(leap.to_rfc3339(), "2024-02-29T23:59:59.999Z");
        assert_eq!(
            Timestamp(leap.0 + 1).to_rfc3339(),
            "2024-03-01T00:00:00.000Z"
        );
        assert!(Timestamp::from_civil(2024, 13, 1, 0, 0, 0, 0).is_none());
    }

    #[test]
    fn impossible_dates_are_refused() {
        let date = |y, mo, d| Timestamp::from_civil(y, mo, d, 0, 0, 0, 0);
        assert!(date(2025, 2, 31).is_none(), "31 February");
        assert!(date(2025, 2, 30).is_none(), "30 February");
        assert!(date(2024, 2, 29).is_some(), "29 February of a leap year");
        assert!(date(2023, 2, 29).is_none(), "29 February of a common year");
        assert!(date(2025, 4, 31).is_none(), "31 April");
        assert!(date(2025, 4, 30).is_some());
        assert!(date(2025, 12, 31).is_some());
        assert!(date(2025, 13, 1).is_none(), "month 13");
        assert!(date(2025, 0, 1).is_none(), "month 0");
        assert!(date(2025, 3, 0).is_none(), "day 0");
        assert!(date(1969, 12, 31).is_none(), "before the epoch");
        assert_eq!(
            date(2025, 3, 1).map(Timestamp::to_rfc3339).as_deref(),
            Some("2025-03-01T00:00:00.000Z")
        );
    }

    #[test]
    fn calendar() {
        assert!(is_leap_year(2024) && is_leap_year(2000) && is_leap_year(1600));
        assert!(!is_leap_year(2023) && !is_leap_year(1900) && !is_leap_year(2100));
        assert!(is_leap_year(0) && is_leap_year(-4) && !is_leap_year(-1));
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(2023, 2), 28);
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(2025, 4), 30);
        assert_eq!(days_in_month(2025, 1), 31);
        assert_eq!(days_in_month(2025, 0), 0);
        assert_eq!(days_in_month(2025, 13), 0);
        let year: u32 = (1..=12).map(|m| days_in_month(2025, m)).sum();
        assert_eq!(year, 365);
        let leap: u32 = (1..=12).map(|m| days_in_month(2024, m)).sum();
        assert_eq!(leap, 366);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(format_millis(350), "350ms");
        assert_eq!(format_millis(4_200), "4.2s");
        assert_eq!(format_millis(125_000), "2m05s");
        assert_eq!(format_millis(3_723_000), "1h02m03s");
    }

    #[test]
    fn span_is_half_open() {
        let s = TimeSpan::new(Timestamp(20), Timestamp(10));
        assert_eq!(s.start, Timestamp(10));
        assert!(s.contains(Timestamp(10)));
        assert!(!s.contains(Timestamp(20)));
        assert_eq!(s.millis(), 10);
    }
}
