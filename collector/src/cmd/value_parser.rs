//! The parsers of the command line's values shared by several subcommands: node addresses,
//! durations and moments of a recording.

use std::time::Duration;

use slotscope_core::moment::Moment;
use slotscope_core::time::rfc3339;
use slotscope_core::{NodeAddr, Timestamp};

/// Parses a round trip in milliseconds (`0.25`, `2`, `40.5`) into whole microseconds, in
/// `0..=60000` ms.
pub fn parse_rtt_ms(s: &str) -> Result<u32, String> {
    let ms: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of milliseconds"))?;
    if !(ms.is_finite() && (0.0..=60_000.0).contains(&ms)) {
        return Err(format!("`{s}`: expected milliseconds in 0..=60000"));
    }
    // In 0..=6e7: the conversion cannot truncate.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let us = (ms * 1000.0).round() as u32;
    Ok(us)
}

/// Parses a moment: `+DURATION` after the recording's start (`+30s`, `+500ms`, `+2m`, `+0`),
/// epoch milliseconds (`1741929434000`) or RFC 3339 (`2025-03-14T05:17:14Z`,
/// `2025-03-14T05:17:14.250+01:00`).
pub fn parse_time(s: &str) -> Result<Moment, String> {
    let s = s.trim();
    if let Some(d) = s.strip_prefix('+') {
        if d.trim_end_matches(['s', 'm'])
            .chars()
            .all(|c| c == '0' || c == '.')
            && d.starts_with('0')
        {
            return Ok(Moment::Offset(0));
        }
        let d = parse_duration(d)?;
        return u64::try_from(d.as_millis())
            .map(Moment::Offset)
            .map_err(|_| format!("`{s}` is too far"));
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse()
            .map(|ms| Moment::At(Timestamp(ms)))
            .map_err(|_| format!("`{s}` is too large for epoch milliseconds"));
    }
    rfc3339::parse(s).map(Moment::At).ok_or_else(|| {
        format!(
            "`{s}` is not a moment (examples: +30s after the recording's start, \
             2025-03-14T05:17:14Z, epoch milliseconds 1741929434000)"
        )
    })
}

/// Parses `HOST:PORT`.
pub fn parse_addr(s: &str) -> Result<NodeAddr, String> {
    s.parse()
        .map_err(|e: slotscope_core::node::AddrError| e.to_string())
}

/// `s` split into its number and its unit (`1.5GB` → 1.5, `GB`); `what` names the error.
fn number_and_unit<'a>(s: &'a str, what: &str) -> Result<(f64, &'a str), String> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("`{s}` is not {what}"))?;
    Ok((n, unit))
}

/// Parses `250ms`, `1s`, `1.5s`, `10m`, `2h`, `7d` (a bare number is seconds).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (n, unit) = number_and_unit(s, "a duration (examples: 500ms, 1s, 10m, 2h, 7d)")?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86_400.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}` (use ms, s, m, h or d)"
            ))
        }
    };
    if !(secs.is_finite() && secs > 0.0 && secs < 1e9) {
        return Err(format!("`{s}` must be a positive duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a size: `500MB`, `2GB`, `1.5G` (powers of 1000), `2GiB`, `512MiB` (powers of 1024),
/// `4096` or `4096B` (bytes). At least one byte.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (n, unit) = number_and_unit(s, "a size (examples: 500MB, 2GB, 1GiB)")?;
    let factor: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}` (use B, KB, MB, GB, TB or KiB, MiB, GiB, TiB)"
            ))
        }
    };
    let bytes = (n * factor).round();
    if !(bytes.is_finite() && (1.0..9e18).contains(&bytes)) {
        return Err(format!("`{s}` must be a positive size"));
    }
    // In 1..9e18: the conversion cannot truncate.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_like_people_write_them() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("fast").is_err());
        assert_eq!(
            parse_duration("7d").unwrap(),
            Duration::from_secs(7 * 86_400)
        );
        assert_eq!(
            parse_duration("1.5d").unwrap(),
            Duration::from_secs(129_600)
        );
        assert!(parse_duration("5w").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn sizes_parse_in_decimal_and_binary_units() {
        assert_eq!(parse_size("2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("500MB").unwrap(), 500_000_000);
        assert_eq!(parse_size("500mb").unwrap(), 500_000_000);
        assert_eq!(parse_size("1.5G").unwrap(), 1_500_000_000);
        assert_eq!(parse_size("2GiB").unwrap(), 2 * 1024 * 1024 * 1024);
        assert_eq!(parse_size("512MiB").unwrap(), 512 * 1024 * 1024);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size(" 10 KB ").unwrap(), 10_000);
        for bad in ["", "0", "0GB", "big", "2XB", "-1GB", "0.1B"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn round_trips_parse_into_microseconds() {
        assert_eq!(parse_rtt_ms("0.25"), Ok(250));
        assert_eq!(parse_rtt_ms("2"), Ok(2000));
        assert_eq!(parse_rtt_ms("0"), Ok(0));
        for bad in ["-1", "fast", "NaN", "60001"] {
            assert!(parse_rtt_ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn moments_parse_as_offsets_epoch_millis_or_rfc3339() {
        assert_eq!(parse_time("+30s").unwrap(), Moment::Offset(30_000));
        assert_eq!(parse_time("+500ms").unwrap(), Moment::Offset(500));
        assert_eq!(parse_time("+1.5m").unwrap(), Moment::Offset(90_000));
        assert_eq!(parse_time("+0").unwrap(), Moment::Offset(0));
        assert_eq!(parse_time("+0s").unwrap(), Moment::Offset(0));
        let t = Timestamp::from_civil(2025, 3, 14, 5, 17, 14, 250).unwrap();
        assert_eq!(parse_time(&t.0.to_string()).unwrap(), Moment::At(t));
        assert_eq!(
            parse_time("2025-03-14T05:17:14.250Z").unwrap(),
            Moment::At(t)
        );
        assert_eq!(
            parse_time("2025-03-14T06:17:14.25+01:00").unwrap(),
            Moment::At(t)
        );
        assert_eq!(
            parse_time("2025-03-14 00:17:14.250123-05:00").unwrap(),
            Moment::At(t)
        );
        assert_eq!(
            parse_time("2025-03-14T05:17:14Z").unwrap(),
            Moment::At(Timestamp(t.0 - 250))
        );
        for bad in [
            "",
            "+",
            "+5w",
            "soon",
            "2025-03-14",
            "2025-03-14T05:17:14",
            "2025-02-30T00:00:00Z",
            "2025-03-14T05:17:14.Z",
            "2025-03-14T05:17:14+1:00",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }
}
