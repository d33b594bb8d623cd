//! The parsers of the command line's values shared by several subcommands: node addresses and
//! durations.

use std::time::Duration;

use slotscope_core::NodeAddr;

/// Parses `HOST:PORT`.
pub fn parse_addr(s: &str) -> Result<NodeAddr, String> {
    s.parse()
        .map_err(|e: slotscope_core::node::AddrError| e.to_string())
}

/// Parses `250ms`, `1s`, `1.5s`, `10m`, `2h` (a bare number is seconds).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (examples: 500ms, 1s, 10m, 2h)"))?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}` (use ms, s, m or h)"
            ))
        }
    };
    if !(secs.is_finite() && secs > 0.0 && secs < 1e9) {
        return Err(format!("`{s}` must be a positive duration"));
    }
    Ok(Duration::from_secs_f64(secs))
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
        assert!(parse_duration("5d").unwrap_err().contains("unknown unit"));
    }
}
