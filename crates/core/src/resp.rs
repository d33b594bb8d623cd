//! RESP2/RESP3 values: an incremental parser over a byte buffer and a command encoder. No I/O: the
//! caller reads bytes from wherever it likes and hands them in.
//!
//! Parsing follows the type prefixes of the RESP3 specification (`+ - : $ * _ , # ! = ( % ~ >`);
//! RESP2 is the subset `+ - : $ *` with `$-1` / `*-1` as nulls.

use std::fmt;

/// A reply value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `+OK`.
    Simple(String),
    /// `-ERR …` or `!<len>` (blob error).
    Error(String),
    /// `:42`.
    Integer(i64),
    /// `$<len>` or `=<len>` (verbatim string, format prefix removed).
    Bulk(Vec<u8>),
    /// `*<n>`, `~<n>` (set) or `><n>` (push).
    Array(Vec<Value>),
    /// `%<n>`: key/value pairs in order.
    Map(Vec<(Value, Value)>),
    /// `,3.14`.
    Double(f64),
    /// `#t` / `#f`.
    Boolean(bool),
    /// `(` big number, kept as its decimal text.
    BigNumber(String),
    /// `_`, `$-1`, `*-1`.
    Null,
}

impl Value {
    /// The value as UTF-8 text if it is a simple, bulk or verbatim string (lossy for bulk).
    pub fn as_text(&self) -> Option<String> {
        match self {
            Value::Simple(s) => Some(s.clone()),
            Value::Bulk(b) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }

    /// The value as an integer: an integer reply, or a string holding one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Integer(i) => Some(*i),
            Value::Simple(_) | Value::Bulk(_) => self.as_text()?.parse().ok(),
            _ => None,
        }
    }

    /// The elements of an array, set or push reply.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(v) => Some(v),
            _ => None,
        }
    }

    /// Key/value pairs of a RESP3 map, or of a RESP2 flat array `[k1, v1, k2, v2, …]`.
    pub fn as_pairs(&self) -> Option<Vec<(&Value, &Value)>> {
        match self {
            Value::Map(m) => Some(m.iter().map(|(k, v)| (k, v)).collect()),
            Value::Array(v) if v.len() % 2 == 0 => {
                Some(v.chunks_exact(2).map(|c| (&c[0], &c[1])).collect())
            }
            _ => None,
        }
    }

    /// The error text, if this is an error reply.
    pub fn as_error(&self) -> Option<&str> {
        match self {
            Value::Error(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Simple(s) => write!(f, "{s}"),
            Value::Error(e) => write!(f, "(error) {e}"),
            Value::Integer(i) => write!(f, "(integer) {i}"),
            Value::Bulk(b) => write!(f, "\"{}\"", String::from_utf8_lossy(b)),
            Value::Array(v) => write!(f, "(array of {})", v.len()),
            Value::Map(m) => write!(f, "(map of {})", m.len()),
            Value::Double(d) => write!(f, "(double) {d}"),
            Value::Boolean(b) => write!(f, "(boolean) {b}"),
            Value::BigNumber(n) => write!(f, "(big number) {n}"),
            Value::Null => write!(f, "(nil)"),
        }
    }
}

/// Why bytes are not a RESP value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RespError {
    /// The first byte is not a known type prefix.
    #[error("unknown RESP type byte 0x{0:02x} at offset {1}")]
    UnknownType(u8, usize),
    /// A length or integer line is not a number.
    #[error("bad number `{0}` in RESP header")]
    BadNumber(String),
    /// A bulk payload is not followed by CRLF.
    #[error("bulk payload not terminated by CRLF")]
    MissingCrlf,
    /// A declared length is larger than the parser accepts.
    #[error("declared length {0} exceeds the limit {1}")]
    TooLarge(i64, usize),
    /// Aggregates nest deeper than the parser accepts.
    #[error("aggregates nested deeper than {0}")]
    TooDeep(usize),
}

/// Largest bulk string accepted (512 MiB, the server's own limit).
pub const MAX_BULK: usize = 512 * 1024 * 1024;
/// Largest aggregate element count accepted.
pub const MAX_ELEMENTS: usize = 64 * 1024 * 1024;
/// Deepest aggregate nesting accepted.
pub const MAX_DEPTH: usize = 64;

/// Parses one complete value from the front of `buf`.
///
/// Returns `Ok(None)` if `buf` holds only part of a value (read more and call again), or the value
/// and the number of bytes it took.
pub fn parse(buf: &[u8]) -> Result<Option<(Value, usize)>, RespError> {
    let mut pos = 0;
    match parse_at(buf, &mut pos, 0)? {
        Some(v) => Ok(Some((v, pos))),
        None => Ok(None),
    }
}

fn line(buf: &[u8], pos: &mut usize) -> Option<usize> {
    let start = *pos;
    let rel = buf.get(start..)?.windows(2).position(|w| w == b"\r\n")?;
    *pos = start + rel + 2;
    Some(start + rel)
}

fn number(bytes: &[u8]) -> Result<i64, RespError> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| RespError::BadNumber(String::from_utf8_lossy(bytes).into_owned()))
}

fn length(n: i64, limit: usize) -> Result<usize, RespError> {
    usize::try_from(n)
        .ok()
        .filter(|&l| l <= limit)
        .ok_or(RespError::TooLarge(n, limit))
}

fn parse_at(buf: &[u8], pos: &mut usize, depth: usize) -> Result<Option<Value>, RespError> {
    if depth > MAX_DEPTH {
        return Err(RespError::TooDeep(MAX_DEPTH));
    }
    let Some(&kind) = buf.get(*pos) else {
        return Ok(None);
    };
    let at = *pos;
    *pos += 1;
    let head_start = *pos;
    let Some(head_end) = line(buf, pos) else {
        return Ok(None);
    };
    let head = &buf[head_start..head_end];
    let text = || String::from_utf8_lossy(head).into_owned();
    let value = match kind {
        b'+' => Value::Simple(text()),
        b'-' => Value::Error(text()),
        b':' => Value::Integer(number(head)?),
        b'_' => Value::Null,
        b'#' => Value::Boolean(head == b"t"),
        b',' => Value::Double(text().parse().map_err(|_| RespError::BadNumber(text()))?),
        b'(' => Value::BigNumber(text()),
        b'$' | b'!' | b'=' => {
            let n = number(head)?;
            if n < 0 {
                return Ok(Some(Value::Null));
            }
            let len = length(n, MAX_BULK)?;
            let start = *pos;
            let Some(end) = start.checked_add(len) else {
                return Err(RespError::TooLarge(n, MAX_BULK));
            };
            if buf.len() < end + 2 {
                return Ok(None);
            }
            if &buf[end..end + 2] != b"\r\n" {
                return Err(RespError::MissingCrlf);
            }
            *pos = end + 2;
            let payload = &buf[start..end];
            match kind {
                b'!' => Value::Error(String::from_utf8_lossy(payload).into_owned()),
                b'=' => Value::Bulk(payload.get(4..).unwrap_or_default().to_vec()),
                _ => Value::Bulk(payload.to_vec()),
            }
        }
        b'*' | b'~' | b'>' | b'%' => {
            let n = number(head)?;
            if n < 0 {
                return Ok(Some(Value::Null));
            }
            let count = length(n, MAX_ELEMENTS)?;
            if kind == b'%' {
                let mut pairs = Vec::with_capacity(count.min(1024));
                for _ in 0..count {
                    let Some(k) = parse_at(buf, pos, depth + 1)? else {
                        return Ok(None);
                    };
                    let Some(v) = parse_at(buf, pos, depth + 1)? else {
                        return Ok(None);
                    };
                    pairs.push((k, v));
                }
                Value::Map(pairs)
            } else {
                let mut items = Vec::with_capacity(count.min(1024));
                for _ in 0..count {
                    let Some(v) = parse_at(buf, pos, depth + 1)? else {
                        return Ok(None);
                    };
                    items.push(v);
                }
                Value::Array(items)
            }
        }
        other => return Err(RespError::UnknownType(other, at)),
    };
    Ok(Some(value))
}

/// Appends `args` to `out` as a RESP array of bulk strings (the form clients send commands in).
pub fn encode_command<A: AsRef<[u8]>>(args: &[A], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        let a = a.as_ref();
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// Appends `v` to `out` in RESP wire form (RESP3 types where the value needs them).
pub fn encode_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Simple(s) => out.extend_from_slice(format!("+{s}\r\n").as_bytes()),
        Value::Error(e) => out.extend_from_slice(format!("-{e}\r\n").as_bytes()),
        Value::Integer(i) => out.extend_from_slice(format!(":{i}\r\n").as_bytes()),
        Value::Bulk(b) => {
            out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
            out.extend_from_slice(b);
            out.extend_from_slice(b"\r\n");
        }
        Value::Array(items) => {
            out.extend_from_slice(format!("*{}\r\n", items.len()).as_bytes());
            for i in items {
                encode_value(i, out);
            }
        }
        Value::Map(pairs) => {
            out.extend_from_slice(format!("%{}\r\n", pairs.len()).as_bytes());
            for (k, v) in pairs {
                encode_value(k, out);
                encode_value(v, out);
            }
        }
        Value::Double(d) => out.extend_from_slice(format!(",{d}\r\n").as_bytes()),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
        Value::BigNumber(n) => out.extend_from_slice(format!("({n}\r\n").as_bytes()),
        Value::Null => out.extend_from_slice(b"_\r\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_resp2_replies() {
        let (v, n) = parse(b"+OK\r\n").unwrap().unwrap();
        assert_eq!((v, n), (Value::Simple("OK".into()), 5));
        let (v, _) = parse(b"*2\r\n$3\r\nfoo\r\n:7\r\n").unwrap().unwrap();
        assert_eq!(
            v,
            Value::Array(vec![Value::Bulk(b"foo".to_vec()), Value::Integer(7)])
        );
        assert_eq!(parse(b"$-1\r\n").unwrap().unwrap().0, Value::Null);
        let (v, _) = parse(b"-MOVED 3999 127.0.0.1:6381\r\n").unwrap().unwrap();
        assert_eq!(v.as_error(), Some("MOVED 3999 127.0.0.1:6381"));
    }

    #[test]
    fn incomplete_input_asks_for_more() {
        let full = b"*2\r\n$3\r\nfoo\r\n$5\r\nhello\r\n";
        for cut in 0..full.len() {
            assert_eq!(parse(&full[..cut]).unwrap(), None, "cut at {cut}");
        }
        assert!(parse(full).unwrap().is_some());
    }

    #[test]
    fn parses_resp3_types() {
        let (v, _) = parse(b"%1\r\n+a\r\n#t\r\n").unwrap().unwrap();
        assert_eq!(
            v,
            Value::Map(vec![(Value::Simple("a".into()), Value::Boolean(true))])
        );
        assert_eq!(
            parse(b"=7\r\ntxt:abc\r\n").unwrap().unwrap().0,
            Value::Bulk(b"abc".to_vec())
        );
        assert_eq!(parse(b",1.5\r\n").unwrap().unwrap().0, Value::Double(1.5));
        assert_eq!(parse(b"_\r\n").unwrap().unwrap().0, Value::Null);
    }

    #[test]
    fn rejects_garbage() {
        assert!(matches!(
            parse(b"?x\r\n"),
            Err(RespError::UnknownType(b'?', 0))
        ));
        assert!(matches!(parse(b":abc\r\n"), Err(RespError::BadNumber(_))));
        assert!(matches!(parse(b"$3\r\nfooXY"), Err(RespError::MissingCrlf)));
        assert!(matches!(
            parse(b"$99999999999\r\n"),
            Err(RespError::TooLarge(..))
        ));
        let deep = "*1\r\n".repeat(MAX_DEPTH + 2);
        assert!(matches!(parse(deep.as_bytes()), Err(RespError::TooDeep(_))));
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            "[a-zA-Z0-9 ]{0,12}".prop_map(Value::Simple),
            "[A-Z]{1,6} [a-z ]{0,12}".prop_map(Value::Error),
            any::<i64>().prop_map(Value::Integer),
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(Value::Bulk),
            any::<bool>().prop_map(Value::Boolean),
            Just(Value::Null),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((inner.clone(), inner), 0..4).prop_map(Value::Map),
            ]
        })
    }

    proptest! {
        #[test]
        fn encode_then_parse_is_identity(v in value()) {
            let mut out = Vec::new();
            encode_value(&v, &mut out);
            let (back, used) = parse(&out).unwrap().unwrap();
            prop_assert_eq!(used, out.len());
            prop_assert_eq!(back, v);
        }

        #[test]
        fn parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse(&bytes);
        }
    }
}
