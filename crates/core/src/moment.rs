//! A moment of a recording as people read it: a clock time and how long after the recording's
//! start it is, `05:17:18 (+4.2s)`. One text for the collector's reports (`summary`, `analyze`)
//! and the viewer's findings panel. And a moment as a person names one ([`Moment`]).

use crate::time::{format_millis, Timestamp};

/// `t` as `HH:MM:SS (+elapsed)`: its UTC time of day, then the time since `start` (as
/// [`format_millis`] writes it; `+0ms` when `t` is not after `start`).
pub fn at(t: Timestamp, start: Timestamp) -> String {
    at_clock(&t.time_of_day(), t, start)
}

/// `clock (+elapsed)`: a clock text the caller chose for `t` (the viewer's local or UTC
/// timestamp), then the time since `start` as in [`at`].
pub fn at_clock(clock: &str, t: Timestamp, start: Timestamp) -> String {
    format!("{clock} (+{})", format_millis(t.millis_since(start)))
}

/// A moment of a recording as a person names it (`--from`/`--to`): a time after the recording's
/// start, or an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// Milliseconds after the recording's start (`+30s`, `+1.5m`, `+0`).
    Offset(u64),
    /// An instant (RFC 3339 or epoch milliseconds).
    At(Timestamp),
}

impl Moment {
    /// The instant, offsets counted from `start`.
    pub fn at(self, start: Timestamp) -> Timestamp {
        match self {
            Moment::Offset(ms) => Timestamp(start.0.saturating_add(ms)),
            Moment::At(t) => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moment_is_an_offset_from_the_start_or_an_instant() {
        assert_eq!(Moment::Offset(5).at(Timestamp(10)), Timestamp(15));
        assert_eq!(Moment::At(Timestamp(3)).at(Timestamp(10)), Timestamp(3));
    }

    #[test]
    fn time_of_day_then_time_since_the_start() {
        let start = Timestamp::from_civil(2025, 3, 14, 5, 17, 14, 0).unwrap();
        let t = Timestamp(start.0 + 4_250);
        assert_eq!(at(t, start), "05:17:18 (+4.2s)");
        assert_eq!(at(start, start), "05:17:14 (+0ms)");
        assert_eq!(at(start, t), "05:17:14 (+0ms)");
        assert_eq!(
            at(Timestamp(start.0 + 3_723_000), start),
            "06:19:17 (+1h02m03s)"
        );
    }

    #[test]
    fn a_clock_text_of_the_callers_choice() {
        let start = Timestamp(1_000);
        assert_eq!(
            at_clock("2026-11-29T23:54:25.060+01:00", Timestamp(126_000), start),
            "2026-11-29T23:54:25.060+01:00 (+2m05s)"
        );
    }
}
