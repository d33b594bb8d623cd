//! One node's connection pool as Jedis's commands hold it (commons-pool2 `GenericObjectPool`):
//! each connection with the spans of the virtual clock during which a command holds it.
//!
//! The model runs each command whole when it is sent, on a clock of its own (`sequential.rs`):
//! a command that sleeps (a backoff, a read timeout) borrows its next connection later on the
//! clock than the commands sent after it, which run afterwards. A connection is therefore not
//! "busy until" one moment: it is held over spans, and a command sent after another may use it
//! in the time before the other's later span (the library's threads share the pool so). Kept as
//! one moment, the connection looked held from the earlier command's send to its late return,
//! and every command sent meanwhile opened one of its own: the pools of a kill-node storm grew
//! to 20 connections per node in the model where the live library kept 4–6 (seed 349468527,
//! case 14261873360534425767: 60 / 16 new connections).

/// A pooled connection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Conn {
    /// When it was made (µs): a command at an earlier moment cannot use it.
    made_us: u64,
    /// The spans `[from, until)` (µs) commands hold it; `until` is `u64::MAX` while the running
    /// command holds it.
    held: Vec<(u64, u64)>,
    /// Closed by someone (`CLIENT KILL`) while idle: nothing tests a connection on borrow
    /// (`testOnBorrow` off), so the next command on it reads end of stream.
    pub(super) dead: bool,
    /// Destroyed (broken, or its pool destroyed).
    gone: bool,
}

impl Conn {
    /// Whether it exists at `now_us` and no command holds it then.
    fn free_at(&self, now_us: u64) -> bool {
        !self.gone
            && self.made_us <= now_us
            && !self.held.iter().any(|&(f, u)| f <= now_us && now_us < u)
    }

    /// When a command next takes it after `now_us` (`u64::MAX`: never).
    fn next_use(&self, now_us: u64) -> u64 {
        (self.held.iter().map(|&(f, _)| f))
            .filter(|&f| f > now_us)
            .min()
            .unwrap_or(u64::MAX)
    }
}

/// One node's pool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Pool {
    conns: Vec<Conn>,
    /// Per connection (same places), the moment from which no command holds it any more and it
    /// exists (`u64::MAX` while held, or destroyed): the quick test of [`Pool::take`], kept
    /// apart so that it scans a dense array, as the pools of the other models do.
    ready: Vec<u64>,
    /// Spans added since the last [`Pool::prune`].
    added: usize,
    /// Connections destroyed since the last [`Pool::prune`].
    destroyed: usize,
}

impl Pool {
    /// Forgets what no command sent at or after `from_us` can meet: spans ended by then and
    /// destroyed connections (no borrow from then on can fall in such a span or take such a
    /// connection, and the places of the others keep their order: what [`Pool::take`] picks
    /// does not change). Only between commands: places change. Done when a connection was
    /// destroyed or the spans added since the last time outnumber the connections, so that a
    /// pool of many connections is not walked at every command.
    pub(super) fn prune(&mut self, from_us: u64) {
        if self.destroyed > 0 {
            self.destroyed = 0;
            let mut places = self.conns.iter();
            self.ready
                .retain(|_| places.next().is_some_and(|c| !c.gone));
            self.conns.retain(|c| !c.gone);
        }
        if self.added > self.conns.len() + 4 {
            self.added = 0;
            for c in &mut self.conns {
                c.held.retain(|&(_, u)| u > from_us);
            }
        }
    }

    /// `borrowObject` at `now_us`: a free connection (of those, the one whose next use by
    /// another command is furthest off), else a new one. Returns its place and whether it is new.
    pub(super) fn take(&mut self, now_us: u64) -> (usize, bool) {
        // The first connection no command holds from now on is the pick; else the free one
        // whose next use is furthest off.
        let idle = self.ready.iter().position(|&r| r <= now_us);
        let free = idle.or_else(|| {
            (self.conns.iter().enumerate())
                .filter(|(_, c)| c.free_at(now_us))
                .max_by_key(|&(i, c)| (c.next_use(now_us), std::cmp::Reverse(i)))
                .map(|(i, _)| i)
        });
        let (i, fresh) = match free {
            Some(i) => (i, false),
            None => {
                self.ready.push(u64::MAX);
                self.conns.push(Conn {
                    made_us: now_us,
                    ..Conn::default()
                });
                (self.conns.len() - 1, true)
            }
        };
        self.conns[i].held.push((now_us, u64::MAX));
        self.ready[i] = u64::MAX;
        self.added += 1;
        (i, fresh)
    }

    /// The connection at place `i`.
    pub(super) fn get(&self, i: usize) -> Option<&Conn> {
        self.conns.get(i)
    }

    /// Marks the connections idle at `now_us` as closed by someone.
    pub(super) fn kill_idle(&mut self, now_us: u64) {
        for c in self.conns.iter_mut().filter(|c| c.free_at(now_us)) {
            c.dead = true;
        }
    }

    /// `returnObject` of connection `i` at `now_us`: the command's hold ends.
    pub(super) fn give_back(&mut self, i: usize, now_us: u64) {
        if let Some(c) = self.conns.get_mut(i) {
            if let Some(k) = c.held.iter().position(|&(_, u)| u == u64::MAX) {
                if now_us > c.held[k].0 {
                    c.held[k].1 = now_us;
                } else {
                    // Held for no time (the instant clock): no moment lies in it.
                    c.held.swap_remove(k);
                }
            }
            let idle_from = (c.held.iter().map(|&(_, u)| u)).max().unwrap_or(0);
            self.ready[i] = if c.gone {
                u64::MAX
            } else {
                idle_from.max(c.made_us)
            };
        }
    }

    /// `invalidateObject` of connection `i` at `now_us`: destroyed, for every command run from
    /// now on, also those sent before `now_us` (a connection breaks because its node died or
    /// closed it, which those commands would meet as well).
    pub(super) fn destroy(&mut self, i: usize, now_us: u64) {
        self.give_back(i, now_us);
        if let Some(c) = self.conns.get_mut(i) {
            self.destroyed += usize::from(!c.gone);
            c.gone = true;
            c.dead = false;
            self.ready[i] = u64::MAX;
        }
    }

    /// The pool destroyed at `now_us` (its node left the slot cache): every connection.
    pub(super) fn destroy_all(&mut self, now_us: u64) {
        for i in 0..self.conns.len() {
            self.destroy(i, now_us);
        }
    }

    /// Connections open (not destroyed).
    pub(super) fn open(&self) -> usize {
        self.conns.iter().filter(|c| !c.gone).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_held_later_serves_a_command_before_that() {
        let mut p = Pool::default();
        assert_eq!(p.take(0), (0, true));
        p.give_back(0, 100);
        // A command sent at 0 sleeps and takes that connection at 300 ms, for 1 ms.
        assert_eq!(p.take(300_000), (0, false));
        p.give_back(0, 301_000);
        // A command sent at 1 ms, run after it, finds that connection free.
        assert_eq!(p.take(1_000), (0, false));
        p.give_back(0, 1_100);
        // While one holds it, another opens its own.
        assert_eq!(p.take(300_500), (1, true));
        p.give_back(1, 300_600);
        // Nor is a connection made later of use earlier: while 0 is held from 200 ms, a
        // command at 250 ms cannot take 1, made at 300.5 ms.
        assert_eq!(p.take(200_000), (0, false));
        assert_eq!(p.take(250_000), (2, true));
    }

    #[test]
    fn a_free_connection_used_soonest_by_another_is_taken_last() {
        let mut p = Pool::default();
        assert_eq!(p.take(0), (0, true));
        assert_eq!(p.take(0), (1, true));
        p.give_back(0, 10);
        p.give_back(1, 10);
        // Connection 0 is taken again at 500.
        p.take(500);
        p.give_back(0, 600);
        assert_eq!(p.take(100), (1, false));
    }

    #[test]
    fn pruning_changes_no_pick() {
        // Two pools fed the same borrows, one pruned after each: the same picks.
        let (mut a, mut b) = (Pool::default(), Pool::default());
        let mut t = 0u64;
        for k in 0..400u64 {
            t += 7 + (k * 37) % 11;
            // A borrow now, and one by a command asleep until later; some break.
            for at in [t, t + (k * 53) % 900] {
                let (i, fresh) = a.take(at);
                let (j, fresh_b) = b.take(at);
                // The same connection: made at the same moment (each borrow makes at most one).
                let made = |p: &Pool, i: usize| p.get(i).map(|c| c.made_us);
                assert_eq!(
                    (made(&a, i), fresh),
                    (made(&b, j), fresh_b),
                    "borrow {k} at {at}"
                );
                if k % 17 == 0 {
                    a.destroy(i, at + 3);
                    b.destroy(j, at + 3);
                } else {
                    a.give_back(i, at + 5);
                    b.give_back(j, at + 5);
                }
            }
            // Between commands: indexes may differ after a prune, so compare what is open.
            a.prune(t);
            b.added = usize::MAX;
            b.prune(t);
            assert_eq!(a.open(), b.open());
        }
    }

    #[test]
    fn destroyed_and_killed_connections() {
        let mut p = Pool::default();
        p.take(0);
        p.give_back(0, 10);
        p.take(40);
        p.destroy(0, 50);
        // Gone for every command run after, those sent before it broke too.
        assert_eq!(p.take(20), (1, true));
        p.give_back(1, 30);
        p.kill_idle(80);
        assert!(p.get(1).is_some_and(|c| c.dead));
        assert_eq!(p.open(), 1);
        p.prune(100);
        // The dead one is lent (nothing tests it on borrow).
        let (i, fresh) = p.take(100);
        assert!(!fresh && p.get(i).is_some_and(|c| c.dead));
        p.destroy_all(200);
        assert_eq!(p.open(), 0);
    }
}
