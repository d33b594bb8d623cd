//! redis-rs's connections and slots: the reconnect tasks with their backoff, the slot refresh
//! (`refresh_slots`) and the reconnect to the initial nodes (`cluster_async/mod.rs`).

use super::{Client, Conn, ERRORS, NOT_FOUND, RECONNECT_BACKOFF_MAX_MS, RECONNECT_BACKOFF_MS};
use crate::node::NodeAddr;
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::replay::outcome::{ClientError, Failure};
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

impl Client {
    /// `reconnect_loop`'s attempts that are due by `now`: each asks the node (`get_or_create_conn`,
    /// mod.rs line 1208); the node is connected if it answers, else tried again one backoff
    /// later. A node that left the topology, or whose attempts are used up, leaves the map.
    pub(super) fn poll_reconnects(&mut self, now: Timestamp, net: &mut dyn Transport) {
        for n in self.nodes.ids().collect::<Vec<_>>() {
            if let Some(Conn::Reconnecting { next }) = self.conn(n) {
                if next <= now {
                    self.reconnect_attempt(n, now, net);
                }
            }
        }
    }

    /// One attempt of `reconnect_loop` for `n`, marked `Reconnecting` (mod.rs lines 1179-1242).
    pub(super) fn reconnect_attempt(
        &mut self,
        n: NodeIdx,
        now: Timestamp,
        net: &mut dyn Transport,
    ) {
        let in_topology = self.table.as_slice().contains(&Some(n));
        let exhausted = self
            .cfg
            .max_connection_attempts
            .is_some_and(|max| self.nodes.get(n).attempts >= max);
        if !in_topology || exhausted {
            self.nodes.get_mut(n).conn = None;
            return;
        }
        self.nodes.get_mut(n).attempts = self.nodes.get(n).attempts.saturating_add(1);
        let answered = self.nodes.addr(n).cloned().map(|a| net.probe(&a));
        if matches!(answered, Some(Ok(()))) {
            self.set_connected(n, now);
            self.reset_backoff(n);
        } else {
            let node = self.nodes.get_mut(n);
            node.conn = Some(Conn::Reconnecting {
                next: Timestamp(now.0.saturating_add(node.backoff)),
            });
            node.backoff = node.backoff.saturating_mul(2).min(RECONNECT_BACKOFF_MAX_MS);
        }
    }

    pub(super) fn reset_backoff(&mut self, n: NodeIdx) {
        let node = self.nodes.get_mut(n);
        node.backoff = RECONNECT_BACKOFF_MS;
        node.attempts = 0;
    }

    /// `PollFlushAction::Reconnect`: starts `reconnect_loop` unless one runs. Its first attempt is
    /// at once; the next one backoff later, the backoff doubling from 50 ms to 1 s while the node
    /// keeps failing.
    pub(super) fn start_reconnect(&mut self, i: NodeIdx, now: Timestamp, net: &mut dyn Transport) {
        if matches!(
            self.conn(i),
            Some(Conn::Reconnecting { .. } | Conn::Connecting)
        ) {
            return;
        }
        self.nodes.get_mut(i).conn = Some(Conn::Reconnecting { next: now });
        self.reconnect_attempt(i, now, net);
    }

    /// Applies a `CLUSTER SLOTS` answer: rebuilds the slot map, keeps only topology nodes in the
    /// connection map and checks or makes a connection to each of them
    /// (`refresh_connections_locked`): a node that does not answer is left out of the map (its
    /// `reconnect_loop`, if one runs, goes on).
    pub(super) fn apply(
        &mut self,
        ranges: Vec<(crate::slot::SlotRange, NodeAddr)>,
        net: &mut dyn Transport,
    ) {
        let nodes = self
            .nodes
            .fill_table(&mut self.table, ranges, |nodes, a| nodes.intern(a));
        for (n, node) in self.nodes.states_mut() {
            if !nodes.contains(&n) {
                node.conn = None;
            }
        }
        // The checks run together (`buffer_unordered`) and the rebuild waits for the last: a
        // silent node's costs its `PING`'s response timeout on the connection held, then a new
        // connection's (`connect_and_check`: the TCP connect is taken, the handshake and its
        // `PING` wait out `connection_timeout`). Without a response timeout the `PING` would
        // wait as long as the node is silent: not modelled (no wait counted for it).
        let mut longest_us = 0_u64;
        for n in nodes {
            if self.killed(n, net) {
                // Its `PING` fails at once: a new connection is made (`get_or_create_conn`).
                self.nodes.get_mut(n).conn = None;
            }
            let answered = self.nodes.addr(n).cloned().map(|a| net.probe(&a));
            if matches!(answered, Some(Err(Reply::Timeout))) {
                let held = self.conn(n) == Some(Conn::Connected);
                let ms = self.cfg.timeout_ms.filter(|_| held).unwrap_or(0) + self.cfg.connection_ms;
                longest_us = longest_us.max(ms.saturating_mul(1000));
            }
            if matches!(answered, Some(Ok(()))) {
                self.set_connected(n, net.now());
            } else if !matches!(self.conn(n), Some(Conn::Reconnecting { .. })) {
                self.nodes.get_mut(n).conn = None;
            }
        }
        net.sleep_us(longest_us);
        self.recover_until_us = self.recover_until_us.max(net.now_us());
        self.stats.full_reinits += 1;
    }

    pub(super) fn query(&mut self, i: NodeIdx, net: &mut dyn Transport) -> Result<(), ClientError> {
        if self.killed(i, net) {
            // Closed by someone (`CLIENT KILL`): `query_slots` fails at once, nothing sent.
            return Err(ERRORS.connection);
        }
        self.stats.cluster_slots_calls += 1;
        let Some(addr) = self.nodes.addr(i) else {
            return Err(ERRORS.connection);
        };
        match net.cluster_slots(addr) {
            Ok(ranges) => {
                self.apply(ranges, net);
                Ok(())
            }
            Err(reply) => Err(ERRORS.of_reply(&reply)),
        }
    }

    /// `refresh_slots`.
    pub(super) fn refresh_slots(&mut self, net: &mut dyn Transport) -> Result<(), ClientError> {
        let mut last = NOT_FOUND;
        let members = self.nodes_where(|c| c.is_some());
        for &i in &members {
            if self.conn(i) != Some(Conn::Connected) {
                continue;
            }
            match self.query(i, net) {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
        }
        // Second pass: repair each connection (PING, or a new connection) and ask again.
        for &i in &members {
            if self.conn(i).is_none() {
                continue;
            }
            self.nodes.get_mut(i).conn = Some(Conn::Connecting);
            match self.query(i, net) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    last = e;
                    if !matches!(e.class, Failure::Connection | Failure::Timeout) {
                        // Reachable: the repaired connection is kept.
                        let now = net.now();
                        let n = self.nodes.get_mut(i);
                        n.conn = Some(Conn::Connected);
                        n.opened = now;
                    }
                    // Else connect_and_check failed and the entry stays `Connecting`.
                }
            }
        }
        Err(last)
    }

    /// `reconnect_to_initial_nodes`: connect to the initial nodes, replace the connection map by
    /// them and refresh the slots (the connection and the `CLUSTER SLOTS` answer are taken
    /// together: a node that cannot be connected is asked nothing by the library).
    pub(super) fn reconnect_to_initial_nodes(
        &mut self,
        net: &mut dyn Transport,
    ) -> Result<(), ClientError> {
        let mut last = ERRORS.connection;
        let initial = self.initial.clone();
        for i in initial {
            self.stats.cluster_slots_calls += 1;
            let Some(addr) = self.nodes.addr(i) else {
                continue;
            };
            match net.cluster_slots(addr) {
                Ok(ranges) => {
                    self.nodes.states_mut().for_each(|(_, n)| n.conn = None);
                    self.set_connected(i, net.now());
                    self.apply(ranges, net);
                    self.initialized = true;
                    return Ok(());
                }
                Err(reply) => last = ERRORS.of_reply(&reply),
            }
        }
        Err(last)
    }
}
