//! Library versions, not model names: `redis-py@8.1.0` resolves to the model that covers that
//! release (`redis-py@8.0.0`, which covers 7.2.0–8.x), and a release no model covers is an error
//! listing what each library's models cover.
//!
//! The ranges, each justified by the library's source:
//!
//! - `redis-py@5.0.0` covers **4.4.0–7.1.x**: the asyncio `RedisCluster._execute_command` pops a
//!   node that raised `ConnectionError`/`TimeoutError` from `nodes_manager.startup_nodes`
//!   (`redis/asyncio/cluster.py` line 744 of the 4.4.0 wheel, line 978 of the 7.1.1 wheel); 4.3.6
//!   does not (it retries the same node after 0.25 s, line 681), so 4.3.x is not covered.
//! - `redis-py@8.0.0` covers **7.2.0–8.x**: from 7.2.0 the failed node is moved to the end of the
//!   cached startup nodes instead (`move_node_to_end_of_cached_nodes(target_node.name)`, line 983
//!   of the 7.2.0 wheel, defined line 1513), as in the 7.4.0, 8.0.0 and 8.1.0 wheels.
//! - `redis-rs@1.8.1` covers **1.8.0–1.8.x**: the model is written from the 1.8.1 crate (see its
//!   module); other minor releases were not compared.
//! - `go-redis@9.8.0` covers **9.7.1–9.8.x**: the model's module reads the 9.7.1–9.8.0
//!   `osscluster.go` (after the `Addrs()` copy fix of 9.7.1); 9.9.0 changed the reload timers.
//! - `lettuce@6.3.2` covers **6.1.0–6.3.x**: its module notes the routing paths are the same
//!   across 6.1–6.3.
//! - `jedis@5.1.0` covers **5.1.0–5.2.x**: `topologyRefreshPeriod` arrived in 5.1.0 and the
//!   routing paths are the same through 5.2.x (see its module).
//!
//! `ideal` is no library: it is only a name.

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
    /// The model's name (one of [`MODELS`](super::MODELS)).
    pub model: &'static str,
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

/// Every library release range a model covers, by library then release.
pub const COVERAGE: &[Coverage] = &[
    Coverage {
        library: "redis-py",
        model: "redis-py@5.0.0",
        from: Version::new(4, 4, 0),
        until: Version::new(7, 2, 0),
        range: "4.4.0–7.1.x",
    },
    Coverage {
        library: "redis-py",
        model: "redis-py@8.0.0",
        from: Version::new(7, 2, 0),
        until: Version::new(9, 0, 0),
        range: "7.2.0–8.x",
    },
    Coverage {
        library: "redis-rs",
        model: "redis-rs@1.8.1",
        from: Version::new(1, 8, 0),
        until: Version::new(1, 9, 0),
        range: "1.8.0–1.8.x",
    },
    Coverage {
        library: "go-redis",
        model: "go-redis@9.8.0",
        from: Version::new(9, 7, 1),
        until: Version::new(9, 9, 0),
        range: "9.7.1–9.8.x",
    },
    Coverage {
        library: "lettuce",
        model: "lettuce@6.3.2",
        from: Version::new(6, 1, 0),
        until: Version::new(6, 4, 0),
        range: "6.1.0–6.3.x",
    },
    Coverage {
        library: "jedis",
        model: "jedis@5.1.0",
        from: Version::new(5, 1, 0),
        until: Version::new(5, 3, 0),
        range: "5.1.0–5.2.x",
    },
];

/// The range `model` covers (`None` for `ideal` and unknown names).
pub fn covers(model: &str) -> Option<&'static Coverage> {
    COVERAGE.iter().find(|c| c.model == model)
}

/// Why a `--model` could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// The library is known, the release is in no model's range.
    #[error("no model covers {library} {version} ({asked}); {ranges}")]
    Uncovered {
        /// The library.
        library: String,
        /// The release read.
        version: Version,
        /// What was asked.
        asked: String,
        /// Every library's covered ranges (see [`ranges`]).
        ranges: String,
    },
    /// The library is known, the text after `@` is not a release number.
    #[error("`{asked}`: `{text}` is not a release number (e.g. {library}@{example}); {ranges}")]
    BadVersion {
        /// The library.
        library: String,
        /// What follows the `@`.
        text: String,
        /// What was asked.
        asked: String,
        /// A release the library's first model covers.
        example: String,
        /// Every library's covered ranges.
        ranges: String,
    },
    /// A library name without a release.
    #[error("`{library}`: give the release you run, {library}@VERSION; {ranges}")]
    NoVersion {
        /// The library.
        library: String,
        /// Every library's covered ranges.
        ranges: String,
    },
}

/// Every library's covered ranges in one sentence: `covered: redis-py 4.4.0–7.1.x
/// (redis-py@5.0.0), 7.2.0–8.x (redis-py@8.0.0); redis-rs 1.8.0–1.8.x (redis-rs@1.8.1); …`.
pub fn ranges() -> String {
    let mut libs: Vec<&str> = Vec::new();
    for c in COVERAGE {
        if !libs.contains(&c.library) {
            libs.push(c.library);
        }
    }
    let per_lib: Vec<String> = libs
        .iter()
        .map(|lib| {
            let parts: Vec<String> = COVERAGE
                .iter()
                .filter(|c| c.library == *lib)
                .map(|c| format!("{} ({})", c.range, c.model))
                .collect();
            format!("{lib} {}", parts.join(", "))
        })
        .collect();
    format!("covered: {}", per_lib.join("; "))
}

/// A `--model` resolved to a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The model's name (one of [`MODELS`](super::MODELS)).
    pub model: &'static str,
    /// The release asked for when it is not the model's own (`None`: the model was named).
    pub asked: Option<Version>,
}

impl Resolved {
    /// How reports name it: the model's name, and when a release other than the model's own was
    /// asked for, what the model covers: `redis-py@8.0.0 (covers 7.2.0–8.x)`.
    pub fn label(&self) -> String {
        match (self.asked, covers(self.model)) {
            (Some(_), Some(c)) => format!("{} (covers {})", self.model, c.range),
            _ => self.model.to_owned(),
        }
    }
}

/// Resolves `asked`: a model's own name (`redis-py@8.0.0`, `ideal`) is that model; a library
/// and release (`redis-py@8.1.0`, `go-redis@v9.8.0`) is the model whose [`Coverage`] holds the
/// release. `Ok(None)`: neither a model nor a library (the caller reports an unknown model).
pub fn resolve(asked: &str) -> Result<Option<Resolved>, VersionError> {
    let asked = asked.trim();
    if let Some(m) = super::MODELS.iter().find(|m| m.name == asked) {
        return Ok(Some(Resolved {
            model: m.name,
            asked: None,
        }));
    }
    let (library, text) = match asked.split_once('@') {
        Some((l, t)) => (l.trim(), Some(t.trim())),
        None => (asked, None),
    };
    let library_lc = library.to_ascii_lowercase();
    let Some(first) = COVERAGE.iter().find(|c| c.library == library_lc) else {
        return Ok(None);
    };
    let Some(text) = text else {
        return Err(VersionError::NoVersion {
            library: first.library.to_owned(),
            ranges: ranges(),
        });
    };
    let Some(version) = Version::parse(text) else {
        return Err(VersionError::BadVersion {
            library: first.library.to_owned(),
            text: text.to_owned(),
            asked: asked.to_owned(),
            example: first.from.to_string(),
            ranges: ranges(),
        });
    };
    match COVERAGE
        .iter()
        .find(|c| c.library == first.library && c.contains(version))
    {
        Some(c) => Ok(Some(Resolved {
            model: c.model,
            asked: Some(version),
        })),
        None => Err(VersionError::Uncovered {
            library: first.library.to_owned(),
            version,
            asked: asked.to_owned(),
            ranges: ranges(),
        }),
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

    fn model_of(asked: &str) -> &'static str {
        resolve(asked).unwrap().unwrap().model
    }

    #[test]
    fn each_redis_py_release_goes_to_the_model_of_its_startup_node_handling() {
        assert_eq!(model_of("redis-py@4.4.0"), "redis-py@5.0.0");
        assert_eq!(model_of("redis-py@4.5.5"), "redis-py@5.0.0");
        assert_eq!(model_of("redis-py@5.0.8"), "redis-py@5.0.0");
        assert_eq!(model_of("redis-py@7.1.1"), "redis-py@5.0.0");
        assert_eq!(model_of("redis-py@7.2.0"), "redis-py@8.0.0");
        assert_eq!(model_of("redis-py@8.1.0"), "redis-py@8.0.0");
        assert_eq!(model_of("redis-py@8.99.3"), "redis-py@8.0.0");
        assert_eq!(model_of("Redis-Py@8.1"), "redis-py@8.0.0");
        assert_eq!(model_of("go-redis@v9.8.3"), "go-redis@9.8.0");
        assert_eq!(model_of("lettuce@6.1.10.RELEASE"), "lettuce@6.3.2");
        assert_eq!(model_of("jedis@5.2.0"), "jedis@5.1.0");
        assert_eq!(model_of("redis-rs@1.8.0"), "redis-rs@1.8.1");
    }

    #[test]
    fn a_model_named_is_that_model_and_its_label_is_unchanged() {
        for m in super::super::MODELS {
            let r = resolve(m.name).unwrap().unwrap();
            assert_eq!(r.model, m.name);
            assert_eq!(r.label(), m.name);
        }
        // Every model but `ideal` covers a range that holds its own release.
        for c in COVERAGE {
            let own = Version::parse(c.model.split_once('@').unwrap().1).unwrap();
            assert!(c.contains(own), "{} does not cover itself", c.model);
            assert!(super::super::MODELS.iter().any(|m| m.name == c.model));
        }
        assert_eq!(covers("ideal"), None);
    }

    #[test]
    fn another_release_is_labelled_with_the_range_the_model_covers() {
        let r = resolve("redis-py@8.1.0").unwrap().unwrap();
        assert_eq!(r.asked, Some(Version::new(8, 1, 0)));
        assert_eq!(r.label(), "redis-py@8.0.0 (covers 7.2.0–8.x)");
        assert_eq!(
            resolve("redis-py@4.5.5").unwrap().unwrap().label(),
            "redis-py@5.0.0 (covers 4.4.0–7.1.x)"
        );
    }

    #[test]
    fn the_ranges_of_a_library_neither_overlap_nor_leave_a_gap() {
        for pair in COVERAGE.windows(2) {
            if pair[0].library == pair[1].library {
                assert_eq!(pair[0].until, pair[1].from, "{pair:?}");
            }
        }
        for c in COVERAGE {
            assert!(c.from < c.until, "{c:?}");
        }
    }

    #[test]
    fn releases_outside_every_range_are_errors_listing_the_ranges() {
        for asked in [
            "redis-py@3.5.3",
            "redis-py@4.3.6",
            "redis-py@9.0.0",
            "go-redis@8.11.5",
            "go-redis@9.9.0",
            "lettuce@6.4.0",
            "jedis@4.4.3",
            "redis-rs@0.27.0",
        ] {
            let e = resolve(asked).unwrap_err();
            assert!(matches!(e, VersionError::Uncovered { .. }), "{asked}: {e}");
            let msg = e.to_string();
            assert!(msg.contains(asked), "{msg}");
            for c in COVERAGE {
                assert!(msg.contains(c.range), "{msg} lacks {}", c.range);
            }
        }
        let e = resolve("redis-py@3.5.3").unwrap_err().to_string();
        assert!(e.starts_with("no model covers redis-py 3.5.3"), "{e}");
    }

    #[test]
    fn a_library_alone_or_a_bad_release_asks_for_a_release() {
        let e = resolve("redis-py").unwrap_err();
        assert!(matches!(e, VersionError::NoVersion { .. }));
        assert!(e.to_string().contains("redis-py@VERSION"), "{e}");
        let e = resolve("redis-py@latest").unwrap_err();
        assert!(matches!(e, VersionError::BadVersion { .. }));
        assert!(e.to_string().contains("e.g. redis-py@4.4.0"), "{e}");
        assert_eq!(resolve("nope@1.0.0"), Ok(None));
        assert_eq!(resolve("ideal@1.0.0"), Ok(None));
    }
}
