//! Placement of timestamps on the recording's timeline: a time of day alone is dated by the
//! caller's [`Date`], or placed within 12 hours of the recording's start and then of the line
//! before it (so a log that runs past midnight moves on to the next day).

use super::error::EvidenceError;
use super::options::Options;
use super::stamp::Stamp;
use crate::time::Timestamp;

/// One day in milliseconds.
const DAY_MS: i64 = 86_400_000;
/// Half a day in milliseconds: how far a time of day is placed from its anchor at most.
const HALF_DAY_MS: i64 = 43_200_000;

/// Places timestamps on the time line: dates times of day, checks the range.
pub(super) struct Clock {
    /// Midnight of the given date, for the first time of day.
    midnight: Option<i64>,
    /// The time a time of day is placed near (the previous line's, first the recording's start).
    anchor: Option<i64>,
    /// Whether any timestamp was placed.
    pub(super) any: bool,
}

impl Clock {
    /// A clock for the date and recording start of `opts`.
    pub(super) fn new(opts: &Options) -> Result<Clock, EvidenceError> {
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

    /// The timestamp `stamp` read on line `line` (written `shown`) stands for.
    pub(super) fn place(
        &mut self,
        stamp: Stamp,
        line: u64,
        shown: &str,
    ) -> Result<Timestamp, EvidenceError> {
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

#[cfg(test)]
mod tests {
    use crate::evidence::fixture::{at, opts};
    use crate::evidence::{parse, Format, Options};
    use crate::time::Timestamp;

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
}
