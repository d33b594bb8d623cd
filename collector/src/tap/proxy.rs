//! One client connection through the tap: two pumps, client → node and node → client. Requests are
//! forwarded as they arrive, byte for byte; their frames are only looked at for the command name
//! and first key. Replies are forwarded frame by frame, byte for byte except the redirections and
//! topology replies that name nodes (rewritten to the tap's listeners), and each is paired with its
//! request to record the command. Memory is bounded: a request larger than [`REQUEST_HOLD`] or a
//! reply larger than [`REPLY_HOLD`] is forwarded in pieces as it arrives, and at most
//! [`MAX_IN_FLIGHT`] commands wait for replies before the tap stops reading the client (which then
//! waits, as it would on a slow server). The commands of one read go to the reply pump together
//! (one hand-over and one count of the bound a read, not one a command).

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use slotscope_core::recording::{ConnEvent, Line, ReplyClass, TapCommand, TapConn};
use slotscope_core::tap::command::{request_args, request_head};
use slotscope_core::tap::rewrite::{rewrite_redirect, rewrite_topology};
use slotscope_core::tap::{pubsub_kind, Command, Expect, FrameSplitter, PubSub};
use slotscope_core::{NodeAddr, Timestamp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch, Semaphore};

use crate::record::clock::now;
use crate::tap::registry::{Registry, SharedRegistry};
use crate::tap::writer::Records;

/// Bytes read from a socket at a time.
const READ_CHUNK: usize = 64 * 1024;
/// A request frame longer than this is forwarded in pieces (its name and first key are taken
/// from its first part).
pub const REQUEST_HOLD: usize = 1024 * 1024;
/// A reply frame longer than this is forwarded in pieces, unchanged (topology replies of even
/// very large clusters are far smaller).
pub const REPLY_HOLD: usize = 8 * 1024 * 1024;
/// Commands waiting for their replies on one connection, at most.
pub const MAX_IN_FLIGHT: usize = 16 * 1024;
/// Time to reach a node before the client's connection is refused.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// After the client closes, time left for the node's last replies.
const DRAIN: Duration = Duration::from_secs(2);

/// What every connection shares.
pub struct Shared {
    /// Listeners by node.
    pub registry: SharedRegistry,
    /// Where recording lines go (never waited for: a slow disk costs lines, counted, never a
    /// client's time or unbounded memory).
    pub records: Records,
    /// Connection numbers.
    pub next_conn: AtomicU64,
    /// Record the first key's name.
    pub record_keys: bool,
    /// Becomes `true` at shutdown.
    pub stop: watch::Receiver<bool>,
    /// No messages on stderr.
    pub quiet: bool,
}

/// A command forwarded and waiting for its reply.
struct Pending {
    t: Timestamp,
    sent: Instant,
    cmd: Command,
    /// A confirmation of a `SUBSCRIBE`-family command was recorded already.
    recorded: bool,
}

struct Conn<'a> {
    id: u64,
    node: &'a NodeAddr,
    shared: &'a Arc<Shared>,
}

impl Conn<'_> {
    /// The line of `p` (its name moved into the line, not copied).
    fn line(&self, p: Pending, reply: ReplyClass, latency: Duration) -> Line {
        let Command {
            name, slot, key, ..
        } = p.cmd;
        Line::TapCommand(TapCommand {
            t: p.t,
            conn: self.id,
            cmd: name,
            slot,
            key: key
                .filter(|_| self.shared.record_keys)
                .map(|k| String::from_utf8_lossy(&k).into_owned()),
            node: self.node.clone(),
            reply,
            latency_us: u64::try_from(latency.as_micros()).unwrap_or(u64::MAX),
        })
    }

    fn record(&self, lines: Vec<Line>) {
        self.shared.records.offer(lines);
    }

    fn conn_line(
        &self,
        event: ConnEvent,
        peer: SocketAddr,
        listener: &NodeAddr,
        error: Option<String>,
    ) -> Line {
        Line::TapConn(TapConn {
            t: now(),
            conn: self.id,
            event,
            client: peer.to_string(),
            node: self.node.clone(),
            listener: listener.clone(),
            error,
        })
    }
}

/// Serves one client connected to `listener` (which stands for `node`) until either side closes
/// or the tap stops.
pub async fn serve(
    client: TcpStream,
    peer: SocketAddr,
    node: NodeAddr,
    listener: NodeAddr,
    shared: Arc<Shared>,
) {
    let conn = Conn {
        id: shared.next_conn.fetch_add(1, Ordering::Relaxed) + 1,
        node: &node,
        shared: &shared,
    };
    let upstream = match tokio::time::timeout(
        CONNECT_TIMEOUT,
        TcpStream::connect((node.host(), node.port())),
    )
    .await
    {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            let line = conn.conn_line(ConnEvent::Refused, peer, &listener, Some(e.to_string()));
            conn.record(vec![line]);
            return;
        }
        Err(_) => {
            let error = format!("no connection within {} s", CONNECT_TIMEOUT.as_secs());
            let line = conn.conn_line(ConnEvent::Refused, peer, &listener, Some(error));
            conn.record(vec![line]);
            return;
        }
    };
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    conn.record(vec![conn.conn_line(
        ConnEvent::Opened,
        peer,
        &listener,
        None,
    )]);
    let (cr, cw) = client.into_split();
    let (ur, uw) = upstream.into_split();
    let (ptx, prx) = mpsc::unbounded_channel::<Vec<Pending>>();
    let in_flight = Semaphore::new(MAX_IN_FLIGHT);
    let mut replies = ReplyState {
        head: None,
        queue: VecDeque::new(),
        arriving: prx,
        taken: 0,
        subscribed: false,
    };
    let mut stop = shared.stop.clone();
    let error = {
        let req = pump_requests(
            cr,
            uw,
            Handover {
                tx: ptx,
                in_flight: &in_flight,
            },
            shared.record_keys,
        );
        let rep = pump_replies(ur, cw, &mut replies, &in_flight, &conn);
        tokio::pin!(req, rep);
        tokio::select! {
            r = &mut req => {
                let first = r.err();
                match tokio::time::timeout(DRAIN, &mut rep).await {
                    Ok(r) => first.or(r.err()),
                    Err(_) => first,
                }
            }
            r = &mut rep => r.err(),
            () = async { let _ = stop.wait_for(|s| *s).await; } => None,
        }
    };
    // Commands still without a reply: the connection closed under them.
    let mut lines = Vec::new();
    let closed = replies.head.take().into_iter().filter(|p| !p.recorded);
    let queued = std::mem::take(&mut replies.queue);
    let arriving = std::iter::from_fn(|| replies.arriving.try_recv().ok()).flatten();
    for p in closed.chain(queued).chain(arriving) {
        let latency = p.sent.elapsed();
        lines.push(conn.line(p, ReplyClass::Closed, latency));
    }
    lines.push(conn.conn_line(
        ConnEvent::Closed,
        peer,
        &listener,
        error.map(|e| e.to_string()),
    ));
    conn.record(lines);
}

/// Where the request pump hands the commands it forwarded to the reply pump: a batch a read,
/// after taking one permit of `in_flight` for each (the reply pump gives them back as replies
/// come; none left: the client is not read until some are).
struct Handover<'a> {
    tx: mpsc::UnboundedSender<Vec<Pending>>,
    in_flight: &'a Semaphore,
}

impl Handover<'_> {
    /// Hands `batch` over (nothing when empty), first waiting for its permits.
    async fn send(&self, batch: Vec<Pending>) {
        if batch.is_empty() {
            return;
        }
        let mut batch = batch;
        while !batch.is_empty() {
            // A read of more commands than the bound goes over in parts.
            let rest = batch.split_off(batch.len().min(MAX_IN_FLIGHT));
            let n = u32::try_from(batch.len()).unwrap_or(u32::MAX);
            if let Ok(permits) = self.in_flight.acquire_many(n).await {
                permits.forget();
            }
            // The reply pump holds the receiver until the connection's end.
            let _ = self.tx.send(batch);
            batch = rest;
        }
    }
}

/// Client → node: forwards every byte as it arrives, and hands each request over for its reply.
async fn pump_requests(
    mut cr: OwnedReadHalf,
    mut uw: OwnedWriteHalf,
    pending: Handover<'_>,
    record_keys: bool,
) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut splitter = FrameSplitter::for_requests();
    // `buf` holds the current partial frame (to read its command when it completes) and what was
    // read after it; bytes before `forwarded` have been sent to the node already.
    let (mut scanned, mut frame_start, mut forwarded) = (0usize, 0usize, 0usize);
    // The current frame was too large to hold; its command is queued already.
    let mut head_queued = false;
    // The stream is not RESP: forward it unrecorded (the server answers with an error and closes).
    let mut broken = false;
    // Commands in the last read: the next read's batch starts that large (a client's reads are
    // alike; no growing a vector command by command).
    let mut last_batch = 0;
    loop {
        buf.reserve(READ_CHUNK);
        if cr.read_buf(&mut buf).await? == 0 {
            let _ = uw.shutdown().await;
            return Ok(());
        }
        // The requests of one read arrived together: one reading of the clocks serves them all,
        // and they are handed over together.
        let mut at = None;
        let mut batch = Vec::with_capacity(last_batch);
        while !broken && scanned < buf.len() {
            match splitter.feed(&buf[scanned..]) {
                Ok(Some(n)) => {
                    let end = scanned + n;
                    if head_queued {
                        head_queued = false;
                    } else if let Some(args) = request_args(&buf[frame_start..end]) {
                        let at = *at.get_or_insert_with(|| (now(), Instant::now()));
                        let cmd = Command::from_args_keeping(&args, record_keys);
                        batch.extend(pending_of(cmd, at));
                    }
                    frame_start = end;
                    scanned = end;
                }
                Ok(None) => scanned = buf.len(),
                Err(_) => broken = true,
            }
        }
        if !broken && !head_queued && buf.len() - frame_start > REQUEST_HOLD {
            let args = request_head(&buf[frame_start..]);
            let at = *at.get_or_insert_with(|| (now(), Instant::now()));
            let cmd = Command::from_args_keeping(&args, record_keys);
            batch.extend(pending_of(cmd, at));
            head_queued = true;
        }
        // Handed over before the node can answer them.
        last_batch = batch.len();
        pending.send(batch).await;
        // Everything read goes on at once, whole frames or not: the node sees the client's bytes
        // as they come.
        uw.write_all(&buf[forwarded..]).await?;
        if broken || head_queued {
            buf.clear();
            (scanned, frame_start, forwarded) = (0, 0, 0);
        } else {
            buf.drain(..frame_start);
            scanned -= frame_start;
            forwarded = buf.len();
            frame_start = 0;
        }
        // Keep the buffer from growing for good after one large request.
        if buf.capacity() > 4 * READ_CHUNK && buf.len() < READ_CHUNK {
            buf.shrink_to(2 * READ_CHUNK);
        }
    }
}

/// `cmd`, sent at `at` (the wall clock, and the monotonic one for its latency), as it waits for
/// its reply; none for a command that gets none. (Its key is there only with `--record-keys`:
/// [`Command::from_args_keeping`].)
fn pending_of(cmd: Command, (t, sent): (Timestamp, Instant)) -> Option<Pending> {
    if cmd.expect == Expect::Nothing {
        return None;
    }
    Some(Pending {
        t,
        sent,
        cmd,
        recorded: false,
    })
}

struct ReplyState {
    /// The oldest command without its (last) reply, once looked at.
    head: Option<Pending>,
    /// The commands after it, in order.
    queue: VecDeque<Pending>,
    /// The request pump's batches not yet in `queue`.
    arriving: mpsc::UnboundedReceiver<Vec<Pending>>,
    /// Commands taken off `queue` since the permits were last given back.
    taken: usize,
    /// The connection is subscribed to at least one channel (RESP2 messages arrive as arrays).
    subscribed: bool,
}

impl ReplyState {
    /// The next command waiting for its reply, if one was handed over.
    fn next(&mut self) -> Option<Pending> {
        if self.queue.is_empty() {
            while let Ok(batch) = self.arriving.try_recv() {
                self.queue.extend(batch);
            }
        }
        let p = self.queue.pop_front()?;
        self.taken += 1;
        Some(p)
    }
}

/// Node → client: forwards replies frame by frame, rewriting node addresses, and records each
/// command with its reply.
async fn pump_replies(
    mut ur: OwnedReadHalf,
    mut cw: OwnedWriteHalf,
    state: &mut ReplyState,
    in_flight: &Semaphore,
    conn: &Conn<'_>,
) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut splitter = FrameSplitter::for_replies();
    let (mut scanned, mut frame_start) = (0usize, 0usize);
    // The current frame was too large to hold and is being forwarded in pieces.
    let mut streaming = false;
    let mut broken = false;
    let mut out: Vec<u8> = Vec::new();
    // Lines of the last read: the next read's vector starts that large.
    let mut last_lines = 0;
    loop {
        buf.reserve(READ_CHUNK);
        if ur.read_buf(&mut buf).await? == 0 {
            if !buf.is_empty() {
                cw.write_all(&buf).await?;
            }
            let _ = cw.shutdown().await;
            return Ok(());
        }
        let mut lines = Vec::with_capacity(last_lines);
        out.clear();
        let mut copied = 0;
        // The replies of one read arrived together.
        let arrived = Instant::now();
        while !broken && scanned < buf.len() {
            match splitter.feed(&buf[scanned..]) {
                Ok(Some(n)) => {
                    let end = scanned + n;
                    if streaming {
                        streaming = false;
                        on_reply(b"+\r\n", state, conn, arrived, &mut lines);
                    } else if let Some(new) =
                        on_reply(&buf[frame_start..end], state, conn, arrived, &mut lines)
                    {
                        out.extend_from_slice(&buf[copied..frame_start]);
                        out.extend_from_slice(&new);
                        copied = end;
                    }
                    frame_start = end;
                    scanned = end;
                }
                Ok(None) => scanned = buf.len(),
                Err(_) => broken = true,
            }
        }
        let upto = if broken { buf.len() } else { frame_start };
        let written = if copied == 0 {
            cw.write_all(&buf[..upto]).await
        } else {
            out.extend_from_slice(&buf[copied..upto]);
            cw.write_all(&out).await
        };
        // The replies came from the node whether or not the client still takes them.
        last_lines = lines.len();
        conn.record(lines);
        in_flight.add_permits(std::mem::take(&mut state.taken));
        written?;
        if broken {
            buf.clear();
            (scanned, frame_start) = (0, 0);
            continue;
        }
        buf.drain(..frame_start);
        scanned -= frame_start;
        frame_start = 0;
        if buf.len() > REPLY_HOLD || (streaming && !buf.is_empty()) {
            cw.write_all(&buf).await?;
            buf.clear();
            scanned = 0;
            streaming = true;
        }
        if buf.capacity() > 4 * READ_CHUNK && buf.len() < READ_CHUNK {
            buf.shrink_to(2 * READ_CHUNK);
        }
    }
}

/// One complete reply frame, arrived at `arrived`: pairs it with its command (recording a line)
/// and returns its rewritten form if it names nodes.
fn on_reply(
    frame: &[u8],
    state: &mut ReplyState,
    conn: &Conn<'_>,
    arrived: Instant,
    lines: &mut Vec<Line>,
) -> Option<Vec<u8>> {
    if state.head.is_none() {
        state.head = state.next();
    }
    let confirming = state
        .head
        .as_ref()
        .is_some_and(|p| matches!(p.cmd.expect, Expect::Confirmations(_)));
    let push = frame.first() == Some(&b'>');
    if push || state.subscribed || confirming {
        match pubsub_kind(frame) {
            Some(PubSub::Message) => return None,
            Some(PubSub::Confirmation { count }) => {
                state.subscribed = count > 0;
                if confirming {
                    confirm(count, state, conn, arrived, lines);
                }
                return None;
            }
            // Other pushes (client tracking invalidations, …) have no request.
            None if push => return None,
            None => {}
        }
    }
    let p = state.head.take()?;
    let same_host = conn.node.host();
    let class = ReplyClass::of_frame(frame, same_host);
    let rewritten = match (&class, p.cmd.expect) {
        (ReplyClass::Redirect(_), _) => {
            with_registry(conn, |reg| rewrite_redirect(frame, same_host, reg))
        }
        (ReplyClass::Ok, Expect::Topology(q)) => {
            with_registry(conn, |reg| rewrite_topology(q, frame, same_host, reg))
        }
        _ => None,
    };
    let latency = arrived.saturating_duration_since(p.sent);
    lines.push(conn.line(p, class, latency));
    rewritten
}

/// A `SUBSCRIBE`-family confirmation for the command at the head.
fn confirm(
    count: i64,
    state: &mut ReplyState,
    conn: &Conn<'_>,
    arrived: Instant,
    lines: &mut Vec<Line>,
) {
    let Some(p) = state.head.as_mut() else { return };
    if !p.recorded {
        p.recorded = true;
        let latency = arrived.saturating_duration_since(p.sent);
        let first = Pending {
            t: p.t,
            sent: p.sent,
            cmd: p.cmd.clone(),
            recorded: true,
        };
        lines.push(conn.line(first, ReplyClass::Ok, latency));
    }
    let done = match &mut p.cmd.expect {
        Expect::Confirmations(Some(left)) => {
            *left = left.saturating_sub(1);
            *left == 0
        }
        _ => count == 0,
    };
    if done {
        state.head = None;
    }
}

/// Runs `f` on the registry, under its lock (a listener it binds is announced to the accept
/// supervisor, which serves it).
fn with_registry<T>(conn: &Conn<'_>, f: impl FnOnce(&mut Registry) -> Option<T>) -> Option<T> {
    let mut reg = conn
        .shared
        .registry
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    f(&mut reg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pendings(n: usize) -> Vec<Pending> {
        let at = (Timestamp(1), Instant::now());
        (0..n)
            .filter_map(|_| pending_of(Command::from_args(&[b"GET", b"k"]), at))
            .collect()
    }

    #[tokio::test]
    async fn a_read_waits_for_the_in_flight_bound_and_the_replies_give_it_back() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let in_flight = Semaphore::new(MAX_IN_FLIGHT);
        let handover = Handover {
            tx,
            in_flight: &in_flight,
        };
        // A read of more commands than the bound: the first part goes over at once, the rest
        // waits for permits.
        let send = handover.send(pendings(MAX_IN_FLIGHT + 5));
        tokio::pin!(send);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut send)
                .await
                .is_err(),
            "the rest waits while the bound is used"
        );
        assert_eq!(rx.try_recv().map(|b| b.len()).ok(), Some(MAX_IN_FLIGHT));
        assert!(rx.try_recv().is_err());
        assert_eq!(in_flight.available_permits(), 0);
        // Five replies come back: the rest goes.
        in_flight.add_permits(5);
        tokio::time::timeout(Duration::from_secs(5), &mut send)
            .await
            .expect("sent once permits were back");
        assert_eq!(rx.try_recv().map(|b| b.len()).ok(), Some(5));
        // A command that gets no reply is not handed over.
        assert!(pending_of(Command::from_args(&[]), (Timestamp(1), Instant::now())).is_none());
    }

    #[tokio::test]
    async fn the_reply_side_takes_commands_in_order_across_batches_and_counts_them() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = ReplyState {
            head: None,
            queue: VecDeque::new(),
            arriving: rx,
            taken: 0,
            subscribed: false,
        };
        assert!(state.next().is_none());
        let mut first = pendings(2);
        first[0].cmd.name = "a".to_owned();
        first[1].cmd.name = "b".to_owned();
        let mut second = pendings(1);
        second[0].cmd.name = "c".to_owned();
        tx.send(first).unwrap();
        tx.send(second).unwrap();
        let names: Vec<String> = std::iter::from_fn(|| state.next())
            .map(|p| p.cmd.name)
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(state.taken, 3);
    }
}
