//! A [`TapCommand`] line written as JSON by hand: the tap writes one per command a client sends,
//! hundreds of thousands a second, and serde's derived form (a map per line, the node's address
//! turned into a `String` by a clone and a `format!`, each string scanned for escapes through a
//! generic writer) cost the tap's writer more than the compression. The bytes are exactly those
//! of `serde_json::to_vec(&Line::TapCommand(..))` (tests below, on every reply class and on
//! drawn strings), so readers see no difference.

use crate::node::NodeAddr;
use crate::recording::tap::{ReplyClass, TapCommand};
use crate::redirect::Redirect;

impl TapCommand {
    /// Appends this command's line (`{"type":"tap_command",…}`, no newline) to `out`, byte for
    /// byte as serde writes [`Line::TapCommand`](crate::recording::Line::TapCommand).
    pub fn write_line(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"type\":\"tap_command\",\"t\":");
        number(out, self.t.0);
        out.extend_from_slice(b",\"conn\":");
        number(out, self.conn);
        out.extend_from_slice(b",\"cmd\":");
        string(out, &self.cmd);
        if let Some(slot) = self.slot {
            out.extend_from_slice(b",\"slot\":");
            number(out, u64::from(slot.get()));
        }
        if let Some(key) = &self.key {
            out.extend_from_slice(b",\"key\":");
            string(out, key);
        }
        out.extend_from_slice(b",\"node\":");
        addr(out, &self.node);
        out.extend_from_slice(b",\"reply\":{\"class\":\"");
        out.extend_from_slice(self.reply.name().as_bytes());
        out.push(b'"');
        match &self.reply {
            ReplyClass::Redirect(Redirect::Moved { slot, to } | Redirect::Ask { slot, to }) => {
                out.extend_from_slice(b",\"slot\":");
                number(out, u64::from(slot.get()));
                out.extend_from_slice(b",\"to\":");
                addr(out, to);
            }
            ReplyClass::Error { code } => {
                out.extend_from_slice(b",\"code\":");
                string(out, code);
            }
            ReplyClass::Ok
            | ReplyClass::TryAgain
            | ReplyClass::ClusterDown
            | ReplyClass::Closed => {}
        }
        out.extend_from_slice(b"},\"latency_us\":");
        number(out, self.latency_us);
        out.push(b'}');
    }
}

/// `n` in decimal, two digits a step.
fn number(out: &mut Vec<u8>, mut n: u64) {
    const PAIRS: &[u8; 200] = b"00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    while n >= 100 {
        let pair = usize::try_from(n % 100).unwrap_or(0) * 2;
        n /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = usize::try_from(n).unwrap_or(0) * 2;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + u8::try_from(n).unwrap_or(0);
    }
    out.extend_from_slice(&digits[i..]);
}

/// An address as its `host:port` text (IPv6 in brackets), quoted; as its `Display`.
fn addr(out: &mut Vec<u8>, a: &NodeAddr) {
    let host = a.host();
    if host.contains(':') {
        out.extend_from_slice(b"\"[");
        escaped(out, host);
        out.extend_from_slice(b"]:");
    } else {
        out.push(b'"');
        escaped(out, host);
        out.push(b':');
    }
    number(out, u64::from(a.port()));
    out.push(b'"');
}

/// `s` quoted, escaped as serde_json escapes.
fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    escaped(out, s);
    out.push(b'"');
}

/// `s` escaped as serde_json escapes a string's contents: `"` and `\` with a backslash, the
/// control characters below 0x20 as `\b`, `\t`, `\n`, `\f`, `\r` or `\u00XX`; nothing else.
fn escaped(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            0..0x20 => &[],
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if short.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(short);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::recording::Line;
    use crate::slot::Slot;
    use crate::time::Timestamp;

    fn serde_line(c: &TapCommand) -> String {
        serde_json::to_string(&Line::TapCommand(c.clone())).unwrap()
    }

    fn by_hand(c: &TapCommand) -> String {
        let mut out = Vec::new();
        c.write_line(&mut out);
        String::from_utf8(out).unwrap()
    }

    fn command(reply: ReplyClass) -> TapCommand {
        TapCommand {
            t: Timestamp(1_732_000_000_001),
            conn: 7,
            cmd: "get".to_owned(),
            slot: Slot::new(12182),
            key: None,
            node: "127.0.0.1:7000".parse().unwrap(),
            reply,
            latency_us: 84,
        }
    }

    #[test]
    fn every_reply_class_is_written_as_serde_writes_it() {
        let to: NodeAddr = "[::1]:7001".parse().unwrap();
        for reply in [
            ReplyClass::Ok,
            ReplyClass::Redirect(Redirect::Moved {
                slot: Slot::new(0).unwrap(),
                to: to.clone(),
            }),
            ReplyClass::Redirect(Redirect::Ask {
                slot: Slot::new(16383).unwrap(),
                to: "127.0.0.1:7002".parse().unwrap(),
            }),
            ReplyClass::TryAgain,
            ReplyClass::ClusterDown,
            ReplyClass::Error {
                code: "WRONGTYPE".to_owned(),
            },
            ReplyClass::Closed,
        ] {
            let c = command(reply);
            assert_eq!(by_hand(&c), serde_line(&c));
            let mut keyed = c.clone();
            keyed.slot = None;
            keyed.key = Some("user:{42}".to_owned());
            keyed.node = to.clone();
            keyed.latency_us = u64::MAX;
            keyed.t = Timestamp(0);
            assert_eq!(by_hand(&keyed), serde_line(&keyed));
        }
        assert_eq!(
            by_hand(&command(ReplyClass::Ok)),
            r#"{"type":"tap_command","t":1732000000001,"conn":7,"cmd":"get","slot":12182,"node":"127.0.0.1:7000","reply":{"class":"ok"},"latency_us":84}"#
        );
    }

    #[test]
    fn numbers_are_written_as_display_writes_them() {
        for n in [
            0,
            1,
            9,
            10,
            11,
            99,
            100,
            101,
            999,
            1000,
            12_345,
            u64::MAX / 10,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            number(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }
    }

    proptest! {
        #[test]
        fn drawn_numbers_are_written_as_display_writes_them(n in any::<u64>()) {
            let mut out = Vec::new();
            number(&mut out, n);
            prop_assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }

        #[test]
        fn drawn_commands_are_written_as_serde_writes_them(
            t in any::<u64>(),
            conn in any::<u64>(),
            cmd in any::<String>(),
            slot in proptest::option::of(0u16..16384),
            key in proptest::option::of(any::<String>()),
            host in "[a-z0-9.:\"\\\\\\x00-\\x1f]{1,12}",
            port in 1u16..,
            code in any::<String>(),
            latency_us in any::<u64>(),
        ) {
            let node = NodeAddr::new(host, port).unwrap();
            let c = TapCommand {
                t: Timestamp(t),
                conn,
                cmd,
                slot: slot.and_then(Slot::new),
                key,
                node,
                reply: ReplyClass::Error { code },
                latency_us,
            };
            prop_assert_eq!(by_hand(&c), serde_line(&c));
        }
    }
}
