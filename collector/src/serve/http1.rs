//! The HTTP/1.1 connection both servers speak (the viewer's and `--metrics-listen`'s), set up once.

use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::TokioTimer;

/// How long a client may take to send a request head before its connection is dropped.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(20);

/// Most bytes a connection buffers while reading, give or take one read (hyper's reads grow up
/// to this size, so a head of up to twice it may still be parsed): a head that does not fit is
/// answered `431 Request Header Fields Too Large`. A browser's head is about a kilobyte.
pub const MAX_BUF: usize = 64 * 1024;

/// hyper's HTTP/1.1 for one connection: as many requests as the client sends on it (keep-alive);
/// a client that sends no request head within [`HEAD_TIMEOUT`] (a slow one too, or one idle
/// after a response) is dropped; a head beyond [`MAX_BUF`] is refused.
pub fn connection() -> http1::Builder {
    let mut b = http1::Builder::new();
    b.timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_buf_size(MAX_BUF);
    b
}
