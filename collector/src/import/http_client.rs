//! The import's HTTP client for `http://` and `https://` URLs: one `GET` by hyper's HTTP/1.1 client
//! connection over a tokio TCP stream (TLS by rustls: the Mozilla roots, or `--prometheus-cacert`),
//! the connection closed after it, the body read in full up to [`BODY_CAP`], an `Authorization`
//! header (basic or bearer) and extra headers (a tenant id) when given. No redirects, no proxies.
//! Credentials never appear in an error message: a URL that carries them is refused without being
//! echoed, and header values are marked sensitive and never shown.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use slotscope_core::quantity::human_bytes;
use tokio::io::{AsyncRead, AsyncWrite};
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
    /// A header that HTTP cannot carry (a value is never shown, only the header's name).
    #[error("{0}")]
    Header(String),
    /// The reply's body is larger than the cap ([`BODY_CAP`]).
    #[error(
        "{url}: the answer is larger than {cap}, the most one query may bring; \
         ask for a shorter window (--from/--to) or fewer series (--match)"
    )]
    TooLarge {
        /// The URL asked for.
        url: String,
        /// The cap, as people read it (`256.0 MiB`).
        cap: String,
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

/// The largest body one answer may have: 256 MiB. A Prometheus answer larger than that is a
/// query too wide for one import (narrow it with `--from`/`--to` or `--match`), and reading it
/// whole would hold it all in memory.
pub const BODY_CAP: u64 = 256 << 20;

/// `GET path_and_query` on `url`'s host within `timeout`: the status code and the body (at most
/// [`BODY_CAP`] bytes). Redirects are not followed: a 3xx is returned as it is.
///
/// # Errors
///
/// A connection refused or broken, a TLS handshake refused, the timeout, a header that cannot be
/// sent, a reply that is not HTTP or is cut short, or a body larger than [`BODY_CAP`].
pub async fn get(
    url: &HttpUrl,
    path_and_query: &str,
    timeout: Duration,
    opts: &HttpOptions,
) -> Result<(u16, Vec<u8>), HttpError> {
    get_capped(url, path_and_query, timeout, opts, BODY_CAP).await
}

/// [`get`] with the body cap given.
async fn get_capped(
    url: &HttpUrl,
    path_and_query: &str,
    timeout: Duration,
    opts: &HttpOptions,
    cap: u64,
) -> Result<(u16, Vec<u8>), HttpError> {
    let shown = url.shown(path_and_query);
    let request = request(url, path_and_query, opts, &shown)?;
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
        let tcp = TcpStream::connect(&url.authority)
            .await
            .map_err(|e| HttpError::Io {
                url: shown.clone(),
                detail: e.to_string(),
            })?;
        match tls {
            Some((connector, name)) => {
                let s = connector
                    .connect(name, tcp)
                    .await
                    .map_err(|e| HttpError::Io {
                        url: shown.clone(),
                        detail: format!("TLS: {e}"),
                    })?;
                exchange(s, request, &shown, cap).await
            }
            None => exchange(tcp, request, &shown, cap).await,
        }
    };
    tokio::time::timeout(timeout, round_trip)
        .await
        .map_err(|_| HttpError::Io {
            url: shown.clone(),
            detail: format!("no complete reply within {} s", timeout.as_secs()),
        })?
}

/// The `GET` request: `Host`, `User-Agent`, `Accept: application/json`, `Connection: close`, then
/// the `Authorization` and extra headers, their values marked sensitive and never shown.
fn request(
    url: &HttpUrl,
    path_and_query: &str,
    opts: &HttpOptions,
    shown: &str,
) -> Result<Request<Empty<Bytes>>, HttpError> {
    let uri: Uri = path_and_query
        .parse()
        .map_err(|_| HttpError::Url(shown.to_owned()))?;
    let mut request = Request::get(uri)
        .body(Empty::new())
        .map_err(|_| HttpError::Url(shown.to_owned()))?;
    let secret = |name: &str, value: &Secret| {
        let mut v = HeaderValue::from_str(value.expose()).map_err(|_| {
            HttpError::Header(format!(
                "the value of the {name} header is not one HTTP can carry (it is not shown)"
            ))
        })?;
        v.set_sensitive(true);
        Ok::<_, HttpError>(v)
    };
    let headers = request.headers_mut();
    let host =
        HeaderValue::from_str(&url.authority).map_err(|_| HttpError::Url(shown.to_owned()))?;
    headers.insert(header::HOST, host);
    headers.insert(
        header::USER_AGENT,
        HeaderValue::from_static(concat!("slotscope/", env!("CARGO_PKG_VERSION"))),
    );
    headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    if let Some(a) = &opts.authorization {
        headers.insert(header::AUTHORIZATION, secret("Authorization", a)?);
    }
    for (k, v) in &opts.headers {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| HttpError::Header(format!("`{k}` is not an HTTP header name")))?;
        headers.append(name, secret(k, v)?);
    }
    Ok(request)
}

/// Aborts the connection's task when dropped: on the timeout, on an error, or once the body is
/// read.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sends `request` on `stream` with hyper's HTTP/1.1 client and reads the reply's body, at most
/// `cap` bytes of it.
async fn exchange<S>(
    stream: S,
    request: Request<Empty<Bytes>>,
    shown: &str,
    cap: u64,
) -> Result<(u16, Vec<u8>), HttpError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let protocol = |detail: String| HttpError::Protocol {
        url: shown.to_owned(),
        detail,
    };
    let (mut sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| protocol(described(&e)))?;
    let _connection = AbortOnDrop(tokio::spawn(async move {
        // Its errors reach the request's and the body's futures too; they are reported there.
        let _ = connection.await;
    }));
    let reply = sender.send_request(request).await.map_err(|e| {
        protocol(if e.is_incomplete_message() {
            "the reply has no complete HTTP head".to_owned()
        } else if e.is_parse() {
            format!("the reply is not HTTP/1.x ({})", described(&e))
        } else {
            described(&e)
        })
    })?;
    let status = reply.status().as_u16();
    let headers = reply.headers();
    if let Some(v) = headers.get(header::CONTENT_ENCODING) {
        let v = String::from_utf8_lossy(v.as_bytes());
        if !v.trim().eq_ignore_ascii_case("identity") {
            return Err(protocol(format!(
                "the body is {}-encoded, which this client does not decode",
                v.trim()
            )));
        }
    }
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let until_close = announced.is_none() && !headers.contains_key(header::TRANSFER_ENCODING);
    let too_large = || HttpError::TooLarge {
        url: shown.to_owned(),
        cap: human_bytes(cap),
    };
    if announced.is_some_and(|n| n > cap) {
        return Err(too_large());
    }
    let mut body = reply.into_body();
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(frame) => frame,
            // A TLS peer that closes without `close_notify` after a body that runs to the close:
            // the body is whole (as curl and browsers take it).
            Err(e) if until_close && eof(&e) => break,
            Err(e) if eof(&e) => {
                let got = out.len();
                return Err(protocol(match announced {
                    Some(n) => format!("partial page: {got} of the {n} bytes announced arrived"),
                    None => format!(
                        "partial page: a chunked body ends before its last chunk ({got} bytes \
                         arrived)"
                    ),
                }));
            }
            Err(e) => return Err(protocol(described(&e))),
        };
        if let Ok(data) = frame.into_data() {
            if (out.len() + data.len()) as u64 > cap {
                return Err(too_large());
            }
            out.extend_from_slice(&data);
        }
    }
    Ok((status, out))
}

/// Whether hyper's error comes from the connection closing early (an end of file).
fn eof(e: &hyper::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return io.kind() == std::io::ErrorKind::UnexpectedEof;
        }
        source = s.source();
    }
    e.is_incomplete_message()
}

/// Hyper's error with its causes (`error reading a body from connection: …`).
fn described(e: &hyper::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
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
    fn urls_are_split_into_host_port_and_path() {
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
    }

    /// A server on 127.0.0.1 that answers one request with `reply` (then closes) and hands back
    /// the request's head; it gives up after 5 s.
    async fn serve_once(reply: Vec<u8>) -> (HttpUrl, tokio::task::JoinHandle<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let exchange = async {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = s.write_all(&reply).await;
                let _ = s.shutdown().await;
                String::from_utf8_lossy(&head).into_owned()
            };
            tokio::time::timeout(Duration::from_secs(5), exchange)
                .await
                .unwrap_or_default()
        });
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{port}/prom")).unwrap();
        (url, server)
    }

    /// `GET /prom/api` from a server answering `reply`, with a cap of `cap` bytes.
    async fn fetch(reply: &[u8], cap: u64) -> (Result<(u16, Vec<u8>), HttpError>, String) {
        let (url, server) = serve_once(reply.to_vec()).await;
        let got = get_capped(
            &url,
            "/prom/api",
            Duration::from_secs(5),
            &HttpOptions::default(),
            cap,
        )
        .await;
        (got, server.await.unwrap())
    }

    #[tokio::test]
    async fn a_chunked_answer_is_read_whole_with_the_headers_sent() {
        let (url, server) = serve_once(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
                .to_vec(),
        )
        .await;
        let opts = HttpOptions {
            tls: None,
            authorization: Some(Secret::new("Bearer t0ken".into())),
            headers: vec![("X-Scope-OrgID".into(), Secret::new("tenant-1".into()))],
        };
        let got = get(&url, "/prom/api?q=1", Duration::from_secs(5), &opts).await;
        assert_eq!(got.unwrap(), (200, b"abcde".to_vec()));
        let head = server.await.unwrap().to_ascii_lowercase();
        assert!(head.starts_with("get /prom/api?q=1 http/1.1\r\n"), "{head}");
        for line in [
            format!("host: {}", url.authority),
            "authorization: bearer t0ken".to_owned(),
            "x-scope-orgid: tenant-1".to_owned(),
            "accept: application/json".to_owned(),
            "connection: close".to_owned(),
        ] {
            assert!(head.contains(&format!("{line}\r\n")), "{line}: {head}");
        }
    }

    #[tokio::test]
    async fn bodies_by_length_and_to_the_close_and_redirects_not_followed() {
        let (got, _) = fetch(
            b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd",
            BODY_CAP,
        )
        .await;
        assert_eq!(got.unwrap(), (200, b"abcd".to_vec()));
        let (got, _) = fetch(b"HTTP/1.1 200 OK\r\n\r\nto the close", BODY_CAP).await;
        assert_eq!(got.unwrap(), (200, b"to the close".to_vec()));
        let (got, _) = fetch(
            b"HTTP/1.1 302 Found\r\nLocation: http://elsewhere/\r\nContent-Length: 0\r\n\r\n",
            BODY_CAP,
        )
        .await;
        assert_eq!(got.unwrap(), (302, Vec::new()));
    }

    #[tokio::test]
    async fn a_server_closing_mid_body_is_a_partial_page() {
        let cases: [(&[u8], &str); 5] = [
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabcd",
                "partial page: 4 of the 9 bytes announced arrived",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n5\r\nde",
                "partial page: a chunked body ends before its last chunk",
            ),
            (b"HTTP/1.1 200 OK\r\nContent-Le", "no complete HTTP head"),
            (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not HTTP/1.x"),
            (
                b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx",
                "gzip-encoded",
            ),
        ];
        for (reply, says) in cases {
            let (got, _) = fetch(reply, BODY_CAP).await;
            let e = got.unwrap_err().to_string();
            assert!(e.contains(says), "{says}: {e}");
        }
    }

    #[tokio::test]
    async fn an_answer_over_the_cap_is_refused_with_the_figure() {
        // Announced larger than the cap: refused before reading the body.
        let announced = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\nabc",
            BODY_CAP + 1
        );
        let (got, _) = fetch(announced.as_bytes(), BODY_CAP).await;
        let e = got.unwrap_err();
        assert!(matches!(e, HttpError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("larger than 256.0 MiB"), "{e}");
        // Chunked, found larger while reading.
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n";
        let (got, _) = fetch(chunked, 8).await;
        let e = got.unwrap_err().to_string();
        assert!(e.contains("larger than 8 B"), "{e}");
        let (got, _) = fetch(chunked, 12).await;
        assert_eq!(got.unwrap().1, b"abcdefghijkl".to_vec());
    }

    #[tokio::test]
    async fn the_timeout_bounds_a_silent_server() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = HttpUrl::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
        let e = get(
            &url,
            "/",
            Duration::from_millis(300),
            &HttpOptions::default(),
        )
        .await
        .unwrap_err();
        assert!(e.to_string().contains("no complete reply within"), "{e}");
        drop(listener);
    }

    #[tokio::test]
    async fn header_values_http_cannot_carry_are_refused_unshown() {
        let url = HttpUrl::parse("http://127.0.0.1:9/").unwrap();
        let opts = HttpOptions {
            tls: None,
            authorization: Some(Secret::new("Bearer hunter2\r\nX-Evil: 1".into())),
            headers: Vec::new(),
        };
        let e = get(&url, "/", Duration::from_secs(1), &opts)
            .await
            .unwrap_err();
        assert!(matches!(e, HttpError::Header(_)), "{e}");
        assert!(!e.to_string().contains("hunter2"), "{e}");
        let opts = HttpOptions {
            headers: vec![("X-Tenant".into(), Secret::new("s3cret\n".into()))],
            ..HttpOptions::default()
        };
        let e = get(&url, "/", Duration::from_secs(1), &opts)
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("X-Tenant") && !e.to_string().contains("s3cret"),
            "{e}"
        );
    }
}
