//! A moment of a recording as people read it: a clock time and how long after the recording's
//! start it is, `05:17:18 (+4.2s)`. One text for the collector's reports (`summary`, `analyze`)
//! and the viewer's findings panel.

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

#[cfg(test)]
mod tests {
    use super::*;

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
