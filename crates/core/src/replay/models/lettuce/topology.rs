//! Lettuce's topology refresh: each source node's view (`CLUSTER NODES`), the views loaded
//! from the sources and the one taken, and the periodic and adaptive refreshes
//! (`ClusterTopologyRefresh`, `DefaultClusterTopologyRefreshScheduler`).

use super::{Client, Conn, Fail, View, CONNECTION};
use crate::node::NodeAddr;
use crate::replay::client::Transport;
use crate::replay::cluster::Reply;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

impl Client {
    /// One node asked for its view over a dedicated connection: `CLUSTER NODES`, its slot
    /// owners and every node it lists. A refused connection sends nothing (the topology refresh
    /// queries only the connections it opened, `cluster/topology/Connections.java:104-113`), so
    /// only a reached node counts a query.
    pub(super) fn view_of(&mut self, node: NodeIdx, net: &mut dyn Transport) -> Option<View> {
        let answer = net.cluster_slots(self.resolve(node)?);
        if !matches!(answer, Err(Reply::ConnectionError)) {
            self.state.cluster_slots_calls += 1;
            self.state.new_connections += 1;
        }
        let ranges = answer.ok()?;
        // `CLUSTER NODES` lists every node the cluster knows: masters without slots and replicas
        // too (`cluster/models/partitions/ClusterPartitionParser.java`), with the slot owners.
        let mut listed: Vec<NodeAddr> = ranges.iter().map(|(_, a)| a.clone()).collect();
        for m in net.cluster_members() {
            if !listed.contains(&m) {
                listed.push(m);
            }
        }
        Some(View { ranges, listed })
    }

    /// `DefaultClusterTopologyRefresh.loadViews`: every source, then (with discovery) every node
    /// the views list that was not a source. The first view obtained is the one used.
    pub(super) fn load_views(
        &mut self,
        sources: &[NodeIdx],
        net: &mut dyn Transport,
    ) -> Option<View> {
        let mut views: Vec<View> = Vec::new();
        for &s in sources {
            if let Some(v) = self.view_of(s, net) {
                views.push(v);
            }
        }
        if self.cfg.dynamic_sources {
            let mut discovered = Vec::new();
            let listed: Vec<NodeAddr> = views.iter().flat_map(|v| v.listed.clone()).collect();
            for a in &listed {
                let Some(i) = self.intern(a) else {
                    continue;
                };
                if !sources.contains(&i) && !discovered.contains(&i) {
                    discovered.push(i);
                }
            }
            for d in discovered {
                if let Some(v) = self.view_of(d, net) {
                    views.push(v);
                }
            }
        }
        views.into_iter().next()
    }

    /// `refreshPartitionsAsync` / `initializePartitions`: true when a view was applied.
    pub(super) fn refresh(&mut self, net: &mut dyn Transport) -> bool {
        // getTopologyRefreshSource()
        let sources = if self.cfg.dynamic_sources && !self.members.is_empty() {
            let mut m = self.members.clone();
            m.sort_by(|a, b| self.nodes.addr(*a).cmp(&self.nodes.addr(*b)));
            m
        } else {
            self.seeds.clone()
        };
        let mut view = self.load_views(&sources, net);
        if view.is_none() && self.cfg.dynamic_sources && sources != self.seeds {
            // loadPartitionsAsync(): recovery through the initial seed nodes.
            let seeds = self.seeds.clone();
            view = self.load_views(&seeds, net);
        }
        let Some(view) = view else {
            return false;
        };
        self.nodes
            .fill_table(&mut self.table, view.ranges, |nodes, a| nodes.intern(a));
        // The partitions: every node the view lists.
        self.members = Vec::new();
        for a in &view.listed {
            if let Some(i) = self.nodes.intern(a) {
                if !self.members.contains(&i) {
                    self.members.push(i);
                }
            }
        }
        if self.cfg.close_stale {
            for (n, c) in self.nodes.states_mut() {
                if !self.members.contains(&n) {
                    *c = Conn::Closed;
                }
            }
        }
        self.mapped_slots = self.table.covered();
        self.state.full_reinits += 1;
        true
    }

    /// Work due before this command: the first topology load, a scheduled adaptive refresh, a
    /// periodic refresh.
    pub(super) fn background(&mut self, net: &mut dyn Transport) -> Result<(), Fail> {
        let now = net.now();
        if !self.initialized {
            if !self.refresh(net) {
                // RedisClusterClient.connect(): "Unable to establish a connection to Redis
                // Cluster"; the application retries with the next command.
                return Err(Fail(CONNECTION));
            }
            self.initialized = true;
            // connectClusterAsync(): the cluster connection's own channel (its DefaultEndpoint,
            // for commands without a slot), connected to a node of the partitions
            // (`RoundRobinSocketAddressSupplier`), besides the per-node connections.
            self.state.new_connections += 1;
            self.refresh_scheduled = false;
            // activateTopologyRefreshIfNeeded(): scheduleAtFixedRate(period, period).
            self.next_periodic = self
                .cfg
                .periodic_ms
                .map(|p| Timestamp(now.0.saturating_add(p)));
            return Ok(());
        }
        let mut due = std::mem::take(&mut self.refresh_scheduled);
        if let (Some(next), Some(period)) = (self.next_periodic, self.cfg.periodic_ms) {
            if now >= next {
                due = true;
                let missed = (now.0 - next.0) / period + 1;
                self.next_periodic = Some(Timestamp(
                    next.0.saturating_add(missed.saturating_mul(period)),
                ));
            }
        }
        if due {
            // An asynchronous refresh: the command does not wait for it.
            let resume = net.now_us();
            self.refresh(net);
            net.resume_at_us(resume);
        }
        Ok(())
    }
}
