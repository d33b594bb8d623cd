//! `CLIENT LIST` replies: one connection per line, space-separated `key=value` fields.
//!
//! The field set differs between servers and versions (Valkey 8.1.8 adds `capa`, `watch`,
//! `lib-name`, `lib-ver`, `tot-net-in`, `tot-net-out` and `tot-cmds`, which Redis 7.0.15 lacks), so
//! every field is kept as text and the accessors parse the common ones on demand.

use crate::field_map::FieldMap;

use serde::{Deserialize, Serialize};

/// One connection of a `CLIENT LIST` reply, with every field the server gives, as text.
/// Serialised as a plain JSON object (`{"id":"8","addr":"127.0.0.1:54962",…}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClientEntry {
    /// Field name → value (possibly empty, as in `name=`).
    pub fields: FieldMap,
}

impl ClientEntry {
    /// The raw value of `field`, if the server gave it (possibly empty).
    pub fn get(&self, field: &str) -> Option<&str> {
        self.fields.get(field)
    }

    /// `field` if present and not empty.
    fn non_empty(&self, field: &str) -> Option<&str> {
        self.get(field).filter(|v| !v.is_empty())
    }

    /// `field` parsed as an unsigned integer.
    fn number(&self, field: &str) -> Option<u64> {
        self.get(field)?.parse().ok()
    }

    /// Unique, increasing connection id (`id`).
    pub fn id(&self) -> Option<u64> {
        self.number("id")
    }

    /// Peer address (`addr`): `ip:port`, `[ipv6]:port`, or `path:0` for a Unix socket.
    pub fn addr(&self) -> Option<&str> {
        self.non_empty("addr")
    }

    /// Local address the connection arrived at (`laddr`).
    pub fn laddr(&self) -> Option<&str> {
        self.non_empty("laddr")
    }

    /// Name set by `CLIENT SETNAME` (`name`); `None` if unset (the server prints `name=`).
    pub fn name(&self) -> Option<&str> {
        self.non_empty("name")
    }

    /// Seconds since the connection was made (`age`).
    pub fn age_secs(&self) -> Option<u64> {
        self.number("age")
    }

    /// Seconds since the last command (`idle`).
    pub fn idle_secs(&self) -> Option<u64> {
        self.number("idle")
    }

    /// Last command run (`cmd`), subcommands as `client|list`.
    pub fn cmd(&self) -> Option<&str> {
        self.non_empty("cmd")
    }

    /// Client library name from `CLIENT SETINFO LIB-NAME` (`lib-name`, Redis 7.2+ and Valkey);
    /// `None` if unset or not reported.
    pub fn lib_name(&self) -> Option<&str> {
        self.non_empty("lib-name")
    }

    /// Client library version from `CLIENT SETINFO LIB-VER` (`lib-ver`); `None` if unset or not
    /// reported.
    pub fn lib_ver(&self) -> Option<&str> {
        self.non_empty("lib-ver")
    }

    /// Commands run on the connection (`tot-cmds`, Valkey 8 / Redis 7.4+).
    pub fn tot_cmds(&self) -> Option<u64> {
        self.number("tot-cmds")
    }

    /// Authenticated ACL user (`user`).
    pub fn user(&self) -> Option<&str> {
        self.non_empty("user")
    }

    /// Flag letters (`flags`): `N` normal, `S` replica, `M` primary, `P` pub/sub, `x` in MULTI, ….
    pub fn flags(&self) -> Option<&str> {
        self.non_empty("flags")
    }

    /// The host part of [`addr`](Self::addr), without IPv6 brackets (`[::1]:39128` → `::1`).
    pub fn client_host(&self) -> Option<&str> {
        let addr = self.addr()?;
        if let Some(rest) = addr.strip_prefix('[') {
            return rest.split_once(']').map(|(host, _)| host);
        }
        let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
        (!host.is_empty()).then_some(host)
    }
}

/// Why a `CLIENT LIST` text could not be parsed. Line numbers count from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientListError {
    /// A token of a line has no `=`.
    #[error("CLIENT LIST line {line}: token `{token}` is not KEY=VALUE")]
    MissingEquals {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
    /// A token of a line starts with `=`.
    #[error("CLIENT LIST line {line}: token `{token}` has an empty key")]
    EmptyKey {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
}

/// Parses the text of a `CLIENT LIST` reply: one connection per line (`\n` or `\r\n`), fields
/// separated by spaces, each split at its first `=` (values may be empty or contain `=`). Blank
/// lines are skipped; a later duplicate of a field replaces the earlier one.
pub fn parse_client_list(text: &str) -> Result<Vec<ClientEntry>, ClientListError> {
    let mut clients = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let mut entry = ClientEntry::default();
        for token in line.split([' ', '\t', '\r']).filter(|t| !t.is_empty()) {
            let (key, value) =
                token
                    .split_once('=')
                    .ok_or_else(|| ClientListError::MissingEquals {
                        line: line_no,
                        token: token.to_owned(),
                    })?;
            if key.is_empty() {
                return Err(ClientListError::EmptyKey {
                    line: line_no,
                    token: token.to_owned(),
                });
            }
            entry.fields.insert(key, value);
        }
        if !entry.fields.is_empty() {
            clients.push(entry);
        }
    }
    Ok(clients)
}

#[cfg(test)]
mod tests {
    use super::*;

    // `CLIENT LIST` of Redis 7.0.15 (Debian) at 127.0.0.1:21001: a replica link (flags=S), a
    // named pub/sub client, and the redis-cli connection asking.
    const REDIS_7_0_15: &str = r#"id=8 addr=127.0.0.1:54962 laddr=127.0.0.1:21001 fd=16 name= age=92 idle=0 flags=S db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=20474 argv-mem=0 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=1 omem=20504 tot-mem=42776 events=r cmd=replconf user=default redir=-1 resp=2
id=58 addr=127.0.0.1:36830 laddr=127.0.0.1:21001 fd=11 name=worker-1 age=1 idle=1 flags=P db=0 sub=1 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=20474 argv-mem=0 multi-mem=0 rbs=1024 rbp=33 obl=0 oll=0 omem=0 tot-mem=22328 events=r cmd=subscribe user=default redir=-1 resp=2
id=59 addr=127.0.0.1:36842 laddr=127.0.0.1:21001 fd=14 name= age=0 idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=26 qbuf-free=20448 argv-mem=10 multi-mem=0 rbs=16384 rbp=16384 obl=0 oll=0 omem=0 tot-mem=37658 events=r cmd=client|list user=default redir=-1 resp=2
"#;

    // `CLIENT LIST` of Valkey 8.1.8 at 127.0.0.1:21011: a replica link, a client that sent
    // `CLIENT SETINFO LIB-NAME redis-py`, `LIB-VER 5.0.1` and `CLIENT SETNAME worker-1`, and
    // valkey-cli.
    const VALKEY_8_1_8: &str = r#"id=7 addr=127.0.0.1:57170 laddr=127.0.0.1:21011 fd=18 name= age=92 idle=0 flags=S capa= db=0 sub=0 psub=0 ssub=0 multi=-1 watch=0 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=1032 rbp=0 obl=0 oll=1 omem=16448 tot-mem=18000 events=r cmd=replconf user=default redir=-1 resp=2 lib-name= lib-ver= tot-net-in=3293 tot-net-out=134 tot-cmds=93
id=63 addr=127.0.0.1:49884 laddr=127.0.0.1:21011 fd=12 name=worker-1 age=1 idle=1 flags=N capa= db=0 sub=0 psub=0 ssub=0 multi=-1 watch=0 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=1032 rbp=7 obl=0 oll=0 omem=0 tot-mem=1552 events=r cmd=ping user=default redir=-1 resp=2 lib-name=redis-py lib-ver=5.0.1 tot-net-in=167 tot-net-out=22 tot-cmds=4
id=64 addr=127.0.0.1:49898 laddr=127.0.0.1:21011 fd=16 name= age=0 idle=0 flags=N capa= db=0 sub=0 psub=0 ssub=0 multi=-1 watch=0 qbuf=0 qbuf-free=0 argv-mem=10 multi-mem=0 rbs=16392 rbp=16392 obl=0 oll=0 omem=0 tot-mem=16938 events=r cmd=client|list user=default redir=-1 resp=2 lib-name= lib-ver= tot-net-in=26 tot-net-out=0 tot-cmds=0
"#;

    // Redis 7.0.15 bound to ::1, queried over IPv6.
    const REDIS_7_0_15_IPV6: &str = "id=3 addr=[::1]:39128 laddr=[::1]:21007 fd=8 name= age=0 \
        idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=26 qbuf-free=20448 argv-mem=10 \
        multi-mem=0 rbs=16384 rbp=16384 obl=0 oll=0 omem=0 tot-mem=37658 events=r \
        cmd=client|list user=default redir=-1 resp=2\n";

    #[test]
    fn parses_redis_7_0_15_client_list() {
        let clients = parse_client_list(REDIS_7_0_15).unwrap();
        assert_eq!(clients.len(), 3);
        let replica = &clients[0];
        assert_eq!(replica.fields.len(), 28);
        assert_eq!(replica.id(), Some(8));
        assert_eq!(replica.addr(), Some("127.0.0.1:54962"));
        assert_eq!(replica.laddr(), Some("127.0.0.1:21001"));
        assert_eq!(replica.flags(), Some("S"));
        assert_eq!(replica.cmd(), Some("replconf"));
        assert_eq!(replica.age_secs(), Some(92));
        assert_eq!(replica.idle_secs(), Some(0));
        assert_eq!(replica.user(), Some("default"));
        assert_eq!(replica.get("name"), Some(""));
        assert_eq!(replica.name(), None);
        // Redis 7.0 has no CLIENT SETINFO: no lib-name, lib-ver or tot-cmds fields at all.
        assert_eq!(replica.get("lib-name"), None);
        assert_eq!(replica.lib_name(), None);
        assert_eq!(replica.lib_ver(), None);
        assert_eq!(replica.tot_cmds(), None);
        let subscriber = &clients[1];
        assert_eq!(subscriber.name(), Some("worker-1"));
        assert_eq!(subscriber.flags(), Some("P"));
        assert_eq!(subscriber.cmd(), Some("subscribe"));
        assert_eq!(clients[2].cmd(), Some("client|list"));
        assert_eq!(clients[2].get("multi"), Some("-1"));
    }

    #[test]
    fn parses_valkey_8_1_8_client_list_with_library_info() {
        let clients = parse_client_list(VALKEY_8_1_8).unwrap();
        assert_eq!(clients.len(), 3);
        let app = &clients[1];
        assert_eq!(app.id(), Some(63));
        assert_eq!(app.name(), Some("worker-1"));
        assert_eq!(app.lib_name(), Some("redis-py"));
        assert_eq!(app.lib_ver(), Some("5.0.1"));
        assert_eq!(app.tot_cmds(), Some(4));
        assert_eq!(app.client_host(), Some("127.0.0.1"));
        let replica = &clients[0];
        assert_eq!(replica.get("lib-name"), Some(""));
        assert_eq!(replica.lib_name(), None);
        assert_eq!(replica.lib_ver(), None);
        assert_eq!(replica.tot_cmds(), Some(93));
        assert_eq!(replica.get("capa"), Some(""));
    }

    #[test]
    fn valkey_8_1_8_reports_fields_redis_7_0_15_lacks() {
        let redis = &parse_client_list(REDIS_7_0_15).unwrap()[0];
        let valkey = &parse_client_list(VALKEY_8_1_8).unwrap()[0];
        let extra: Vec<&str> = valkey
            .fields
            .keys()
            .filter(|k| !redis.fields.contains_key(k))
            .collect();
        assert_eq!(
            extra,
            [
                "capa",
                "lib-name",
                "lib-ver",
                "tot-cmds",
                "tot-net-in",
                "tot-net-out",
                "watch"
            ]
        );
        assert!(redis.fields.keys().all(|k| valkey.fields.contains_key(k)));
    }

    #[test]
    fn client_host_handles_ipv4_ipv6_and_unix_sockets() {
        let ipv6 = &parse_client_list(REDIS_7_0_15_IPV6).unwrap()[0];
        assert_eq!(ipv6.addr(), Some("[::1]:39128"));
        assert_eq!(ipv6.client_host(), Some("::1"));
        let host = |addr: &str| {
            let entry = &parse_client_list(&format!("id=1 addr={addr}")).unwrap()[0];
            entry.client_host().map(str::to_owned)
        };
        assert_eq!(host("10.0.0.7:6379").as_deref(), Some("10.0.0.7"));
        assert_eq!(host("[fe80::1%eth0]:5000").as_deref(), Some("fe80::1%eth0"));
        assert_eq!(
            host("/run/redis.sock:0").as_deref(),
            Some("/run/redis.sock")
        );
        assert_eq!(host("").as_deref(), None);
        assert_eq!(host(":0").as_deref(), None);
    }

    #[test]
    fn the_first_equals_sign_splits_and_crlf_and_blank_lines_are_tolerated() {
        let text = "id=1 name=a=b lib-name=\r\n\r\nid=2 user=bob\r\n";
        let clients = parse_client_list(text).unwrap();
        assert_eq!(clients.len(), 2);
        assert_eq!(clients[0].name(), Some("a=b"));
        assert_eq!(clients[0].lib_name(), None);
        assert_eq!(clients[1].id(), Some(2));
        assert_eq!(clients[1].user(), Some("bob"));
        assert!(parse_client_list("").unwrap().is_empty());
    }

    #[test]
    fn rejects_tokens_without_key_value_with_line_and_token() {
        let err = parse_client_list("id=1 age=3\nid=2 oops age=1\n").unwrap_err();
        assert_eq!(
            err,
            ClientListError::MissingEquals {
                line: 2,
                token: "oops".into()
            }
        );
        assert!(err.to_string().contains("line 2") && err.to_string().contains("oops"));
        let err = parse_client_list("id=1 =x\n").unwrap_err();
        assert_eq!(
            err,
            ClientListError::EmptyKey {
                line: 1,
                token: "=x".into()
            }
        );
    }

    #[test]
    fn an_entry_serialises_as_a_plain_json_object() {
        let entry = &parse_client_list("id=63 name= lib-name=redis-py\n").unwrap()[0];
        let json = serde_json::to_string(entry).unwrap();
        assert_eq!(json, r#"{"id":"63","lib-name":"redis-py","name":""}"#);
        let back: ClientEntry = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, entry);
    }
}
