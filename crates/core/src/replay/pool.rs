//! Connection pools of a simulated client: per node, connection objects that are connected or
//! not and busy until a virtual time, so that commands in flight at once each hold their own
//! connection and every (re)connection is counted as the server would count it.

use crate::time::Timestamp;

/// One connection object of a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Conn {
    /// Whether its socket is open.
    connected: bool,
    /// Until when a command holds it.
    busy_until: Timestamp,
}

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

/// A connection taken from a pool by [`Pools::acquire`], to be given back by [`Pools::finish`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Lease {
    node: u16,
    index: usize,
    was_connected: bool,
}

/// Per-node pools (nodes by interned index).
#[derive(Clone, Debug, Default)]
pub(super) struct Pools {
    nodes: Vec<Vec<Conn>>,
    max_per_node: usize,
    opened: u64,
}

impl Pools {
    /// Empty pools of at most `max_per_node` connections each (at least 1).
    pub(super) fn new(max_per_node: usize) -> Pools {
        Pools {
            nodes: Vec::new(),
            max_per_node: max_per_node.max(1),
            opened: 0,
        }
    }

    /// Connections opened so far (every successful connect, reconnects included).
    pub(super) fn opened(&self) -> u64 {
        self.opened
    }

    fn pool(&mut self, node: u16) -> &mut Vec<Conn> {
        let i = usize::from(node);
        if self.nodes.len() <= i {
            self.nodes.resize_with(i + 1, Vec::new);
        }
        &mut self.nodes[i]
    }

    /// Takes a connection to `node` that is free at `now`: the first free one, else a new object
    /// (not yet connected), else, with the pool full, the one that frees first.
    pub(super) fn acquire(&mut self, node: u16, now: Timestamp) -> Lease {
        let max = self.max_per_node;
        let pool = self.pool(node);
        let index = match pool.iter().position(|c| c.busy_until <= now) {
            Some(i) => i,
            None if pool.len() < max => {
                pool.push(Conn {
                    connected: false,
                    busy_until: now,
                });
                pool.len() - 1
            }
            None => pool
                .iter()
                .enumerate()
                .min_by_key(|(_, c)| c.busy_until)
                .map_or(0, |(i, _)| i),
        };
        Lease {
            node,
            index,
            was_connected: pool.get(index).is_some_and(|c| c.connected),
        }
    }

    /// Gives the lease back: the exchange ended with `link`, and the connection is busy until
    /// `until`. A connection that was not open and reached the node counts as opened.
    pub(super) fn finish(&mut self, lease: Lease, link: Link, until: Timestamp) {
        let opened = link == Link::Answered && !lease.was_connected;
        if let Some(c) = self.pool(lease.node).get_mut(lease.index) {
            c.connected = link == Link::Answered;
            c.busy_until = until;
        }
        self.opened += u64::from(opened);
    }

    /// Drops every connection to `node` (each reconnects on its next use).
    pub(super) fn disconnect(&mut self, node: u16) {
        self.pool(node).iter_mut().for_each(|c| c.connected = false);
    }

    /// Drops every connection of every pool.
    pub(super) fn disconnect_all(&mut self) {
        self.nodes
            .iter_mut()
            .flatten()
            .for_each(|c| c.connected = false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_connection_makes_the_next_command_open_another() {
        let mut p = Pools::new(100);
        let l = p.acquire(0, Timestamp(0));
        p.finish(l, Link::Answered, Timestamp(0));
        assert_eq!(p.opened(), 1);
        // Reused while free.
        let l = p.acquire(0, Timestamp(5));
        p.finish(l, Link::TimedOut, Timestamp(505));
        assert_eq!(p.opened(), 1);
        // Held until 505: a second connection object.
        let l = p.acquire(0, Timestamp(10));
        assert_eq!(l.index, 1);
        p.finish(l, Link::Answered, Timestamp(10));
        assert_eq!(p.opened(), 2);
        // After the wait the timed-out one is free again but must reconnect.
        let l = p.acquire(0, Timestamp(600));
        assert_eq!(l.index, 0);
        p.finish(l, Link::Answered, Timestamp(600));
        assert_eq!(p.opened(), 3);
    }

    #[test]
    fn refused_connects_are_not_counted_and_disconnect_drops_all() {
        let mut p = Pools::new(1);
        let l = p.acquire(3, Timestamp(0));
        p.finish(l, Link::Refused, Timestamp(0));
        assert_eq!(p.opened(), 0);
        let l = p.acquire(3, Timestamp(1));
        p.finish(l, Link::Answered, Timestamp(1));
        p.disconnect_all();
        let l = p.acquire(3, Timestamp(2));
        p.finish(l, Link::Answered, Timestamp(2));
        assert_eq!(p.opened(), 2);
        // A full pool of one hands out its only connection even while busy.
        let l = p.acquire(3, Timestamp(3));
        p.finish(l, Link::TimedOut, Timestamp(1000));
        assert_eq!(p.acquire(3, Timestamp(4)).index, 0);
    }
}
