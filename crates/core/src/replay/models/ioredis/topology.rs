//! ioredis's topology: connecting, waiting for `ready`, the slot refresh (`refreshSlotsCache`)
//! and its answer applied, the refreshes in the background (`cluster/index.ts`).

use super::{Client, Status, OFFLINE_WAIT_MAX_MS};
use crate::node::NodeAddr;
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::replay::slot_cache::Unlisted;
use crate::slot::SlotRange;
use crate::time::Timestamp;

impl Client {
    /// `connect()` (`cluster/index.js:149`): the startup nodes in the pool, then a refresh.
    pub(super) fn connect(&mut self, net: &mut dyn Transport) {
        let startup = self.startup.clone();
        self.reset(&startup);
        if self.refresh(net) {
            self.status = Status::Ready;
            self.retry_attempts = 0;
            self.periodic_at = self
                .cfg
                .refresh_interval_ms
                .map(|ms| Timestamp(net.now().0.saturating_add(ms)));
        } else {
            // ClusterAllFailedError: `connectionPool.reset([])` (:222), the pool drains, the
            // cluster closes and reconnects.
            self.reset(&[]);
            self.close(net.now());
        }
    }

    /// Waits until the cluster is ready (the offline queue), reconnecting as it would; `false`
    /// past the replay's bound.
    pub(super) fn wait_ready(&mut self, net: &mut dyn Transport, since: Timestamp) -> bool {
        loop {
            match self.status {
                Status::Ready => return true,
                Status::Initial => self.connect(net),
                Status::Reconnecting(at) => {
                    let now = net.now();
                    if at.0 > since.0.saturating_add(OFFLINE_WAIT_MAX_MS) {
                        if at > now {
                            net.sleep(
                                since
                                    .0
                                    .saturating_add(OFFLINE_WAIT_MAX_MS)
                                    .saturating_sub(now.0),
                            );
                        }
                        return false;
                    }
                    if at > now {
                        net.sleep(at.0 - now.0);
                    }
                    self.connect(net);
                }
            }
        }
    }

    /// `refreshSlotsCache` (`cluster/index.js:356`) run to its end and its answer applied:
    /// whether a node answered.
    pub(super) fn refresh(&mut self, net: &mut dyn Transport) -> bool {
        match self.query(net) {
            Some(ranges) => {
                self.apply(ranges);
                true
            }
            None => false,
        }
    }

    /// `refreshSlotsCache` as a `MOVED` or a `DelayQueue` timer calls it: it joins the refresh
    /// running at this moment (`isRefreshing`, :360), else runs one, whose answer is applied
    /// when it ends ([`Client::settle`]). Returns when that refresh ends (microseconds), the
    /// clock left there.
    ///
    /// A refresh a command run before this one started later, but less than its own length
    /// after this moment, is joined too: in the library this one would have run first and that
    /// one joined it (one refresh at a time, as `isRefreshing` allows).
    pub(super) fn refresh_shared(&mut self, net: &mut dyn Transport) -> u64 {
        let now_us = net.now_us();
        if let Some(&(_, end)) = self
            .refreshes
            .iter()
            .find(|&&(start, end)| start.saturating_sub(end - start) <= now_us && now_us < end)
        {
            net.resume_at_us(end);
            return end;
        }
        let answer = self.query(net);
        let end = net.now_us();
        let at = self.refreshes.partition_point(|r| r.0 <= now_us);
        self.refreshes.insert(at, (now_us, end));
        if let Some(ranges) = answer {
            let at = self.answers.partition_point(|a| a.0 <= end);
            self.answers.insert(at, (end, ranges));
        }
        net.resume_at_us(end);
        end
    }

    /// Applies the answers of the refreshes that ended by `now_us`, in order.
    pub(super) fn settle(&mut self, now_us: u64) {
        let due = self.answers.partition_point(|a| a.0 <= now_us);
        if due == 0 {
            return;
        }
        let answers: Vec<_> = self.answers.drain(..due).collect();
        for (_, ranges) in answers {
            self.apply(ranges);
        }
    }

    /// The nodes of the pool asked in turn (`tryNode`, :372-401): the first answer, counted as
    /// a refresh, the clock at its end.
    fn query(&mut self, net: &mut dyn Transport) -> Option<Vec<(SlotRange, NodeAddr)>> {
        self.reap_killed(net);
        let began_us = net.now_us();
        let mut order = self.pool();
        self.rng.shuffle(&mut order);
        for i in order {
            let Some(addr) = self.nodes.addr(i).cloned() else {
                continue;
            };
            self.stats.cluster_slots_calls += 1;
            let start_us = net.now_us();
            let answer = net.cluster_slots(&addr);
            if answer != Err(Reply::ConnectionError) {
                // The duplicate connection of `getInfoFromNode` (:818).
                self.stats.new_connections += 1;
            }
            let timeout_us = self.cfg.refresh_timeout_ms.saturating_mul(1000);
            if net.now_us().saturating_sub(start_us) > timeout_us {
                // `utils.timeout`: the callback gets `timeout` at slotsRefreshTimeout.
                net.resume_at_us(start_us.saturating_add(timeout_us));
                continue;
            }
            let Ok(ranges) = answer else {
                continue;
            };
            // The refresh's own work on Node's thread: the duplicate connection made and closed,
            // the answer written into `slots` and the pool (:842-880). On loopback its round
            // trips are that thread's work too (`refresh_cpu_ms` is timed over the whole call),
            // so it lasts the longer of the two; the lanes' instant clock takes no time for it.
            if !self.lanes {
                let spent_us = net.now_us().saturating_sub(began_us);
                net.sleep_us(self.cfg.refresh_cpu_us.saturating_sub(spent_us));
            }
            self.stats.full_reinits += 1;
            return Some(ranges);
        }
        None
    }

    /// A `CLUSTER SLOTS` answer (`getInfoFromNode`, :842-880).
    pub(super) fn apply(&mut self, ranges: Vec<(SlotRange, NodeAddr)>) {
        let mut named = Vec::new();
        let mut owners = Vec::with_capacity(ranges.len());
        for (r, a) in ranges {
            let mapped = self.nat(&a);
            let Some(i) = self.nodes.intern(&mapped) else {
                continue;
            };
            if !named.contains(&i) {
                named.push(i);
            }
            owners.push((r, i));
        }
        // `this.slots` is written over, never cleared.
        self.slots.load(owners, Unlisted::Kept);
        self.reset(&named);
    }

    /// The refresh a `MOVED` starts (:470) unless one runs (`isRefreshing`, :360): run in the
    /// background from now, the command not waiting for it, its answer applied when it ends.
    pub(super) fn refresh_in_background(&mut self, net: &mut dyn Transport) {
        if self.status != Status::Ready {
            return;
        }
        let now_us = net.now_us();
        self.refresh_shared(net);
        net.resume_at_us(now_us);
    }

    /// Runs the periodic refreshes due (`slotsRefreshInterval`), in the background.
    pub(super) fn background(&mut self, net: &mut dyn Transport) {
        let resume = net.now();
        let resume_us = net.now_us();
        while let Some(at) = self.periodic_at.filter(|&t| t <= resume) {
            if self.status != Status::Ready {
                break;
            }
            net.resume_at(at);
            self.refresh(net);
            self.periodic_at = self
                .cfg
                .refresh_interval_ms
                .map(|ms| Timestamp(net.now().0.saturating_add(ms).max(at.0 + 1)));
        }
        net.resume_at_us(resume_us);
    }
}
