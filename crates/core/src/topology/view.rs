//! [`TopologyView`]: one node's view of the cluster, its shards and slot migrations, and what
//! can be asked of it (slot owners, addresses to poll); merging a `CLUSTER NODES` view into it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::node::{NodeHealth, NodeRole, TopoNode};
use crate::node::{NodeAddr, NodeId};
use crate::slot::{Slot, SlotRange, SLOT_COUNT};

/// Which command a view was built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopologySource {
    /// `CLUSTER SHARDS` (Redis 7.0+, Valkey).
    Shards,
    /// `CLUSTER SLOTS` (all versions; deprecated since 7.0).
    Slots,
    /// `CLUSTER NODES`.
    Nodes,
}

/// A primary, its replicas and the slots they serve.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Slots served, as the fewest ascending ranges; empty for a primary without slots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slots: Vec<SlotRange>,
    /// The primary first, then replicas by id. A shard may lack a primary if `CLUSTER NODES`
    /// names a primary it does not list.
    pub nodes: Vec<TopoNode>,
}

impl Shard {
    /// The shard's primary, if it has one: the first primary the cluster has not agreed failed,
    /// else the first primary (a view recorded before primaries were ordered by health may list
    /// a failed old primary first, beside the promoted one).
    pub fn primary(&self) -> Option<&TopoNode> {
        let mut primaries = self
            .nodes
            .iter()
            .take_while(|n| n.role == NodeRole::Primary);
        let first = primaries.clone().next();
        primaries.find(|n| n.health != NodeHealth::Failed).or(first)
    }

    /// Whether the shard serves `slot`.
    pub fn contains(&self, slot: Slot) -> bool {
        self.slots.iter().any(|r| r.contains(slot))
    }

    /// Puts the ranges in fewest ascending form and the nodes in order.
    fn normalise(&mut self) {
        self.slots = SlotRange::coalesce(self.slots.iter().flat_map(|r| r.slots()));
        self.nodes.sort_by(|a, b| node_order(a).cmp(&node_order(b)));
    }

    /// Where the shard goes in a view: by first slot (slotless last), then by first node id.
    fn sort_key(&self) -> (u32, Option<&NodeId>) {
        let first = self
            .slots
            .first()
            .map_or(u32::from(SLOT_COUNT), |r| u32::from(r.start().get()));
        (first, self.nodes.first().map(|n| &n.id))
    }
}

/// Primaries before replicas, a primary the cluster agreed failed after one that is not (after a
/// failover, Valkey's `CLUSTER SHARDS` lists the old primary, still `primary` with health `fail`,
/// beside the promoted one; `CLUSTER SLOTS` names only the promoted one), then by id.
fn node_order(node: &TopoNode) -> (bool, bool, &NodeId) {
    (
        node.role != NodeRole::Primary,
        node.health == NodeHealth::Failed,
        &node.id,
    )
}

/// A slot the reporting node is moving out (`MIGRATING` to `peer`) or in (`IMPORTING` from
/// `peer`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SlotMigration {
    /// The slot.
    pub slot: Slot,
    /// The node it moves to (migrating) or from (importing).
    pub peer: NodeId,
}

/// One node's view of the whole cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyView {
    /// The command it came from (the main one, after [`merge_nodes`](Self::merge_nodes)).
    pub source: TopologySource,
    /// The reporting node's own id (`myself` flag of `CLUSTER NODES`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub myself: Option<NodeId>,
    /// Shards in canonical order: by first slot, slotless ones last, then by primary id.
    pub shards: Vec<Shard>,
    /// Slots the reporting node is migrating out, by slot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub migrating: Vec<SlotMigration>,
    /// Slots the reporting node is importing, by slot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub importing: Vec<SlotMigration>,
}

impl TopologyView {
    /// Enriches a `CLUSTER SHARDS` / `CLUSTER SLOTS` view with a `CLUSTER NODES` view taken from
    /// the same node at about the same time.
    ///
    /// Takes `myself`, `migrating` and `importing` from `nodes`. For every node of `self` that
    /// `nodes` also lists: takes its flags, `primary_id`, `config_epoch` and `link_connected`, and
    /// fills the address, hostname and TLS port where `self` has none and the health where `self`
    /// says [`NodeHealth::Unknown`]. Nodes only `nodes` lists (`CLUSTER SLOTS` omits failed
    /// replicas
    /// and slotless primaries) are added: a replica to the shard of its primary, anything else as
    /// a slotless shard of its own. Slot ownership stays as `self` reports it.
    pub fn merge_nodes(&mut self, nodes: &TopologyView) {
        if nodes.myself.is_some() {
            self.myself.clone_from(&nodes.myself);
        }
        self.migrating.clone_from(&nodes.migrating);
        self.importing.clone_from(&nodes.importing);
        let known: BTreeMap<&NodeId, &TopoNode> = nodes
            .shards
            .iter()
            .flat_map(|s| &s.nodes)
            .map(|n| (&n.id, n))
            .collect();
        for node in self.shards.iter_mut().flat_map(|s| &mut s.nodes) {
            let Some(other) = known.get(&node.id) else {
                continue;
            };
            node.flags.clone_from(&other.flags);
            node.primary_id.clone_from(&other.primary_id);
            node.config_epoch = other.config_epoch;
            node.link_connected = other.link_connected;
            if node.addr.is_none() {
                node.addr.clone_from(&other.addr);
            }
            if node.hostname.is_none() {
                node.hostname.clone_from(&other.hostname);
            }
            if node.tls_port.is_none() {
                node.tls_port = other.tls_port;
            }
            if node.health == NodeHealth::Unknown {
                node.health = other.health;
            }
        }
        let mut missing: Vec<&TopoNode> = known
            .values()
            .filter(|n| self.node(&n.id).is_none())
            .copied()
            .collect();
        // Primaries first, so that their missing replicas find their shard.
        missing.sort_by_key(|n| n.role != NodeRole::Primary);
        for node in missing {
            let home = match (node.role, &node.primary_id) {
                (NodeRole::Replica, Some(primary)) => self
                    .shards
                    .iter_mut()
                    .find(|s| s.primary().is_some_and(|p| &p.id == primary)),
                _ => None,
            };
            match home {
                Some(shard) => shard.nodes.push(node.clone()),
                None => self.shards.push(Shard {
                    slots: Vec::new(),
                    nodes: vec![node.clone()],
                }),
            }
        }
        self.normalise();
    }

    /// Sets the reporting node's address to `polled` if the view does not know it (servers often
    /// report an empty IP for themselves). Needs [`myself`](Self::myself).
    pub fn fill_own_address(&mut self, polled: &NodeAddr) {
        let Some(me) = self.myself.clone() else {
            return;
        };
        if let Some(node) = self
            .shards
            .iter_mut()
            .flat_map(|s| &mut s.nodes)
            .find(|n| n.id == me)
        {
            if node.addr.is_none() {
                node.addr = Some(polled.clone());
            }
        }
    }

    /// The node with id `id`.
    pub fn node(&self, id: &NodeId) -> Option<&TopoNode> {
        self.nodes().find(|n| &n.id == id)
    }

    /// Every node, shard by shard.
    pub fn nodes(&self) -> impl Iterator<Item = &TopoNode> {
        self.shards.iter().flat_map(|s| &s.nodes)
    }

    /// The primary of the shard serving `slot`; if several shards claim it (views taken
    /// mid-failover can), the later one in [`shards`](Self::shards); shards without a primary own
    /// nothing.
    pub fn owner_of(&self, slot: Slot) -> Option<&NodeId> {
        self.shards
            .iter()
            .rev()
            .filter(|s| s.contains(slot))
            .find_map(|s| s.primary())
            .map(|p| &p.id)
    }

    /// Every known node address, deduplicated and sorted; nodes still in handshake or without an
    /// address (`handshake`, `noaddr` flags) are left out, as they cannot be polled.
    pub fn addresses(&self) -> Vec<NodeAddr> {
        self.poll_addresses(false)
    }

    /// The addresses to connect to, as [`TopologyView::addresses`]; with `tls`, a node's TLS port
    /// replaces its plain port where the node reports one.
    pub fn poll_addresses(&self, tls: bool) -> Vec<NodeAddr> {
        let mut addrs: Vec<NodeAddr> = self
            .nodes()
            .filter(|n| !n.has_flag("handshake") && !n.has_flag("noaddr"))
            .filter_map(|n| n.poll_addr(tls))
            .collect();
        addrs.sort();
        addrs.dedup();
        addrs
    }

    /// The node reached at `addr` (as given by [`TopologyView::poll_addresses`] with the same `tls`).
    pub fn node_at(&self, addr: &NodeAddr, tls: bool) -> Option<&TopoNode> {
        self.nodes()
            .find(|n| n.poll_addr(tls).as_ref() == Some(addr))
    }

    /// How many distinct slots some shard serves (16384 when the cluster is fully covered).
    pub fn assigned_slots(&self) -> usize {
        let mut assigned = vec![false; usize::from(SLOT_COUNT)];
        for range in self.shards.iter().flat_map(|s| &s.slots) {
            for slot in range.slots() {
                assigned[usize::from(slot.get())] = true;
            }
        }
        assigned.into_iter().filter(|&a| a).count()
    }

    /// A view of `shards` from `source`, without `myself` or migrations.
    pub(super) fn with_shards(source: TopologySource, shards: Vec<Shard>) -> TopologyView {
        TopologyView {
            source,
            myself: None,
            shards,
            migrating: Vec::new(),
            importing: Vec::new(),
        }
    }

    /// Replicas listed in a shard replicate its primary.
    pub(super) fn link_replicas_to_shard_primary(&mut self) {
        for shard in &mut self.shards {
            let Some(primary) = shard.primary().map(|p| p.id.clone()) else {
                continue;
            };
            for node in &mut shard.nodes {
                if node.role == NodeRole::Replica && node.primary_id.is_none() {
                    node.primary_id = Some(primary.clone());
                }
            }
        }
    }

    /// Puts shards, nodes, ranges and migrations in canonical order.
    pub(super) fn normalise(&mut self) {
        for shard in &mut self.shards {
            shard.normalise();
        }
        self.shards.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        for list in [&mut self.migrating, &mut self.importing] {
            list.sort();
            list.dedup();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::Value;
    use crate::topology::fixture::*;

    #[test]
    fn a_node_that_does_not_know_its_ip_gets_the_polled_address() {
        let lone = TopologyView::from_shards(&resp(REDIS_LONE_SHARDS)).unwrap();
        let me = id("4cf999639a7f9fc8e0271c1ebc9649e079888e9b");
        assert_eq!(lone.node(&me).unwrap().addr, None);
        assert!(lone.addresses().is_empty());

        let mut merged = lone.clone();
        merged.merge_nodes(&TopologyView::from_nodes(REDIS_NODES_LONE).unwrap());
        assert_eq!(merged.myself, Some(me.clone()));
        assert_eq!(merged.node(&me).unwrap().addr, None);
        merged.fill_own_address(&addr("127.0.0.1:21005"));
        assert_eq!(
            merged.node(&me).unwrap().addr,
            Some(addr("127.0.0.1:21005"))
        );
        // Without `myself` there is nobody to fill.
        let mut unmerged = lone;
        unmerged.fill_own_address(&addr("127.0.0.1:21005"));
        assert_eq!(unmerged.node(&me).unwrap().addr, None);

        let slots = TopologyView::from_slots(&resp(VALKEY_LONE_SLOTS)).unwrap();
        assert_eq!(slots.shards[0].nodes[0].addr, None);
        assert_eq!(slots.assigned_slots(), 100);
    }

    #[test]
    fn fill_own_address_keeps_a_known_address() {
        let mut view = TopologyView::from_nodes(REDIS_NODES_MIGRATING).unwrap();
        let before = view.clone();
        view.fill_own_address(&addr("10.9.9.9:6379"));
        assert_eq!(view, before);
    }

    #[test]
    fn shards_and_nodes_of_the_same_node_agree() {
        let shards = TopologyView::from_shards(&resp(REDIS_SHARDS_RESP2)).unwrap();
        let nodes = TopologyView::from_nodes(REDIS_NODES_MIGRATING).unwrap();
        assert_eq!(layout(&shards), layout(&nodes));
        assert_eq!(owners(&shards), owners(&nodes));
        assert_eq!(shards.addresses(), nodes.addresses());
    }

    #[test]
    fn merge_nodes_enriches_a_shards_view() {
        let mut view = TopologyView::from_shards(&resp(REDIS_SHARDS_RESP2)).unwrap();
        let nodes = TopologyView::from_nodes(REDIS_NODES_MIGRATING).unwrap();
        view.merge_nodes(&nodes);
        assert_eq!(view.source, TopologySource::Shards);
        assert_eq!(view.myself, Some(id(R1)));
        assert_eq!(view.migrating, nodes.migrating);
        assert_eq!(layout(&view), redis_layout());
        let me = view.node(&id(R1)).unwrap();
        assert_eq!(me.flags, ["myself", "master"]);
        assert_eq!(me.config_epoch, Some(1));
        assert_eq!(me.link_connected, Some(true));
        assert_eq!(view.node(&id(R4)).unwrap().primary_id, Some(id(R1)));
        // Merging again changes nothing.
        let once = view.clone();
        view.merge_nodes(&nodes);
        assert_eq!(view, once);
    }

    #[test]
    fn merge_nodes_keeps_shards_health_and_fills_unknown_health() {
        let mut shards = TopologyView::from_shards(&resp(REDIS_SHARDS_FAILED)).unwrap();
        let nodes = TopologyView::from_nodes(REDIS_NODES_FAILING).unwrap();
        shards.merge_nodes(&nodes);
        // SHARDS already said online for 21006, which NODES only suspects (`fail?`).
        assert_eq!(shards.node(&id(R3)).unwrap().health, NodeHealth::Failed);
        assert!(shards.node(&id(R6)).unwrap().has_flag("fail?"));

        let mut slots = TopologyView::from_slots(&resp(REDIS_SLOTS_RESP2)).unwrap();
        slots.merge_nodes(&nodes);
        assert_eq!(slots.node(&id(R3)).unwrap().health, NodeHealth::Failed);
        assert_eq!(slots.node(&id(R1)).unwrap().health, NodeHealth::Online);
    }

    #[test]
    fn merge_nodes_adds_nodes_that_cluster_slots_omits() {
        let mut view = TopologyView::from_slots(&resp(REDIS_SLOTS_RESP2)).unwrap();
        assert!(view.node(&id(R6)).is_none());
        view.merge_nodes(&TopologyView::from_nodes(REDIS_NODES_MIGRATING).unwrap());
        assert_eq!(layout(&view), redis_layout());
        assert_eq!(view.node(&id(R6)).unwrap().config_epoch, Some(4));

        // A replica only NODES knows joins its primary's shard.
        let text = format!(
            "{R1} 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n\
             {R4} 10.0.0.4:7000@17000 slave,fail {R1} 0 0 1 disconnected\n"
        );
        let nodes = TopologyView::from_nodes(&text).unwrap();
        let slots_reply = Value::Array(vec![Value::Array(vec![
            Value::Integer(0),
            Value::Integer(16383),
            Value::Array(vec![
                Value::Bulk(b"10.0.0.1".to_vec()),
                Value::Integer(7000),
                Value::Bulk(R1.as_bytes().to_vec()),
            ]),
        ])]);
        let mut view = TopologyView::from_slots(&slots_reply).unwrap();
        view.merge_nodes(&nodes);
        assert_eq!(layout(&view), vec![(vec![range(0, 16383)], vec![R1, R4])]);
        assert_eq!(view.node(&id(R4)).unwrap().health, NodeHealth::Failed);
    }

    #[test]
    fn a_failed_primary_beside_a_promoted_one_is_not_the_shards_primary() {
        // The failed old primary's id sorts first: health decides before the id.
        let (old, new) = (R4, R1);
        assert!(old < new);
        let mut shard = Shard {
            slots: vec![range(0, 5460)],
            nodes: vec![
                TopoNode::new(id(new), NodeRole::Primary, NodeHealth::Online),
                TopoNode::new(id(old), NodeRole::Primary, NodeHealth::Failed),
            ],
        };
        // As recorded before the nodes were ordered by health: the failed one first.
        shard.nodes.reverse();
        assert_eq!(shard.primary().map(|p| &p.id), Some(&id(new)));
        shard.normalise();
        assert_eq!(shard.nodes[0].id, id(new));
        assert_eq!(shard.primary().map(|p| &p.id), Some(&id(new)));
        // Before the failover, the failed primary alone is still the shard's primary.
        let mut alone = Shard {
            slots: vec![range(0, 5460)],
            nodes: vec![TopoNode::new(
                id(old),
                NodeRole::Primary,
                NodeHealth::Failed,
            )],
        };
        alone.normalise();
        assert_eq!(alone.primary().map(|p| &p.id), Some(&id(old)));
    }

    #[test]
    fn when_two_shards_claim_a_slot_the_later_one_wins() {
        let node = |text: &str| TopoNode::new(id(text), NodeRole::Primary, NodeHealth::Online);
        let view = TopologyView {
            source: TopologySource::Shards,
            myself: None,
            shards: vec![
                Shard {
                    slots: vec![range(0, 10)],
                    nodes: vec![node(R1)],
                },
                Shard {
                    slots: vec![range(5, 5)],
                    nodes: vec![node(R2)],
                },
            ],
            migrating: vec![],
            importing: vec![],
        };
        let all = owners(&view);
        assert_eq!(all.len(), 16384);
        assert_eq!(all[4], Some(id(R1)));
        assert_eq!(all[5], Some(id(R2)));
        assert_eq!(view.owner_of(slot(5)), Some(&id(R2)));
        assert_eq!(view.owner_of(slot(6)), Some(&id(R1)));
        assert_eq!(view.owner_of(slot(11)), None);
        assert_eq!(view.assigned_slots(), 11);
    }

    #[test]
    fn json_is_compact_and_round_trips() {
        let mut view = TopologyView::from_shards(&resp(REDIS_SHARDS_RESP2)).unwrap();
        let json = serde_json::to_string(&view).unwrap();
        assert!(json.starts_with(r#"{"source":"shards","shards":[{"slots":[[0,5460]],"nodes":[{"id":"6901d2f27ca20a78dff17f496b958368683aab1e","addr":"127.0.0.1:21001","role":"primary","health":"online"}"#), "{json}");
        assert!(!json.contains("flags") && !json.contains("migrating") && !json.contains("null"));
        assert_eq!(serde_json::from_str::<TopologyView>(&json).unwrap(), view);

        view.merge_nodes(&TopologyView::from_nodes(REDIS_NODES_MIGRATING).unwrap());
        let json = serde_json::to_string(&view).unwrap();
        assert!(json.contains(
            r#""migrating":[{"slot":42,"peer":"54af685f18c0ef0d0a26240a6be0c01d5795e658"}]"#
        ));
        assert!(json.contains(r#""flags":["myself","master"]"#));
        assert_eq!(serde_json::from_str::<TopologyView>(&json).unwrap(), view);
    }
}
