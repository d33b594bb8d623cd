//! The collector's command allowlist: the only commands it ever sends to a cluster node.
//!
//! The collector is read-only towards the cluster. Every command is built as a [`Command`] value and
//! checked once more against [`ALLOWLIST`] by [`check_allowed`] at the single place where bytes are
//! written to a server ([`crate::node::connection::Connection::pipeline`]), so a command outside the list
//! cannot be sent even by mistake.

use crate::node::secret::Secret;

/// Commands (with subcommand where the command has them) the collector may send.
pub const ALLOWLIST: &[&[&str]] = &[
    &["CLUSTER", "SHARDS"],
    &["CLUSTER", "SLOTS"],
    &["CLUSTER", "NODES"],
    &["CLUSTER", "INFO"],
    &["INFO"],
    &["CLIENT", "LIST"],
    &["PING"],
    &["HELLO"],
    &["AUTH"],
];

/// The `INFO` sections the collector asks for.
pub const INFO_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "stats",
    "commandstats",
    "errorstats",
    "keyspace",
    "memory",
];

/// A command the collector sends.
#[derive(Debug, Clone, Copy)]
pub enum Command<'a> {
    /// `CLUSTER SHARDS` (Redis 7+, Valkey).
    ClusterShards,
    /// `CLUSTER SLOTS` (fallback).
    ClusterSlots,
    /// `CLUSTER NODES`: own id, flags and migrating / importing slots.
    ClusterNodes,
    /// `CLUSTER INFO`.
    ClusterInfo,
    /// `INFO <sections…>`.
    Info(&'a [&'a str]),
    /// `CLIENT LIST`.
    ClientList,
    /// `AUTH [user] password`.
    Auth {
        /// ACL user name, if any.
        user: Option<&'a str>,
        /// The password.
        password: &'a Secret,
    },
}

impl Command<'_> {
    /// The arguments as sent on the wire.
    pub fn argv(&self) -> Vec<Vec<u8>> {
        let words: Vec<&[u8]> = match self {
            Command::ClusterShards => vec![b"CLUSTER", b"SHARDS"],
            Command::ClusterSlots => vec![b"CLUSTER", b"SLOTS"],
            Command::ClusterNodes => vec![b"CLUSTER", b"NODES"],
            Command::ClusterInfo => vec![b"CLUSTER", b"INFO"],
            Command::Info(sections) => std::iter::once(&b"INFO"[..])
                .chain(sections.iter().map(|s| s.as_bytes()))
                .collect(),
            Command::ClientList => vec![b"CLIENT", b"LIST"],
            Command::Auth { user, password } => {
                let mut v: Vec<&[u8]> = vec![b"AUTH"];
                if let Some(u) = user {
                    v.push(u.as_bytes());
                }
                v.push(password.expose().as_bytes());
                v
            }
        };
        words.into_iter().map(<[u8]>::to_vec).collect()
    }

    /// A name for logs and failure events: never includes arguments (so never a secret).
    pub fn name(&self) -> &'static str {
        match self {
            Command::ClusterShards => "CLUSTER SHARDS",
            Command::ClusterSlots => "CLUSTER SLOTS",
            Command::ClusterNodes => "CLUSTER NODES",
            Command::ClusterInfo => "CLUSTER INFO",
            Command::Info(_) => "INFO",
            Command::ClientList => "CLIENT LIST",
            Command::Auth { .. } => "AUTH",
        }
    }
}

/// A command outside the allowlist was about to be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to send `{0}`: not on the collector's read-only allowlist")]
pub struct Forbidden(pub String);

/// Checks `argv` against [`ALLOWLIST`] (case-insensitively, on the command and its subcommand).
pub fn check_allowed(argv: &[Vec<u8>]) -> Result<(), Forbidden> {
    let word = |i: usize| {
        argv.get(i)
            .map(|w| String::from_utf8_lossy(w).to_ascii_uppercase())
    };
    let cmd = word(0).unwrap_or_default();
    let sub = word(1);
    let allowed = ALLOWLIST.iter().any(|entry| match entry {
        [c] => *c == cmd,
        [c, s] => *c == cmd && sub.as_deref() == Some(*s),
        _ => false,
    });
    if allowed {
        Ok(())
    } else {
        // Only the command word(s) are named: arguments could be anything.
        let shown = match (ALLOWLIST.iter().any(|e| e.len() == 2 && e[0] == cmd), sub) {
            (true, Some(s)) => format!("{cmd} {s}"),
            _ => cmd,
        };
        Err(Forbidden(shown))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn every_command_the_collector_builds_is_allowed() {
        let pw = Secret::new("hunter2".into());
        let all = [
            Command::ClusterShards,
            Command::ClusterSlots,
            Command::ClusterNodes,
            Command::ClusterInfo,
            Command::Info(INFO_SECTIONS),
            Command::ClientList,
            Command::Auth {
                user: Some("slotscope"),
                password: &pw,
            },
            Command::Auth {
                user: None,
                password: &pw,
            },
        ];
        for c in all {
            assert_eq!(check_allowed(&c.argv()), Ok(()), "{}", c.name());
            assert!(!c.name().contains("hunter2"));
        }
    }

    #[test]
    fn writes_and_admin_commands_are_refused() {
        for words in [
            &["SET", "k", "v"][..],
            &["FLUSHALL"],
            &["CONFIG", "SET", "save", ""],
            &["CONFIG", "RESETSTAT"],
            &["CLUSTER", "SETSLOT", "1", "NODE", "x"],
            &["CLUSTER", "FORGET", "x"],
            &["CLUSTER", "RESET"],
            &["CLIENT", "KILL", "ID", "1"],
            &["CLIENT", "SETNAME", "x"],
            &["DEBUG", "SLEEP", "1"],
            &["SHUTDOWN"],
            &["MIGRATE"],
            &["CLUSTER"],
            &[],
        ] {
            assert!(
                check_allowed(&argv(words)).is_err(),
                "{words:?} was allowed"
            );
        }
    }

    #[test]
    fn the_check_ignores_case_like_the_server() {
        assert!(check_allowed(&argv(&["cluster", "shards"])).is_ok());
        assert!(check_allowed(&argv(&["info", "stats"])).is_ok());
        let e = check_allowed(&argv(&["config", "set", "requirepass", "x"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "refusing to send `CONFIG`: not on the collector's read-only allowlist"
        );
    }
}
