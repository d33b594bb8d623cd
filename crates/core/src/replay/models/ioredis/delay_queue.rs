//! ioredis's `DelayQueue` (`cluster/DelayQueue.js`): the `failover` and `clusterdown` buckets a
//! command waits in after `Connection is closed.` or `CLUSTERDOWN`. On the timed clock the command
//! pauses at the bucket's timer and the others run meanwhile; on the lanes' instant clock the
//! delay and the refresh run inside the command.

use super::{Client, Run, Status};
use crate::replay::client::Transport;
use crate::replay::sequential::Step;
use crate::time::Timestamp;

impl Client {
    /// A bucket's timer (timed clock): the command waits until it fires, joining a timer set
    /// and not yet fired, else setting one `ms` from now.
    pub(super) fn wait_for_timer(
        &mut self,
        mut run: Run,
        bucket: usize,
        ms: u64,
        net: &mut dyn Transport,
    ) -> Step {
        let now_us = net.now_us();
        let fires = match self.timers[bucket] {
            Some(at) if at > now_us => at,
            _ => {
                let at = now_us.saturating_add(ms.max(1).saturating_mul(1000));
                self.timers[bucket] = Some(at);
                at
            }
        };
        run.waits = Some((bucket, fires));
        net.resume_at_us(fires);
        self.paused.park(run)
    }

    /// A command whose bucket's timer fired (the clock at it): the first of its commands to go
    /// on runs the timer's callback, `refreshSlotsCache` (joining a refresh running then); every
    /// one is retried on a random master when that ends (`DelayQueue.js:18-35`).
    pub(super) fn timer_fired(&mut self, mut run: Run, net: &mut dyn Transport) -> Step {
        if let Some((bucket, fired)) = run.waits.take() {
            let now_us = net.now_us();
            let known = self.fired[bucket].iter().find(|f| f.0 == fired).copied();
            let end = match known {
                Some((_, end)) => end,
                None => {
                    if self.timers[bucket] == Some(fired) {
                        self.timers[bucket] = None;
                    }
                    if self.status == Status::Ready {
                        let end = self.refresh_shared(net);
                        self.settle(end);
                    }
                    let end = net.now_us();
                    self.fired[bucket].retain(|f| f.1.saturating_add(1_000_000) > now_us);
                    self.fired[bucket].push((fired, end));
                    end
                }
            };
            net.resume_at_us(end.max(now_us));
            run.random = true;
        }
        self.process(run, net)
    }

    /// A `DelayQueue` bucket (`DelayQueue.js:18-35`) on the lanes' instant clock, inside the
    /// command's run: the first command pushed starts its timer; when it fires, its callback
    /// `refreshSlotsCache` runs and, when that ends, the bucket's commands are retried and the
    /// timer cleared. A command pushed while the timer is set joins it: it is retried with the
    /// others, with no refresh of its own.
    ///
    /// A batch whose timer a later command (run before this one) starts less than `ms` after
    /// this push is joined too: in the library that command would have joined this one's.
    pub(super) fn delay_and_refresh(&mut self, bucket: usize, ms: u64, net: &mut dyn Transport) {
        let now = net.now();
        let batches = &self.buckets[bucket];
        let joined = batches
            .iter()
            .find(|&&(start, end)| now < end && start.0 < now.0.saturating_add(ms.max(1)))
            .map(|&(_, end)| end);
        if let Some(end) = joined {
            net.sleep(end.0.saturating_sub(now.0));
            return;
        }
        net.sleep(ms);
        if self.status == Status::Ready {
            self.refresh(net);
        }
        let batch = (now, net.now());
        let batches = &mut self.buckets[bucket];
        let at = batches.partition_point(|b| b.0 <= now);
        batches.insert(at, batch);
    }

    /// Forgets the batches retried before `now`: no command sent from now on can join them.
    pub(super) fn forget_batches(&mut self, now: Timestamp) {
        for batches in &mut self.buckets {
            batches.retain(|&(_, end)| end > now);
        }
    }
}
