//! The HTTP/1.1 connection both servers speak (the viewer's and `--metrics-listen`'s), set up once.

use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::TokioTimer;

/// How long a client may take to send a request head before its connection is dropped.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(20);

/// hyper's HTTP/1.1 for one connection: as many requests as the client sends on it (keep-alive);
/// a client that sends no request head within [`HEAD_TIMEOUT`] is dropped.
pub fn connection() -> http1::Builder {
    let mut b = http1::Builder::new();
    b.timer(TokioTimer::new()).header_read_timeout(HEAD_TIMEOUT);
    b
}
