//! A TCP proxy in front of one node, on 127.0.0.1, whose behaviour a test switches while a
//! recorder polls through it: passing bytes, silent (connections accepted, nothing ever answered),
//! partitioned (established connections silent and new ones never accepted: once the listener's
//! queue is full, the kernel drops their SYNs, so a connect hangs as across a partition), answering
//! half of each reply then closing, or slow (a reply's bytes held a second before they go on).
//! Every thread polls a stop flag at least every 50 ms and ends when the proxy is dropped.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// What the proxy does with the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// Passes every byte both ways.
    Pass = 0,
    /// Accepts connections and reads what they send; answers nothing.
    Silent = 1,
    /// Silent, and accepts no new connection.
    Partition = 2,
    /// Passes the request on, and of its reply only the first half, then closes the connection.
    HalfThenClose = 3,
    /// Holds each piece of a reply for a second before passing it on.
    Slow = 4,
}

impl Mode {
    fn from_u8(v: u8) -> Mode {
        match v {
            1 => Mode::Silent,
            2 => Mode::Partition,
            3 => Mode::HalfThenClose,
            4 => Mode::Slow,
            _ => Mode::Pass,
        }
    }
}

/// How often a blocked thread looks at the stop flag and the mode.
const TICK: Duration = Duration::from_millis(50);

/// Connections made to its own listener to fill its queue during a partition.
const QUEUE_FILLERS: usize = 160;

/// A running proxy; dropping it stops every thread it started.
pub struct FaultProxy {
    port: u16,
    mode: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
    fillers: Vec<TcpStream>,
}

impl FaultProxy {
    /// Listens on a free port of 127.0.0.1 and forwards to `127.0.0.1:upstream`.
    pub fn start(upstream: u16) -> std::io::Result<FaultProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let mode = Arc::new(AtomicU8::new(Mode::Pass as u8));
        let stop = Arc::new(AtomicBool::new(false));
        let (m, s) = (Arc::clone(&mode), Arc::clone(&stop));
        let acceptor = thread::Builder::new()
            .name("fault-proxy".into())
            .spawn(move || accept_loop(&listener, upstream, &m, &s))?;
        Ok(FaultProxy {
            port,
            mode,
            stop,
            acceptor: Some(acceptor),
            fillers: Vec::new(),
        })
    }

    /// The port clients connect to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Switches the proxy's behaviour (for connections open and to come).
    pub fn set(&mut self, mode: Mode) {
        self.mode.store(mode as u8, Ordering::SeqCst);
        if mode == Mode::Partition {
            // The acceptor stops taking connections; these fill the kernel's queue, after which
            // a new connection's SYN goes unanswered.
            for _ in 0..QUEUE_FILLERS {
                match TcpStream::connect_timeout(
                    &std::net::SocketAddr::from(([127, 0, 0, 1], self.port)),
                    Duration::from_millis(100),
                ) {
                    Ok(s) => self.fillers.push(s),
                    Err(_) => break,
                }
            }
        } else {
            self.fillers.clear();
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.fillers.clear();
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(
    listener: &TcpListener,
    upstream: u16,
    mode: &Arc<AtomicU8>,
    stop: &Arc<AtomicBool>,
) {
    let mut pairs: Vec<JoinHandle<()>> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        if Mode::from_u8(mode.load(Ordering::SeqCst)) == Mode::Partition {
            thread::sleep(TICK);
            continue;
        }
        match listener.accept() {
            Ok((client, _)) => {
                let (m, s) = (Arc::clone(mode), Arc::clone(stop));
                if let Ok(t) = thread::Builder::new()
                    .name("fault-proxy-conn".into())
                    .spawn(move || connection(client, upstream, &m, &s))
                {
                    pairs.push(t);
                }
                pairs.retain(|t| !t.is_finished());
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => thread::sleep(Duration::from_millis(5)),
            Err(_) => thread::sleep(TICK),
        }
    }
    for t in pairs {
        let _ = t.join();
    }
}

/// One client's connection: its upstream, and the two directions' threads.
fn connection(client: TcpStream, upstream: u16, mode: &Arc<AtomicU8>, stop: &Arc<AtomicBool>) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    for s in [&client, &server] {
        let _ = s.set_read_timeout(Some(TICK));
        let _ = s.set_nodelay(true);
    }
    let (Ok(client2), Ok(server2)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let closed = Arc::new(AtomicBool::new(false));
    let (m, s, c) = (Arc::clone(mode), Arc::clone(stop), Arc::clone(&closed));
    let up = thread::spawn(move || pump(client2, server2, false, &m, &s, &c));
    pump(server, client, true, mode, stop, &closed);
    let _ = up.join();
}

/// Copies `from` to `to` as the mode says (`reply`: this is the server's side) until either end
/// closes, the proxy stops or the other direction gave up.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    reply: bool,
    mode: &Arc<AtomicU8>,
    stop: &Arc<AtomicBool>,
    closed: &Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    while !stop.load(Ordering::SeqCst) && !closed.load(Ordering::SeqCst) {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => break,
        };
        let ok = match Mode::from_u8(mode.load(Ordering::SeqCst)) {
            Mode::Pass => to.write_all(&buf[..n]).is_ok(),
            // Read and dropped: nothing reaches the other side.
            Mode::Silent | Mode::Partition => true,
            Mode::HalfThenClose if reply => {
                let _ = to.write_all(&buf[..n.div_ceil(2)]);
                false
            }
            Mode::HalfThenClose => to.write_all(&buf[..n]).is_ok(),
            Mode::Slow if reply => {
                let mut waited = Duration::ZERO;
                while waited < Duration::from_secs(1) && !stop.load(Ordering::SeqCst) {
                    thread::sleep(TICK);
                    waited += TICK;
                }
                to.write_all(&buf[..n]).is_ok()
            }
            Mode::Slow => to.write_all(&buf[..n]).is_ok(),
        };
        if !ok {
            break;
        }
    }
    closed.store(true, Ordering::SeqCst);
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}
