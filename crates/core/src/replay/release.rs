//! Library releases: a release number ([`Version`]) and the range of releases a model covers
//! ([`Coverage`]).

use std::cmp::Ordering;
use std::fmt;

/// A release number `major.minor.patch` (missing parts are 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// The major number.
    pub major: u32,
    /// The minor number.
    pub minor: u32,
    /// The patch number.
    pub patch: u32,
}

impl Version {
    /// `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// Reads `8`, `8.1`, `8.1.0`, `v9.8.0`, `6.3.2.RELEASE`, `8.0.0b1` or `5.0.0-rc1`: up to
    /// three dot-separated numbers, then anything that does not start with a digit or a dot
    /// (a pre-release or a label, ignored). `None` for anything else.
    pub fn parse(text: &str) -> Option<Version> {
        let s = text.trim();
        let s = s.strip_prefix(['v', 'V']).unwrap_or(s);
        let mut parts = [0u32; 3];
        let mut rest = s;
        for (i, part) in parts.iter_mut().enumerate() {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || digits > 9 {
                return None;
            }
            *part = rest[..digits].parse().ok()?;
            rest = &rest[digits..];
            match rest.strip_prefix('.') {
                Some(r) if i < 2 && r.starts_with(|c: char| c.is_ascii_digit()) => rest = r,
                _ => break,
            }
        }
        // Then nothing, a label (`b1`, `-rc1`) or Java's `.RELEASE`/`.Final`; not a fourth
        // number nor a dangling dot.
        let label = rest.is_empty()
            || rest.starts_with(".RELEASE")
            || rest.starts_with(".Final")
            || !rest.starts_with(|c: char| c.is_ascii_digit() || c == '.');
        if !label {
            return None;
        }
        Some(Version::new(parts[0], parts[1], parts[2]))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The releases of one library a model covers: `from` (inclusive) up to `until` (exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// The library, as model names spell it (`redis-py`, `go-redis`, …).
    pub library: &'static str,
    /// The first release covered.
    pub from: Version,
    /// The first release no longer covered.
    pub until: Version,
    /// The range as people write it, `7.2.0–8.x`.
    pub range: &'static str,
}

impl Coverage {
    /// Whether `v` is in the range.
    pub fn contains(&self, v: Version) -> bool {
        self.from.cmp(&v) != Ordering::Greater && v < self.until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_as_people_write_them() {
        assert_eq!(Version::parse("8.1.0"), Some(Version::new(8, 1, 0)));
        assert_eq!(Version::parse("8.1"), Some(Version::new(8, 1, 0)));
        assert_eq!(Version::parse("8"), Some(Version::new(8, 0, 0)));
        assert_eq!(Version::parse("v9.8.0"), Some(Version::new(9, 8, 0)));
        assert_eq!(Version::parse("6.3.2.RELEASE"), Some(Version::new(6, 3, 2)));
        assert_eq!(Version::parse("8.0.0b1"), Some(Version::new(8, 0, 0)));
        assert_eq!(Version::parse("5.0.0-rc1"), Some(Version::new(5, 0, 0)));
        for bad in ["", "x", "8.", "1.2.3.4", ".1", "latest", "1..2"] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
        assert!(Version::new(7, 1, 9) < Version::new(7, 2, 0));
        assert_eq!(Version::new(4, 4, 0).to_string(), "4.4.0");
    }
}
