//! Times as text: ISO 8601 in UTC, or in local time given the zone's offset.

use slotscope_core::Timestamp;

/// `ms` as `2026-11-29T22:54:25.060Z` (UTC), or, with `offset_minutes` east of UTC, as
/// `2026-11-29T23:54:25.060+01:00`.
pub fn format(ms: u64, offset_minutes: Option<i32>) -> String {
    match offset_minutes {
        None => Timestamp(ms).to_rfc3339(),
        Some(off) => {
            let shift = u64::from(off.unsigned_abs()) * 60_000;
            let local = if off < 0 {
                ms.saturating_sub(shift)
            } else {
                ms.saturating_add(shift)
            };
            let text = Timestamp(local).to_rfc3339();
            let base = text.strip_suffix('Z').unwrap_or(&text);
            let sign = if off < 0 { '-' } else { '+' };
            let a = off.unsigned_abs();
            format!("{base}{sign}{:02}:{:02}", a / 60, a % 60)
        }
    }
}

/// A short time-of-day label for axis ticks: `22:54:25` (with `.060` when not on a second).
pub fn tick_label(ms: u64, offset_minutes: Option<i32>) -> String {
    let full = format(ms, offset_minutes);
    let time = full.get(11..23).unwrap_or(&full);
    match time.strip_suffix(".000") {
        Some(t) => t.to_owned(),
        None => time.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_and_local_text() {
        let t = Timestamp::from_civil(2026, 11, 29, 22, 54, 25, 60)
            .unwrap()
            .0;
        assert_eq!(format(t, None), "2026-11-29T22:54:25.060Z");
        assert_eq!(format(t, Some(60)), "2026-11-29T23:54:25.060+01:00");
        assert_eq!(format(t, Some(-330)), "2026-11-29T17:24:25.060-05:30");
        assert_eq!(tick_label(t, None), "22:54:25.060");
        assert_eq!(tick_label(t - 60, None), "22:54:25");
    }
}
