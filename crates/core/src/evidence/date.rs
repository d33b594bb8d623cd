//! A calendar date given by the caller, for logs whose lines carry only a time of day.

use std::fmt;
use std::str::FromStr;

use super::error::EvidenceError;
use super::stamp;
use crate::time::rfc3339::{number, sep};
use crate::time::Timestamp;

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
    pub(super) fn midnight(self) -> Option<i64> {
        stamp::midnight(self.year, self.month, self.day)
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
