//! The one RFC 3339 parser (`slotscope_core::time::rfc3339`) reads what the two it replaced read,
//! with the same results: CloudWatch's `parse_iso8601` (zone optional) and the command line's
//! `parse_rfc3339` (zone required), kept here as they were, as oracles.
//!
//! The command line's is matched exactly. CloudWatch's old reader also took a few malformed
//! shapes the one parser refuses ([`cloudwatch_quirk`]: any character where the time's `:` go, a
//! `.` without digits, an offset that is not `±HH:MM` with hours up to 23 and minutes up to 59);
//! everything else it read is read the same, and the one parser adds only a lowercase `t`.

use proptest::prelude::*;
use slotscope_core::import::cloudwatch::parse_iso8601;
use slotscope_core::time::rfc3339;
use slotscope_core::Timestamp;

/// `import::cloudwatch::parse_iso8601` before the one parser.
fn old_cloudwatch(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<u32> {
        let part = s.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b' ') {
        return None;
    }
    let (y, mo, d) = (i64::from(num(0, 4)?), num(5, 2)?, num(8, 2)?);
    let (h, mi, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let mut rest = &s[19..];
    let mut ms = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        let f = &frac[..digits];
        ms = format!("{f:0<3}")[..3].parse().ok()?;
        rest = &frac[digits..];
    }
    let base = Timestamp::from_civil(y, mo, d, h, mi, sec, ms)?;
    let offset_ms: i64 = match rest {
        "" | "Z" | "z" => 0,
        z if z.len() == 6 && z.as_bytes()[3] == b':' => {
            let sign = match z.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hh: i64 = z[1..3].parse().ok()?;
            let mm: i64 = z[4..6].parse().ok()?;
            sign * (hh * 60 + mm) * 60_000
        }
        _ => return None,
    };
    let utc = i64::try_from(base.0).ok()? - offset_ms;
    u64::try_from(utc).ok().map(Timestamp)
}

/// The command line's `parse_rfc3339` (`collector/src/cmd/value_parser.rs`) before the one
/// parser.
fn old_command_line(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<u32> {
        let part = s.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let mut i = 19;
    let mut ms = 0u32;
    if b.get(i) == Some(&b'.') {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let frac = &s[i + 1..i + 1 + digits.min(3)];
        ms = format!("{frac:0<3}").parse().ok()?;
        i += 1 + digits;
    }
    let offset_min: i64 = match &s[i..] {
        "Z" | "z" => 0,
        tz if tz.len() == 6
            && matches!(tz.as_bytes()[0], b'+' | b'-')
            && tz.as_bytes()[3] == b':' =>
        {
            let (oh, om) = (i64::from(num(i + 1, 2)?), i64::from(num(i + 4, 2)?));
            if oh > 23 || om > 59 {
                return None;
            }
            let sign = if tz.starts_with('-') { -1 } else { 1 };
            sign * (oh * 60 + om)
        }
        _ => return None,
    };
    let local = Timestamp::from_civil(i64::from(y), mo, d, h, mi, sec, ms)?;
    let utc = i64::try_from(local.0).ok()? - offset_min * 60_000;
    u64::try_from(utc).ok().map(Timestamp)
}

/// The malformed shapes CloudWatch's old reader took and the one parser refuses.
fn cloudwatch_quirk(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 19 {
        return false;
    }
    if b[13] != b':' || b[16] != b':' {
        return true;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return true;
        }
        rest = &frac[digits..];
    }
    let z = rest.as_bytes();
    let two = |x: &[u8]| x.iter().all(u8::is_ascii_digit);
    z.len() == 6
        && matches!(z[0], b'+' | b'-')
        && z[3] == b':'
        && (!two(&z[1..3])
            || !two(&z[4..6])
            || rest[1..3].parse::<u32>().is_ok_and(|h| h > 23)
            || rest[4..6].parse::<u32>().is_ok_and(|m| m > 59))
}

/// A field: mostly one of `good`, sometimes one of `bad`.
fn field(
    good: &'static [&'static str],
    bad: &'static [&'static str],
) -> BoxedStrategy<&'static str> {
    prop_oneof![6 => prop::sample::select(good), 1 => prop::sample::select(bad)].boxed()
}

/// Strings near the shapes read: each field drawn mostly from right values, sometimes wrong ones.
fn near_timestamps() -> impl Strategy<Value = String> {
    (
        (
            field(
                &["2025", "1970", "2024", "2000", "9999"],
                &["1969", "0000", "202", "20255"],
            ),
            field(&["-"], &["/", "x"]),
            field(&["03", "02", "12", "01"], &["13", "00", "3"]),
            field(&["-"], &["/", ""]),
            field(&["14", "29", "28", "31", "01"], &["00", "1", "32"]),
            field(&["T", "t", " "], &["_", "x", ""]),
        ),
        (
            field(&["05", "00", "23", "12"], &["24", "5", "99"]),
            field(&[":"], &["x", "."]),
            field(&["17", "00", "59"], &["60", "7"]),
            field(&[":"], &["x"]),
            field(&["14", "00", "59", "60"], &["61", "5", "145"]),
            field(
                &["", ".5", ".25", ".250", ".2509", ".0000001"],
                &[".", ",5", ".x"],
            ),
        ),
        (
            field(
                &[
                    "", "Z", "z", "+01:00", "-00:30", "+14:59", "+15:00", "+23:59", "-23:00",
                ],
                &[
                    "+24:00", "-99:99", "+01", "+0100", "+01:60", "+-5:00", "++5:00", "+ 5:00",
                    " UTC", "x", "+01:0",
                ],
            ),
            field(&[""], &[" ", " x", "x", "5", "Z"]),
        ),
    )
        .prop_map(|((y, a, mo, b, d, t), (h, c, mi, e, s, f), (z, tail))| {
            format!("{y}{a}{mo}{b}{d}{t}{h}{c}{mi}{e}{s}{f}{z}{tail}")
        })
}

/// Any short string over the characters timestamps are made of.
fn any_short() -> impl Strategy<Value = String> {
    "[0-9:Tt Zz+\\-./,xé]{0,30}"
}

fn check(s: &str) {
    assert_eq!(
        rfc3339::parse(s),
        old_command_line(s),
        "command line: {s:?}"
    );
    let (old, new) = (old_cloudwatch(s), parse_iso8601(s));
    match (old, new) {
        (Some(o), n) if !cloudwatch_quirk(s) => assert_eq!(n, Some(o), "CloudWatch: {s:?}"),
        (None, Some(_)) => assert_eq!(s.as_bytes()[10], b't', "CloudWatch, newly read: {s:?}"),
        (Some(o), Some(n)) => assert_eq!(n, o, "CloudWatch: {s:?}"),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn reads_as_the_old_parsers_near_their_shapes(s in near_timestamps()) {
        check(&s);
    }

    #[test]
    fn reads_as_the_old_parsers_on_any_short_string(s in any_short()) {
        check(&s);
    }
}

/// Every shape each old parser documented or was tested with, and its result.
#[test]
fn table_of_shapes() {
    let t = 1_741_929_434_000; // 2025-03-14T05:17:14Z
    let both: &[(&str, Option<u64>)] = &[
        ("2025-03-14T05:17:14Z", Some(t)),
        ("2025-03-14T05:17:14z", Some(t)),
        ("2025-03-14 05:17:14Z", Some(t)),
        ("2025-03-14T05:17:14.250+01:00", Some(t + 250 - 3_600_000)),
        ("2025-03-14T05:17:14.2Z", Some(t + 200)),
        ("2025-03-14T05:17:14.123456Z", Some(t + 123)),
        ("2025-03-14T07:17:14+02:00", Some(t)),
        ("2025-03-14T04:47:14-00:30", Some(t)),
        ("2025-03-14T05:17:14+23:59", Some(t - 86_340_000)),
        ("2025-03-14T23:59:60Z", Some(1_741_996_800_000)),
        ("2024-02-29T00:00:00Z", Some(1_709_164_800_000)),
        ("2025-02-29T00:00:00Z", None),
        ("2025-03-14T24:00:00Z", None),
        ("1969-12-31T23:59:59Z", None),
        ("1970-01-01T00:30:00+01:00", None),
        ("2025-03-14T05:17:14Z trailing", None),
        ("2025-03-14T05:17", None),
    ];
    for &(s, want) in both {
        let want = want.map(Timestamp);
        assert_eq!(old_command_line(s), want, "old command line {s}");
        assert_eq!(old_cloudwatch(s), want, "old CloudWatch {s}");
        assert_eq!(rfc3339::parse(s), want, "{s}");
        assert_eq!(parse_iso8601(s), want, "{s}");
    }
    // Without a zone: UTC for CloudWatch, refused on the command line.
    assert_eq!(old_cloudwatch("2025-03-14T05:17:14"), Some(Timestamp(t)));
    assert_eq!(parse_iso8601("2025-03-14T05:17:14"), Some(Timestamp(t)));
    assert_eq!(
        parse_iso8601("2025-03-14 05:17:14.5"),
        Some(Timestamp(t + 500))
    );
    assert_eq!(old_command_line("2025-03-14T05:17:14"), None);
    assert_eq!(rfc3339::parse("2025-03-14T05:17:14"), None);
    // The malformed shapes only CloudWatch's old reader took.
    for s in [
        "2025-03-14T05x17x14Z",
        "2025-03-14T05:17:14.Z",
        "2025-03-14T05:17:14+24:00",
        "2025-03-14T05:17:14+99:00",
        "2025-03-14T05:17:14+-5:00",
    ] {
        assert!(old_cloudwatch(s).is_some() && cloudwatch_quirk(s), "{s}");
        assert_eq!(parse_iso8601(s), None, "{s}");
        assert_eq!(old_command_line(s), None, "{s}");
        assert_eq!(rfc3339::parse(s), None, "{s}");
    }
}
