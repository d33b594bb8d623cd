//! ioredis's connection pool (`ConnectionPool.js`): one `Redis` per node address in key order,
//! found or created, removed when its connection ends, reset to a refresh's nodes; a send on the
//! pool's connection, and the connections someone closed taken out of it.

use super::{Client, Status};
use crate::node::NodeAddr;
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::replay::Routed;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

/// What the client holds for one address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Node {
    /// The pool has a `Redis` for the address (`nodes.all[key]`).
    pub(super) in_pool: bool,
    /// That `Redis` has connected (a lazy one connects on its first command).
    pub(super) connected: bool,
    /// Position in the pool's key order (`Object.keys` is insertion order).
    pub(super) order: u64,
    /// When that `Redis` connected.
    pub(super) since: Timestamp,
    /// When a `recreate` made that `Redis` (0: none did): a command sent before went on the one
    /// it replaced (the driver runs each command whole, so an earlier one can recreate it first).
    pub(super) created: Timestamp,
}

impl Client {
    /// The pool's nodes, in key order (`ConnectionPool.getNodes`).
    pub(super) fn pool(&self) -> Vec<NodeIdx> {
        let mut p = self.nodes.filter(|n| n.in_pool);
        p.sort_by_key(|&n| self.nodes.get(n).order);
        p
    }

    /// `ConnectionPool.findOrCreate` (`ConnectionPool.js:76`).
    pub(super) fn find_or_create(&mut self, addr: &NodeAddr) -> Option<NodeIdx> {
        let i = self.nodes.intern(addr)?;
        if !self.nodes.get(i).in_pool {
            let order = self.next_order;
            self.next_order += 1;
            *self.nodes.get_mut(i) = Node {
                in_pool: true,
                order,
                ..Node::default()
            };
        }
        Some(i)
    }

    /// `removeNode` after the connection `end`ed (`ConnectionPool.js:108-118`): a drained pool
    /// closes the cluster, which reconnects after `clusterRetryStrategy`.
    pub(super) fn remove(&mut self, i: NodeIdx, now: Timestamp) {
        let n = *self.nodes.get(i);
        if n.connected {
            if self.ended.len() <= i.index() {
                self.ended.resize(i.index() + 1, Vec::new());
            }
            self.ended[i.index()].push((n.since, now));
        }
        *self.nodes.get_mut(i) = Node::default();
        if self.status == Status::Ready && self.pool().is_empty() {
            self.close(now);
        }
    }

    /// `ConnectionPool.reset` (`ConnectionPool.js:153`).
    pub(super) fn reset(&mut self, keep: &[NodeIdx]) {
        for n in self.pool() {
            if !keep.contains(&n) {
                *self.nodes.get_mut(n) = Node::default();
            }
        }
        for &n in keep {
            if let Some(a) = self.nodes.addr(n).cloned() {
                self.find_or_create(&a);
            }
        }
    }

    /// Forgets the connections that ended before `now`: no command sent from now on waits on
    /// them.
    pub(super) fn forget_ended(&mut self, now: Timestamp) {
        for lives in &mut self.ended {
            lives.retain(|&(_, ended)| ended > now);
        }
    }

    /// When the connection to `i` that was open at `sent` ended, if an earlier command's run
    /// ended it.
    fn ended_after(&self, i: NodeIdx, sent: Timestamp) -> Option<Timestamp> {
        let lives = self.ended.get(i.index())?;
        lives
            .iter()
            .find(|&&(since, ended)| since <= sent && sent < ended)
            .map(|&(_, ended)| ended)
    }

    /// One send on the pool's connection to `i`, and whether that connection had ended under an
    /// earlier command's run before its reply came (it then fails with the others waiting on
    /// it, `Connection is closed.` when the connection ended, live: all 14 commands in flight on
    /// a stalled node's connection at once when `socketTimeout` destroyed it; no new
    /// connection, nothing more to remove).
    pub(super) fn send(
        &mut self,
        i: NodeIdx,
        cmd: Routed,
        asking: bool,
        net: &mut dyn Transport,
    ) -> (Reply, bool) {
        let Some(addr) = self.nodes.addr(i) else {
            return (Reply::ConnectionError, false);
        };
        let sent = net.now();
        let ended = self.ended_after(i, sent);
        let mut reply = net.send(addr, cmd, asking);
        if let Some(ended) = ended {
            // A timeout or a closed connection is that end itself.
            let answered = !matches!(reply, Reply::Timeout | Reply::ConnectionError);
            if net.now() > ended || !answered {
                net.resume_at(ended);
                return (Reply::ConnectionError, true);
            }
            return (reply, false);
        }
        if self.nodes.get(i).created > sent {
            // Sent on the connection a later `recreate` replaced (already connected then).
            return (reply, false);
        }
        if self.nodes.get(i).connected && net.killed(addr, sent) {
            // Someone closed the connection while the command waited (`CLIENT KILL`): it
            // `end`s and its commands get `Connection is closed.`.
            reply = Reply::ConnectionError;
        }
        if reply != Reply::ConnectionError && !self.nodes.get(i).connected {
            let n = self.nodes.get_mut(i);
            n.connected = true;
            n.since = sent;
            self.stats.new_connections += 1;
        }
        (reply, false)
    }

    /// The pool's connections someone closed since they connected (`CLIENT KILL`): each
    /// `end`s at once, no reconnect (`clusterNodeRetryStrategy: null`, `ConnectionPool.js:61-63`),
    /// and leaves the pool (`removeNode`, :108-118); nothing refreshes the slots, which still
    /// name it, so its next command goes to a random master and its `MOVED` brings it back.
    pub(super) fn reap_killed(&mut self, net: &mut dyn Transport) {
        if !net.has_kills() {
            return;
        }
        let now = net.now();
        for i in self.pool() {
            let n = *self.nodes.get(i);
            if n.connected && self.nodes.addr(i).is_some_and(|a| net.killed(a, n.since)) {
                self.remove(i, now);
            }
        }
    }
}
