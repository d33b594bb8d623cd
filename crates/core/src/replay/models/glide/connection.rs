//! GLIDE's connection map: which nodes have a connection, and a node's connections broken,
//! with the reconnect backoff of the tasks that repair them (`cluster_async/mod.rs`).

use super::{
    Client, Reconnect, CONNECTIONS_PER_NODE, RECONNECT_BACKOFF_MS, RECONNECT_JITTER_PERCENT,
};
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

impl Client {
    /// The nodes of the connection map.
    pub(super) fn open_nodes(&self) -> Vec<NodeIdx> {
        self.nodes.filter(|n| n.open)
    }

    /// Opens node `i`'s two connections at `now` (`connect_and_check_all_connections`).
    pub(super) fn open(&mut self, i: NodeIdx, now: Timestamp) {
        let n = self.nodes.get_mut(i);
        if !n.open {
            n.open = true;
            n.since = now;
            n.reconnect = None;
            self.stats.new_connections += CONNECTIONS_PER_NODE;
        }
    }

    /// A broken connection: the node leaves the map and its reconnect task starts, its first
    /// attempt at once.
    pub(super) fn broken(&mut self, i: NodeIdx, now: Timestamp) {
        let n = self.nodes.get_mut(i);
        n.open = false;
        if n.reconnect.is_none() {
            n.reconnect = Some(Reconnect {
                attempts: 0,
                next_at: now,
            });
        }
    }

    /// A broken connection of node `i` and of every open node whose connections reach the same
    /// server (through `addressResolver`): the disconnect notifier wakes the validation task,
    /// which reconnects each (`connections_validation_task`, :2604-2620;
    /// `validate_all_user_connections`, :1806-1872, both connections of each).
    pub(super) fn broken_with(&mut self, i: NodeIdx, now: Timestamp) {
        let Some(server) = self.nodes.addr(i).map(|a| self.resolve(a)) else {
            return;
        };
        let same: Vec<NodeIdx> = self
            .open_nodes()
            .into_iter()
            .filter(|&n| self.nodes.addr(n).map(|a| self.resolve(a)).as_ref() == Some(&server))
            .collect();
        self.broken(i, now);
        for n in same {
            self.broken(n, now);
        }
    }

    /// A failed reconnect attempt of node `i` at `now`: the next one after the backoff.
    pub(super) fn attempt_failed(&mut self, i: NodeIdx, now: Timestamp) {
        let k = self.nodes.get(i).reconnect.map_or(0, |r| r.attempts);
        let index = usize::try_from(k).unwrap_or(usize::MAX);
        let wait = match RECONNECT_BACKOFF_MS.get(index) {
            // ±20 % (`jitter_range(0.8, 1.2)`).
            Some(&b) => {
                let spread = b * RECONNECT_JITTER_PERCENT / 100;
                b - spread + self.rng.below(2 * spread + 1)
            }
            // The plateau repeats the last duration unjittered.
            None => RECONNECT_BACKOFF_MS[RECONNECT_BACKOFF_MS.len() - 1],
        };
        self.nodes.get_mut(i).reconnect = Some(Reconnect {
            attempts: k + 1,
            next_at: Timestamp(now.0.saturating_add(wait)),
        });
    }
}
