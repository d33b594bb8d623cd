//! node-redis's node clients: their addresses, their sockets' reconnect strategy, the
//! background reconnection attempts (`client/socket.js`, `cluster/cluster-slots.js`).

use super::{Client, Conn, Reconnect, Status, ATTEMPTS_MAX};
use crate::node::NodeAddr;
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

impl Client {
    /// The address node `n`'s client connects to (`#getNodeAddress`, :491-506).
    pub(super) fn socket_addr(&self, n: NodeIdx) -> Option<&NodeAddr> {
        match &self.cfg.address_map {
            Some(a) => Some(a),
            None => self.nodes.addr(n),
        }
    }

    /// The delay before reconnection attempt `retries` (≥ 1), `None` when the strategy gives up
    /// (`#shouldReconnect`, `client/socket.js:143-159`).
    pub(super) fn retry_delay(&mut self, retries: u32) -> Option<u64> {
        match self.cfg.reconnect {
            Reconnect::Never => None,
            Reconnect::Fixed(ms) => Some(ms),
            Reconnect::Default => {
                let exp = 50u64.saturating_mul(1u64 << retries.min(16)).min(2000);
                Some(exp + self.rng.below(200))
            }
        }
    }

    /// Whether the strategy reconnects after a `SocketTimeoutError` (the default does not,
    /// `client/socket.js:430-433`).
    pub(super) fn reconnects_after_timeout(&self) -> bool {
        matches!(self.cfg.reconnect, Reconnect::Fixed(_))
    }

    /// A connection of node `n` broke at `at` (`#onSocketError`, `client/socket.js:323-355`):
    /// it reconnects at once (`#connect(1)`), unless the strategy gives up.
    pub(super) fn broke(&mut self, n: NodeIdx, at: Timestamp) {
        let conn = if self.cfg.reconnect == Reconnect::Never {
            Conn::Closed { at }
        } else {
            Conn::Reconnecting {
                since: at,
                next: at,
                retries: 0,
                was_ready: true,
            }
        };
        self.nodes.get_mut(n).conn = conn;
    }

    /// The socket of node `n` timed out at `at` (`SocketTimeoutError`): closed for good with the
    /// default strategy, else reconnecting.
    pub(super) fn timed_out(&mut self, n: NodeIdx, at: Timestamp) {
        if self.reconnects_after_timeout() {
            self.broke(n, at);
        } else {
            self.nodes.get_mut(n).conn = Conn::Closed { at };
        }
    }

    /// Whether node `n`'s client serves no command at `t`: closed, idle past `socketTimeout`
    /// (closed then), or reconnecting.
    pub(super) fn down_at(&self, n: NodeIdx, t: Timestamp) -> bool {
        match self.nodes.get(n).conn {
            Conn::None => false,
            Conn::Closed { at } => at <= t,
            Conn::Reconnecting { since, .. } => since <= t,
            // Reconnected only after `t` (a command's wait saw it): still reconnecting at `t`.
            Conn::Ready {
                since,
                revived: true,
                ..
            } if since > t => true,
            Conn::Ready { last, .. } => {
                !self.reconnects_after_timeout()
                    && self
                        .cfg
                        .socket_timeout_ms
                        .is_some_and(|s| last.0.saturating_add(s) <= t.0)
            }
        }
    }

    /// The reconnection tracker at an attempt of node `n`'s client at `at`
    /// (`#onNodeReconnectionAttempt`, `cluster-slots.js:668-689`): a rediscovery without the
    /// reconnecting nodes when the delay since the cycle's first attempt has passed.
    pub(super) fn reconnection_attempt(
        &mut self,
        n: NodeIdx,
        at: Timestamp,
        net: &mut dyn Transport,
    ) {
        let Some(delay) = self.cfg.refresh_on_reconnect_ms else {
            return;
        };
        let Conn::Reconnecting {
            was_ready: true, ..
        } = self.nodes.get(n).conn
        else {
            return;
        };
        let first = *self.first_reconnection.get_or_insert(at);
        if at.millis_since(first) < delay {
            return;
        }
        self.first_reconnection = Some(at);
        // `#scheduleTopologyRefresh` (:681-689): none while one runs.
        if at < self.refresh_until || self.status != Status::Open {
            return;
        }
        let excluded: Vec<NodeIdx> = self
            .nodes
            .filter(|x| matches!(x.conn, Conn::Reconnecting { since, .. } if since <= at));
        let back_us = net.now_us();
        net.resume_at(at);
        let _ = self.rediscover(None, &excluded, net);
        self.refresh_until = net.now();
        net.resume_at_us(back_us);
    }

    /// A client stopped reconnecting (ready, or destroyed): `removeClient` of the tracker
    /// (:71-76, :104-108).
    pub(super) fn tracker_forget(&mut self) {
        let reconnecting = self.nodes.count(|x| {
            matches!(
                x.conn,
                Conn::Reconnecting {
                    was_ready: true,
                    ..
                }
            )
        });
        if reconnecting == 0 {
            self.first_reconnection = None;
        }
    }

    /// A new connection's handshake to `addr`: `Err(Timeout)` also when, in the timed clock, the
    /// node stayed silent past `socketTimeout` (the idle timer fires, nothing else is written to
    /// a connection that is not ready yet): then at `socketTimeout` after the start.
    pub(super) fn connect_to(&self, addr: &NodeAddr, net: &mut dyn Transport) -> Result<(), Reply> {
        let start = net.now();
        let r = net.handshake(addr);
        match self.cfg.socket_timeout_ms {
            Some(s) if net.now().millis_since(start) > s => {
                net.resume_at(Timestamp(start.0.saturating_add(s)));
                Err(Reply::Timeout)
            }
            _ => r,
        }
    }

    /// One reconnection attempt of node `n`'s client, now: whether it connected.
    pub(super) fn attempt(&mut self, n: NodeIdx, net: &mut dyn Transport) -> bool {
        let Some(addr) = self.socket_addr(n).cloned() else {
            return false;
        };
        let Conn::Reconnecting { retries, .. } = self.nodes.get(n).conn else {
            return false;
        };
        let answer = self.connect_to(&addr, net);
        if answer == Err(Reply::Timeout) && !self.reconnects_after_timeout() {
            // SocketTimeoutError while connecting: the default strategy gives up.
            self.nodes.get_mut(n).conn = Conn::Closed { at: net.now() };
            self.tracker_forget();
            return false;
        }
        if answer.is_ok() {
            let now = net.now();
            self.stats.new_connections += 1;
            self.nodes.get_mut(n).conn = Conn::Ready {
                since: now,
                last: now,
                revived: true,
            };
            self.tracker_forget();
            return true;
        }
        let retries = retries.saturating_add(1);
        let at = net.now();
        match self.retry_delay(retries) {
            Some(d) => {
                if let Conn::Reconnecting {
                    next, retries: r, ..
                } = &mut self.nodes.get_mut(n).conn
                {
                    *next = Timestamp(at.0.saturating_add(d));
                    *r = retries;
                }
            }
            None => {
                // The strategy gave up: closed for good (`terminated`).
                self.nodes.get_mut(n).conn = Conn::Closed { at };
                self.tracker_forget();
            }
        }
        false
    }

    /// Runs the reconnection attempts due by now of every reconnecting client (in the
    /// background: the command goes on at its own time). An attempt due before now is made now.
    /// A ready client whose connection someone closed since it connected (`CLIENT KILL`, the
    /// socket's `close`, `client/socket.js:314-318`) reconnects at once (`#connect(1)`,
    /// :346-352): one new connection, no rediscovery.
    pub(super) fn background(&mut self, net: &mut dyn Transport) {
        let now = net.now();
        let now_us = net.now_us();
        // Nobody closed any connection in a recording without `CLIENT KILL`: no look needed.
        let in_use = if net.has_kills() {
            self.nodes.filter(|x| x.in_use)
        } else {
            Vec::new()
        };
        let killed: Vec<NodeIdx> = in_use
            .into_iter()
            .filter(|&n| {
                matches!(self.nodes.get(n).conn, Conn::Ready { since, .. } if since <= now
                && self.socket_addr(n).is_some_and(|a| net.killed(a, since)))
            })
            .collect();
        for n in killed {
            self.broke(n, now);
            self.attempt(n, net);
            net.resume_at_us(now_us);
        }
        let due: Vec<NodeIdx> = self.nodes.filter(
            |x| matches!(x.conn, Conn::Reconnecting { since, next, .. } if since <= now && next <= now),
        );
        for n in due {
            // One probe now; the attempts due before it are the ones it stands for.
            for _ in 0..ATTEMPTS_MAX {
                let Conn::Reconnecting { next, .. } = self.nodes.get(n).conn else {
                    break;
                };
                if next > now {
                    break;
                }
                self.reconnection_attempt(n, next, net);
                if !self.nodes.get(n).in_use {
                    break;
                }
                net.resume_at_us(now_us);
                self.attempt(n, net);
            }
        }
        net.resume_at_us(now_us);
    }
}
