//! Jedis's slot cache: `CLUSTER SLOTS` from a node, the answer applied, and the renewal under
//! the rediscover lock (`JedisClusterInfoCache`).

use super::{Client, Node, Over};
use crate::node::NodeAddr;
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::slot::{SlotRange, SLOT_COUNT};
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

impl Client {
    /// `CLUSTER SLOTS` to `node` over the connection `over` says. A timeout adds `soTimeout` to
    /// `elapsed`.
    pub(super) fn cluster_slots(
        &mut self,
        node: NodeIdx,
        over: Over,
        elapsed: &mut u64,
        net: &mut dyn Transport,
    ) -> Option<Vec<(SlotRange, NodeAddr)>> {
        let addr = self.dial(node)?.clone();
        let borrowed = match over {
            Over::Pool => Some(self.borrow(node, net)),
            Over::Held | Over::Fresh => None,
        };
        // A pooled connection someone closed while idle reads end of stream.
        let answer = if borrowed.is_some_and(|b| b.dead) {
            Err(Reply::ConnectionError)
        } else {
            net.cluster_slots(&addr)
        };
        let borrowed = borrowed.map(|b| (b.i, b.fresh));
        let reply = answer.as_ref().err();
        // A new connection first sends its handshake (`CLIENT SETINFO`, and `CLIENT SETNAME` with
        // a client name) and waits for its replies (`Connection.initializeFromClientConfig`,
        // `Connection.java:390-440`): to a refused or silent node, `CLUSTER SLOTS` is never
        // written. On a connection already made it is.
        let new_conn = over == Over::Fresh || borrowed.is_some_and(|(_, fresh)| fresh);
        if !(new_conn && matches!(reply, Some(Reply::ConnectionError | Reply::Timeout))) {
            self.state.cluster_slots_calls += 1;
        }
        match (over, borrowed) {
            (Over::Pool, Some((i, fresh))) => {
                if self.settle(node, (i, fresh), reply, net.now_us()) {
                    self.give_back(node, i, net);
                }
            }
            (Over::Held, _) => {
                if let Some((n, i)) = self.held {
                    if !self.settle(n, (i, false), reply, net.now_us()) {
                        self.held = None;
                    }
                }
            }
            _ => {
                if !matches!(reply, Some(Reply::ConnectionError)) {
                    self.state.new_connections += 1;
                }
            }
        }
        if matches!(answer, Err(Reply::Timeout)) {
            *elapsed = elapsed.saturating_add(self.cfg.so_timeout_ms);
        }
        let ranges = answer.ok()?;
        // checkClusterSlotSequence(): every slot exactly once, or the answer is refused.
        let covered: usize = ranges.iter().map(|(r, _)| r.slots().count()).sum();
        (covered == usize::from(SLOT_COUNT)).then_some(ranges)
    }

    /// A connection of `node`'s pool borrowed and given back unused: a new one connects first
    /// (counted when the node takes it; a broken one is destroyed).
    fn touch(&mut self, node: NodeIdx, net: &mut dyn Transport) {
        let b = self.borrow(node, net);
        let reply = match self.dial(node) {
            Some(addr) if b.fresh => net.handshake(addr).err(),
            Some(_) => None,
            None => Some(Reply::ConnectionError),
        };
        if self.settle(node, (b.i, b.fresh), reply.as_ref(), net.now_us()) {
            self.give_back(node, b.i, net);
        }
    }

    /// `discoverClusterSlots`: the slot table from `ranges`; every node the answer lists, owner
    /// or replica, has a pool (`setupNodeIfNotExist`), the others lose theirs
    /// (`JedisClusterInfoCache.java:214-252` at tag `v5.1.0`). It costs the client
    /// `renew_cpu_ms` on the command's thread.
    pub(super) fn apply(&mut self, ranges: Vec<(SlotRange, NodeAddr)>, net: &mut dyn Transport) {
        let mut owners: Vec<NodeAddr> = Vec::new();
        for (_, a) in &ranges {
            if !owners.contains(a) {
                owners.push(a.clone());
            }
        }
        let replicas = net.listed_replicas(&owners);
        net.sleep_us(self.cfg.renew_cpu_us);
        let now = net.now();
        let now_us = net.now_us();
        let mut table = self.table_at(now).clone();
        let mut named = self
            .nodes
            .fill_table(&mut table, ranges, |nodes, a| nodes.intern(a));
        named.extend(replicas.iter().filter_map(|(a, _)| self.nodes.intern(a)));
        let at = self.tables.partition_point(|(from, _)| *from <= now);
        self.tables.insert(at, (now, table));
        for (n, node) in self.nodes.states_mut() {
            node.known = named.contains(&n);
            if !node.known {
                // Its pool is destroyed (the held connection too: it is closed when returned).
                node.pool.destroy_all(now_us);
            }
        }
        if self.held.is_some_and(|(n, _)| !self.nodes.get(n).known) {
            self.held = None;
        }
        self.state.full_reinits += 1;
    }

    /// `renewClusterSlots(jedis)`: `via` first, then the start nodes, then the other known nodes;
    /// nothing while another command's renewal holds the rediscover lock.
    pub(super) fn renew(
        &mut self,
        via: Option<NodeIdx>,
        elapsed: &mut u64,
        net: &mut dyn Transport,
    ) {
        // rediscoverLock.tryLock() (`JedisClusterInfoCache.java:151-153`): a renewal that finds
        // the lock taken returns at once. Commands run one after another here, each at its own
        // time, so the lock is held from a renewal's start to its end on the virtual clock.
        let start = net.now_us();
        if self.locked.iter().any(|&(s, e)| s <= start && start < e) {
            return;
        }
        self.renew_locked(via, elapsed, net);
        self.locked.push((start, net.now_us()));
    }

    /// The body of `renewClusterSlots`, the lock held.
    pub(super) fn renew_locked(
        &mut self,
        via: Option<NodeIdx>,
        elapsed: &mut u64,
        net: &mut dyn Transport,
    ) {
        if let Some(v) = via {
            let over = if self.held.is_some_and(|(n, _)| n == v) {
                Over::Held
            } else {
                Over::Pool
            };
            if let Some(ranges) = self.cluster_slots(v, over, elapsed, net) {
                self.apply(ranges, net);
                return;
            }
        }
        for k in 0..self.seeds.len() {
            let s = self.seeds[k];
            if let Some(ranges) = self.cluster_slots(s, Over::Fresh, elapsed, net) {
                self.apply(ranges, net);
                return;
            }
        }
        let mut pools = self.pools();
        self.rng.shuffle(&mut pools);
        for p in pools {
            if self.seeds.contains(&p) {
                // `jp.getResource()` comes before the start-node check
                // (`JedisClusterInfoCache.java:179-184` at tag `v5.1.0`): a start node's pool
                // lends a connection (a new one when none is idle) that goes back unused.
                self.touch(p, net);
                continue;
            }
            if let Some(ranges) = self.cluster_slots(p, Over::Pool, elapsed, net) {
                self.apply(ranges, net);
                return;
            }
        }
    }

    /// `initializeSlotsCache`: the shuffled start nodes until one gives a complete answer.
    pub(super) fn initialize(&mut self, net: &mut dyn Transport) -> bool {
        let mut order = self.seeds.clone();
        self.rng.shuffle(&mut order);
        let mut elapsed = 0;
        for s in order {
            if let Some(ranges) = self.cluster_slots(s, Over::Fresh, &mut elapsed, net) {
                // discoverClusterNodesAndSlots(): reset() first, every pool destroyed.
                self.nodes
                    .states_mut()
                    .for_each(|(_, node)| *node = Node::default());
                self.apply(ranges, net);
                // Made in the constructor, before the application's first command: in force
                // for every command, those sent while its answer was on the way too.
                if let Some((_, table)) = self.tables.pop() {
                    self.tables = vec![(Timestamp(0), table)];
                }
                return true;
            }
        }
        false
    }

    /// The background `TopologyRefreshTask`, when due.
    pub(super) fn background(&mut self, net: &mut dyn Transport) {
        let now = net.now();
        let Some(period) = self.cfg.refresh_period_ms else {
            return;
        };
        let next = *self
            .next_refresh
            .get_or_insert(Timestamp(now.0.saturating_add(period)));
        if now >= next {
            let mut elapsed = 0;
            self.renew(None, &mut elapsed, net);
            self.next_refresh = Some(Timestamp(now.0.saturating_add(period)));
        }
    }
}
