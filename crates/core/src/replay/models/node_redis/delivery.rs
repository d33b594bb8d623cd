//! A command on a node's client: sent, answered or rejected, the idle timer of a client that
//! waits, and one exchange with the redirects it follows (`client/index.js`, `cluster/index.js`).

use super::{
    Client, Conn, ATTEMPTS_MAX, CLIENT_CLOSED, COMMAND_TIMEOUT, DISCONNECTS_CLIENT,
    NEVER_CONNECTED, NO_REPLY, SOCKET_CLOSED, SOCKET_ERROR, SOCKET_TIMEOUT, UNBOUNDED_WAIT_MS,
};
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::replay::outcome::ClientError;
use crate::replay::Routed;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

impl Client {
    /// Sends `cmd` on node `n`'s client (after `ASKING` when `asking`): the reply, or the error
    /// the command is rejected with.
    pub(super) fn deliver(
        &mut self,
        n: NodeIdx,
        cmd: Routed,
        asking: bool,
        net: &mut dyn Transport,
    ) -> Result<Reply, ClientError> {
        let queued_at = net.now();
        let deadline = self
            .cfg
            .command_timeout_ms
            .map(|t| Timestamp(queued_at.0.saturating_add(t)));
        for _ in 0..ATTEMPTS_MAX {
            let now = net.now();
            match self.nodes.get(n).conn {
                Conn::None => {
                    // `nodeClient` creates the client; the command awaits its connect.
                    self.create_client(n, net);
                    if let Conn::None = self.nodes.get(n).conn {
                        // The connect failed for good: its error (`connect ECONNREFUSED`).
                        return Err(SOCKET_ERROR);
                    }
                }
                Conn::Closed { at } if at <= now => return Err(CLIENT_CLOSED),
                Conn::Ready { since, .. } if since > now => {
                    // Connected later than now (another command's wait saw it): queued until.
                    if let Some(d) = deadline.filter(|&d| d < since) {
                        net.sleep(d.0.saturating_sub(now.0));
                        return Err(COMMAND_TIMEOUT);
                    }
                    net.sleep(since.0 - now.0);
                }
                Conn::Reconnecting {
                    since,
                    next,
                    was_ready,
                    ..
                } if since <= now => {
                    // Queued until an attempt connects, or the command timeout. A client that
                    // never connected holds the command before it is queued (it awaits
                    // `connectPromise`, :609-610): no command timeout then.
                    let bounded = deadline.filter(|_| was_ready);
                    let limit =
                        bounded.unwrap_or(Timestamp(queued_at.0.saturating_add(UNBOUNDED_WAIT_MS)));
                    if next > limit {
                        net.sleep(limit.0.saturating_sub(now.0));
                        return Err(if bounded.is_some() {
                            COMMAND_TIMEOUT
                        } else {
                            NEVER_CONNECTED
                        });
                    }
                    if next > now {
                        net.sleep(next.0 - now.0);
                    }
                    let (at, at_us) = (net.now(), net.now_us());
                    self.reconnection_attempt(n, at, net);
                    if !self.nodes.get(n).in_use {
                        // A rediscovery dropped the node and destroyed its client.
                        return Err(DISCONNECTS_CLIENT);
                    }
                    net.resume_at_us(at_us);
                    self.attempt(n, net);
                }
                conn => {
                    // Ready (or closed / reconnecting only later than now): written now.
                    let ready = matches!(conn, Conn::Ready { .. });
                    if ready {
                        if let Some(fired) = self.idle_fired(n, now) {
                            // Idle for socketTimeout: destroyed then.
                            self.timed_out(n, fired);
                            continue;
                        }
                    }
                    let sent_us = net.now_us();
                    // `CLIENT_CLOSED` when the node has no address to connect to.
                    let reply = self.exchange(n, cmd, asking, ready, net);
                    if ready && reply == Err(SOCKET_ERROR) {
                        // The node had closed the connection before this write (killed): the
                        // client saw the socket close and reconnects, and a command sent then
                        // is queued until it is ready (`sendCommand`, `client/index.js:
                        // 1126-1143`, written by `#scheduleWrite` once ready, :1229-1236);
                        // only the commands awaiting a reply are rejected (:637-650).
                        net.resume_at_us(sent_us);
                        continue;
                    }
                    return reply;
                }
            }
        }
        Err(NEVER_CONNECTED)
    }

    /// When node `n`'s ready connection was destroyed by its idle timer, if it was by `now`
    /// (`client/socket.js:303-310`): `socketTimeout` after its last traffic, where during a
    /// silence of the node only the writes count.
    pub(super) fn idle_fired(&mut self, n: NodeIdx, now: Timestamp) -> Option<Timestamp> {
        let s = self.cfg.socket_timeout_ms?;
        let node = *self.nodes.get(n);
        let Conn::Ready { last, .. } = node.conn else {
            return None;
        };
        let fired = |from: Timestamp| Timestamp(from.0.saturating_add(s));
        if let Some(until) = node.silent_until {
            if fired(last) < until.min(now) || (now < until && fired(last) <= now) {
                // No write for socketTimeout while the node was silent.
                return Some(fired(last));
            }
            if now < until {
                return None;
            }
            // The node answered again: its replies are traffic from then on.
            let x = self.nodes.get_mut(n);
            x.silent_until = None;
            if let Conn::Ready { last, .. } = &mut x.conn {
                *last = (*last).max(until);
            }
        }
        let Conn::Ready { last, .. } = self.nodes.get(n).conn else {
            return None;
        };
        (fired(last) <= now).then(|| fired(last))
    }

    /// Writes `cmd` to node `n`'s connection (`ready`: a ready one; else one that closes or
    /// breaks only later than now) and reads its reply; `CLIENT_CLOSED` when `n` has no address
    /// to connect to.
    ///
    /// On the timed clock a write to a silent node does not time out by itself: Node's idle
    /// timer counts writes as traffic, so the commands the application keeps writing there keep
    /// the connection open, and each waits for the node's answer (the network is asked without
    /// a timeout, see [`SyncModel::socket_timeout_ms`]). The node's silence is noted: when a
    /// later write finds that none came for `socketTimeout` during it, the connection was
    /// destroyed then ([`Client::idle_fired`]). A silence past the replay's bound fails the
    /// command `socketTimeout` after its write.
    pub(super) fn exchange(
        &mut self,
        n: NodeIdx,
        cmd: Routed,
        asking: bool,
        ready: bool,
        net: &mut dyn Transport,
    ) -> Result<Reply, ClientError> {
        let sent = net.now();
        let Some(addr) = self.socket_addr(n) else {
            return Err(CLIENT_CLOSED);
        };
        let reply = net.send(addr, cmd, asking);
        let killed = ready && reply != Reply::ConnectionError && net.killed(addr, sent);
        let at = net.now();
        let waited = at.millis_since(sent);
        if killed {
            // Someone closed the connection while the command waited for its reply (`CLIENT
            // KILL`): `flushWaitingForReply` rejects it (`client/index.js:637-645`) and the
            // client reconnects at once.
            self.broke(n, sent);
            return Err(SOCKET_CLOSED);
        }
        match (reply, self.cfg.socket_timeout_ms) {
            (Reply::ConnectionError, _) => {
                if ready {
                    self.broke(n, sent);
                }
                Err(SOCKET_ERROR)
            }
            (Reply::Timeout, None) => Err(NO_REPLY),
            (Reply::Timeout, Some(_)) => {
                if ready {
                    self.timed_out(n, at);
                }
                Err(SOCKET_TIMEOUT)
            }
            (_, Some(s)) if waited > s && !self.lanes && waited > UNBOUNDED_WAIT_MS => {
                let fired = Timestamp(sent.0.saturating_add(s));
                net.resume_at(fired);
                if ready {
                    self.timed_out(n, fired);
                }
                Err(SOCKET_TIMEOUT)
            }
            (reply, Some(s)) if waited > s && !self.lanes => {
                let x = self.nodes.get_mut(n);
                x.silent_until = Some(x.silent_until.map_or(at, |u| u.max(at)));
                if let Conn::Ready { last, .. } = &mut x.conn {
                    *last = (*last).max(sent);
                }
                Ok(reply)
            }
            (reply, _) => {
                let x = self.nodes.get_mut(n);
                if let Conn::Ready { last, .. } = &mut x.conn {
                    // During a noted silence a write is traffic, its reply only once the node
                    // answered again.
                    let seen = if x.silent_until.is_some_and(|u| at < u) {
                        sent
                    } else {
                        at
                    };
                    *last = (*last).max(seen);
                }
                Ok(reply)
            }
        }
    }
}
