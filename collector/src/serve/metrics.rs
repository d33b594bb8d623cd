//! `record --metrics-listen`: the signals of [`slotscope_core::signal`] served at `GET /metrics`
//! in the OpenMetrics text format, on a loopback address only, for the fleet's Prometheus (or a
//! compatible engine) to scrape. [`SignalSink`] feeds the signals every line the recorder writes.
//!
//! HTTP/1.1 through hyper: `GET` (and `HEAD`) of `/metrics` answered, anything else 404 or 405.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use slotscope_core::recording::{EndReason, Line};
use slotscope_core::signal::openmetrics::{render, CONTENT_TYPE};
use slotscope_core::signal::Signals;
use slotscope_core::Timestamp;
use tokio::net::TcpListener;

use crate::serve::admission::{Admission, METRICS_CONNECTIONS};
use crate::store::sink::{Salvaged, Sink};

/// The signals shared between the recorder (writing) and the server (reading).
pub type SharedSignals = Arc<Mutex<Signals>>;

/// A sink that writes to another and feeds every line written to the signals.
pub struct SignalSink {
    inner: Box<dyn Sink>,
    signals: SharedSignals,
}

impl SignalSink {
    /// Wraps `inner`, feeding `signals`.
    pub fn new(inner: Box<dyn Sink>, signals: SharedSignals) -> SignalSink {
        SignalSink { inner, signals }
    }
}

impl Sink for SignalSink {
    fn write_line(&mut self, line: &Line) -> io::Result<()> {
        self.inner.write_line(line)?;
        self.signals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line);
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
    fn finish(self: Box<Self>) -> io::Result<()> {
        self.inner.finish()
    }
    fn bytes_written(&self) -> u64 {
        self.inner.bytes_written()
    }
    fn period_over(&self, t: Timestamp) -> bool {
        self.inner.period_over(t)
    }
    fn next_period(&mut self, t: Timestamp) -> io::Result<()> {
        self.inner.next_period(t)
    }
    fn salvage(self: Box<Self>, t: Timestamp, reason: EndReason) -> io::Result<Salvaged> {
        self.inner.salvage(t, reason)
    }
}

/// Why `--metrics-listen ADDR` is refused: `None` for a loopback address. Only loopback is
/// served: the signals name nodes and client libraries, and there is no authentication; put a
/// reverse proxy (with TLS and authentication) in front to reach it from elsewhere.
pub fn refusal(addr: &SocketAddr) -> Option<String> {
    (!addr.ip().is_loopback()).then(|| {
        format!(
            "--metrics-listen {addr}: only a loopback address (127.0.0.1, ::1) is served; the \
             metrics are not authenticated. Put a reverse proxy in front to expose them."
        )
    })
}

/// Binds `addr` (blocking, so that a busy port is reported before recording starts).
pub fn bind(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Serves `/metrics` from `listener` until the task is dropped with its runtime.
pub async fn serve(listener: std::net::TcpListener, signals: SharedSignals) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    let admission = Admission::new(METRICS_CONNECTIONS);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors and the like: wait a little rather than spin.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let signals = signals.clone();
        admission.admit(stream, move |stream| async move {
            let service = service_fn(move |req| {
                let response = answer(&req, &signals);
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = crate::serve::http1::connection()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Answers one request: the signals at `GET /metrics` (and `HEAD`), else 404 or 405.
fn answer(req: &Request<Incoming>, signals: &SharedSignals) -> Response<Full<Bytes>> {
    let (status, content_type, body) =
        if req.method() != Method::GET && req.method() != Method::HEAD {
            (
                StatusCode::METHOD_NOT_ALLOWED,
                "text/plain",
                "405 Method Not Allowed\n".to_owned(),
            )
        } else if req.uri().path() == "/metrics" {
            let families = signals
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .families();
            (StatusCode::OK, CONTENT_TYPE, render(&families))
        } else {
            (
                StatusCode::NOT_FOUND,
                "text/plain",
                "404 Not Found: the metrics are at /metrics\n".to_owned(),
            )
        };
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_is_served() {
        assert!(refusal(&"127.0.0.1:9187".parse().unwrap()).is_none());
        assert!(refusal(&"[::1]:9187".parse().unwrap()).is_none());
        assert!(refusal(&"0.0.0.0:9187".parse().unwrap()).is_some());
        assert!(refusal(&"10.0.0.5:9187".parse().unwrap()).is_some());
    }
}
