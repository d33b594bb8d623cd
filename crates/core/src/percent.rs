//! Percent-encoding of URL parts (RFC 3986), for the viewer's URL hash and `slotscope serve`'s
//! paths.

/// `%XX`-escapes every byte but RFC 3986's unreserved characters and the bytes in `keep`.
pub fn encode(text: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || keep.contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes; `None` if an escape is malformed or the result is not UTF-8.
pub fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_bad_escapes() {
        assert_eq!(encode("a b/c", b""), "a%20b%2Fc");
        assert_eq!(encode("a b/c", b"/"), "a%20b/c");
        assert_eq!(decode("a%20b%2Fc").as_deref(), Some("a b/c"));
        assert_eq!(decode("a%2"), None);
        assert_eq!(decode("%FF"), None);
    }
}
