//! `RedisCluster._lock`: the one `initialize()` and `close()` / `aclose()` take, handed on in
//! the order the tasks asked for it.

use super::{Client, Exception};
use crate::replay::net::Net;

impl Client {
    /// `RedisCluster.initialize()` under `_lock`: a task that finds another's initialisation
    /// running waits for it to end; if it succeeded, that one served this task's request too
    /// (it clears `_initialize`), else the task runs its own.
    pub(super) async fn initialize(&self, net: &Net<'_>) -> Result<(), Exception> {
        if net.timed() {
            self.lock(net).await;
            if !self.shared.borrow().needs_init {
                self.release(net);
                return Ok(());
            }
            let result = self.initialize_now(net).await;
            self.release(net);
            return result;
        }
        let now = net.now();
        let (until, ok) = {
            let sh = self.shared.borrow();
            (sh.init_until, sh.init_ok)
        };
        if now < until {
            net.sleep(until.millis_since(now)).await;
            if ok {
                self.shared.borrow_mut().needs_init = false;
                return Ok(());
            }
        }
        let result = self.initialize_now(net).await;
        let mut sh = self.shared.borrow_mut();
        sh.init_until = net.now();
        sh.init_ok = result.is_ok();
        result
    }

    /// `close()` / `aclose()` (5.0.0 l. 403-412, 8.1.0 l. 691-706): nothing while an
    /// initialisation is due; else, under `_lock`, every connection dropped and one due. The
    /// lock is the one `initialize()` holds, handed on in turn: a close waits behind every task
    /// already waiting for an initialisation, and those go on once it is done, before the
    /// close comes. Closing the connections (`NodesManager.aclose()`'s tasks, one
    /// `disconnect()` each) holds the loop `disconnect_cpu_ms` each, the lock held until they
    /// are done; the tasks whose replies the close lost run meanwhile. The lanes' instant clock
    /// closes at once.
    pub(super) async fn aclose(&self, net: &Net<'_>) {
        if !net.timed() {
            self.shared.borrow_mut().close(net.now_us());
            return;
        }
        if self.shared.borrow().needs_init {
            return;
        }
        self.lock(net).await;
        let closed = self.shared.borrow_mut().close(net.now_us());
        self.disconnect_cost(closed, net).await;
        self.release(net);
    }

    /// Takes `_lock` (the timed clock only), after the tasks already waiting for it.
    async fn lock(&self, net: &Net<'_>) {
        let queued = {
            let mut sh = self.shared.borrow_mut();
            if sh.lock.held {
                sh.lock.waiters.push_back(net.task());
                true
            } else {
                sh.lock.held = true;
                false
            }
        };
        if queued {
            // Woken by the holder, which handed the lock over.
            net.parked().await;
        }
    }

    /// Hands `_lock` to the first waiter, or frees it.
    fn release(&self, net: &Net<'_>) {
        let mut sh = self.shared.borrow_mut();
        match sh.lock.waiters.pop_front() {
            Some(next) => net.wake(next, net.now_us()),
            None => sh.lock.held = false,
        }
    }
}
