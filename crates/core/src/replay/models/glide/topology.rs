//! GLIDE's topology: the startup connections, the slot-map refresh that asks several nodes and
//! takes the view enough of them agree on, and the periodic checks
//! (`cluster_async/mod.rs`, `cluster_topology.rs`).

use super::{
    Client, View, CONNECTIONS_PER_NODE, MAX_REQUESTED_NODES, MIN_AGREEMENT_TENTHS,
    REFRESH_JITTER_MS, REFRESH_RETRIES, REFRESH_RETRY_BASE_MS, REFRESH_RETRY_FACTOR,
    REFRESH_WAIT_MS,
};
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

impl Client {
    /// `createClient`: the startup connections and the first refresh (not throttled).
    pub(super) fn create(&mut self, net: &mut dyn Transport) {
        if self.connect_startup(net) {
            self.created = true;
            self.next_check = self
                .cfg
                .periodic_ms
                .map(|ms| Timestamp(net.now().0.saturating_add(ms)));
        } else {
            // `createClient` rejects; its connections close with it.
            for i in self.startup.clone() {
                self.nodes.get_mut(i).open = false;
            }
        }
    }

    /// `create_initial_connections` then a refresh not throttled: the startup nodes without a
    /// reconnect task are connected (their connections counted when their `CLUSTER SLOTS`
    /// answered), then asked. Whether a topology was found.
    pub(super) fn connect_startup(&mut self, net: &mut dyn Transport) -> bool {
        let fresh: Vec<NodeIdx> = self
            .startup
            .iter()
            .copied()
            .filter(|&i| {
                let n = self.nodes.get(i);
                !n.open && n.reconnect.is_none()
            })
            .collect();
        if fresh.is_empty() && self.open_nodes().is_empty() {
            return false;
        }
        let now = net.now();
        for &i in &fresh {
            let n = self.nodes.get_mut(i);
            n.open = true;
            n.since = now;
        }
        let found = self.refresh(net, false);
        for &i in &fresh {
            if self.nodes.get(i).open {
                self.stats.new_connections += CONNECTIONS_PER_NODE;
            }
        }
        found
    }

    /// Asks `CLUSTER SLOTS` of `ask` at once (`join_all`): the answers' views and the time the
    /// last came back.
    pub(super) fn query(&mut self, ask: &[NodeIdx], net: &mut dyn Transport) -> Vec<View> {
        let start = net.now();
        let start_us = net.now_us();
        let mut end_us = start_us;
        let mut views = Vec::new();
        for &i in ask {
            let Some(addr) = self.nodes.addr(i).map(|a| self.resolve(a)) else {
                continue;
            };
            net.resume_at_us(start_us);
            self.stats.cluster_slots_calls += 1;
            let answer = net.cluster_slots(&addr);
            end_us = end_us.max(net.now_us());
            match answer {
                Ok(ranges) => {
                    let mut view = Vec::with_capacity(ranges.len());
                    for (r, a) in ranges {
                        let resolved = self.resolve(&a);
                        if let Some(n) = self.nodes.intern(&resolved) {
                            view.push((r, n));
                        }
                    }
                    views.push(view);
                }
                Err(Reply::ConnectionError) => self.broken(i, start),
                Err(_) => {}
            }
        }
        net.resume_at_us(end_us);
        views
    }

    /// `calculate_topology`: the view most answers agree on (a tie goes to the one covering more
    /// slots, and is an error before the last attempt when 3 nodes or more were asked), if it
    /// has the agreement of 20 % of the nodes asked.
    pub(super) fn agreed(views: Vec<View>, asked: usize, attempt: usize) -> Option<View> {
        let mut counted: Vec<(View, usize)> = Vec::new();
        for v in views {
            match counted.iter_mut().find(|(w, _)| *w == v) {
                Some(c) => c.1 += 1,
                None => counted.push((v, 1)),
            }
        }
        let covered = |v: &View| -> usize { v.iter().map(|(r, _)| r.len()).sum() };
        let top = counted.iter().map(|c| c.1).max()?;
        let mut best: Vec<(View, usize)> = counted.into_iter().filter(|c| c.1 == top).collect();
        if best.len() > 1 && attempt < REFRESH_RETRIES && asked >= 3 {
            return None;
        }
        best.sort_by_key(|(v, _)| std::cmp::Reverse(covered(v)));
        let (view, count) = best.into_iter().next()?;
        (count * 10 >= asked * MIN_AGREEMENT_TENTHS).then_some(view)
    }

    /// `refresh_slots_and_subscriptions_with_retries`: whether it ran and found a topology.
    pub(super) fn refresh(&mut self, net: &mut dyn Transport, throttable: bool) -> bool {
        let now = net.now();
        if throttable {
            if let Some(last) = self.last_run {
                let wait = REFRESH_WAIT_MS + self.rng.below(REFRESH_JITTER_MS);
                if now.millis_since(last) <= wait {
                    return false;
                }
            }
        }
        let mut backoff = REFRESH_RETRY_BASE_MS;
        for attempt in 0..=REFRESH_RETRIES {
            if attempt > 0 {
                // `jitter_range(0.8, 1.2)` of 500 ms × 1.5ⁿ.
                let tenths = 8 + self.rng.below(5);
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                net.sleep((backoff * tenths as f64 / 10.0) as u64);
                backoff *= REFRESH_RETRY_FACTOR;
            }
            self.last_run = Some(net.now());
            let mut ask = self.open_nodes();
            if ask.is_empty() {
                // `AllConnectionsUnavailable`: no retry; the reconnect to the initial nodes.
                return self.reconnect_initial(net);
            }
            self.rng.shuffle(&mut ask);
            ask.truncate(MAX_REQUESTED_NODES);
            let asked = ask.len();
            let views = self.query(&ask, net);
            if let Some(view) = Self::agreed(views, asked, attempt) {
                self.apply(view, net);
                return true;
            }
        }
        false
    }

    /// `reconnect_to_initial_nodes` (:1760-1803): the startup connections again, then a refresh
    /// not throttled.
    pub(super) fn reconnect_initial(&mut self, net: &mut dyn Transport) -> bool {
        self.connect_startup(net)
    }

    /// The new slot map and connection map of a refresh (:2800-2812), with the replicas the
    /// answer lists (their addresses resolved as the primaries').
    pub(super) fn apply(&mut self, view: View, net: &dyn Transport) {
        self.slots.clear();
        let mut named: Vec<NodeIdx> = Vec::new();
        for &(r, n) in &view {
            self.slots.fill(r, Some(n));
            if !named.contains(&n) {
                named.push(n);
            }
        }
        let owners: Vec<_> = named
            .iter()
            .filter_map(|&n| self.nodes.addr(n).cloned())
            .collect();
        self.replicas.clear();
        for (replica, primary) in net.listed_replicas(&owners) {
            let replica = self.nodes.intern(&self.resolve(&replica));
            let primary = self.nodes.intern(&self.resolve(&primary));
            if let (Some(r), Some(p)) = (replica, primary) {
                if r != p {
                    self.replicas.push((r, p));
                }
            }
        }
        for (i, n) in self.nodes.states_mut() {
            if !named.contains(&i) {
                n.open = false;
            }
        }
        self.topology = Some(view);
        self.stats.full_reinits += 1;
    }

    /// Runs the periodic checks due before now, in the background.
    pub(super) fn background(&mut self, net: &mut dyn Transport) {
        let resume = net.now();
        let resume_us = net.now_us();
        while let Some(at) = self.next_check.filter(|&t| t <= resume) {
            net.resume_at(at);
            let mut ask = self.open_nodes();
            self.rng.shuffle(&mut ask);
            let n = ask.len();
            let k = usize::try_from(n.checked_ilog2().unwrap_or(0))
                .unwrap_or(1)
                .max(1);
            ask.truncate(k);
            let asked = ask.len();
            let views = self.query(&ask, net);
            let differs = Self::agreed(views, asked, REFRESH_RETRIES)
                .is_some_and(|v| self.topology.as_ref() != Some(&v));
            if differs {
                self.refresh(net, true);
            }
            self.next_check = self
                .cfg
                .periodic_ms
                .map(|ms| Timestamp(net.now().0.saturating_add(ms).max(at.0 + 1)));
        }
        net.resume_at_us(resume_us);
    }
}
