//! What a request's head asks of a response: its header values, whether the client takes gzip
//! or brotli (`Accept-Encoding`), and whether its copy is current (`If-None-Match`). Used by
//! [`crate::viewer_server`].

/// The values of every `name:` header line of a request head (case-insensitive name).
pub fn header_values<'a>(head: &'a str, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    head.lines().skip(1).filter_map(move |line| {
        let (k, v) = line.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Whether the request's `Accept-Encoding` allows `coding` (`gzip`, which `x-gzip` also names,
/// or `br`), by name or by `*`, with a non-zero `q`. No header: identity only.
pub fn accepts(head: &str, coding_wanted: &str) -> bool {
    let mut star = None;
    for value in header_values(head, "accept-encoding") {
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
pub fn not_modified(head: &str, etag: &str) -> bool {
    header_values(head, "if-none-match").any(|v| {
        v.split(',')
            .map(str::trim)
            .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag)
    })
}
