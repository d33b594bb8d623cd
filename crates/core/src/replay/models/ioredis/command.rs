//! A command's run through ioredis's `Redis.Cluster` (`cluster/index.js`): `tryConnection`
//! picking the connection (:491-631) and `handleError` (:653-710) following `MOVED`, `ASK`,
//! `CLUSTERDOWN` and closed connections, until it ends or waits for a `DelayQueue` timer.

use super::pool::Node;
use super::{
    Client, Run, CLUSTERDOWN_BUCKET, CONNECTION_CLOSED, FAILOVER_BUCKET, NEVER_READY, NO_REPLY,
    TOO_MANY_ASK, TOO_MANY_CLOSED, TOO_MANY_CLUSTERDOWN, TOO_MANY_MOVED,
};
use crate::redirect::Redirect;
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::replay::outcome::Outcome;
use crate::replay::sequential::Step;
use crate::replay::Routed;
use crate::timeline::NodeIdx;

impl Client {
    /// `tryConnection` (`cluster/index.js:491`) picking the connection: `None` when the pool is
    /// empty.
    pub(super) fn pick(
        &mut self,
        cmd: Routed,
        random: bool,
        asking: Option<NodeIdx>,
    ) -> Option<NodeIdx> {
        if !random {
            if let Some(a) = asking.filter(|&a| self.nodes.get(a).in_pool) {
                return Some(a);
            }
            if let Some(k) = self.slots.get(cmd.slot) {
                if self.nodes.get(k).in_pool {
                    return Some(k);
                }
            }
        }
        let pool = self.pool();
        if pool.is_empty() {
            return None;
        }
        Some(pool[self.rng.index_below(pool.len())])
    }

    /// A command sent now: the first step of its run.
    pub(super) fn begin(&mut self, cmd: Routed, net: &mut dyn Transport) -> Step {
        let since = net.now();
        self.forget_batches(since);
        self.forget_ended(since);
        if !self.refreshes.is_empty() {
            let since_us = net.now_us();
            self.refreshes.retain(|&(_, end)| end > since_us);
        }
        self.process(
            Run {
                cmd,
                since,
                ttl: None,
                random: false,
                asking: None,
                waits: None,
            },
            net,
        )
    }

    /// A command's run from its next try until it ends or waits for a bucket's timer.
    pub(super) fn process(&mut self, run: Run, net: &mut dyn Transport) -> Step {
        let Run {
            cmd,
            since,
            mut ttl,
            mut random,
            mut asking,
            ..
        } = run;
        loop {
            self.reap_killed(net);
            if !self.answers.is_empty() {
                self.settle(net.now_us());
            }
            if !self.wait_ready(net, since) {
                return Step::Done(Outcome::Failed(NEVER_READY));
            }
            let Some(node) = self.pick(cmd, random, asking) else {
                // No connection: the offline queue, until the cluster reconnects.
                let now = net.now();
                self.close(now);
                continue;
            };
            let was_asking = asking.is_some();
            random = false;
            asking = None;
            let sent = net.now();
            let (reply, on_ended) = self.send(node, cmd, was_asking, net);
            let too_many = match reply {
                Reply::Ok => return Step::Done(Outcome::Ok),
                Reply::Redirect(Redirect::Moved { .. }) => TOO_MANY_MOVED,
                Reply::Redirect(Redirect::Ask { .. }) => TOO_MANY_ASK,
                Reply::ClusterDown => TOO_MANY_CLUSTERDOWN,
                Reply::Timeout if self.cfg.socket_timeout_ms.is_none() => {
                    return Step::Done(Outcome::Failed(NO_REPLY))
                }
                Reply::ConnectionError | Reply::Timeout => {
                    // The connection `end`s: its commands get `Connection is closed.` and it
                    // leaves the pool (unless it ended already, under an earlier command).
                    if !on_ended {
                        let now = net.now();
                        self.remove(node, now);
                    }
                    TOO_MANY_CLOSED
                }
            };
            // handleError (:653-663).
            let left = match ttl {
                None => self.cfg.max_redirections,
                Some(t) => t.saturating_sub(1),
            };
            ttl = Some(left);
            if left == 0 {
                return Step::Done(Outcome::Failed(too_many));
            }
            // The bucket a closed connection or `CLUSTERDOWN` waits in, its delay, and the error
            // the application gets without one.
            let (bucket, ms, at_once) = match reply {
                Reply::Redirect(Redirect::Moved { slot, to }) => {
                    if self.cfg.delay_moved_ms > 0 {
                        net.sleep(self.cfg.delay_moved_ms);
                    }
                    // `slots[slot] = [key]`: the announced address.
                    if let Some(k) = self.nodes.intern(&to) {
                        self.slots.set(slot, Some(k));
                    }
                    let mapped = self.nat(&to);
                    // `recreate` (ConnectionPool.js:131), a new connection, only while the pool
                    // holds the one the command was sent on (`=== lastRedis`, :453-463): the
                    // others in flight on it reuse the replacement. 5.x always finds it.
                    let n = *self.nodes.get(node);
                    if self.cfg.recreate_on_moved
                        && self.nodes.addr(node) == Some(&mapped)
                        && n.in_pool
                        && n.created <= sent
                    {
                        *self.nodes.get_mut(node) = Node {
                            in_pool: true,
                            order: n.order,
                            created: net.now(),
                            ..Node::default()
                        };
                    } else {
                        self.find_or_create(&mapped);
                    }
                    self.refresh_in_background(net);
                    continue;
                }
                Reply::Redirect(Redirect::Ask { to, .. }) => {
                    let mapped = self.nat(&to);
                    asking = self.find_or_create(&mapped);
                    continue;
                }
                Reply::ClusterDown => (
                    CLUSTERDOWN_BUCKET,
                    self.cfg.delay_clusterdown_ms,
                    self.cfg.cluster_down,
                ),
                // `Connection is closed.`: the failover bucket (:699-706). The command is
                // rejected before the pool's `end` listener runs, so the cluster is still
                // `ready` here even when the pool has just drained; after the delay the retry
                // then waits in the offline queue for the reconnect.
                _ => (
                    FAILOVER_BUCKET,
                    self.cfg.delay_failover_ms,
                    CONNECTION_CLOSED,
                ),
            };
            if ms == 0 {
                return Step::Done(Outcome::Failed(at_once));
            }
            if !self.lanes {
                let run = Run {
                    cmd,
                    since,
                    ttl,
                    random,
                    asking,
                    waits: None,
                };
                return self.wait_for_timer(run, bucket, ms, net);
            }
            self.delay_and_refresh(bucket, ms, net);
            random = true;
        }
    }
}
