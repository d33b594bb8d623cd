//! What the tap learns from one client request: the command's name, the slot of its first key (from
//! the command's key positions), and what kind of reply to expect. Never a value: arguments other
//! than the command name and the first key are looked at only to find that key.

use crate::slot::Slot;

/// Longest key name kept for `--record-keys`, in bytes (longer names are cut).
pub const MAX_KEY_KEPT: usize = 256;

/// Which topology reply a command asks for (the replies the tap rewrites).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyQuery {
    /// `CLUSTER SLOTS`.
    Slots,
    /// `CLUSTER SHARDS`.
    Shards,
    /// `CLUSTER NODES`, `CLUSTER REPLICAS`, `CLUSTER SLAVES` (the `CLUSTER NODES` text format).
    Nodes,
}

/// How the replies to a command arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// One reply.
    Reply,
    /// One reply holding node addresses, to rewrite.
    Topology(TopologyQuery),
    /// `SUBSCRIBE`-family: one confirmation per channel; `None` for an unsubscribe of every
    /// channel, which is confirmed until the subscription count reaches 0.
    Confirmations(Option<u32>),
    /// No reply at all (an empty inline line).
    Nothing,
}

/// One client request, as the tap records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The command name in lower case, with the subcommand for container commands
    /// (`cluster slots`, `client setname`, `xinfo stream`).
    pub name: String,
    /// The slot of the first key, if the command has keys.
    pub slot: Option<Slot>,
    /// The first key (kept by the caller only with `--record-keys`), at most [`MAX_KEY_KEPT`]
    /// bytes.
    pub key: Option<Vec<u8>>,
    /// How its replies arrive.
    pub expect: Expect,
}

/// The arguments of a request frame: a RESP array of bulk strings, or an inline command (words
/// separated by spaces). `None` if the frame is neither.
pub fn request_args(frame: &[u8]) -> Option<Vec<&[u8]>> {
    let Some(rest) = frame.strip_prefix(b"*") else {
        let line = frame.strip_suffix(b"\n")?;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        return Some(
            line.split(|b| *b == b' ' || *b == b'\t')
                .filter(|w| !w.is_empty())
                .collect(),
        );
    };
    let (count, mut rest) = number_line(rest)?;
    // Each argument takes at least 5 bytes: never trust the count for the allocation.
    let mut args = Vec::with_capacity(count.min(rest.len() / 5 + 1));
    for _ in 0..count {
        let r = rest.strip_prefix(b"$")?;
        let (len, r) = number_line(r)?;
        let arg = r.get(..len)?;
        rest = r.get(len..)?.strip_prefix(b"\r\n")?;
        args.push(arg);
    }
    Some(args)
}

/// The complete arguments at the front of a request array that has not fully arrived (a request
/// too large to hold: its name and first key come first). Empty if not even the count line is there.
pub fn request_head(partial: &[u8]) -> Vec<&[u8]> {
    let mut args = Vec::new();
    let Some((count, mut rest)) = partial.strip_prefix(b"*").and_then(number_line) else {
        return args;
    };
    for _ in 0..count.min(64) {
        let Some((len, r)) = rest.strip_prefix(b"$").and_then(number_line) else {
            break;
        };
        let (Some(arg), Some(after)) = (r.get(..len), r.get(len..)) else {
            break;
        };
        args.push(arg);
        rest = after.strip_prefix(b"\r\n").unwrap_or_default();
    }
    args
}

/// The number at the front of `buf` ending its line (`12\r\n…`: 12 and what follows), read as
/// `str::parse::<usize>` reads it (an optional `+`, at least one digit, no overflow); `None` if the
/// line is anything else or has not fully arrived. Every request's count and lengths go through
/// here: a byte loop, no UTF-8 check or search for the line's end first.
fn number_line(buf: &[u8]) -> Option<(usize, &[u8])> {
    let digits = buf.strip_prefix(b"+").unwrap_or(buf);
    let mut n: usize = 0;
    let mut len = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            break;
        }
        n = n.checked_mul(10)?.checked_add(usize::from(b - b'0'))?;
        len += 1;
    }
    if len == 0 {
        return None;
    }
    let rest = digits[len..].strip_prefix(b"\r\n")?;
    Some((n, rest))
}

/// Where a command's first key is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyAt {
    /// At this argument index (the command name is index 0).
    Index(usize),
    /// After a `numkeys` argument at this index (no key if it is 0).
    NumKeys(usize),
    /// After the `STREAMS` token (`XREAD`, `XREADGROUP`).
    Streams,
}

/// Container commands whose second word is part of the name.
const CONTAINERS: &[&str] = &[
    "acl", "client", "cluster", "command", "config", "debug", "function", "latency", "memory",
    "module", "object", "pubsub", "script", "slowlog", "xgroup", "xinfo",
];

/// The first key's position of each command with keys (as in the server's `COMMAND INFO` key
/// specs; for commands with several keys the first is enough to name the slot a cluster routes by).
fn key_at(name: &str) -> Option<KeyAt> {
    use KeyAt::{Index, NumKeys, Streams};
    Some(match name {
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" => NumKeys(2),
        "zunionstore" | "zinterstore" | "zdiffstore" | "georadius_ro" => Index(1),
        "zunion" | "zinter" | "zdiff" | "zintercard" | "sintercard" | "lmpop" | "zmpop" => {
            NumKeys(1)
        }
        "blmpop" | "bzmpop" => NumKeys(2),
        "xread" | "xreadgroup" => Streams,
        "object encoding"
        | "object freq"
        | "object idletime"
        | "object refcount"
        | "memory usage"
        | "xinfo stream"
        | "xinfo groups"
        | "xinfo consumers"
        | "xgroup create"
        | "xgroup setid"
        | "xgroup destroy"
        | "xgroup createconsumer"
        | "xgroup delconsumer" => Index(2),
        "get"
        | "set"
        | "setnx"
        | "setex"
        | "psetex"
        | "getset"
        | "getdel"
        | "getex"
        | "append"
        | "strlen"
        | "incr"
        | "incrby"
        | "incrbyfloat"
        | "decr"
        | "decrby"
        | "getrange"
        | "setrange"
        | "substr"
        | "getbit"
        | "setbit"
        | "bitcount"
        | "bitpos"
        | "bitfield"
        | "bitfield_ro"
        | "bitop"
        | "expire"
        | "pexpire"
        | "expireat"
        | "pexpireat"
        | "expiretime"
        | "pexpiretime"
        | "ttl"
        | "pttl"
        | "persist"
        | "type"
        | "dump"
        | "restore"
        | "del"
        | "unlink"
        | "exists"
        | "touch"
        | "watch"
        | "mget"
        | "mset"
        | "msetnx"
        | "rename"
        | "renamenx"
        | "copy"
        | "move"
        | "sort"
        | "sort_ro"
        | "lcs"
        | "hget"
        | "hset"
        | "hsetnx"
        | "hmset"
        | "hmget"
        | "hdel"
        | "hexists"
        | "hgetall"
        | "hkeys"
        | "hvals"
        | "hlen"
        | "hincrby"
        | "hincrbyfloat"
        | "hstrlen"
        | "hrandfield"
        | "hscan"
        | "hexpire"
        | "hpexpire"
        | "httl"
        | "hpttl"
        | "hpersist"
        | "lpush"
        | "rpush"
        | "lpushx"
        | "rpushx"
        | "lpop"
        | "rpop"
        | "llen"
        | "lrange"
        | "lindex"
        | "lset"
        | "lrem"
        | "ltrim"
        | "linsert"
        | "lpos"
        | "lmove"
        | "blmove"
        | "rpoplpush"
        | "brpoplpush"
        | "blpop"
        | "brpop"
        | "sadd"
        | "srem"
        | "smembers"
        | "sismember"
        | "smismember"
        | "scard"
        | "spop"
        | "srandmember"
        | "sscan"
        | "smove"
        | "sdiff"
        | "sinter"
        | "sunion"
        | "sdiffstore"
        | "sinterstore"
        | "sunionstore"
        | "zadd"
        | "zincrby"
        | "zrem"
        | "zrange"
        | "zrangestore"
        | "zrangebyscore"
        | "zrevrange"
        | "zrevrangebyscore"
        | "zrangebylex"
        | "zrevrangebylex"
        | "zrank"
        | "zrevrank"
        | "zscore"
        | "zmscore"
        | "zcard"
        | "zcount"
        | "zlexcount"
        | "zremrangebyrank"
        | "zremrangebyscore"
        | "zremrangebylex"
        | "zpopmin"
        | "zpopmax"
        | "bzpopmin"
        | "bzpopmax"
        | "zrandmember"
        | "zscan"
        | "xadd"
        | "xlen"
        | "xrange"
        | "xrevrange"
        | "xdel"
        | "xtrim"
        | "xack"
        | "xclaim"
        | "xautoclaim"
        | "xpending"
        | "xsetid"
        | "pfadd"
        | "pfcount"
        | "pfmerge"
        | "geoadd"
        | "geodist"
        | "geohash"
        | "geopos"
        | "georadius"
        | "georadiusbymember"
        | "georadiusbymember_ro"
        | "geosearch"
        | "geosearchstore"
        | "spublish"
        | "ssubscribe"
        | "sunsubscribe" => Index(1),
        _ => return None,
    })
}

/// The first key of a command, given its full name and its arguments.
fn first_key<'a>(name: &str, args: &[&'a [u8]]) -> Option<&'a [u8]> {
    let at = match key_at(name)? {
        KeyAt::Index(i) => i,
        KeyAt::NumKeys(i) => {
            let n: usize = std::str::from_utf8(args.get(i)?).ok()?.parse().ok()?;
            if n == 0 {
                return None;
            }
            i + 1
        }
        KeyAt::Streams => {
            let s = args
                .iter()
                .position(|a| a.eq_ignore_ascii_case(b"streams"))?;
            s + 1
        }
    };
    // `BITOP op destkey …`: the key follows the operation.
    let at = if name == "bitop" { at + 1 } else { at };
    args.get(at).copied()
}

impl Command {
    /// The command a request's arguments make. An empty request (an empty inline line, to which
    /// the server sends no reply) gives a command named `""` expecting nothing.
    pub fn from_args(args: &[&[u8]]) -> Command {
        Command::from_args_keeping(args, true)
    }

    /// [`from_args`](Self::from_args), the first key's name kept only with `keep_key` (its slot
    /// always): the tap without `--record-keys` copies no key.
    pub fn from_args_keeping(args: &[&[u8]], keep_key: bool) -> Command {
        let Some(first) = args.first() else {
            return Command {
                name: String::new(),
                slot: None,
                key: None,
                expect: Expect::Nothing,
            };
        };
        let mut name = lower(first);
        if CONTAINERS.contains(&name.as_str()) {
            if let Some(sub) = args.get(1) {
                name.push(' ');
                name.push_str(&lower(sub));
            }
        }
        let key = first_key(&name, args);
        let channels = u32::try_from(args.len().saturating_sub(1)).unwrap_or(u32::MAX);
        let expect = match name.as_str() {
            "cluster slots" => Expect::Topology(TopologyQuery::Slots),
            "cluster shards" => Expect::Topology(TopologyQuery::Shards),
            "cluster nodes" | "cluster replicas" | "cluster slaves" => {
                Expect::Topology(TopologyQuery::Nodes)
            }
            "subscribe" | "psubscribe" | "ssubscribe" => Expect::Confirmations(Some(channels)),
            "unsubscribe" | "punsubscribe" | "sunsubscribe" => {
                Expect::Confirmations((channels > 0).then_some(channels))
            }
            _ => Expect::Reply,
        };
        Command {
            name,
            slot: key.map(Slot::for_key),
            key: key
                .filter(|_| keep_key)
                .map(|k| k[..k.len().min(MAX_KEY_KEPT)].to_vec()),
            expect,
        }
    }
}

/// A command or subcommand name in lower case; bytes that are not printable ASCII become `?`, and
/// names longer than 32 bytes are cut (a name is never a value, but a mistyped request could put
/// anything there).
fn lower(b: &[u8]) -> String {
    b.iter()
        .take(32)
        .map(|&c| {
            if c.is_ascii_graphic() {
                char::from(c.to_ascii_lowercase())
            } else {
                '?'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(words: &[&str]) -> Command {
        let args: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        Command::from_args(&args)
    }

    fn slot_of(key: &str) -> Option<Slot> {
        Some(Slot::for_key(key.as_bytes()))
    }

    /// `number_line` as it was: the line's end found first, then `str::parse`.
    fn number_line_by_parse(buf: &[u8]) -> Option<(usize, &[u8])> {
        let nl = buf.windows(2).position(|w| w == b"\r\n")?;
        let n = std::str::from_utf8(&buf[..nl]).ok()?.parse().ok()?;
        Some((n, &buf[nl + 2..]))
    }

    proptest::proptest! {
        #[test]
        fn a_number_line_reads_as_str_parse_reads_it(
            buf in proptest::collection::vec(
                proptest::sample::select(b"0123456789+-\r\n x".to_vec()), 0..24)
        ) {
            proptest::prop_assert_eq!(number_line(&buf), number_line_by_parse(&buf));
        }
    }

    #[test]
    fn a_number_line_at_the_edges() {
        for case in [
            &b"0\r\n"[..],
            b"+7\r\nx",
            b"18446744073709551615\r\n",
            b"18446744073709551616\r\n",
            b"-1\r\n",
            b"12",
            b"12\r",
            b"\r\n",
            b"+\r\n",
            b"1 \r\n",
        ] {
            assert_eq!(number_line(case), number_line_by_parse(case), "{case:?}");
        }
        assert_eq!(number_line(b"+7\r\nx"), Some((7, &b"x"[..])));
    }

    #[test]
    fn a_key_is_copied_only_when_kept() {
        let args: [&[u8]; 2] = [b"GET", b"user:{42}"];
        let kept = Command::from_args_keeping(&args, true);
        let not = Command::from_args_keeping(&args, false);
        assert_eq!(kept.key.as_deref(), Some(&b"user:{42}"[..]));
        assert_eq!(not.key, None);
        assert_eq!(
            (kept.slot, kept.name.as_str()),
            (not.slot, not.name.as_str())
        );
        assert_eq!(kept, Command::from_args(&args));
    }

    #[test]
    fn request_args_read_arrays_and_inline_commands() {
        let args = request_args(b"*3\r\n$3\r\nSET\r\n$3\r\nfoo\r\n$0\r\n\r\n").unwrap();
        assert_eq!(args, vec![&b"SET"[..], b"foo", b""]);
        let args = request_args(b"GET  foo\r\n").unwrap();
        assert_eq!(args, vec![&b"GET"[..], b"foo"]);
        assert!(request_args(b"*2\r\n$3\r\nGET\r\n").is_none());
        assert!(request_args(b"*99999999999\r\n").is_none());
        let head = request_head(b"*3\r\n$3\r\nSET\r\n$3\r\nfoo\r\n$100000\r\nxx");
        assert_eq!(head, vec![&b"SET"[..], b"foo"]);
        assert!(request_head(b"*3\r").is_empty());
    }

    #[test]
    fn first_keys_follow_the_key_positions() {
        assert_eq!(cmd(&["GET", "foo"]).slot, slot_of("foo"));
        assert_eq!(cmd(&["mset", "a", "1", "b", "2"]).slot, slot_of("a"));
        assert_eq!(cmd(&["EVAL", "return 1", "1", "k", "v"]).slot, slot_of("k"));
        assert_eq!(cmd(&["EVAL", "return 1", "0"]).slot, None);
        assert_eq!(
            cmd(&["XREAD", "COUNT", "2", "STREAMS", "s1", "s2", "0", "0"]).slot,
            slot_of("s1")
        );
        assert_eq!(
            cmd(&["ZUNIONSTORE", "dst", "2", "a", "b"]).slot,
            slot_of("dst")
        );
        assert_eq!(cmd(&["zunion", "2", "a", "b"]).slot, slot_of("a"));
        assert_eq!(cmd(&["BLMPOP", "0", "1", "l", "LEFT"]).slot, slot_of("l"));
        assert_eq!(cmd(&["BITOP", "AND", "d", "a"]).slot, slot_of("d"));
        assert_eq!(cmd(&["OBJECT", "ENCODING", "k"]).slot, slot_of("k"));
        assert_eq!(cmd(&["object", "encoding", "k"]).name, "object encoding");
        assert_eq!(cmd(&["PING"]).slot, None);
        assert_eq!(
            cmd(&["GET", "{user1000}.following"]).slot.unwrap().get(),
            3443
        );
    }

    #[test]
    fn auth_and_hello_keep_only_their_names() {
        let c = cmd(&["AUTH", "user", "s3cret"]);
        assert_eq!((c.name.as_str(), c.key), ("auth", None));
        let c = cmd(&["HELLO", "3", "AUTH", "user", "s3cret"]);
        assert_eq!((c.name.as_str(), c.key), ("hello", None));
    }

    #[test]
    fn replies_expected_by_kind() {
        assert_eq!(
            cmd(&["CLUSTER", "SLOTS"]).expect,
            Expect::Topology(TopologyQuery::Slots)
        );
        assert_eq!(
            cmd(&["cluster", "shards"]).expect,
            Expect::Topology(TopologyQuery::Shards)
        );
        assert_eq!(
            cmd(&["SUBSCRIBE", "a", "b"]).expect,
            Expect::Confirmations(Some(2))
        );
        assert_eq!(cmd(&["UNSUBSCRIBE"]).expect, Expect::Confirmations(None));
        assert_eq!(Command::from_args(&[]).expect, Expect::Nothing);
    }
}
