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

    /// `refreshSlotsCache` (`cluster/index.js:356`): whether a node answered.
    pub(super) fn refresh(&mut self, net: &mut dyn Transport) -> bool {
        self.reap_killed(net);
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
            self.apply(ranges);
            self.stats.full_reinits += 1;
            return true;
        }
        false
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
    /// background from now, the command not waiting for it; `isRefreshing` holds until it ends.
    pub(super) fn refresh_in_background(&mut self, net: &mut dyn Transport) {
        let now_us = net.now_us();
        if now_us < self.refreshing_until_us || self.status != Status::Ready {
            return;
        }
        self.refresh(net);
        self.refreshing_until_us = net.now_us();
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
