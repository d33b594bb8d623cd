//! A small HTTP/1.1 client for `http://` URLs over a tokio `TcpStream`: one `GET`, the connection
//! closed after it, `Content-Length` and chunked bodies read in full. No TLS (an `https://` URL is
//! refused with a message saying so), no redirects, no proxies.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Why a `GET` failed.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The URL is not `http://HOST[:PORT][/PATH]`.
    #[error("`{0}` is not an http:// URL (https is not supported yet: use a local http endpoint or a tunnel)")]
    Url(String),
    /// Connecting, sending or reading failed.
    #[error("{url}: {detail}")]
    Io {
        /// The URL asked for.
        url: String,
        /// What failed.
        detail: String,
    },
    /// The reply is not HTTP, or its body is shorter than announced (a partial page).
    #[error("{url}: {detail}")]
    Protocol {
        /// The URL asked for.
        url: String,
        /// What is wrong.
        detail: String,
    },
}

/// An `http://` URL split into what a request needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl {
    /// `HOST:PORT` to connect to.
    pub authority: String,
    /// The path prefix, without a trailing `/` (empty for the root).
    pub path: String,
}

impl HttpUrl {
    /// Parses `http://HOST[:PORT][/PATH]` (port 80 when absent).
    ///
    /// # Errors
    ///
    /// Any other URL, `https://` included.
    pub fn parse(url: &str) -> Result<HttpUrl, HttpError> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| HttpError::Url(url.to_owned()))?;
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        if host.is_empty() {
            return Err(HttpError::Url(url.to_owned()));
        }
        let authority = if host
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
        {
            host.to_owned()
        } else {
            format!("{host}:80")
        };
        let path = path.trim_end_matches('/');
        Ok(HttpUrl {
            authority,
            path: if path.is_empty() {
                String::new()
            } else {
                format!("/{path}")
            },
        })
    }
}

/// `GET path_and_query` on `url`'s host within `timeout`: the status code and the body.
///
/// # Errors
///
/// A connection refused or broken, the timeout, or a reply that is not HTTP or is cut short.
pub async fn get(
    url: &HttpUrl,
    path_and_query: &str,
    timeout: Duration,
) -> Result<(u16, Vec<u8>), HttpError> {
    let shown = format!("http://{}{}", url.authority, path_and_query);
    let io = |e: std::io::Error| HttpError::Io {
        url: shown.clone(),
        detail: e.to_string(),
    };
    let exchange = async {
        let mut s = TcpStream::connect(&url.authority).await.map_err(io)?;
        let host = url.authority.as_str();
        let req = format!(
            "GET {path_and_query} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: slotscope/{}\r\n\
             Accept: application/json\r\nConnection: close\r\n\r\n",
            env!("CARGO_PKG_VERSION")
        );
        s.write_all(req.as_bytes()).await.map_err(io)?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.map_err(io)?;
        Ok::<_, HttpError>(buf)
    };
    let raw = tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| HttpError::Io {
            url: shown.clone(),
            detail: format!("no complete reply within {} s", timeout.as_secs()),
        })??;
    parse_reply(&raw).map_err(|detail| HttpError::Protocol { url: shown, detail })
}

/// Status code and body of a whole HTTP/1.x reply.
fn parse_reply(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the reply has no complete HTTP head")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let body = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .filter(|l| l.starts_with("HTTP/1."))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or("the reply is not HTTP/1.x")?;
    let mut chunked = false;
    let mut length = None;
    for l in lines {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
        if k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked") {
            chunked = true;
        } else if k == "content-length" {
            length = v.parse::<usize>().ok();
        } else if k == "content-encoding" && !v.eq_ignore_ascii_case("identity") {
            return Err(format!(
                "the body is {v}-encoded, which this client does not decode"
            ));
        }
    }
    if chunked {
        return dechunk(body).map(|b| (status, b));
    }
    match length {
        Some(n) if body.len() < n => Err(format!(
            "partial page: {} of the {n} bytes announced arrived",
            body.len()
        )),
        Some(n) => Ok((status, body[..n].to_vec())),
        None => Ok((status, body.to_vec())),
    }
}

/// The body of a chunked transfer, refusing one that ends before its last (empty) chunk.
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let eol = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("partial page: a chunked body ends before its last chunk")?;
        let size_text = String::from_utf8_lossy(&body[..eol]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size `{size_text}`"))?;
        body = &body[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if body.len() < size + 2 {
            return Err("partial page: a chunk is cut short".to_owned());
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_bodies_and_partial_pages() {
        let u = HttpUrl::parse("http://127.0.0.1:9090/prom/").unwrap();
        assert_eq!(u.authority, "127.0.0.1:9090");
        assert_eq!(u.path, "/prom");
        assert_eq!(HttpUrl::parse("http://prom").unwrap().authority, "prom:80");
        assert!(HttpUrl::parse("https://prom:9090").is_err());
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd";
        assert_eq!(parse_reply(ok).unwrap(), (200, b"abcd".to_vec()));
        let short = b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabcd";
        assert!(parse_reply(short).unwrap_err().contains("partial"));
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse_reply(chunked).unwrap().1, b"abcde".to_vec());
        let cut = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n";
        assert!(parse_reply(cut).unwrap_err().contains("partial"));
    }
}
