//! The collector's wall clock: the one place that turns the system time into the
//! [`Timestamp`]s written into recordings (polls, tap lines, headers and end lines alike).

use std::time::{SystemTime, UNIX_EPOCH};

use slotscope_core::Timestamp;

/// The wall-clock time now, as a core timestamp (milliseconds since the Unix epoch; 0 for a
/// clock set before 1970).
pub fn now() -> Timestamp {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    Timestamp(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_after_2020_and_does_not_go_back() {
        let a = now();
        let b = now();
        // 2020-01-01T00:00:00Z.
        assert!(a.0 > 1_577_836_800_000);
        assert!(b >= a);
    }
}
