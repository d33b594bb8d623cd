//! node-redis's topology discovery: `#discover` through a new client, the root nodes and
//! the known nodes as candidates, and the rediscovery a MOVED or a lost node starts
//! (`cluster/cluster-slots.js`).

use super::{Client, Conn, Dropped, Node, Rediscovery, DROPS_KEPT, REDISCOVERIES_KEPT};
use crate::node::NodeAddr;
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::replay::slot_cache::Unlisted;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

impl Client {
    /// `#discover` (`cluster-slots.js:185-245`) through a new client to `addr`: whether it
    /// answered.
    pub(super) fn discover(&mut self, addr: &NodeAddr, net: &mut dyn Transport) -> bool {
        // The new client connects (its handshake, `HELLO`), then sends CLUSTER SLOTS. A refused
        // connect or a silent handshake: no connection, no CLUSTER SLOTS sent.
        let began_us = net.now_us();
        if self.connect_to(addr, net).is_err() {
            return false;
        }
        self.stats.new_connections += 1;
        self.stats.cluster_slots_calls += 1;
        let sent_us = net.now_us();
        let answer = net.cluster_slots(addr);
        if let Some(s) = self.cfg.socket_timeout_ms {
            let timeout_us = s.saturating_mul(1000);
            if net.now_us().saturating_sub(sent_us) > timeout_us {
                // The discovery client's idle timer fires first (SocketTimeoutError).
                net.resume_at_us(sent_us.saturating_add(timeout_us));
                return false;
            }
        }
        let Ok(ranges) = answer else {
            return false;
        };
        // The discovery's own work on Node's thread: the throwaway client made and destroyed
        // (`#getShards`, :472-490), the slot table reset and rebuilt from the answer (:191-236).
        // On loopback its round trips are that thread's work too (the time `rediscover_cpu_ms`
        // is measured in includes them), so it lasts the longer of the two. The instant clock
        // of the lanes takes no time for it, as it takes none for the round trips.
        if !self.lanes {
            let spent_us = net.now_us().saturating_sub(began_us);
            net.sleep_us(self.cfg.rediscover_cpu_us.saturating_sub(spent_us));
        }
        self.stats.full_reinits += 1;
        // The slots of the reconnecting clients, before the answer replaces the table: their
        // queued commands are rejected if the answer drops them.
        let reconnecting: Vec<(NodeIdx, Timestamp)> = self
            .masters
            .iter()
            .filter_map(|&m| match self.nodes.get(m).conn {
                Conn::Reconnecting { since, .. } => Some((m, since)),
                _ => None,
            })
            .collect();
        let before = if reconnecting.is_empty() {
            Vec::new()
        } else {
            self.slots.table().ranges()
        };
        let (owners, named) = self.nodes.number_ranges(ranges, |nodes, a| nodes.intern(a));
        self.slots.load(owners, Unlisted::Cleared);
        let start_us = net.now_us();
        let mut end_us = start_us;
        for &n in &named {
            if self.nodes.get(n).in_use {
                continue;
            }
            *self.nodes.get_mut(n) = Node {
                in_use: true,
                conn: Conn::None,
                silent_until: None,
            };
            if !self.cfg.minimize_connections {
                // The eager connects run side by side (`promises`, :189, :537-539, :237).
                net.resume_at_us(start_us);
                self.create_client(n, net);
                end_us = end_us.max(net.now_us());
            }
        }
        net.resume_at_us(end_us);
        // The nodes the answer leaves out are destroyed and forgotten (:215-236).
        let gone: Vec<NodeIdx> = self
            .nodes
            .filter(|x| x.in_use)
            .into_iter()
            .filter(|n| !named.contains(n))
            .collect();
        let at = net.now();
        for n in gone {
            if let Some(&(_, since)) = reconnecting.iter().find(|(m, _)| *m == n) {
                // `node.client.destroy()` (:225-229): its queue is flushed with
                // DisconnectsClientError (`client/index.js:1530`).
                if self.dropped.len() == DROPS_KEPT {
                    self.dropped.pop_front();
                }
                self.dropped.push_back(Dropped {
                    since,
                    at,
                    ranges: before
                        .iter()
                        .filter(|(_, o)| *o == n)
                        .map(|(r, _)| *r)
                        .collect(),
                });
            }
            *self.nodes.get_mut(n) = Node::default();
        }
        self.tracker_forget();
        self.masters = named;
        true
    }

    /// `#createNodeClient` (:591-606): a client for node `n`, connecting now.
    pub(super) fn create_client(&mut self, n: NodeIdx, net: &mut dyn Transport) {
        let Some(addr) = self.socket_addr(n).cloned() else {
            return;
        };
        let at = net.now();
        let answer = self.connect_to(&addr, net);
        if answer == Err(Reply::Timeout) && !self.reconnects_after_timeout() {
            // A terminal connect failure (SocketTimeoutError) drops the client (:594-604).
            self.nodes.get_mut(n).conn = Conn::None;
            return;
        }
        let conn = if answer.is_ok() {
            self.stats.new_connections += 1;
            let now = net.now();
            Conn::Ready {
                since: now,
                last: now,
                revived: false,
            }
        } else {
            Conn::Reconnecting {
                since: at,
                next: at,
                retries: 0,
                was_ready: false,
            }
        };
        self.nodes.get_mut(n).conn = conn;
        if let Conn::Reconnecting { .. } = conn {
            // The first attempt (`#connect()`, retries 0) failed: the next after the strategy's
            // delay for 0.
            match self.retry_delay(0) {
                Some(d) => {
                    self.nodes.get_mut(n).conn = Conn::Reconnecting {
                        since: at,
                        next: Timestamp(net.now().0.saturating_add(d)),
                        retries: 0,
                        was_ready: false,
                    }
                }
                // A terminal connect failure drops the client (:594-604).
                None => self.nodes.get_mut(n).conn = Conn::None,
            }
        }
    }

    /// `#discoverWithRootNodes` (:161-178): from a random root node on.
    pub(super) fn discover_with_roots(&mut self, net: &mut dyn Transport) -> bool {
        let len = self.roots.len();
        let start = self.rng.index_below(len);
        for k in 0..len {
            let addr = self.roots[(start + k) % len].clone();
            if self.discover(&addr, net) {
                return true;
            }
        }
        false
    }

    /// `#discoverWithKnownNodeCandidates` (:652-667): from a random one on.
    pub(super) fn discover_with_candidates(
        &mut self,
        candidates: &[NodeIdx],
        net: &mut dyn Transport,
    ) -> bool {
        if candidates.is_empty() {
            return false;
        }
        let start = self.rng.index_below(candidates.len());
        for k in 0..candidates.len() {
            let n = candidates[(start + k) % candidates.len()];
            let Some(addr) = self.socket_addr(n).cloned() else {
                continue;
            };
            if self.discover(&addr, net) {
                return true;
            }
        }
        false
    }

    /// `rediscover` (:618-631): joins the running one, else runs one; `false` when no node
    /// answered (`RootNodesUnavailableError`).
    ///
    /// The model runs each command whole when it is sent, so an earlier command's later
    /// rediscoveries are already known here. One that starts before a rediscovery started now
    /// would end (as long as the last one took) would have joined it in the library, which runs
    /// one at a time: the command joins that one instead of running a second beside it.
    pub(super) fn rediscover(
        &mut self,
        start_with: Option<NodeIdx>,
        excluded: &[NodeIdx],
        net: &mut dyn Transport,
    ) -> bool {
        let now_us = net.now_us();
        let lasts_us = self
            .rediscoveries
            .back()
            .map_or(0, |r| r.end_us.saturating_sub(r.start_us));
        // Every rediscovery kept starts no later than it ends, so none is running or to start
        // after `now_us` once the latest end is past.
        let joined = (now_us < self.rediscovered_until_us)
            .then(|| {
                self.rediscoveries.iter().find(|r| {
                    (r.start_us <= now_us && now_us < r.end_us)
                        || (now_us < r.start_us && r.start_us < now_us.saturating_add(lasts_us))
                })
            })
            .flatten();
        if let Some(r) = joined {
            let (end_us, ok) = (r.end_us, r.ok);
            net.sleep_us(end_us - now_us);
            return ok;
        }
        let mut ok = false;
        if let Some(addr) = start_with.and_then(|n| self.socket_addr(n).cloned()) {
            ok = self.discover(&addr, net);
        }
        if !ok {
            // `#discoverWithKnownNodes` (:632-651): ready clients first.
            let now = net.now();
            let known: Vec<NodeIdx> = self
                .masters
                .iter()
                .copied()
                .filter(|n| !excluded.contains(n))
                .collect();
            let (ready, deferred): (Vec<NodeIdx>, Vec<NodeIdx>) =
                known.into_iter().partition(|&n| {
                    matches!(self.nodes.get(n).conn, Conn::Ready { since, .. } if since <= now)
                        && !self.down_at(n, now)
                });
            ok = self.discover_with_candidates(&ready, net)
                || self.discover_with_candidates(&deferred, net)
                || self.discover_with_roots(net);
        }
        if self.rediscoveries.len() == REDISCOVERIES_KEPT {
            self.rediscoveries.pop_front();
        }
        let end_us = net.now_us();
        self.rediscovered_until_us = self.rediscovered_until_us.max(end_us);
        self.rediscoveries.push_back(Rediscovery {
            start_us: now_us,
            end_us,
            ok,
        });
        ok
    }
}
