//! Library versions, not model names: `redis-py@8.1.0` resolves to the model that covers that
//! release (`redis-py@8.0.0`, which covers 7.2.0–8.x), and a release no model covers is an error
//! listing what each library's models cover.
//!
//! Each model's descriptor gives the range it covers ([`ModelDescriptor::coverage`]), and its
//! documentation the library source that justifies it; `ideal` is no library: it is only a
//! name.

use super::descriptor::ModelDescriptor;
use super::models::MODELS;
use super::release::{Coverage, Version};

/// Every library release range a model covers, with the model, in the order of
/// [`MODELS`] (by library, then release).
pub fn coverage() -> impl Iterator<Item = (&'static ModelDescriptor, &'static Coverage)> {
    MODELS
        .iter()
        .filter_map(|m| m.coverage.as_ref().map(|c| (*m, c)))
}

/// The range `model` covers (`None` for `ideal` and unknown names).
pub fn covers(model: &str) -> Option<&'static Coverage> {
    coverage().find(|(m, _)| m.name == model).map(|(_, c)| c)
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
    for (_, c) in coverage() {
        if !libs.contains(&c.library) {
            libs.push(c.library);
        }
    }
    let per_lib: Vec<String> = libs
        .iter()
        .map(|lib| {
            let parts: Vec<String> = coverage()
                .filter(|(_, c)| c.library == *lib)
                .map(|(m, c)| format!("{} ({})", c.range, m.name))
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
    if let Some(m) = MODELS.iter().find(|m| m.name == asked) {
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
    let Some((_, first)) = coverage().find(|(_, c)| c.library == library_lc) else {
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
    match coverage().find(|(_, c)| c.library == first.library && c.contains(version)) {
        Some((m, _)) => Ok(Some(Resolved {
            model: m.name,
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
        assert_eq!(model_of("jedis@6.2.0"), "jedis@5.1.0");
        assert_eq!(model_of("lettuce@6.8.2.RELEASE"), "lettuce@6.3.2");
        assert_eq!(model_of("go-redis@v9.14.1"), "go-redis@9.8.0");
        assert_eq!(model_of("ioredis@5.4.1"), "ioredis@6.0.0");
        assert_eq!(model_of("node-redis@6.4.0"), "node-redis@6.3.1");
        assert_eq!(model_of("redis-rs@1.8.0"), "redis-rs@1.8.1");
    }

    #[test]
    fn a_model_named_is_that_model_and_its_label_is_unchanged() {
        for m in MODELS {
            let r = resolve(m.name).unwrap().unwrap();
            assert_eq!(r.model, m.name);
            assert_eq!(r.label(), m.name);
        }
        // Every model but `ideal` covers a range that holds its own release.
        for (m, c) in coverage() {
            let own = Version::parse(m.name.split_once('@').unwrap().1).unwrap();
            assert!(c.contains(own), "{} does not cover itself", m.name);
            assert!(m.name.starts_with(&format!("{}@", c.library)), "{}", m.name);
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
        let all: Vec<&Coverage> = coverage().map(|(_, c)| c).collect();
        for pair in all.windows(2) {
            if pair[0].library == pair[1].library {
                assert_eq!(pair[0].until, pair[1].from, "{pair:?}");
            }
        }
        for c in &all {
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
            "go-redis@9.7.3",
            "go-redis@9.17.0",
            "lettuce@6.9.0",
            "lettuce@5.3.7.RELEASE",
            "jedis@4.4.3",
            "jedis@7.0.0",
            "redis-rs@0.27.0",
        ] {
            let e = resolve(asked).unwrap_err();
            assert!(matches!(e, VersionError::Uncovered { .. }), "{asked}: {e}");
            let msg = e.to_string();
            assert!(msg.contains(asked), "{msg}");
            for (_, c) in coverage() {
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
