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
}

impl Pool {
    /// Forgets what no command sent at or after `from_us` can meet: spans ended by then and
    /// destroyed connections. Only between commands: places change.
    pub(super) fn prune(&mut self, from_us: u64) {
        self.conns.retain(|c| !c.gone);
        for c in &mut self.conns {
            c.held.retain(|&(_, u)| u > from_us);
        }
    }

    /// `borrowObject` at `now_us`: a free connection (of those, the one whose next use by
    /// another command is furthest off), else a new one. Returns its place and whether it is new.
    pub(super) fn take(&mut self, now_us: u64) -> (usize, bool) {
        let free = (self.conns.iter().enumerate())
            .filter(|(_, c)| c.free_at(now_us))
            .max_by_key(|&(i, c)| (c.next_use(now_us), std::cmp::Reverse(i)))
            .map(|(i, _)| i);
        let (i, fresh) = match free {
            Some(i) => (i, false),
            None => {
                self.conns.push(Conn {
                    made_us: now_us,
                    ..Conn::default()
                });
                (self.conns.len() - 1, true)
            }
        };
        self.conns[i].held.push((now_us, u64::MAX));
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
            if let Some(span) = c.held.iter_mut().find(|(_, u)| *u == u64::MAX) {
                span.1 = now_us.max(span.0);
            }
        }
    }

    /// `invalidateObject` of connection `i` at `now_us`: destroyed, for every command run from
    /// now on, also those sent before `now_us` (a connection breaks because its node died or
    /// closed it, which those commands would meet as well).
    pub(super) fn destroy(&mut self, i: usize, now_us: u64) {
        self.give_back(i, now_us);
        if let Some(c) = self.conns.get_mut(i) {
            c.gone = true;
            c.dead = false;
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
        assert_eq!((p.open(), p.take(100)), (1, (0, false)));
        p.destroy_all(200);
        assert_eq!(p.open(), 0);
    }
}
