//! go-redis's connection pool per node (`internal/pool/pool.go`): taking a connection, giving
//! it back or removing it, and one node client's `Process` with its own retries.

use super::{Client, POOL_TIMEOUT};
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::replay::outcome::ClientError;
use crate::replay::pool::{next_turn, take_idle};
use crate::replay::Routed;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

impl Client {
    /// `pool.Get` on the node's client: an idle connection, or a new one (dialled) when every
    /// connection is in use and the pool holds fewer than `PoolSize` turns, else the first turn
    /// another command gives back if that is within `PoolTimeout` (the command waits for it);
    /// which connection, and whether it is new.
    pub(super) fn connect(
        &mut self,
        i: NodeIdx,
        net: &mut dyn Transport,
    ) -> Result<(usize, bool), ClientError> {
        let now_us = net.now_us();
        let killed = self.nodes.addr(i).is_some_and(|a| {
            let seen = self.nodes.get(i).kills_seen_us;
            net.killed(a, Timestamp(seen / 1000))
        });
        let node = self.nodes.get_mut(i);
        node.has_node = true;
        node.leaving.retain(|&t| t > now_us);
        if killed {
            // Someone closed the idle connections (`CLIENT KILL`): `isHealthyConn`'s read sees
            // `io.EOF` and `Get` closes each and takes the next, dialling when none is left
            // (`internal/pool/pool.go` l. 276-301): no error, no reload. A held one fails its
            // own command (`node_send`).
            node.conns.retain(|&busy| busy > now_us);
        }
        node.kills_seen_us = now_us;
        if let Some(turn) = next_turn(&node.conns, &node.leaving, now_us, self.limits.pool_size) {
            let wait = turn.at_us.saturating_sub(now_us);
            if wait > self.limits.pool_timeout_us {
                net.sleep_us(self.limits.pool_timeout_us);
                return Err(POOL_TIMEOUT);
            }
            net.sleep_us(wait);
            if let Some(k) = turn.leaving {
                // The turn of a removed connection: this command takes it and dials.
                node.leaving.swap_remove(k);
            }
        }
        Ok(take_idle(&mut node.conns, net.now_us()))
    }

    /// After an exchange with node `i` on connection `c` (`fresh`: dialled for it) that got
    /// `reply` (`None`: an answer), its reply read at `now_us`: a new connection counts once its
    /// handshake was answered. go-redis's pool dials, then `initConn` sends `HELLO`/`CLIENT
    /// SETNAME` and only then is the connection made (`OnConnect`, `redis.go` line 369, what the
    /// application counts): a refused dial or a silent node (the handshake times out) opens
    /// nothing, and the next use dials again. A network error or timeout removes the connection
    /// (`isBadConn`); otherwise it is idle again (`Put`).
    pub(super) fn answered(
        &mut self,
        i: NodeIdx,
        c: usize,
        fresh: bool,
        reply: Option<&Reply>,
        now_us: u64,
    ) {
        let bad = matches!(reply, Some(Reply::ConnectionError | Reply::Timeout));
        if !bad && fresh {
            self.stats.new_connections += 1;
        }
        let node = self.nodes.get_mut(i);
        if c < node.conns.len() {
            if bad {
                node.conns.remove(c);
                node.leaving.push(now_us);
            } else {
                node.conns[c] = now_us;
            }
        }
    }

    /// `node.Client.Process`: the per-node `MaxRetries` loop of `baseClient.process`; the
    /// node's reply, or the pool's timeout when the last try got no connection.
    pub(super) fn node_send(
        &mut self,
        node: NodeIdx,
        cmd: Routed,
        asking: bool,
        net: &mut dyn Transport,
    ) -> Result<Reply, ClientError> {
        let mut last = Ok(Reply::ConnectionError);
        for attempt in 0..=self.limits.max_retries {
            if attempt > 0 {
                // `baseClient._process` sleeps the node client's backoff (the cluster's
                // MinRetryBackoff and MaxRetryBackoff, `redis.go` l. 437-442).
                let sleep = self.limits.retry_backoff_us(attempt, &mut self.rng);
                net.sleep_us(sleep);
            }
            let (c, fresh) = match self.connect(node, net) {
                Ok(taken) => taken,
                Err(e) => {
                    // shouldRetry: ErrPoolTimeout is retried.
                    last = Err(e);
                    continue;
                }
            };
            // `node` is a number of this table: its address is there.
            let Some(addr) = self.nodes.addr(node) else {
                return Ok(Reply::ConnectionError);
            };
            let sent = net.now();
            let mut reply = net.send(addr, cmd, asking);
            if net.killed(addr, sent) {
                // Someone closed the connection while the command waited on it: `io.EOF`, a
                // bad connection, retried (`shouldRetry`, `error.go` l. 52-66).
                reply = Reply::ConnectionError;
            }
            self.answered(node, c, fresh, Some(&reply), net.now_us());
            match reply {
                // isBadConn: `answered` removed the connection from the pool.
                Reply::ConnectionError | Reply::Timeout | Reply::ClusterDown => last = Ok(reply),
                _ => return Ok(reply),
            }
        }
        last
    }
}
