//! The tap end to end in one process, in front of a real `redis-server` (started here on a free
//! loopback port, ended by its PID), with a recording file that stops taking lines: the clients
//! must not notice.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use slotscope_core::recording::Line;
use slotscope_core::tap::summary::NOT_RECORDED;
use slotscope_core::NodeAddr;

use super::registry::NodePorts;
use super::{run, TapConfig};
use crate::store::sink::Sink;

/// A `redis-server` of this test's own, killed by its PID when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Connects to `port`, retrying for up to 10 s while nothing listens yet.
fn connect(port: u16) -> TcpStream {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => return s,
            Err(e) if Instant::now() > deadline => panic!("nothing on port {port}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// A recording file that takes its header and then no line until the gate opens (a disk that
/// stalls), keeping what it was given.
struct Stalled {
    gate: Arc<(Mutex<bool>, Condvar)>,
    lines: Arc<Mutex<Vec<Line>>>,
}

impl Sink for Stalled {
    fn write_line(&mut self, line: &Line) -> std::io::Result<()> {
        if !matches!(line, Line::Header(_)) {
            let (open, opened) = &*self.gate;
            let guard = open.lock().unwrap_or_else(PoisonError::into_inner);
            // Bounded: a test that forgot to open the gate fails instead of hanging.
            let (guard, _) = opened
                .wait_timeout_while(guard, Duration::from_secs(60), |open| !*open)
                .unwrap_or_else(PoisonError::into_inner);
            drop(guard);
        }
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line.clone());
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    fn finish(self: Box<Self>) -> std::io::Result<()> {
        Ok(())
    }

    fn bytes_written(&self) -> u64 {
        0
    }
}

#[test]
fn a_recording_that_stalls_costs_lines_never_the_client() {
    let port = free_port();
    let server = Server(
        Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("start redis-server (installed by scripts/setup)"),
    );
    drop(connect(port));
    let listen: SocketAddr = ([127, 0, 0, 1], free_port()).into();
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Stalled {
        gate: gate.clone(),
        lines: lines.clone(),
    };
    let cfg = TapConfig {
        upstream: NodeAddr::new("127.0.0.1", port).expect("an address"),
        listen,
        node_ports: NodePorts::Any,
        record_keys: false,
        poll: None,
        duration: None,
        quiet: true,
        queued_lines: 100,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let tap = rt.spawn(run(cfg, Box::new(sink), async {
        let _ = stop_rx.await;
    }));

    // 1,500 commands one at a time, each waiting for its reply: 1,500 batches of one line for a
    // writer that writes none of them. A tap that waited for its writer would hold the client
    // here (the read times out).
    const COMMANDS: usize = 1_500;
    let mut client = connect(listen.port());
    client
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("a read timeout");
    let mut reader = BufReader::new(client.try_clone().expect("a second handle"));
    let mut reply = String::new();
    for i in 0..COMMANDS {
        client.write_all(b"*1\r\n$4\r\nPING\r\n").expect("send");
        reply.clear();
        reader
            .read_line(&mut reply)
            .unwrap_or_else(|e| panic!("reply {i} of {COMMANDS} did not come: {e}"));
        assert_eq!(reply, "+PONG\r\n");
    }
    drop(reader);
    drop(client);

    *gate.0.lock().unwrap_or_else(PoisonError::into_inner) = true;
    gate.1.notify_all();
    let _ = stop_tx.send(());
    let summary = rt
        .block_on(tap)
        .expect("the tap's task")
        .expect("the tap ends well");
    drop(server);

    let lines = lines.lock().unwrap_or_else(PoisonError::into_inner);
    let written = lines
        .iter()
        .filter(|l| matches!(l, Line::TapCommand(_)))
        .count() as u64;
    assert!(
        written <= 100,
        "{written} command lines written past a limit of 100"
    );
    assert!(summary.not_recorded > 0, "nothing dropped");
    assert_eq!(summary.total.sent, written);
    assert_eq!(written + summary.not_recorded, COMMANDS as u64);
    // The file says so, just before its end line.
    let n = lines.len();
    assert!(matches!(lines[n - 1], Line::End(_)));
    let Line::Annotation(a) = &lines[n - 2] else {
        panic!("no annotation before the end: {:?}", lines[n - 2]);
    };
    assert_eq!(a.source, NOT_RECORDED);
    assert_eq!(a.fields["commands"], summary.not_recorded.to_string());
}
