//! How many connections a server holds at once, and for how long: each one takes a place for its
//! whole life (at most [`LIFETIME`]); a connection that finds every place taken is answered
//! `503 Service Unavailable` and closed at once, so that many clients, or a slow-loris one
//! holding connections open, cost a bounded amount of memory and leave the server answering.
//! A client that sends no request head, or none after a response, within
//! [`crate::serve::http1::HEAD_TIMEOUT`] is dropped by hyper, which frees its place.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

/// Longest a connection is kept, whatever it does.
pub const LIFETIME: Duration = Duration::from_secs(600);

/// Connections the viewer's server holds at once (a browser opens about six).
pub const VIEWER_CONNECTIONS: usize = 256;

/// Connections `--metrics-listen` holds at once (a Prometheus or two scraping).
pub const METRICS_CONNECTIONS: usize = 32;

/// What a connection that finds no place is told before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: text/plain\r\ncontent-length: 38\r\n\r\ntoo many connections; try again later\n";

/// The places of one server.
#[derive(Clone)]
pub struct Admission {
    places: Arc<Semaphore>,
}

impl Admission {
    /// A server that holds at most `max` connections.
    pub fn new(max: usize) -> Admission {
        Admission {
            places: Arc::new(Semaphore::new(max)),
        }
    }

    /// Serves `stream` with `serve` on a task of its own if a place is free (held until the
    /// connection ends, at most [`LIFETIME`]), else answers 503 and closes it.
    pub fn admit<F, Fut>(&self, mut stream: TcpStream, serve: F)
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        match Arc::clone(&self.places).try_acquire_owned() {
            Ok(place) => {
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(LIFETIME, serve(stream)).await;
                    drop(place);
                });
            }
            Err(_) => {
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(Duration::from_secs(1), async {
                        let _ = stream.write_all(BUSY).await;
                        let _ = stream.shutdown().await;
                    })
                    .await;
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use tokio::io::AsyncReadExt;
    use tokio::net::TcpListener;

    use super::*;

    #[test]
    fn the_busy_answer_says_its_length() {
        let text = std::str::from_utf8(BUSY).unwrap();
        let (_, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(text.contains(&format!("content-length: {}\r\n", body.len())));
    }

    #[tokio::test]
    async fn a_connection_beyond_the_places_is_answered_503_and_a_freed_place_is_taken_again() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let admission = Admission::new(2);
        let (release, released) = tokio::sync::watch::channel(false);
        let mut clients = Vec::new();
        for _ in 0..3 {
            clients.push(TcpStream::connect(addr).await.unwrap());
            let (stream, _) = listener.accept().await.unwrap();
            let mut released = released.clone();
            admission.admit(stream, move |mut s| async move {
                let _ = released.wait_for(|r| *r).await;
                let _ = s.write_all(b"served").await;
            });
        }
        assert_eq!(admission.places.available_permits(), 0);
        let mut third = String::new();
        clients[2].read_to_string(&mut third).await.unwrap();
        assert!(third.starts_with("HTTP/1.1 503"), "{third}");
        release.send(true).unwrap();
        for c in &mut clients[..2] {
            let mut got = String::new();
            c.read_to_string(&mut got).await.unwrap();
            assert_eq!(got, "served");
        }
        tokio::time::timeout(Duration::from_secs(5), async {
            while admission.places.available_permits() < 2 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("places freed");
    }
}
