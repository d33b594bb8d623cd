//! The library a `lib-name` names. Libraries send `CLIENT SETINFO LIB-NAME` in their own
//! spelling, some with a suffix. What each real release sent to Valkey 8.1 in a live run
//! (`tests/tests/library_census.rs` checks every library the matrix runs), and where it is built:
//!
//! - redis-py 5.0.0 / 8.1.0: `redis-py` (5.0.0 `redis/connection.py:144`, `lib_name="redis-py"`,
//!   sent at :371).
//! - ioredis 6.0.0: `ioredis`, `ioredis(<clientInfoTag>)` with a tag
//!   (`built/redis/event_handler.js:68-73`).
//! - node-redis 6.3.1: `node-redis`, `node-redis(<clientInfoTag>)` with a tag
//!   (`@redis/client` `dist/lib/client/index.js:596-603`).
//! - go-redis v9.8.0: `go-redis(<IdentitySuffix>,<Go version>)`, e.g. `go-redis(,go1.26.8)`
//!   (`commands.go:320`).
//! - Jedis 5.1.0: `jedis`, `jedis(<libNameSuffix>)` (`redis/clients/jedis/Connection.java:420-428`).
//! - Lettuce 6.3.2: `Lettuce` (`LettuceVersion.getName()`, `io/lettuce/core/RedisURI.java:235`;
//!   sent only to servers 7.2 or later, `io/lettuce/core/RedisHandshake.java:249-262`; its
//!   `lib-ver` is the jar manifest's version, empty when the jar was repackaged without it).
//! - Valkey GLIDE and redis-rs: the names of [`LIB_NAMES`] below.

/// A `lib-name` (without its `(…)` suffix, compared case-insensitively) and the replay library it
/// is.
pub const LIB_NAMES: &[(&str, &str)] = &[
    ("redis-py", "redis-py"),
    ("ioredis", "ioredis"),
    ("node-redis", "node-redis"),
    ("go-redis", "go-redis"),
    ("jedis", "jedis"),
    ("lettuce", "lettuce"),
    ("glidejs", "glide"),
    ("glidepy", "glide"),
    ("glidejava", "glide"),
    ("glidego", "glide"),
    ("redis-rs", "redis-rs"),
];

/// The replay library (a [`Coverage`](crate::replay::Coverage)'s `library`) that `lib_name`
/// names: `go-redis(,go1.26.8)` → `go-redis`, `Lettuce` → `lettuce`; `None` for a name the
/// table does not know.
pub fn library_of(lib_name: &str) -> Option<&'static str> {
    let base = lib_name
        .split_once('(')
        .map_or(lib_name, |(b, _)| b)
        .trim()
        .to_ascii_lowercase();
    LIB_NAMES
        .iter()
        .find(|(name, _)| *name == base)
        .map(|(_, library)| *library)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_and_spellings_name_the_library() {
        assert_eq!(library_of("go-redis(,go1.26.8)"), Some("go-redis"));
        assert_eq!(library_of("Lettuce"), Some("lettuce"));
        assert_eq!(library_of("jedis(spring)"), Some("jedis"));
        assert_eq!(library_of("redis-py"), Some("redis-py"));
        assert_eq!(library_of("GlideJS"), Some("glide"));
        assert_eq!(library_of("hiredis"), None);
        assert_eq!(library_of(""), None);
    }
}
