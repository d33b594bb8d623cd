//! What a request's headers ask of a response: whether the client takes gzip or brotli
//! (`Accept-Encoding`), and whether its copy is current (`If-None-Match`). Used by
//! [`crate::serve::server`].

use hyper::header::{HeaderMap, HeaderName, ACCEPT_ENCODING, IF_NONE_MATCH};

/// The values of every `name` header (a value that is not text is passed over).
fn header_values<'a>(headers: &'a HeaderMap, name: &HeaderName) -> impl Iterator<Item = &'a str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::trim)
}

/// Whether the request's `Accept-Encoding` allows `coding` (`gzip`, which `x-gzip` also names,
/// or `br`), by name or by `*`, with a non-zero `q`. No header: identity only.
pub fn accepts(headers: &HeaderMap, coding_wanted: &str) -> bool {
    let mut star = None;
    for value in header_values(headers, &ACCEPT_ENCODING) {
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim();
            let q = parts
                .find_map(|p| {
                    let (k, v) = p.split_once('=')?;
                    k.trim()
                        .eq_ignore_ascii_case("q")
                        .then(|| v.trim().parse::<f32>().unwrap_or(0.0))
                })
                .unwrap_or(1.0);
            let named = coding.eq_ignore_ascii_case(coding_wanted)
                || (coding_wanted == "gzip" && coding.eq_ignore_ascii_case("x-gzip"));
            if named {
                return q > 0.0;
            }
            if coding == "*" {
                star = Some(q > 0.0);
            }
        }
    }
    star.unwrap_or(false)
}

/// Whether the request's `If-None-Match` names `etag` (or is `*`): then the client's copy is
/// current. Compared weakly, as RFC 9110 says for this header.
pub fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    header_values(headers, &IF_NONE_MATCH).any(|v| {
        v.split(',')
            .map(str::trim)
            .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag)
    })
}

/// The headers of `lines` (`Name: value`, one a line), for tests.
#[cfg(test)]
pub(crate) fn headers(lines: &str) -> HeaderMap {
    lines
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| {
            (
                HeaderName::from_bytes(k.trim().as_bytes()).unwrap(),
                v.trim().parse().unwrap(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_and_if_none_match() {
        assert!(accepts(
            &headers("Accept-Encoding: gzip, deflate, br"),
            "gzip"
        ));
        assert!(accepts(
            &headers("accept-encoding: br;q=1.0, GZIP;q=0.5"),
            "gzip"
        ));
        assert!(accepts(&headers("Accept-Encoding: *"), "gzip"));
        assert!(!accepts(&headers("Accept-Encoding: gzip;q=0, *"), "gzip"));
        assert!(!accepts(&headers("Accept-Encoding: br, identity"), "gzip"));
        assert!(!accepts(&headers("Accept-Encoding: identity"), "gzip"));
        assert!(!accepts(&headers("X-Other: gzip"), "gzip"));
        assert!(
            !accepts(&HeaderMap::new(), "gzip"),
            "no header: identity only"
        );
        assert!(accepts(
            &headers("Accept-Encoding: gzip, deflate, br, zstd"),
            "br"
        ));
        assert!(!accepts(&headers("Accept-Encoding: gzip, br;q=0"), "br"));
        assert!(!accepts(&headers("Accept-Encoding: x-gzip"), "br"));
        // Two header lines count as one list.
        assert!(accepts(
            &headers("Accept-Encoding: deflate\nAccept-Encoding: gzip"),
            "gzip"
        ));
        assert!(not_modified(
            &headers("If-None-Match: \"a\", \"b\""),
            "\"b\""
        ));
        assert!(not_modified(&headers("If-None-Match: W/\"b\""), "\"b\""));
        assert!(not_modified(&headers("If-None-Match: *"), "\"b\""));
        assert!(!not_modified(&headers("If-None-Match: \"a\""), "\"b\""));
        assert!(!not_modified(&headers("If-Match: \"b\""), "\"b\""));
    }
}
