//! Client libraries recognised by what they send at connect, for servers where `CLIENT LIST` has no
//! `lib-name`. Redis before 7.2 does not know `CLIENT SETINFO`: it answers `ERR unknown
//! subcommand 'setinfo'`, counts the reply in `errorstat_ERR` and in no `cmdstat_*` (the
//! subcommand is not found, so no command's counters move; checked on Debian redis-server
//! 7.0.15). Libraries that send `CLIENT SETINFO LIB-NAME` and `LIB-VER` at every connect and ignore
//! the error therefore leave two `ERR` per connection; whether a `HELLO` precedes them tells
//! which ones.
//!
//! Sources (what each library sends at connect):
//! - redis-py 5.0.0 `redis/connection.py` 368–381 (`AbstractConnection.on_connect`): `CLIENT
//!   SETINFO LIB-NAME`, then `LIB-VER`, each in `try … except ResponseError: pass`; 4.6.0 sends
//!   only `CLIENT SETNAME`. `HELLO` only when `protocol` is not 2, and the default is 2 up to 7.4.x
//!   (`DEFAULT_RESP_VERSION = 2`, 5.0.0 `connection.py` 46, 7.2.0 108, 7.4.1 112); 8.0.0 makes it 3
//!   (`redis/utils.py` 283: `DEFAULT_RESP_VERSION = 3`) and sends `HELLO 3` first.
//! - redis-py 8.1.0 also sends `CLIENT MAINT_NOTIFICATIONS ON` after `HELLO 3` (asyncio
//!   `redis/asyncio/connection.py` 371–391 `activate_maint_notifications_handling_if_enabled`, the
//!   command at 407–413; the default `enabled="auto"` only logs its rejection), which Redis 7.0
//!   rejects as well: three `ERR` per connection, one per `HELLO` (seen on Redis 7.0.15 with the
//!   real 8.1.0: 2652 `ERR` against 884 `HELLO` on one node). 8.0.x does not send it.
//! - go-redis v9 `redis.go` `baseClient.initConn`: `HELLO` with protocol 3 by default, then the two
//!   `CLIENT SETINFO` in one pipeline, ignoring Redis errors (`!isRedisError(err)`).
//!
//! Without `HELLO`, two `ERR` per connection are redis-py 5.0–7.4's; with a `HELLO` per
//! connection, the `ERR` per `HELLO` tell redis-py 8.1+ (three) from redis-py 8.0 and go-redis v9
//! (two, which nothing here tells apart).

use serde::Serialize;

use crate::info::{ServerIdentity, ServerName};

/// How sure an identification is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Certainty {
    /// The pattern fits, but other clients could make it too.
    Possible,
    /// The pattern fits per connection and the server is known to reject `CLIENT SETINFO`.
    Likely,
}

impl Certainty {
    /// `possible` / `likely`.
    pub fn word(self) -> &'static str {
        match self {
            Certainty::Possible => "possible",
            Certainty::Likely => "likely",
        }
    }
}

/// A library (a range of its versions) that could have made a handshake pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// `lib-name` the library reports where `CLIENT SETINFO` works (the key of
    /// [`crate::defect::DEFECTS`]).
    pub lib_name: &'static str,
    /// First version with this pattern (inclusive).
    pub from: (u32, u32, u32),
    /// Last version with this pattern (inclusive; `u32::MAX` parts for "any later").
    pub to: (u32, u32, u32),
    /// The versions in words (`5.0–7.4`).
    pub versions: &'static str,
    /// Whether it sends `HELLO` before `CLIENT SETINFO` on every connection.
    pub hello: bool,
    /// `ERR` replies per connection from a server that knows neither `CLIENT SETINFO` nor what
    /// else it sends at connect.
    pub errors_per_connection: u32,
    /// Where upstream this is read.
    pub source: &'static str,
}

impl Candidate {
    /// `redis-py 5.0–7.4`.
    pub fn label(&self) -> String {
        format!("{} {}", self.lib_name, self.versions)
    }
}

/// Libraries that send `CLIENT SETINFO` at every connect and ignore its rejection.
pub const SETINFO_SENDERS: &[Candidate] = &[
    Candidate {
        lib_name: "redis-py",
        from: (5, 0, 0),
        to: (7, 4, u32::MAX),
        versions: "5.0–7.4",
        hello: false,
        errors_per_connection: 2,
        source: "redis-py 5.0.0 redis/connection.py:368-381 (on_connect), RESP2 default up to 7.4.x",
    },
    Candidate {
        lib_name: "redis-py",
        from: (8, 0, 0),
        to: (8, 0, u32::MAX),
        versions: "8.0",
        hello: true,
        errors_per_connection: 2,
        source: "redis-py 8.0.0 redis/utils.py:283 (DEFAULT_RESP_VERSION = 3) and redis/connection.py on_connect",
    },
    Candidate {
        lib_name: "redis-py",
        from: (8, 1, 0),
        to: (u32::MAX, u32::MAX, u32::MAX),
        versions: "8.1+",
        hello: true,
        errors_per_connection: 3,
        source: "redis-py 8.1.0 redis/asyncio/connection.py:371-413 (CLIENT MAINT_NOTIFICATIONS ON after HELLO 3)",
    },
    Candidate {
        lib_name: "go-redis",
        from: (9, 0, 0),
        to: (9, u32::MAX, u32::MAX),
        versions: "v9",
        hello: true,
        errors_per_connection: 2,
        source: "go-redis v9 redis.go baseClient.initConn",
    },
];

/// Whether `server` rejects `CLIENT SETINFO`: `Some(true)` for Redis before 7.2, `Some(false)` for
/// Redis 7.2 and later and for Valkey (which starts at 7.2), `None` when unknown.
pub fn rejects_setinfo(server: &ServerIdentity) -> Option<bool> {
    let v = crate::defect::parse_version(&server.version)?;
    match server.name {
        ServerName::Redis => Some(v < (7, 2, 0)),
        ServerName::Valkey => Some(false),
        ServerName::Other(_) => None,
    }
}

/// Whether the servers of a recording reject `CLIENT SETINFO`: `Some(true)` when any does,
/// `Some(false)` when all are known to accept it, `None` otherwise (no server known).
pub fn any_rejects_setinfo<'a>(servers: impl Iterator<Item = &'a ServerIdentity>) -> Option<bool> {
    let (mut any, mut unknown) = (false, false);
    for s in servers {
        any = true;
        match rejects_setinfo(s) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    (any && !unknown).then_some(false)
}

/// What a set of connections did at connect, summed from the counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HandshakeCounts {
    /// Connections accepted (`total_connections_received`).
    pub connections: u64,
    /// `ERR` replies (`errorstat_ERR`).
    pub err: u64,
    /// `HELLO` calls.
    pub hello: u64,
    /// `CLIENT SETINFO` calls counted by the server (it knows the command).
    pub setinfo: u64,
}

/// A `CLIENT SETINFO` rejection fingerprint: who could have made it and how sure that is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SetinfoRejection {
    /// Connections the rejections account for (two `ERR` each).
    pub connections: u64,
    /// `HELLO` calls per such connection.
    pub hello_per_connection: f64,
    /// The libraries that fit.
    pub candidates: Vec<Candidate>,
    /// How sure.
    pub certainty: Certainty,
}

/// The libraries whose connect pattern fits `counts` on a server that rejects `CLIENT SETINFO`
/// (`rejects`: as [`rejects_setinfo`] says): `None` when the server accepts it, when no
/// `ERR` came with the connections, or when the errors outnumber what the connections received
/// explain (something else is failing).
///
/// With about a `HELLO` per two `ERR` or more (at least half a `HELLO` per connection of two
/// errors), the senders say `HELLO` first: one connection per `HELLO`, and the `ERR` per `HELLO`
/// (nearest whole number) choose among them; without, each connection leaves two `ERR`, so
/// `err / 2` connections are theirs. `likely` when the server is known to reject the command,
/// `possible` when its version is unknown.
pub fn setinfo_rejection(
    counts: &HandshakeCounts,
    rejects: Option<bool>,
) -> Option<SetinfoRejection> {
    if rejects == Some(false) || counts.setinfo > 0 || counts.err < 2 {
        return None;
    }
    let err = crate::float::from_u64(counts.err);
    let hello_per_connection = crate::float::from_u64(counts.hello) / (err / 2.0);
    let hello = hello_per_connection >= 0.5;
    let (conns, per_connection) = if hello {
        let per_hello = err / crate::float::from_u64(counts.hello);
        // A small whole number: at most a few per connection, or the fit fails below.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let per = per_hello.round().clamp(0.0, 16.0) as u32;
        (counts.hello, per)
    } else {
        (counts.err / 2, 2)
    };
    if conns == 0 || conns > counts.connections {
        return None;
    }
    let candidates: Vec<Candidate> = SETINFO_SENDERS
        .iter()
        .copied()
        .filter(|c| c.hello == hello && c.errors_per_connection == per_connection)
        .collect();
    if candidates.is_empty() {
        return None;
    }
    Some(SetinfoRejection {
        connections: conns,
        hello_per_connection,
        candidates,
        certainty: if rejects == Some(true) {
            Certainty::Likely
        } else {
            Certainty::Possible
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: ServerName, version: &str) -> ServerIdentity {
        ServerIdentity {
            name,
            version: version.into(),
        }
    }

    #[test]
    fn only_redis_before_7_2_rejects_setinfo() {
        assert_eq!(
            rejects_setinfo(&server(ServerName::Redis, "7.0.15")),
            Some(true)
        );
        assert_eq!(
            rejects_setinfo(&server(ServerName::Redis, "7.2.4")),
            Some(false)
        );
        assert_eq!(
            rejects_setinfo(&server(ServerName::Valkey, "8.1.1")),
            Some(false)
        );
        assert_eq!(rejects_setinfo(&server(ServerName::Redis, "")), None);
    }

    #[test]
    fn two_errors_per_connection_without_hello_is_redis_py_5_to_7() {
        let c = HandshakeCounts {
            connections: 3,
            err: 4,
            hello: 0,
            setinfo: 0,
        };
        let r = setinfo_rejection(&c, Some(true)).unwrap();
        assert_eq!(r.connections, 2);
        assert_eq!(r.certainty, Certainty::Likely);
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["redis-py 5.0–7.4"]);
    }

    #[test]
    fn hello_first_points_at_redis_py_8_or_go_redis() {
        let c = HandshakeCounts {
            connections: 23,
            err: 46,
            hello: 23,
            setinfo: 0,
        };
        let r = setinfo_rejection(&c, None).unwrap();
        assert_eq!(r.certainty, Certainty::Possible);
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["redis-py 8.0", "go-redis v9"]);
    }

    #[test]
    fn three_errors_per_hello_is_redis_py_8_1_or_later() {
        // One node of a live run of the real redis-py 8.1.0 on Redis 7.0.15.
        let c = HandshakeCounts {
            connections: 1358,
            err: 2652,
            hello: 884,
            setinfo: 0,
        };
        let r = setinfo_rejection(&c, Some(true)).unwrap();
        assert_eq!(r.connections, 884);
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["redis-py 8.1+"]);
        // More errors than what the handshakes explain is something else failing.
        let four = HandshakeCounts { err: 4 * 884, ..c };
        assert!(setinfo_rejection(&four, Some(true)).is_none());
    }

    #[test]
    fn no_fingerprint_where_setinfo_works_or_errors_are_something_else() {
        let c = HandshakeCounts {
            connections: 2,
            err: 4,
            hello: 0,
            setinfo: 0,
        };
        assert!(setinfo_rejection(&c, Some(false)).is_none());
        let many = HandshakeCounts { err: 40, ..c };
        assert!(
            setinfo_rejection(&many, Some(true)).is_none(),
            "20 connections' worth from 2"
        );
        let none = HandshakeCounts { err: 1, ..c };
        assert!(setinfo_rejection(&none, Some(true)).is_none());
        let counted = HandshakeCounts { setinfo: 4, ..c };
        assert!(
            setinfo_rejection(&counted, None).is_none(),
            "the server knows SETINFO"
        );
    }
}
