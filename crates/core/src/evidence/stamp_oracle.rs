//! The stamp reader as it was before it reused the RFC 3339 parser's pieces
//! ([`crate::time::rfc3339`]), kept as an oracle: the reader must read every string as it did.

use proptest::prelude::*;

use super::stamp::{midnight, stamp_prefix, Stamp};

fn old_stamp_prefix(s: &str) -> Option<(Option<Stamp>, usize)> {
    let b = s.as_bytes();
    let (date, i) = match old_date_at(b) {
        Some((y, mo, d, i)) => match b.get(i) {
            Some(b'T' | b't' | b' ' | b'_') => (Some((y, mo, d)), i + 1),
            _ => return None,
        },
        None => (None, 0),
    };
    let (h, i) = old_number(b, i, 1, 2)?;
    let (mi, i) = old_sep(b, i, b':').and_then(|i| old_number(b, i, 2, 2))?;
    let (sec, mut i) = old_sep(b, i, b':').and_then(|i| old_number(b, i, 2, 2))?;
    let mut ms = 0u32;
    if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
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
    }
    let (offset_min, i) = old_zone_at(s, i);
    if b.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    if h > 23 || mi > 59 || sec > 60 {
        return Some((None, i));
    }
    let tod =
        i64::from(h) * 3_600_000 + i64::from(mi) * 60_000 + i64::from(sec) * 1000 + i64::from(ms);
    let tod = tod - i64::from(offset_min) * 60_000;
    let stamp = match date {
        None => Some(Stamp::TimeOfDay(tod)),
        Some((y, mo, d)) => midnight(i64::from(y), mo, d)
            .and_then(|m| m.checked_add(tod))
            .map(Stamp::At),
    };
    Some((stamp, i))
}

/// `YYYY-MM-DD` (or `YYYY/MM/DD`) at the start of `b`: year, month, day and the index after it.
fn old_date_at(b: &[u8]) -> Option<(u32, u32, u32, usize)> {
    let (y, i) = old_number(b, 0, 4, 4)?;
    let dash = *b.get(i)?;
    if dash != b'-' && dash != b'/' {
        return None;
    }
    let (mo, i) = old_number(b, i + 1, 2, 2)?;
    let (d, i) = old_sep(b, i, dash).and_then(|i| old_number(b, i, 2, 2))?;
    Some((y, mo, d, i))
}

/// A zone at `i`: its offset east of UTC in minutes (0 when absent) and the index after it.
fn old_zone_at(s: &str, i: usize) -> (i32, usize) {
    let b = s.as_bytes();
    match b.get(i) {
        Some(b'Z' | b'z') => (0, i + 1),
        Some(&sign @ (b'+' | b'-')) => {
            let Some((hh, j)) = old_number(b, i + 1, 2, 2) else {
                return (0, i);
            };
            let (mm, k) = match old_sep(b, j, b':').and_then(|j| old_number(b, j, 2, 2)) {
                Some(found) => found,
                None => old_number(b, j, 2, 2).unwrap_or((0, j)),
            };
            if hh > 14 || mm > 59 {
                return (0, i);
            }
            // hh <= 14 and mm <= 59: fits an i32.
            let minutes = i32::try_from(hh * 60 + mm).unwrap_or(0);
            (if sign == b'-' { -minutes } else { minutes }, k)
        }
        _ => {
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
    }
}

/// A decimal number of `min..=max` digits at `i`, and the index after it.
fn old_number(b: &[u8], i: usize, min: usize, max: usize) -> Option<(u32, usize)> {
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
fn old_sep(b: &[u8], i: usize, c: u8) -> Option<usize> {
    (b.get(i) == Some(&c)).then_some(i + 1)
}

/// A field: mostly one of `good`, sometimes one of `bad`.
fn field(
    good: &'static [&'static str],
    bad: &'static [&'static str],
) -> BoxedStrategy<&'static str> {
    prop_oneof![6 => prop::sample::select(good), 1 => prop::sample::select(bad)].boxed()
}

/// Strings near the shapes read: each field drawn mostly from right values, sometimes wrong ones.
fn near_stamps() -> impl Strategy<Value = String> {
    (
        (
            field(
                &["", "2025-03-14", "2025/03/14", "2024-02-29", "1970-01-01"],
                &[
                    "2025-03/14",
                    "2025-02-29",
                    "1969-12-31",
                    "202-03-14",
                    "2025-3-14",
                ],
            ),
            field(&["T", "t", " ", "_"], &["x", ""]),
            field(&["05", "5", "00", "23"], &["24", "99", "123"]),
            field(&[":"], &["x"]),
            field(&["17", "00", "59"], &["60", "7"]),
            field(&[":"], &["x"]),
            field(&["18", "00", "59", "60"], &["61"]),
        ),
        (
            field(
                &["", ".5", ".25", ".250", ".2509", ",5", ",123", ".0000001"],
                &[".", ".x", ","],
            ),
            field(
                &[
                    "", "Z", "z", "+01:00", "-00:30", "+14:59", "+01", " UTC", "UTC", " GMT", "GMT",
                ],
                &[
                    "+15:00", "+23:59", "+24:00", "-99:99", "+0100", "-01:", "+01:60", "+01:7x",
                    "+-5:00", " UTCx", "x", "+1",
                ],
            ),
            field(&["", " ", "  Migrating", " x"], &["x", "5", ".", "Z"]),
        ),
    )
        .prop_map(|((d, t, h, a, mi, b, s), (f, z, tail))| {
            let t = if d.is_empty() { "" } else { t };
            format!("{d}{t}{h}{a}{mi}{b}{s}{f}{z}{tail}")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn reads_as_before_near_its_shapes(s in near_stamps()) {
        prop_assert_eq!(stamp_prefix(&s), old_stamp_prefix(&s), "{:?}", s);
    }

    #[test]
    fn reads_as_before_on_any_short_string(s in "[0-9:Tt _Zz+\\-./,UTCGMxé]{0,30}") {
        prop_assert_eq!(stamp_prefix(&s), old_stamp_prefix(&s), "{:?}", s);
    }
}

#[test]
fn table_of_shapes() {
    for s in [
        "05:17:18  Migrating",
        "5:17:18 x",
        "2025-03-14 05:17:30,123 ERROR",
        "2025/03/14T07:17:18.5+02:00 x",
        "2025-03-14 05:17:18 UTC  x",
        "2025-03-14_05:17:18GMT",
        "2025-03-14T05:17:18+01 x",
        "2025-03-14T05:17:18+0100 x",
        "2025-03-14T05:17:18+15:00 x",
        "2025-03-14T05:17:18-14:59",
        "2025-02-30 05:17:18 x",
        "25:17:18 x",
        "05:17:18x",
        "Migrating slots",
        "1970-01-01T00:30:00+01:00",
    ] {
        assert_eq!(stamp_prefix(s), old_stamp_prefix(s), "{s}");
    }
}
