//! A small HTTP/1.1 client for `http://` and `https://` URLs over tokio: one `GET`, the connection
//! closed after it, `Content-Length` and chunked bodies read in full, TLS by rustls (the Mozilla
//! roots, or `--prometheus-cacert`), an `Authorization` header (basic or bearer) and extra headers
//! (a tenant id) when given. No redirects, no proxies. Credentials never appear in an error
//! message: a URL that carries them is refused without being echoed.

use std::sync::Arc;
use std::time::Duration;

use rustls::ClientConfig;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::node::secret::Secret;

/// Why a `GET` failed.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The URL is not `http[s]://HOST[:PORT][/PATH]`.
    #[error("`{0}` is not an http:// or https:// URL")]
    Url(String),
    /// The URL carries a user or password (never echoed).
    #[error(
        "a URL with a user or password in it is refused (it would show in ps and shell history): \
         give --prometheus-user with SLOTSCOPE_PROMETHEUS_PASSWORD, or --prometheus-token-file"
    )]
    Credentials,
    /// An https:// URL without a TLS configuration to use.
    #[error("{0}: an https:// URL needs TLS, which was not set up")]
    NoTls(String),
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

/// An `http://` or `https://` URL split into what a request needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl {
    /// Whether it is `https://`.
    pub tls: bool,
    /// The host, for the `Host` header and the certificate's name.
    pub host: String,
    /// `HOST:PORT` to connect to.
    pub authority: String,
    /// The path prefix, without a trailing `/` (empty for the root).
    pub path: String,
}

impl HttpUrl {
    /// Parses `http[s]://HOST[:PORT][/PATH]` (port 80, or 443 for https, when absent).
    ///
    /// # Errors
    ///
    /// Another scheme, no host, or a user or password in the URL.
    pub fn parse(url: &str) -> Result<HttpUrl, HttpError> {
        let (tls, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(HttpError::Url(url.to_owned()));
        };
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        if host.contains('@') {
            return Err(HttpError::Credentials);
        }
        if host.is_empty() {
            return Err(HttpError::Url(url.to_owned()));
        }
        let (name, authority) = match host.rsplit_once(':') {
            Some((name, p)) if p.parse::<u16>().is_ok() => (name, host.to_owned()),
            _ => (host, format!("{host}:{}", if tls { 443 } else { 80 })),
        };
        let path = path.trim_end_matches('/');
        Ok(HttpUrl {
            tls,
            host: name
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            authority,
            path: if path.is_empty() {
                String::new()
            } else {
                format!("/{path}")
            },
        })
    }

    /// `scheme://HOST:PORT` followed by `path_and_query`, as errors show it.
    pub fn shown(&self, path_and_query: &str) -> String {
        format!(
            "{}://{}{path_and_query}",
            if self.tls { "https" } else { "http" },
            self.authority
        )
    }
}

/// How requests are made beyond the URL: TLS for https, and headers that log in.
#[derive(Clone, Debug, Default)]
pub struct HttpOptions {
    /// The TLS configuration for `https://` URLs.
    pub tls: Option<Arc<ClientConfig>>,
    /// The `Authorization` header's value (`Basic …`, `Bearer …`).
    pub authorization: Option<Secret>,
    /// Other headers (`X-Scope-OrgID: tenant`), their values kept out of messages.
    pub headers: Vec<(String, Secret)>,
}

/// The `Authorization` value of HTTP basic authentication for `user` and `password`.
pub fn basic_auth(user: &str, password: &Secret) -> Secret {
    Secret::new(format!(
        "Basic {}",
        base64(format!("{user}:{}", password.expose()).as_bytes())
    ))
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Sends `request` on `s` and reads the whole reply (the server closes the connection after it).
/// A TLS peer that closes without `close_notify` after a complete reply is not an error here:
/// [`parse_reply`] checks the body is whole.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    request: &[u8],
) -> std::io::Result<Vec<u8>> {
    s.write_all(request).await?;
    let mut buf = Vec::new();
    match s.read_to_end(&mut buf).await {
        Ok(_) => Ok(buf),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !buf.is_empty() => Ok(buf),
        Err(e) => Err(e),
    }
}

/// `GET path_and_query` on `url`'s host within `timeout`: the status code and the body.
///
/// # Errors
///
/// A connection refused or broken, a TLS handshake refused, the timeout, or a reply that is not
/// HTTP or is cut short.
pub async fn get(
    url: &HttpUrl,
    path_and_query: &str,
    timeout: Duration,
    opts: &HttpOptions,
) -> Result<(u16, Vec<u8>), HttpError> {
    let shown = url.shown(path_and_query);
    let io = |e: std::io::Error| HttpError::Io {
        url: shown.clone(),
        detail: e.to_string(),
    };
    let mut request = format!(
        "GET {path_and_query} HTTP/1.1\r\nHost: {}\r\nUser-Agent: slotscope/{}\r\n\
         Accept: application/json\r\nConnection: close\r\n",
        url.authority,
        env!("CARGO_PKG_VERSION")
    );
    if let Some(a) = &opts.authorization {
        request.push_str(&format!("Authorization: {}\r\n", a.expose()));
    }
    for (k, v) in &opts.headers {
        request.push_str(&format!("{k}: {}\r\n", v.expose()));
    }
    request.push_str("\r\n");
    let tls = if url.tls {
        let config = opts
            .tls
            .clone()
            .ok_or_else(|| HttpError::NoTls(shown.clone()))?;
        let name = crate::node::tls::server_name(&url.host).ok_or_else(|| HttpError::Io {
            url: shown.clone(),
            detail: format!("`{}` is not a name a certificate can carry", url.host),
        })?;
        Some((tokio_rustls::TlsConnector::from(config), name))
    } else {
        None
    };
    let round_trip = async {
        let tcp = TcpStream::connect(&url.authority).await.map_err(io)?;
        match tls {
            Some((connector, name)) => {
                let s = connector
                    .connect(name, tcp)
                    .await
                    .map_err(|e| HttpError::Io {
                        url: shown.clone(),
                        detail: format!("TLS: {e}"),
                    })?;
                exchange(s, request.as_bytes()).await.map_err(io)
            }
            None => exchange(tcp, request.as_bytes()).await.map_err(io),
        }
    };
    let raw = tokio::time::timeout(timeout, round_trip)
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
    fn credentials_in_a_url_are_refused_without_being_echoed() {
        let e = HttpUrl::parse("https://admin:hunter2@prom:9090/").unwrap_err();
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert!(e.to_string().contains("--prometheus-user"), "{e}");
    }

    #[test]
    fn basic_auth_is_base64_of_user_and_password() {
        // RFC 7617's example.
        let a = basic_auth("Aladdin", &Secret::new("open sesame".into()));
        assert_eq!(a.expose(), "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b""), "");
    }

    #[test]
    fn urls_bodies_and_partial_pages() {
        let u = HttpUrl::parse("http://127.0.0.1:9090/prom/").unwrap();
        assert_eq!(u.authority, "127.0.0.1:9090");
        assert_eq!(u.path, "/prom");
        assert!(!u.tls);
        assert_eq!(HttpUrl::parse("http://prom").unwrap().authority, "prom:80");
        let s = HttpUrl::parse("https://mimir.example/prometheus").unwrap();
        assert!(s.tls);
        assert_eq!(
            (s.host.as_str(), s.authority.as_str()),
            ("mimir.example", "mimir.example:443")
        );
        assert_eq!(s.shown("/api"), "https://mimir.example:443/api");
        assert!(HttpUrl::parse("ftp://prom:9090").is_err());
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
