//! Connection pools of a simulated client: per node, connection objects that are connected or
//! not and busy until a virtual time, so that commands in flight at once each hold their own
//! connection and every (re)connection is counted as the server would count it.
//!
//! A pool hands its free connections out in turn (redis-py's `_free` deque: `popleft` to take,
//! `append` to give back), and grows to the application's concurrency: tasks that queued behind
//! an initialisation go out together, each on a connection of its own. So after every drop of
//! the node's connections the next `concurrency` commands to it each reconnect.

use crate::replay::cluster::{Answer, Reply};
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

/// Takes a connection from a synchronous model's pool of one node, kept as the virtual time
/// (µs) until which a command holds each connection (idle once that has passed): the first idle
/// one, else a new one, marked held (`u64::MAX`) until given back. Returns its place and whether
/// it is new (go-redis's `pool.Get`; Jedis's pool keeps spans instead, `models/jedis/pool.rs`).
pub(super) fn take_idle(conns: &mut Vec<u64>, now_us: u64) -> (usize, bool) {
    if let Some(i) = conns.iter().position(|&busy| busy <= now_us) {
        conns[i] = u64::MAX;
        return (i, false);
    }
    conns.push(u64::MAX);
    (conns.len() - 1, true)
}

/// A turn a command waits for at a pool's size limit ([`next_turn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Turn {
    /// When it comes free (µs).
    pub at_us: u64,
    /// The place in `leaving` of the removed connection whose turn it is (the waiter dials a
    /// new one); `None`: a held connection is given back (the waiter takes it).
    pub leaving: Option<usize>,
}

/// The turn a command at `now_us` waits for in a pool of one node kept as [`take_idle`] keeps
/// it, at its size limit `cap`: `None` when one is free now (an idle connection, or room to
/// dial), else the first to come free. `leaving` holds the times until which connections already
/// removed (a broken one, given back at its reply) still hold their turn. go-redis's `waitTurn`
/// at `PoolSize`: the turn is taken before the connection and given back by `Put` or `Remove`
/// (`internal/pool/pool.go` l. 310-348).
pub(super) fn next_turn(conns: &[u64], leaving: &[u64], now_us: u64, cap: usize) -> Option<Turn> {
    let gone = leaving.iter().filter(|&&t| t > now_us).count();
    if conns.len() + gone < cap || conns.iter().any(|&busy| busy <= now_us) {
        return None;
    }
    let held = conns.iter().copied().min().map(|at_us| Turn {
        at_us,
        leaving: None,
    });
    let left = (leaving.iter().enumerate())
        .filter(|&(_, &t)| t > now_us)
        .min_by_key(|&(_, &t)| t)
        .map(|(k, &at_us)| Turn {
            at_us,
            leaving: Some(k),
        });
    match (held, left) {
        (Some(h), Some(l)) if l.at_us < h.at_us => Some(l),
        (Some(h), _) => Some(h),
        (None, l) => l,
    }
}

/// One connection object of a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Conn {
    /// Whether its socket is open.
    connected: bool,
    /// Until when a command holds it.
    busy_until: Timestamp,
    /// Whether a command holds it now (between [`Pools::acquire`] and [`Pools::finish`]).
    held: bool,
    /// When a reset closed it while held (virtual µs, the first such reset): the command on it
    /// does not get its reply.
    closed_under: Option<u64>,
    /// Marked for reconnect while held: disconnected when given back.
    reconnect: bool,
    /// When (virtual µs) it was last taken unconnected: its socket is open since then.
    opened_us: u64,
}

impl Conn {
    fn new(now: Timestamp) -> Conn {
        Conn {
            connected: false,
            busy_until: now,
            held: false,
            closed_under: None,
            reconnect: false,
            opened_us: 0,
        }
    }

    /// Closed (`ClusterNode.disconnect()`) at `now_us`: a command on it loses its reply.
    fn close(&mut self, now_us: u64) {
        self.connected = false;
        if self.held && self.closed_under.is_none() {
            self.closed_under = Some(now_us);
        }
    }

    /// Marked for reconnect (`mark_for_reconnect()`): closed now when free, when given back when
    /// held.
    fn mark(&mut self) {
        if self.held {
            self.reconnect = true;
        } else {
            self.connected = false;
        }
    }
}

/// Every connection of the node's pool is in use and the pool is at `max_connections`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Full;

/// How an exchange on a connection ended, as far as the connection is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Link {
    /// The node answered (a reply of any kind).
    Answered,
    /// The connection was refused or reset.
    Refused,
    /// The node did not answer within the timeout: the connection is dropped after the wait.
    TimedOut,
}

impl Link {
    /// How an exchange that ended in `answer` left its connection.
    pub(super) fn of(answer: Answer) -> Link {
        match answer {
            Answer::ConnectionError => Link::Refused,
            Answer::Timeout => Link::TimedOut,
            _ => Link::Answered,
        }
    }

    /// How an exchange whose reply is `reply` (a failure as `Err`) left its connection.
    pub(super) fn of_reply<T>(reply: &Result<T, Reply>) -> Link {
        match reply {
            Err(Reply::ConnectionError) => Link::Refused,
            Err(Reply::Timeout) => Link::TimedOut,
            _ => Link::Answered,
        }
    }
}

/// A connection taken from a pool by [`Pools::acquire`], to be given back by [`Pools::finish`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Lease {
    node: NodeIdx,
    index: usize,
    was_connected: bool,
    opened_us: u64,
}

impl Lease {
    /// Whether the connection was open when taken (else the exchange connects first).
    pub(super) fn was_connected(&self) -> bool {
        self.was_connected
    }

    /// When (virtual µs) the connection's socket was opened: when it was taken, if it was not
    /// open then.
    pub(super) fn opened_us(&self) -> u64 {
        self.opened_us
    }
}

/// Per-node pools (by the model's node numbers).
#[derive(Clone, Debug, Default)]
pub(super) struct Pools {
    nodes: Vec<Pool>,
    max_per_node: usize,
    /// Connection objects a pool grows to even without overlap (the concurrency).
    burst: usize,
    /// A full pool refuses (`MaxConnectionsError`) instead of handing out the connection that
    /// frees first.
    strict: bool,
    opened: u64,
}

/// One node's connections, handed out in turn.
#[derive(Clone, Debug, Default)]
struct Pool {
    conns: Vec<Conn>,
    /// Where the next search for a free connection starts.
    next: usize,
}

impl Pools {
    /// Empty pools of at most `max_per_node` connections each (at least 1).
    pub(super) fn new(max_per_node: usize) -> Pools {
        Pools {
            nodes: Vec::new(),
            max_per_node: max_per_node.max(1),
            burst: 1,
            strict: false,
            opened: 0,
        }
    }

    /// Makes a full pool refuse (commands truly in flight: see [`Full`]).
    pub(super) fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }

    /// Lets every pool grow to `n` connections (capped by the pool's maximum).
    pub(super) fn set_burst(&mut self, n: usize) {
        self.burst = n.clamp(1, self.max_per_node);
    }

    /// Connections opened so far (every successful connect, reconnects included).
    pub(super) fn opened(&self) -> u64 {
        self.opened
    }

    #[inline]
    fn pool(&mut self, node: NodeIdx) -> &mut Pool {
        let i = node.index();
        if self.nodes.len() <= i {
            self.nodes.resize_with(i + 1, Pool::default);
        }
        &mut self.nodes[i]
    }

    /// Takes a connection to `node` that is free at `now`: a new object while the pool is below
    /// its burst size, else the next free one in turn, else a new object while below the maximum,
    /// else (the pool full) the one that frees first, or [`Full`] when the pools are strict.
    /// (`now_us`: virtual µs.)
    pub(super) fn acquire(&mut self, node: NodeIdx, now_us: u64) -> Result<Lease, Full> {
        let now = Timestamp(now_us / 1000);
        let (max, burst, strict) = (self.max_per_node, self.burst, self.strict);
        let pool = self.pool(node);
        let n = pool.conns.len();
        let next = pool.next.min(n);
        let free = (next..n)
            .chain(0..next)
            .find(|&i| !pool.conns[i].held && pool.conns[i].busy_until <= now);
        let index = match free {
            Some(i) if n >= burst => i,
            _ if n < max => {
                pool.conns.push(Conn::new(now));
                n
            }
            Some(i) => i,
            None if strict => return Err(Full),
            None => pool
                .conns
                .iter()
                .enumerate()
                .min_by_key(|(_, c)| c.busy_until)
                .map_or(0, |(i, _)| i),
        };
        // The next in turn (a compare, not a division: this runs for every exchange).
        pool.next = if index + 1 >= pool.conns.len() {
            0
        } else {
            index + 1
        };
        let conn = &mut pool.conns[index];
        conn.held = true;
        conn.closed_under = None;
        conn.reconnect = false;
        if !conn.connected {
            conn.opened_us = now_us;
        }
        Ok(Lease {
            node,
            index,
            was_connected: conn.connected,
            opened_us: conn.opened_us,
        })
    }

    /// Gives the lease back: the exchange ended with `link`, and the connection is busy until
    /// `until`. A connection that was not open and reached the node counts as opened. Returns
    /// when a reset closed the connection while it was held (virtual µs; the command lost its
    /// reply), `None` when none did.
    #[inline]
    pub(super) fn finish(&mut self, lease: Lease, link: Link, until: Timestamp) -> Option<u64> {
        let opened = link == Link::Answered && !lease.was_connected;
        self.opened += u64::from(opened);
        let c = self.pool(lease.node).conns.get_mut(lease.index)?;
        let closed = c.closed_under;
        c.connected = link == Link::Answered && closed.is_none() && !c.reconnect;
        c.busy_until = until;
        c.held = false;
        c.closed_under = None;
        c.reconnect = false;
        closed
    }

    /// Connections open now, all pools.
    pub(super) fn open(&self) -> u64 {
        let n = self
            .nodes
            .iter()
            .flat_map(|p| p.conns.iter())
            .filter(|c| c.connected)
            .count();
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// Closes every connection to `node` at `now_us` (each reconnects on its next use; a command
    /// on one loses its reply).
    pub(super) fn disconnect(&mut self, node: NodeIdx, now_us: u64) {
        self.pool(node)
            .conns
            .iter_mut()
            .for_each(|c| c.close(now_us));
    }

    /// Closes every connection of every pool at `now_us` (as [`disconnect`](Self::disconnect));
    /// returns how many of them were open.
    pub(super) fn disconnect_all(&mut self, now_us: u64) -> u64 {
        let mut open = 0;
        for c in self.nodes.iter_mut().flat_map(|p| p.conns.iter_mut()) {
            open += u64::from(c.connected);
            c.close(now_us);
        }
        open
    }

    /// Marks every connection to `node` for reconnect: free ones close now, held ones when given
    /// back (`update_active_connections_for_reconnect` with `disconnect_free_connections`).
    pub(super) fn mark(&mut self, node: NodeIdx) {
        self.pool(node).conns.iter_mut().for_each(Conn::mark);
    }

    /// Marks every connection of every pool for reconnect (as [`mark`](Self::mark)).
    pub(super) fn mark_all(&mut self) {
        self.nodes
            .iter_mut()
            .flat_map(|p| p.conns.iter_mut())
            .for_each(Conn::mark);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(i: usize) -> NodeIdx {
        NodeIdx::new(i).expect("small index")
    }

    #[test]
    fn a_held_connection_makes_the_next_command_open_another() {
        let mut p = Pools::new(100);
        let l = p.acquire(node(0), 0).expect("lenient");
        p.finish(l, Link::Answered, Timestamp(0));
        assert_eq!(p.opened(), 1);
        // Reused while free.
        let l = p.acquire(node(0), 5000).expect("lenient");
        p.finish(l, Link::TimedOut, Timestamp(505));
        assert_eq!(p.opened(), 1);
        // Held until 505: a second connection object.
        let l = p.acquire(node(0), 10000).expect("lenient");
        assert_eq!(l.index, 1);
        p.finish(l, Link::Answered, Timestamp(10));
        assert_eq!(p.opened(), 2);
        // After the wait the timed-out one is free again, and its turn: it must reconnect.
        let l = p.acquire(node(0), 600000).expect("lenient");
        assert_eq!(l.index, 0);
        p.finish(l, Link::Answered, Timestamp(600));
        assert_eq!(p.opened(), 3);
    }

    #[test]
    fn a_pool_grows_to_its_burst_and_hands_connections_out_in_turn() {
        let mut p = Pools::new(100);
        p.set_burst(3);
        let mut used = Vec::new();
        for t in 0..6 {
            let l = p.acquire(node(0), t * 1000).expect("lenient");
            used.push(l.index);
            p.finish(l, Link::Answered, Timestamp(t));
        }
        assert_eq!(used, [0, 1, 2, 0, 1, 2]);
        assert_eq!(p.opened(), 3);
        // A drop of the node's connections costs one reconnect per connection of the pool.
        p.disconnect(node(0), 10_000);
        for t in 10..16 {
            let l = p.acquire(node(0), t * 1000).expect("lenient");
            p.finish(l, Link::Answered, Timestamp(t));
        }
        assert_eq!(p.opened(), 6);
    }

    #[test]
    fn refused_connects_are_not_counted_and_disconnect_drops_all() {
        let mut p = Pools::new(1);
        let l = p.acquire(node(3), 0).expect("lenient");
        p.finish(l, Link::Refused, Timestamp(0));
        assert_eq!(p.opened(), 0);
        let l = p.acquire(node(3), 1000).expect("lenient");
        p.finish(l, Link::Answered, Timestamp(1));
        p.disconnect_all(1_000);
        let l = p.acquire(node(3), 2000).expect("lenient");
        p.finish(l, Link::Answered, Timestamp(2));
        assert_eq!(p.opened(), 2);
        // A full pool of one hands out its only connection even while busy.
        let l = p.acquire(node(3), 3000).expect("lenient");
        p.finish(l, Link::TimedOut, Timestamp(1000));
        assert_eq!(p.acquire(node(3), 4000).expect("lenient").index, 0);
    }
}
