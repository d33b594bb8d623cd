//! Client libraries recognised by what they send at connect, for servers where `CLIENT LIST` has no
//! `lib-name`. Redis before 7.2 does not know `CLIENT SETINFO`: it answers `ERR unknown
//! subcommand 'setinfo'`, counts the reply in `errorstat_ERR` and in no `cmdstat_*` (the
//! subcommand is not found, so no command's counters move; checked on Debian redis-server
//! 7.0.15). Libraries that send `CLIENT SETINFO LIB-NAME` and `LIB-VER` at every connect and ignore
//! the error therefore leave two `ERR` per connection; whether a `HELLO` precedes them, how many
//! `ERR` come per `HELLO` and whether the connection name comes in its own `CLIENT SETNAME` tell
//! which ones, as far as they can. Where `lib-name` is there, [`lib_name`] reads it.
//!
//! Each library's handshake, as its source writes it and as a live run of its real release left
//! it on Redis 7.0.15 (a three-master cluster, the app of `apps/` or `tests/scenarios/app.py`
//! naming its connections):
//!
//! | library | `HELLO` | `ERR` per `HELLO` (or per connection) | name | source |
//! |---|---|---|---|---|
//! | redis-py 5.0–7.4 | none (RESP2) | 2 per connection | `CLIENT SETNAME` | 5.0.0 `redis/connection.py:368-381` |
//! | redis-py 8.0 | each | 2 | `CLIENT SETNAME` | 8.0.0 `redis/utils.py:283` (RESP3) |
//! | redis-py 8.1+ | each | 3 (`CLIENT MAINT_NOTIFICATIONS ON` too) | `CLIENT SETNAME` | 8.1.0 `redis/asyncio/connection.py:371-413` |
//! | go-redis v9 | each | 2 | `CLIENT SETNAME` | v9.8.0 `redis.go:353-361` |
//! | ioredis 6.0 | each node connection; none on the `CLUSTER SLOTS` connection of a refresh (`protocol: 2`) | 2 and 2 more per refresh | `CLIENT SETNAME` | 6.0.0 `built/redis/event_handler.js:45-73`, `built/cluster/index.js:818-824` |
//! | ioredis 5.4–5.7 | none (RESP2) | none: no `CLIENT SETINFO` before 5.8.0 | `CLIENT SETNAME` | 5.8.2 `built/redis/event_handler.js:65-70` (where it begins) |
//! | node-redis 6.3 | each (RESP3), the name in it | 2, 3 with `CLIENT MAINT_NOTIFICATIONS` (clients given a host) | in `HELLO … SETNAME` | `@redis/client` 6.3.1 `dist/lib/client/index.js:548-551`, :588-603, :616-619 |
//! | Jedis 5 | none (RESP2) | 2 per connection | `CLIENT SETNAME` | 5.1.0 `redis/clients/jedis/Connection.java:410-437` |
//! | Valkey GLIDE 2.5 | each (two connections a node: user and management) | 2 | `CLIENT SETNAME` | release-2.5 `glide-core/redis-rs/redis/src/connection.rs:937-995` |
//! | redis-rs 1 | none (RESP2) | 2 per connection | the application's own `CLIENT SETNAME` | 1.8.1 `src/connection.rs:1443-1462` |
//!
//! Measured per connection on Redis 7.0.15: redis-py 5.0.0 10 `ERR` for 5 connections; 8.1.0 15
//! for 5 `HELLO`; go-redis 6 for 3 `HELLO`; ioredis 8 for 3 `HELLO` and 4 connections; node-redis
//! 11 for 4 `HELLO` and no `CLIENT SETNAME`; Jedis 10 for 5 connections. Lettuce 6.3 sends
//! `CLIENT SETINFO` only to servers 7.2 or later (`io/lettuce/core/RedisHandshake.java:249-262`):
//! on Redis 7.0 it leaves no rejection, so this fingerprint cannot see it.
//!
//! What cannot be told apart on Redis 7.0 this way: redis-py 5.0–7.4, Jedis 5 and redis-rs 1
//! (two `ERR` per connection without `HELLO`: all three are named, and none is claimed, since
//! issue 28: naming redis-py alone, the most run of the three, put redis-py's known defect on
//! real Jedis and redis-rs applications; the replay ranks the three by what the group did);
//! redis-py 8.0, go-redis v9 and GLIDE 2.5 (two per `HELLO`,
//! the name in `CLIENT SETNAME`); ioredis 6.0 from either of those or from redis-py 8.1+ (its refreshes'
//! connections add `ERR` without `HELLO`, so its ratio lies anywhere from 2 up); node-redis 6.3
//! is told from all but itself only when the connections carry a name (it sends it in `HELLO`).
//! ioredis before 5.8.0 leaves neither a rejection here nor a `lib-name` on a server that knows
//! `CLIENT SETINFO`: nothing names it (live: ioredis 5.4.1 on Redis 7.0.15 and Valkey 8.1.8,
//! `tests/tests/library_census.rs`).
//!
//! Handshakes cut short: a client whose connections are closed (a reset storm, `CLIENT KILL`)
//! between its `HELLO` and its `CLIENT SETINFO` replies leaves fewer `ERR` per `HELLO` than its
//! whole handshake. Under a fixed ratio (down to half of it) a library that says `HELLO` first
//! still fits, but only beside the others that fit and never alone against a whole fixed
//! handshake: then the hypotheses rank them by replay (a redis-py 8.1.0 storm left 2.28 per
//! `HELLO`, which alone named ioredis before).

use serde::Serialize;

use crate::info::{ServerIdentity, ServerName};

pub mod lib_name;

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
    /// The library, as `lib-name` names it where `CLIENT SETINFO` works (the key of
    /// [`crate::defect::DEFECTS`]; `glide` for GLIDE's `GlideJS`, `GlidePy`, …, as
    /// [`lib_name::library_of`] reads them).
    pub lib_name: &'static str,
    /// First version with this pattern (inclusive).
    pub from: (u32, u32, u32),
    /// Last version with this pattern (inclusive; `u32::MAX` parts for "any later").
    pub to: (u32, u32, u32),
    /// The versions in words (`5.0–7.4`).
    pub versions: &'static str,
    /// Whether it sends `HELLO` before `CLIENT SETINFO` (on its connections to the nodes).
    pub hello: bool,
    /// `ERR` replies per `HELLO` (with `hello`) or per connection (without) from a server that
    /// knows neither `CLIENT SETINFO` nor what else it sends at connect: the least and the most
    /// (`u32::MAX`: no bound).
    pub errors: (u32, u32),
    /// How it sends the connection name it is given.
    pub name: NameCommand,
    /// Where upstream this is read.
    pub source: &'static str,
}

impl Candidate {
    /// `redis-py 5.0–7.4`.
    pub fn label(&self) -> String {
        format!("{} {}", self.lib_name, self.versions)
    }
}

/// How a library sends the connection name it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NameCommand {
    /// Its own `CLIENT SETNAME` on every connection.
    Setname,
    /// Inside `HELLO` (`HELLO 3 SETNAME name`): no `CLIENT SETNAME` is counted.
    InHello,
}

/// Libraries that send `CLIENT SETINFO` at every connect and ignore its rejection.
pub const SETINFO_SENDERS: &[Candidate] = &[
    Candidate {
        lib_name: "redis-py",
        from: (5, 0, 0),
        to: (7, 4, u32::MAX),
        versions: "5.0–7.4",
        hello: false,
        errors: (2, 2),
        name: NameCommand::Setname,
        source: "redis-py 5.0.0 redis/connection.py:368-381 (on_connect), RESP2 default up to 7.4.x",
    },
    Candidate {
        lib_name: "jedis",
        from: (5, 0, 0),
        to: (5, u32::MAX, u32::MAX),
        versions: "5",
        hello: false,
        errors: (2, 2),
        name: NameCommand::Setname,
        source: "Jedis 5.1.0 redis/clients/jedis/Connection.java:410-437 (initializeFromClientConfig: CLIENT SETNAME, then CLIENT SETINFO LIB-NAME and LIB-VER, errors ignored; RESP2 unless told otherwise)",
    },
    Candidate {
        lib_name: "redis-rs",
        from: (1, 0, 0),
        to: (1, u32::MAX, u32::MAX),
        versions: "1",
        hello: false,
        errors: (2, 2),
        name: NameCommand::Setname,
        source: "redis-rs 1.8.1 src/connection.rs:1443-1462 (CLIENT SETINFO LIB-NAME and LIB-VER pipelined at connect, errors ignored; RESP2 by default)",
    },
    Candidate {
        lib_name: "redis-py",
        from: (8, 0, 0),
        to: (8, 0, u32::MAX),
        versions: "8.0",
        hello: true,
        errors: (2, 2),
        name: NameCommand::Setname,
        source: "redis-py 8.0.0 redis/utils.py:283 (DEFAULT_RESP_VERSION = 3) and redis/connection.py on_connect",
    },
    Candidate {
        lib_name: "redis-py",
        from: (8, 1, 0),
        to: (u32::MAX, u32::MAX, u32::MAX),
        versions: "8.1+",
        hello: true,
        errors: (3, 3),
        name: NameCommand::Setname,
        source: "redis-py 8.1.0 redis/asyncio/connection.py:371-413 (CLIENT MAINT_NOTIFICATIONS ON after HELLO 3)",
    },
    Candidate {
        lib_name: "go-redis",
        from: (9, 0, 0),
        to: (9, u32::MAX, u32::MAX),
        versions: "v9",
        hello: true,
        errors: (2, 2),
        name: NameCommand::Setname,
        source: "go-redis v9.8.0 redis.go:353-361 (baseClient.initConn)",
    },
    Candidate {
        lib_name: "glide",
        from: (2, 5, 0),
        to: (2, 5, u32::MAX),
        versions: "2.5",
        hello: true,
        errors: (2, 2),
        name: NameCommand::Setname,
        source: "valkey-glide release-2.5 (2eb52e77f) glide-core/redis-rs/redis/src/connection.rs:937-955 (CLIENT SETINFO LIB-NAME/LIB-VER), :956-995 (HELLO 3, then CLIENT SETNAME), on its user and its management connection to each node",
    },
    Candidate {
        lib_name: "ioredis",
        from: (6, 0, 0),
        to: (6, 0, u32::MAX),
        versions: "6.0",
        hello: true,
        errors: (2, u32::MAX),
        name: NameCommand::Setname,
        source: "ioredis 6.0.0 built/redis/event_handler.js:45-73 (handshake), built/cluster/index.js:818-824 (a refresh's CLUSTER SLOTS connection: protocol 2, no HELLO)",
    },
    Candidate {
        lib_name: "node-redis",
        from: (6, 3, 0),
        to: (6, 3, u32::MAX),
        versions: "6.3",
        hello: true,
        errors: (2, 3),
        name: NameCommand::InHello,
        source: "@redis/client 6.3.1 dist/lib/client/index.js:548-551 (HELLO … SETNAME), :588-603 (CLIENT SETINFO), :616-619 (CLIENT MAINT_NOTIFICATIONS)",
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
    /// `CLIENT SETNAME` calls.
    pub setname: u64,
    /// Whether the connections carry a name (`CLIENT LIST` `name`): then a library that sends
    /// it in its own `CLIENT SETNAME` leaves one per connection.
    pub named: bool,
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
    /// Libraries that fit too, but only as a ratio in their range or as handshakes cut short,
    /// set aside because a library's fixed handshake fits whole.
    pub set_aside: Vec<Candidate>,
    /// How sure.
    pub certainty: Certainty,
}

impl SetinfoRejection {
    /// The one library every fitting pattern belongs to (the ones set aside included), if one:
    /// only then does the fingerprint single out a library (its releases may still differ).
    pub fn library(&self) -> Option<&'static str> {
        let mut names = self
            .candidates
            .iter()
            .chain(&self.set_aside)
            .map(|c| c.lib_name);
        let first = names.next()?;
        names.all(|n| n == first).then_some(first)
    }
}

/// How far a measured `ERR` ratio may lie from a library's whole number and still fit it.
const TOLERANCE: f64 = 0.15;

/// The libraries whose connect pattern fits `counts` on a server that rejects `CLIENT SETINFO`
/// (`rejects`: as [`rejects_setinfo`] says): `None` when the server accepts it, when no
/// `ERR` came with the connections, or when the errors outnumber what the connections received
/// explain (something else is failing).
///
/// With about a `HELLO` per two `ERR` or more (at least half a `HELLO` per connection of two
/// errors), the libraries that say `HELLO` first are weighed by their `ERR` per `HELLO`; without,
/// those that leave two `ERR` per connection. A library whose ratio has a range (ioredis,
/// node-redis), or a fixed one above the measured (handshakes cut short), is named only when no
/// library's fixed ratio fits whole: a whole ratio is the mark of a fixed handshake. Connections that carry a name tell a library sending it in `CLIENT
/// SETNAME` (one per `HELLO`) from one sending it inside `HELLO` (none). `likely` when the server
/// is known to reject the command, `possible` when its version is unknown.
pub fn setinfo_rejection(
    counts: &HandshakeCounts,
    rejects: Option<bool>,
) -> Option<SetinfoRejection> {
    if rejects == Some(false) || counts.setinfo > 0 || counts.err < 2 {
        return None;
    }
    let err = crate::float::from_u64(counts.err);
    let hello_per_connection = crate::float::from_u64(counts.hello) / (err / 2.0);
    let fitting: Vec<(Candidate, u64, Fit)> = SETINFO_SENDERS
        .iter()
        .filter_map(|c| fit(c, counts, hello_per_connection).map(|(n, how)| (*c, n, how)))
        .collect();
    // A whole ratio is the mark of whole fixed handshakes: then nothing else is named.
    let whole = fitting.iter().any(|(_, _, how)| *how == Fit::Whole);
    let (fitting, set_aside): (Vec<_>, Vec<_>) = fitting
        .into_iter()
        .partition(|(_, _, how)| !whole || *how == Fit::Whole);
    let (_, connections, _) = *fitting.first()?;
    Some(SetinfoRejection {
        connections,
        hello_per_connection,
        candidates: fitting.into_iter().map(|(c, _, _)| c).collect(),
        set_aside: set_aside.into_iter().map(|(c, _, _)| c).collect(),
        certainty: if rejects == Some(true) {
            Certainty::Likely
        } else {
            Certainty::Possible
        },
    })
}

/// How a library's pattern fits the counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fit {
    /// A fixed handshake, whole: its ratio, give or take [`TOLERANCE`].
    Whole,
    /// A ratio in the library's range (ioredis, node-redis), or under its fixed one: handshakes
    /// cut short. A client that says `HELLO` first and whose connections a reset or a kill
    /// closes before their `CLIENT SETINFO` replies leaves fewer `ERR` per `HELLO` than its
    /// handshake sends (live, redis-py 8.1.0 on Redis 7.0.15 in a reset storm with
    /// `address_remap`: 15 945 `ERR` for 7 002 `HELLO`, 2.28 where whole ones leave 3).
    Other,
}

/// The least share of its fixed handshake's `ERR` a library that says `HELLO` first must leave
/// per `HELLO` to fit as handshakes cut short: half (fewer is no longer its mark).
const CUT_LEAST_SHARE: f64 = 0.5;

/// The connections `counts` shows if `c` made them, and how, when its pattern fits: its `HELLO`
/// or its `ERR` ratio in `c`'s range (or, for a fixed handshake after `HELLO`, under it down to
/// [`CUT_LEAST_SHARE`] of it: handshakes cut short), no more connections than were received,
/// and its way of naming connections where they carry a name.
fn fit(c: &Candidate, counts: &HandshakeCounts, hello_per_connection: f64) -> Option<(u64, Fit)> {
    let f = crate::float::from_u64;
    let (least, most) = (
        f64::from(c.errors.0),
        if c.errors.1 == u32::MAX {
            f64::INFINITY
        } else {
            f64::from(c.errors.1)
        },
    );
    let fixed = c.errors.0 == c.errors.1;
    let (connections, per, how) = if c.hello {
        if counts.hello == 0 {
            return None;
        }
        let ratio = f(counts.err) / f(counts.hello);
        let how = if fixed && (ratio - least).abs() <= TOLERANCE {
            Fit::Whole
        } else if fixed
            && ratio < least
            && ratio >= CUT_LEAST_SHARE * least
            && !(counts.named && counts.setname > counts.hello)
        {
            // Cut short: each of its connections says `HELLO` before it names itself, so named
            // connections without one (ioredis's refreshes) are not its.
            Fit::Other
        } else if !fixed && ratio >= least - TOLERANCE && ratio <= most + TOLERANCE {
            Fit::Other
        } else {
            return None;
        };
        // Errors beyond `least` per HELLO come from connections without one (two each).
        let extra = counts
            .err
            .saturating_sub(u64::from(c.errors.0) * counts.hello)
            / 2;
        let connections = if c.errors.1 == u32::MAX {
            counts.hello + extra
        } else {
            counts.hello
        };
        (connections, counts.hello, how)
    } else {
        if hello_per_connection >= 0.5 {
            return None;
        }
        let connections = counts.err / u64::from(c.errors.0.max(1));
        let how = if fixed { Fit::Whole } else { Fit::Other };
        (connections, connections, how)
    };
    if connections == 0 || connections > counts.connections {
        return None;
    }
    if counts.named && per > 0 {
        let setname_per = f(counts.setname) / f(per);
        let fits = match c.name {
            NameCommand::Setname => setname_per >= 0.5,
            NameCommand::InHello => setname_per < 0.25,
        };
        if !fits {
            return None;
        }
    }
    Some((connections, how))
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
    fn two_errors_per_connection_without_hello_is_redis_py_5_to_7_jedis_5_or_redis_rs_1() {
        let c = HandshakeCounts {
            connections: 3,
            err: 4,
            hello: 0,
            setinfo: 0,
            ..HandshakeCounts::default()
        };
        let r = setinfo_rejection(&c, Some(true)).unwrap();
        assert_eq!(r.connections, 2);
        assert_eq!(r.certainty, Certainty::Likely);
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["redis-py 5.0–7.4", "jedis 5", "redis-rs 1"]);
        assert_eq!(r.library(), None);
    }

    #[test]
    fn named_connections_tell_ioredis_and_node_redis_from_the_fixed_handshakes() {
        // Live runs on Redis 7.0.15, connections named by the app (the module's table).
        let ioredis = HandshakeCounts {
            connections: 4,
            err: 8,
            hello: 3,
            setname: 4,
            named: true,
            ..HandshakeCounts::default()
        };
        let r = setinfo_rejection(&ioredis, Some(true)).unwrap();
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["ioredis 6.0"]);
        assert_eq!(r.connections, 4);
        let node_redis = HandshakeCounts {
            connections: 4,
            err: 11,
            hello: 4,
            setname: 0,
            named: true,
            ..HandshakeCounts::default()
        };
        let r = setinfo_rejection(&node_redis, Some(true)).unwrap();
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["node-redis 6.3"]);
        // Unnamed, three per HELLO is redis-py 8.1's fixed handshake first.
        let unnamed = HandshakeCounts {
            err: 12,
            named: false,
            ..node_redis
        };
        let r = setinfo_rejection(&unnamed, Some(true)).unwrap();
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["redis-py 8.1+"]);
        // Named and three per HELLO without CLIENT SETNAME: not redis-py.
        let named = HandshakeCounts {
            named: true,
            ..unnamed
        };
        let r = setinfo_rejection(&named, Some(true)).unwrap();
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["node-redis 6.3"]);
    }

    #[test]
    fn a_pattern_singles_out_a_library_only_when_no_other_leaves_it() {
        // No HELLO, two ERR a connection: redis-py 5.0–7.4, Jedis 5 and redis-rs 1 alike.
        let py5 = HandshakeCounts {
            connections: 3,
            err: 4,
            ..HandshakeCounts::default()
        };
        assert_eq!(setinfo_rejection(&py5, Some(true)).unwrap().library(), None);
        // Named connections, more CLIENT SETNAME than HELLO and between two and three ERR per
        // HELLO: ioredis's refreshes, which no other library leaves (live, the module's table).
        let ioredis = HandshakeCounts {
            connections: 4,
            err: 8,
            hello: 3,
            setname: 4,
            named: true,
            ..HandshakeCounts::default()
        };
        assert_eq!(
            setinfo_rejection(&ioredis, Some(true)).unwrap().library(),
            Some("ioredis")
        );
        // HELLO, then two ERR: redis-py 8.0, go-redis v9 and GLIDE 2.5 alike.
        let hello2 = HandshakeCounts {
            connections: 23,
            err: 46,
            hello: 23,
            ..HandshakeCounts::default()
        };
        let r = setinfo_rejection(&hello2, Some(true)).unwrap();
        assert!(r.candidates.len() > 1);
        assert_eq!(r.library(), None);
        // HELLO, then three ERR: redis-py 8.1+ whole, but node-redis's and ioredis's ranges hold
        // three as well (set aside, still fitting).
        let hello3 = HandshakeCounts { err: 69, ..hello2 };
        let r = setinfo_rejection(&hello3, Some(true)).unwrap();
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["redis-py 8.1+"]);
        assert!(!r.set_aside.is_empty());
        assert_eq!(r.library(), None);
    }

    #[test]
    fn handshakes_cut_short_still_point_at_their_library() {
        // A live run of the real redis-py 8.1.0 on Redis 7.0.15 in a reset storm with
        // `address_remap` (story case 2062304212737200144, every node): connections closed
        // between their `HELLO` and their `CLIENT SETINFO` replies, 2.28 `ERR` per `HELLO`.
        let storm = HandshakeCounts {
            connections: 8294,
            err: 15_945,
            hello: 7002,
            setname: 5775,
            named: true,
            ..HandshakeCounts::default()
        };
        let r = setinfo_rejection(&storm, Some(true)).unwrap();
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["redis-py 8.1+", "ioredis 6.0"]);
        assert_eq!(r.connections, 7002);
        // Under half of its handshake's errors is no longer its mark (those of two per `HELLO`,
        // cut short, are left).
        let few = HandshakeCounts {
            err: 7002 * 3 / 2 - 2,
            ..storm
        };
        let r = setinfo_rejection(&few, Some(true)).unwrap();
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["redis-py 8.0", "go-redis v9", "glide 2.5"]);
        // Named connections without a `HELLO` (ioredis's refreshes) are no cut handshakes.
        let refreshes = HandshakeCounts {
            setname: 7100,
            ..storm
        };
        let r = setinfo_rejection(&refreshes, Some(true)).unwrap();
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["ioredis 6.0"]);
    }

    #[test]
    fn hello_first_points_at_redis_py_8_or_go_redis() {
        let c = HandshakeCounts {
            connections: 23,
            err: 46,
            hello: 23,
            setinfo: 0,
            ..HandshakeCounts::default()
        };
        let r = setinfo_rejection(&c, None).unwrap();
        assert_eq!(r.certainty, Certainty::Possible);
        let labels: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
        assert_eq!(labels, ["redis-py 8.0", "go-redis v9", "glide 2.5"]);
    }

    #[test]
    fn three_errors_per_hello_is_redis_py_8_1_or_later() {
        // One node of a live run of the real redis-py 8.1.0 on Redis 7.0.15.
        let c = HandshakeCounts {
            connections: 1358,
            err: 2652,
            hello: 884,
            setinfo: 0,
            ..HandshakeCounts::default()
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
            ..HandshakeCounts::default()
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
