//! One node's view of the cluster, normalised from `CLUSTER SHARDS`, `CLUSTER SLOTS` or
//! `CLUSTER NODES`.
//!
//! The view holds only what describes the topology: who owns which slots, who replicates whom,
//! addresses, health and flags. Counters that move on every poll (replication offsets, the
//! `ping_sent` / `pong_recv` times of `CLUSTER NODES`) are dropped, and shards, nodes and slot
//! ranges are put in a canonical order (servers list them in hash-table order, which changes when
//! a node joins), so two views compare equal with `==` exactly when the topology is the same.
//!
//! Typical use: parse `CLUSTER NODES` (the only source of the node's own id, its flags and the
//! slots it is migrating or importing) and `CLUSTER SHARDS` (endpoints, health), then
//! [`TopologyView::merge_nodes`] and [`TopologyView::fill_own_address`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::node::{NodeAddr, NodeId};
use crate::resp::Value;
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

/// Whether a node serves slots or replicates a node that does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeRole {
    /// A primary (`master`).
    Primary,
    /// A replica (`slave`).
    Replica,
}

impl NodeRole {
    /// The role named `text` (`master`, `primary`, `slave` or `replica`, any case).
    pub fn parse(text: &str) -> Option<NodeRole> {
        match text.to_ascii_lowercase().as_str() {
            "master" | "primary" => Some(NodeRole::Primary),
            "slave" | "replica" => Some(NodeRole::Replica),
            _ => None,
        }
    }
}

/// A node's health as the reporting node sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeHealth {
    /// Reachable (from `CLUSTER NODES`: not flagged `fail`; a mere `fail?` suspicion stays here).
    Online,
    /// Agreed failed by the cluster (`fail` flag; `health: fail` in `CLUSTER SHARDS`).
    Failed,
    /// A replica still loading its initial copy (`CLUSTER SHARDS` only).
    Loading,
    /// Not reported (`CLUSTER SLOTS`), or a value this parser does not know.
    Unknown,
}

impl NodeHealth {
    /// The health named by `CLUSTER SHARDS` (`online`, `fail` or `failed`, `loading`).
    pub fn parse(text: &str) -> NodeHealth {
        match text.to_ascii_lowercase().as_str() {
            "online" => NodeHealth::Online,
            "fail" | "failed" => NodeHealth::Failed,
            "loading" => NodeHealth::Loading,
            _ => NodeHealth::Unknown,
        }
    }
}

/// One node as another node sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopoNode {
    /// Cluster node id.
    pub id: NodeId,
    /// Where clients reach it: the reported endpoint (or IP) and port; `None` if the server does
    /// not know (empty IP, `?`, port 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<NodeAddr>,
    /// Announced hostname (`cluster-announce-hostname`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// TLS port, if reported separately (`tls-port` in `CLUSTER SHARDS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_port: Option<u16>,
    /// Primary or replica.
    pub role: NodeRole,
    /// Health.
    pub health: NodeHealth,
    /// Flags from `CLUSTER NODES` as printed (`myself`, `master`, `slave`, `fail?`, `fail`,
    /// `handshake`, `noaddr`, `nofailover`, `noflags`, …); empty from the other commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// For a replica, the primary it replicates: from `CLUSTER NODES`, or else the primary of
    /// the shard `CLUSTER SHARDS` / `CLUSTER SLOTS` lists it in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_id: Option<NodeId>,
    /// Configuration epoch (`CLUSTER NODES`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_epoch: Option<u64>,
    /// Whether the cluster bus link to it is up (`CLUSTER NODES` `link-state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_connected: Option<bool>,
}

impl TopoNode {
    fn new(id: NodeId, role: NodeRole, health: NodeHealth) -> TopoNode {
        TopoNode {
            id,
            addr: None,
            hostname: None,
            tls_port: None,
            role,
            health,
            flags: Vec::new(),
            primary_id: None,
            config_epoch: None,
            link_connected: None,
        }
    }

    /// The address to connect to: the reported address, with the TLS port in place of the plain
    /// one when `tls` is set and the node reports a TLS port.
    pub fn poll_addr(&self, tls: bool) -> Option<NodeAddr> {
        let addr = self.addr.as_ref()?;
        match (tls, self.tls_port) {
            (true, Some(p)) => NodeAddr::new(addr.host(), p),
            _ => Some(addr.clone()),
        }
    }

    /// Whether `CLUSTER NODES` printed `flag` for this node.
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
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
    /// The shard's primary, if it has one.
    pub fn primary(&self) -> Option<&TopoNode> {
        self.nodes.first().filter(|n| n.role == NodeRole::Primary)
    }

    /// Whether the shard serves `slot`.
    pub fn contains(&self, slot: Slot) -> bool {
        self.slots.iter().any(|r| r.contains(slot))
    }

    fn normalise(&mut self) {
        self.slots = SlotRange::coalesce(self.slots.iter().flat_map(|r| r.slots()));
        self.nodes.sort_by(|a, b| node_order(a).cmp(&node_order(b)));
    }

    fn sort_key(&self) -> (u32, Option<&NodeId>) {
        let first = self
            .slots
            .first()
            .map_or(u32::from(SLOT_COUNT), |r| u32::from(r.start().get()));
        (first, self.nodes.first().map(|n| &n.id))
    }
}

/// Primaries before replicas, then by id.
fn node_order(node: &TopoNode) -> (bool, &NodeId) {
    (node.role != NodeRole::Primary, &node.id)
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

/// Why a cluster reply could not be read as a topology.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// The server answered with an error instead of a topology.
    #[error("{command}: the server replied with an error: {message}")]
    ErrorReply {
        /// The command.
        command: &'static str,
        /// The error text.
        message: String,
    },
    /// A part of the reply has the wrong type or size.
    #[error("{context}: expected {expected}, got {got}")]
    Shape {
        /// Where in the reply.
        context: String,
        /// What was expected.
        expected: &'static str,
        /// What came.
        got: String,
    },
    /// A required field is missing.
    #[error("{context}: missing `{field}`")]
    MissingField {
        /// Where in the reply.
        context: String,
        /// The field.
        field: &'static str,
    },
    /// A field has a value out of range or of the wrong form.
    #[error("{context}: bad {field} `{value}`")]
    BadValue {
        /// Where in the reply.
        context: String,
        /// The field.
        field: &'static str,
        /// The value as received.
        value: String,
    },
    /// A line of `CLUSTER NODES` is malformed. Line numbers count from 1.
    #[error("CLUSTER NODES line {line}: {reason}: `{text}`")]
    NodesLine {
        /// Line number.
        line: usize,
        /// What is wrong.
        reason: String,
        /// The line.
        text: String,
    },
}

impl TopologyView {
    /// Reads a `CLUSTER SHARDS` reply, RESP2 (flat key/value arrays) or RESP3 (maps).
    ///
    /// Each shard is `slots` (a flat list `[start, end, start, end, …]`) and `nodes`; a node's
    /// address is its `endpoint`, or else its `ip` (either may be empty, or `?` when
    /// `cluster-preferred-endpoint-type` is `hostname` and no hostname is set), with its `port`,
    /// or else its `tls-port`. Primaries without slots are shards with empty `slots`.
    pub fn from_shards(reply: &Value) -> Result<TopologyView, TopologyError> {
        const COMMAND: &str = "CLUSTER SHARDS";
        let items = top_level(reply, COMMAND)?;
        let mut shards = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let context = format!("{COMMAND} shard {i}");
            let mut shard = Shard {
                slots: Vec::new(),
                nodes: Vec::new(),
            };
            for (key, value) in pairs(item, &context)? {
                match key.as_text().as_deref() {
                    Some("slots") => shard.slots = flat_ranges(value, &context)?,
                    Some("nodes") => {
                        for (j, node) in array(value, &context)?.iter().enumerate() {
                            shard
                                .nodes
                                .push(shards_node(node, &format!("{context} node {j}"))?);
                        }
                    }
                    _ => {}
                }
            }
            shards.push(shard);
        }
        let mut view = TopologyView::with_shards(TopologySource::Shards, shards);
        view.link_replicas_to_shard_primary();
        view.normalise();
        Ok(view)
    }

    /// Reads a `CLUSTER SLOTS` reply: `[[start, end, [ip, port, id, {meta}], replica…], …]`,
    /// grouping the ranges by primary id into shards.
    ///
    /// The first element of a node is the preferred endpoint; if it is empty or `?`, the `ip` of
    /// the metadata (Redis 7+) is used. `CLUSTER SLOTS` lists neither primaries without slots nor
    /// failed replicas, and reports no health: nodes are [`NodeHealth::Unknown`].
    pub fn from_slots(reply: &Value) -> Result<TopologyView, TopologyError> {
        const COMMAND: &str = "CLUSTER SLOTS";
        let items = top_level(reply, COMMAND)?;
        let mut by_primary: BTreeMap<NodeId, Shard> = BTreeMap::new();
        for (i, item) in items.iter().enumerate() {
            let context = format!("{COMMAND} entry {i}");
            let parts = array(item, &context)?;
            let [start, end, primary, replicas @ ..] = parts else {
                return Err(TopologyError::Shape {
                    context,
                    expected: "[start, end, primary, replica...]",
                    got: item.to_string(),
                });
            };
            let range = range(start, end, &context)?;
            let primary = slots_node(primary, NodeRole::Primary, &format!("{context} primary"))?;
            let shard = by_primary
                .entry(primary.id.clone())
                .or_insert_with(|| Shard {
                    slots: Vec::new(),
                    nodes: vec![primary],
                });
            shard.slots.push(range);
            for (j, replica) in replicas.iter().enumerate() {
                let replica = slots_node(
                    replica,
                    NodeRole::Replica,
                    &format!("{context} replica {j}"),
                )?;
                if !shard.nodes.iter().any(|n| n.id == replica.id) {
                    shard.nodes.push(replica);
                }
            }
        }
        let mut view =
            TopologyView::with_shards(TopologySource::Slots, by_primary.into_values().collect());
        view.link_replicas_to_shard_primary();
        view.normalise();
        Ok(view)
    }

    /// Reads the text of `CLUSTER NODES`: one line per node,
    /// `<id> <ip:port@cport[,hostname]> <flags> <primary|-> <ping_sent> <pong_recv> <config_epoch>
    /// <link_state> <slot>…`.
    ///
    /// Slots are `0-8191` or `42`; on the reporting node's own line, `[42->-<id>]` is a slot
    /// migrating to `<id>` and `[42-<-<id>]` one importing from `<id>`. The IP may be empty
    /// (`:7000@17000`, a node that has not yet learnt its own address) and the port 0 (`noaddr`):
    /// the address is then `None`. Each primary makes a shard with its replicas, slotless primaries
    /// included; a node flagged neither `master` nor `slave` (a `handshake` in progress) counts
    /// as a replica if it names a primary, else as a primary. `ping_sent` and `pong_recv` are
    /// ignored.
    pub fn from_nodes(text: &str) -> Result<TopologyView, TopologyError> {
        let mut myself = None;
        let mut migrating = Vec::new();
        let mut importing = Vec::new();
        let mut primaries: Vec<(TopoNode, Vec<SlotRange>)> = Vec::new();
        let mut replicas: Vec<(TopoNode, Vec<SlotRange>)> = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let fail = |reason: String| TopologyError::NodesLine {
                line: index + 1,
                reason,
                text: line.to_owned(),
            };
            let parsed = nodes_line(line).map_err(fail)?;
            if parsed.node.has_flag("myself") {
                myself = Some(parsed.node.id.clone());
            }
            migrating.extend(parsed.migrating);
            importing.extend(parsed.importing);
            match parsed.node.role {
                NodeRole::Primary => primaries.push((parsed.node, parsed.slots)),
                NodeRole::Replica => replicas.push((parsed.node, parsed.slots)),
            }
        }
        let mut shards: BTreeMap<NodeId, Shard> = primaries
            .into_iter()
            .map(|(node, slots)| {
                (
                    node.id.clone(),
                    Shard {
                        slots,
                        nodes: vec![node],
                    },
                )
            })
            .collect();
        for (node, slots) in replicas {
            let key = node.primary_id.clone().unwrap_or_else(|| node.id.clone());
            let shard = shards.entry(key).or_insert_with(|| Shard {
                slots: Vec::new(),
                nodes: Vec::new(),
            });
            shard.slots.extend(slots);
            shard.nodes.push(node);
        }
        let mut view =
            TopologyView::with_shards(TopologySource::Nodes, shards.into_values().collect());
        view.myself = myself;
        view.migrating = migrating;
        view.importing = importing;
        view.normalise();
        Ok(view)
    }

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

    /// The primary of the shard serving `slot`; if several shards claim it, the later one in
    /// [`shards`](Self::shards) (as [`slot_owners`](Self::slot_owners)).
    pub fn owner_of(&self, slot: Slot) -> Option<&NodeId> {
        self.shards
            .iter()
            .rev()
            .filter(|s| s.contains(slot))
            .find_map(|s| s.primary())
            .map(|p| &p.id)
    }

    /// The owner of every slot, indexed by slot number (length 16384): the primary of the shard
    /// serving it, `None` if no shard does. If two shards claim a slot (views taken mid-failover
    /// can), the later one in [`shards`](Self::shards) wins. Shards without a primary own nothing.
    pub fn slot_owners(&self) -> Vec<Option<NodeId>> {
        let mut owners = vec![None; usize::from(SLOT_COUNT)];
        for shard in &self.shards {
            let Some(primary) = shard.primary() else {
                continue;
            };
            for range in &shard.slots {
                for slot in range.slots() {
                    owners[usize::from(slot.get())] = Some(primary.id.clone());
                }
            }
        }
        owners
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

    fn with_shards(source: TopologySource, shards: Vec<Shard>) -> TopologyView {
        TopologyView {
            source,
            myself: None,
            shards,
            migrating: Vec::new(),
            importing: Vec::new(),
        }
    }

    /// Replicas listed in a shard replicate its primary.
    fn link_replicas_to_shard_primary(&mut self) {
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
    fn normalise(&mut self) {
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

/// The elements of the top-level reply array, or the error it is.
fn top_level<'a>(reply: &'a Value, command: &'static str) -> Result<&'a [Value], TopologyError> {
    if let Value::Error(message) = reply {
        return Err(TopologyError::ErrorReply {
            command,
            message: message.clone(),
        });
    }
    array(reply, command)
}

fn array<'a>(value: &'a Value, context: &str) -> Result<&'a [Value], TopologyError> {
    value.as_array().ok_or_else(|| TopologyError::Shape {
        context: context.to_owned(),
        expected: "an array",
        got: value.to_string(),
    })
}

fn pairs<'a>(
    value: &'a Value,
    context: &str,
) -> Result<Vec<(&'a Value, &'a Value)>, TopologyError> {
    value.as_pairs().ok_or_else(|| TopologyError::Shape {
        context: context.to_owned(),
        expected: "a map or key/value array",
        got: value.to_string(),
    })
}

fn slot(value: &Value, context: &str) -> Result<Slot, TopologyError> {
    value
        .as_int()
        .and_then(|n| Slot::try_from(n).ok())
        .ok_or_else(|| TopologyError::BadValue {
            context: context.to_owned(),
            field: "slot",
            value: value.to_string(),
        })
}

fn range(start: &Value, end: &Value, context: &str) -> Result<SlotRange, TopologyError> {
    let (start, end) = (slot(start, context)?, slot(end, context)?);
    SlotRange::new(start, end).ok_or_else(|| TopologyError::BadValue {
        context: context.to_owned(),
        field: "slot range",
        value: format!("{start}-{end}"),
    })
}

/// A flat `[start, end, start, end, …]` list of `CLUSTER SHARDS`.
fn flat_ranges(value: &Value, context: &str) -> Result<Vec<SlotRange>, TopologyError> {
    let items = array(value, context)?;
    if items.len() % 2 != 0 {
        return Err(TopologyError::Shape {
            context: context.to_owned(),
            expected: "an even number of slot bounds",
            got: format!("{} bounds", items.len()),
        });
    }
    items
        .chunks_exact(2)
        .map(|pair| range(&pair[0], &pair[1], context))
        .collect()
}

/// A port number; `None` for 0 (not listening).
fn port(value: &Value, context: &str, field: &'static str) -> Result<Option<u16>, TopologyError> {
    value
        .as_int()
        .and_then(|n| u16::try_from(n).ok())
        .map(|p| (p != 0).then_some(p))
        .ok_or_else(|| TopologyError::BadValue {
            context: context.to_owned(),
            field,
            value: value.to_string(),
        })
}

/// `text` unless it is empty or `?` (the server's "unknown endpoint").
fn known_host(text: Option<String>) -> Option<String> {
    text.filter(|h| !h.is_empty() && h != "?")
}

fn shards_node(value: &Value, context: &str) -> Result<TopoNode, TopologyError> {
    let mut id = None;
    let mut role = None;
    let mut health = NodeHealth::Unknown;
    let (mut endpoint, mut ip, mut hostname) = (None, None, None);
    let (mut plain_port, mut tls_port) = (None, None);
    for (key, value) in pairs(value, context)? {
        match key.as_text().as_deref() {
            Some("id") => id = value.as_text().and_then(NodeId::new),
            Some("port") => plain_port = port(value, context, "port")?,
            Some("tls-port") => tls_port = port(value, context, "tls-port")?,
            Some("ip") => ip = known_host(value.as_text()),
            Some("endpoint") => endpoint = known_host(value.as_text()),
            Some("hostname") => hostname = value.as_text().filter(|h| !h.is_empty()),
            Some("role") => {
                let text = value.as_text().unwrap_or_default();
                role = Some(
                    NodeRole::parse(&text).ok_or_else(|| TopologyError::BadValue {
                        context: context.to_owned(),
                        field: "role",
                        value: value.to_string(),
                    })?,
                );
            }
            Some("health") => health = NodeHealth::parse(&value.as_text().unwrap_or_default()),
            _ => {}
        }
    }
    let missing = |field| TopologyError::MissingField {
        context: context.to_owned(),
        field,
    };
    let mut node = TopoNode::new(
        id.ok_or_else(|| missing("id"))?,
        role.ok_or_else(|| missing("role"))?,
        health,
    );
    node.addr = endpoint
        .or(ip)
        .zip(plain_port.or(tls_port))
        .and_then(|(host, port)| NodeAddr::new(host, port));
    node.hostname = hostname;
    node.tls_port = tls_port;
    Ok(node)
}

fn slots_node(value: &Value, role: NodeRole, context: &str) -> Result<TopoNode, TopologyError> {
    let parts = array(value, context)?;
    let [host, port_value, rest @ ..] = parts else {
        return Err(TopologyError::Shape {
            context: context.to_owned(),
            expected: "[ip, port, id, metadata]",
            got: value.to_string(),
        });
    };
    let id = rest
        .first()
        .and_then(Value::as_text)
        .and_then(NodeId::new)
        .ok_or_else(|| TopologyError::MissingField {
            context: context.to_owned(),
            field: "id",
        })?;
    let (mut meta_ip, mut hostname) = (None, None);
    if let Some(meta) = rest.get(1) {
        for (key, value) in pairs(meta, context)? {
            match key.as_text().as_deref() {
                Some("ip") => meta_ip = known_host(value.as_text()),
                Some("hostname") => hostname = value.as_text().filter(|h| !h.is_empty()),
                _ => {}
            }
        }
    }
    let mut node = TopoNode::new(id, role, NodeHealth::Unknown);
    node.addr = known_host(host.as_text())
        .or(meta_ip)
        .zip(port(port_value, context, "port")?)
        .and_then(|(host, port)| NodeAddr::new(host, port));
    node.hostname = hostname;
    Ok(node)
}

/// One parsed line of `CLUSTER NODES`.
struct NodesLine {
    node: TopoNode,
    slots: Vec<SlotRange>,
    migrating: Vec<SlotMigration>,
    importing: Vec<SlotMigration>,
}

fn nodes_line(line: &str) -> Result<NodesLine, String> {
    let fields: Vec<&str> = line.split_ascii_whitespace().collect();
    let [id, address, flags, primary, _ping_sent, _pong_recv, epoch, link, slot_fields @ ..] =
        fields.as_slice()
    else {
        return Err(format!("{} fields, expected at least 8", fields.len()));
    };
    let id = NodeId::new(*id).ok_or("empty node id")?;
    let flags: Vec<String> = flags
        .split(',')
        .filter(|f| !f.is_empty())
        .map(str::to_owned)
        .collect();
    let primary_id = match *primary {
        "-" => None,
        other => NodeId::new(other),
    };
    let role = flags
        .iter()
        .find_map(|f| NodeRole::parse(f))
        .unwrap_or(if primary_id.is_some() {
            NodeRole::Replica
        } else {
            NodeRole::Primary
        });
    let health = if flags.iter().any(|f| f == "fail") {
        NodeHealth::Failed
    } else {
        NodeHealth::Online
    };
    let mut node = TopoNode::new(id, role, health);
    parse_address(address, &mut node)?;
    node.flags = flags;
    node.primary_id = primary_id;
    node.config_epoch = Some(
        epoch
            .parse()
            .map_err(|_| format!("bad config epoch `{epoch}`"))?,
    );
    node.link_connected = Some(match *link {
        "connected" => true,
        "disconnected" => false,
        other => return Err(format!("bad link state `{other}`")),
    });
    let mut parsed = NodesLine {
        node,
        slots: Vec::new(),
        migrating: Vec::new(),
        importing: Vec::new(),
    };
    for field in slot_fields {
        if let Some(inner) = field.strip_prefix('[').and_then(|f| f.strip_suffix(']')) {
            let (slot_text, peer, list) = if let Some((s, p)) = inner.split_once("->-") {
                (s, p, &mut parsed.migrating)
            } else if let Some((s, p)) = inner.split_once("-<-") {
                (s, p, &mut parsed.importing)
            } else {
                return Err(format!("bad migration `{field}`"));
            };
            let slot = nodes_slot(slot_text)?;
            let peer = NodeId::new(peer).ok_or_else(|| format!("bad migration `{field}`"))?;
            list.push(SlotMigration { slot, peer });
        } else {
            let range = match field.split_once('-') {
                Some((start, end)) => SlotRange::new(nodes_slot(start)?, nodes_slot(end)?),
                None => Some(SlotRange::single(nodes_slot(field)?)),
            };
            parsed
                .slots
                .push(range.ok_or_else(|| format!("bad slot range `{field}`"))?);
        }
    }
    Ok(parsed)
}

fn nodes_slot(text: &str) -> Result<Slot, String> {
    text.parse::<u16>()
        .ok()
        .and_then(Slot::new)
        .ok_or_else(|| format!("bad slot `{text}`"))
}

/// `ip:port@cport[,hostname][,key=value…]` into the node's address, hostname and TLS port.
fn parse_address(field: &str, node: &mut TopoNode) -> Result<(), String> {
    let mut parts = field.split(',');
    let endpoint = parts.next().unwrap_or_default();
    let host_port = endpoint.split_once('@').map_or(endpoint, |(hp, _)| hp);
    let (host, port) = host_port
        .rsplit_once(':')
        .ok_or_else(|| format!("address `{field}` has no port"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("address `{field}` has a bad port"))?;
    node.addr = if port == 0 {
        None
    } else {
        NodeAddr::new(host, port)
    };
    for extra in parts {
        match extra.split_once('=') {
            Some(("tls-port", value)) => {
                node.tls_port = value.parse().ok().filter(|&p: &u16| p != 0);
            }
            Some(_) => {}
            None if !extra.is_empty() && node.hostname.is_none() => {
                node.hostname = Some(extra.to_owned());
            }
            None => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::parse;

    const R1: &str = "6901d2f27ca20a78dff17f496b958368683aab1e"; // Redis 21001
    const R2: &str = "54af685f18c0ef0d0a26240a6be0c01d5795e658"; // Redis 21002
    const R3: &str = "e45852feb38a885187a341f6515b7bc739776c37"; // Redis 21003
    const R4: &str = "5019d6f94c79616dc8c3a4729d1b1dd7af86a335"; // Redis 21004, replica of R1
    const R6: &str = "5da04f504145c92d300c302f9d4dd5f5dc385436"; // Redis 21006, no slots
    const V1: &str = "09bd939c8b386c78006c0b0968e7f54ae3e27d19"; // Valkey 21011
    const V2: &str = "acbf5459808accdca33575614a0d83a9136b57aa"; // Valkey 21012
    const V3: &str = "af6a8ab7d493b523956680fea37528075a5e90c7"; // Valkey 21013
    const V4: &str = "8116309cf79874effb86ba5414418b74e084852c"; // Valkey 21014, replica of V1
    const V6: &str = "0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1"; // Valkey 21016, no slots

    // Redis 7.0.15, `CLUSTER SHARDS` (RESP2) at 127.0.0.1:21001: three shards plus a
    // slotless primary (21006); 21002 announces hostname node2.example.
    const REDIS_SHARDS_RESP2: &[u8] = b"\
    *4\r\n*4\r\n$5\r\nslots\r\n*2\r\n:10923\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\n\
    id\r\n$40\r\ne45852feb38a885187a341f6515b7bc739776c37\r\n$4\r\nport\r\n:21003\r\n$2\r\n\
    ip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
    $18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n\
    *0\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n$40\r\n\
    5da04f504145c92d300c302f9d4dd5f5dc385436\r\n$4\r\nport\r\n:21006\r\n$2\r\nip\r\n$9\r\n\
    127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
    replication-offset\r\n:14\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n*2\r\n\
    :5461\r\n:10922\r\n$5\r\nnodes\r\n*1\r\n*16\r\n$2\r\nid\r\n$40\r\n\
    54af685f18c0ef0d0a26240a6be0c01d5795e658\r\n$4\r\nport\r\n:21002\r\n$2\r\nip\r\n$9\r\n\
    127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$8\r\nhostname\r\n$13\r\nnode2.example\r\n\
    $4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\n\
    online\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:5460\r\n$5\r\nnodes\r\n*2\r\n*14\r\n$2\r\nid\r\n\
    $40\r\n6901d2f27ca20a78dff17f496b958368683aab1e\r\n$4\r\nport\r\n:21001\r\n$2\r\nip\r\n\
    $9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
    $18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*14\r\n$2\r\nid\r\n\
    $40\r\n5019d6f94c79616dc8c3a4729d1b1dd7af86a335\r\n$4\r\nport\r\n:21004\r\n$2\r\nip\r\n\
    $9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$7\r\nreplica\r\n\
    $18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n";

    // Redis 7.0.15, `CLUSTER SLOTS` (RESP2) at 127.0.0.1:21001, same moment as REDIS_SHARDS_RESP2.
    const REDIS_SLOTS_RESP2: &[u8] = b"\
    *3\r\n*4\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:21001\r\n$40\r\n\
    6901d2f27ca20a78dff17f496b958368683aab1e\r\n*0\r\n*4\r\n$9\r\n127.0.0.1\r\n:21004\r\n$40\r\n\
    5019d6f94c79616dc8c3a4729d1b1dd7af86a335\r\n*0\r\n*3\r\n:5461\r\n:10922\r\n*4\r\n$9\r\n\
    127.0.0.1\r\n:21002\r\n$40\r\n54af685f18c0ef0d0a26240a6be0c01d5795e658\r\n*2\r\n$8\r\n\
    hostname\r\n$13\r\nnode2.example\r\n*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n\
    :21003\r\n$40\r\ne45852feb38a885187a341f6515b7bc739776c37\r\n*0\r\n";

    // Valkey 8.1.8, `CLUSTER SHARDS` (RESP2) at 127.0.0.1:21011, same layout as the Redis cluster.
    const VALKEY_SHARDS_RESP2: &[u8] = b"\
    *4\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:5460\r\n$5\r\nnodes\r\n*2\r\n*14\r\n$2\r\nid\r\n\
    $40\r\n09bd939c8b386c78006c0b0968e7f54ae3e27d19\r\n$4\r\nport\r\n:21011\r\n$2\r\nip\r\n\
    $9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
    $18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*14\r\n$2\r\nid\r\n\
    $40\r\n8116309cf79874effb86ba5414418b74e084852c\r\n$4\r\nport\r\n:21014\r\n$2\r\nip\r\n\
    $9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$7\r\nreplica\r\n\
    $18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n\
    *0\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n$40\r\n\
    0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1\r\n$4\r\nport\r\n:21016\r\n$2\r\nip\r\n$9\r\n\
    127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
    replication-offset\r\n:14\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n*2\r\n\
    :5461\r\n:10922\r\n$5\r\nnodes\r\n*1\r\n*16\r\n$2\r\nid\r\n$40\r\n\
    acbf5459808accdca33575614a0d83a9136b57aa\r\n$4\r\nport\r\n:21012\r\n$2\r\nip\r\n$9\r\n\
    127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$8\r\nhostname\r\n$13\r\nnode2.example\r\n\
    $4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\n\
    online\r\n*4\r\n$5\r\nslots\r\n*2\r\n:10923\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\n\
    id\r\n$40\r\naf6a8ab7d493b523956680fea37528075a5e90c7\r\n$4\r\nport\r\n:21013\r\n$2\r\n\
    ip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
    $18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\nonline\r\n";

    // Valkey 8.1.8, `HELLO 3` then `CLUSTER SHARDS` at 127.0.0.1:21011, right after
    // VALKEY_SHARDS_RESP2
    // (the replication offsets differ).
    const VALKEY_SHARDS_RESP3: &[u8] = b"\
    *4\r\n%2\r\n$5\r\nslots\r\n*2\r\n:0\r\n:5460\r\n$5\r\nnodes\r\n*2\r\n%7\r\n$2\r\nid\r\n\
    $40\r\n09bd939c8b386c78006c0b0968e7f54ae3e27d19\r\n$4\r\nport\r\n:21011\r\n$2\r\nip\r\n\
    $9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
    $18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n%7\r\n$2\r\nid\r\n\
    $40\r\n8116309cf79874effb86ba5414418b74e084852c\r\n$4\r\nport\r\n:21014\r\n$2\r\nip\r\n\
    $9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$7\r\nreplica\r\n\
    $18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n%2\r\n$5\r\nslots\r\n\
    *0\r\n$5\r\nnodes\r\n*1\r\n%7\r\n$2\r\nid\r\n$40\r\n\
    0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1\r\n$4\r\nport\r\n:21016\r\n$2\r\nip\r\n$9\r\n\
    127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
    replication-offset\r\n:14\r\n$6\r\nhealth\r\n$6\r\nonline\r\n%2\r\n$5\r\nslots\r\n*2\r\n\
    :5461\r\n:10922\r\n$5\r\nnodes\r\n*1\r\n%8\r\n$2\r\nid\r\n$40\r\n\
    acbf5459808accdca33575614a0d83a9136b57aa\r\n$4\r\nport\r\n:21012\r\n$2\r\nip\r\n$9\r\n\
    127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$8\r\nhostname\r\n$13\r\nnode2.example\r\n\
    $4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\n\
    online\r\n%2\r\n$5\r\nslots\r\n*2\r\n:10923\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n%7\r\n$2\r\n\
    id\r\n$40\r\naf6a8ab7d493b523956680fea37528075a5e90c7\r\n$4\r\nport\r\n:21013\r\n$2\r\n\
    ip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
    $18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\nonline\r\n";

    // Valkey 8.1.8, `HELLO 3` then `CLUSTER SLOTS` at 127.0.0.1:21011 (metadata as maps).
    const VALKEY_SLOTS_RESP3: &[u8] = b"\
    *3\r\n*4\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:21011\r\n$40\r\n\
    09bd939c8b386c78006c0b0968e7f54ae3e27d19\r\n%0\r\n*4\r\n$9\r\n127.0.0.1\r\n:21014\r\n$40\r\n\
    8116309cf79874effb86ba5414418b74e084852c\r\n%0\r\n*3\r\n:5461\r\n:10922\r\n*4\r\n$9\r\n\
    127.0.0.1\r\n:21012\r\n$40\r\nacbf5459808accdca33575614a0d83a9136b57aa\r\n%1\r\n$8\r\n\
    hostname\r\n$13\r\nnode2.example\r\n*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n\
    :21013\r\n$40\r\naf6a8ab7d493b523956680fea37528075a5e90c7\r\n%0\r\n";

    // Redis 7.0.15, `CLUSTER SHARDS` of a node alone in its cluster (127.0.0.1:21005, slots 0-99):
    // it does not know its own IP yet, so `ip` and `endpoint` are empty.
    const REDIS_LONE_SHARDS: &[u8] = b"\
    *1\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:99\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n\
    $40\r\n4cf999639a7f9fc8e0271c1ebc9649e079888e9b\r\n$4\r\nport\r\n:21005\r\n$2\r\nip\r\n\
    $0\r\n\r\n$8\r\nendpoint\r\n$0\r\n\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
    replication-offset\r\n:14\r\n$6\r\nhealth\r\n$6\r\nonline\r\n";

    // Valkey 8.1.8, `CLUSTER SLOTS` of a lone node (127.0.0.1:21015): empty IP.
    const VALKEY_LONE_SLOTS: &[u8] = b"\
    *1\r\n*3\r\n:0\r\n:99\r\n*4\r\n$0\r\n\r\n:21015\r\n$40\r\n\
    b28509c801e9de1686b46bd627d1b415cbc02388\r\n*0\r\n";

    // Redis 7.0.15, `CLUSTER SHARDS` at 127.0.0.1:21001 after 21003 (slots 10923-16383) was killed.
    const REDIS_SHARDS_FAILED: &[u8] = b"\
    *4\r\n*4\r\n$5\r\nslots\r\n*2\r\n:10923\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\n\
    id\r\n$40\r\ne45852feb38a885187a341f6515b7bc739776c37\r\n$4\r\nport\r\n:21003\r\n$2\r\n\
    ip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
    $18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$4\r\nfail\r\n*4\r\n$5\r\nslots\r\n*0\r\n\
    $5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n$40\r\n5da04f504145c92d300c302f9d4dd5f5dc385436\r\n\
    $4\r\nport\r\n:21006\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n\
    $4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:14\r\n$6\r\nhealth\r\n$6\r\n\
    online\r\n*4\r\n$5\r\nslots\r\n*2\r\n:5461\r\n:10922\r\n$5\r\nnodes\r\n*1\r\n*16\r\n$2\r\n\
    id\r\n$40\r\n54af685f18c0ef0d0a26240a6be0c01d5795e658\r\n$4\r\nport\r\n:21002\r\n$2\r\n\
    ip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$8\r\nhostname\r\n$13\r\n\
    node2.example\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\n\
    health\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:5460\r\n$5\r\nnodes\r\n*2\r\n\
    *14\r\n$2\r\nid\r\n$40\r\n6901d2f27ca20a78dff17f496b958368683aab1e\r\n$4\r\nport\r\n\
    :21001\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n\
    $6\r\nmaster\r\n$18\r\nreplication-offset\r\n:98\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*14\r\n\
    $2\r\nid\r\n$40\r\n5019d6f94c79616dc8c3a4729d1b1dd7af86a335\r\n$4\r\nport\r\n:21004\r\n\
    $2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$7\r\n\
    replica\r\n$18\r\nreplication-offset\r\n:98\r\n$6\r\nhealth\r\n$6\r\nonline\r\n";

    // Valkey 8.1.8, `CLUSTER SLOTS` at 127.0.0.1:21012 with cluster-preferred-endpoint-type
    // hostname: nodes without a hostname show `?`, their IP is in the metadata.
    const VALKEY_SLOTS_HOSTNAME: &[u8] = b"\
    *3\r\n*4\r\n:0\r\n:5460\r\n*4\r\n$1\r\n?\r\n:21011\r\n$40\r\n\
    09bd939c8b386c78006c0b0968e7f54ae3e27d19\r\n*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n*4\r\n\
    $1\r\n?\r\n:21014\r\n$40\r\n8116309cf79874effb86ba5414418b74e084852c\r\n*2\r\n$2\r\nip\r\n\
    $9\r\n127.0.0.1\r\n*3\r\n:5461\r\n:10922\r\n*4\r\n$13\r\nnode2.example\r\n:21012\r\n$40\r\n\
    acbf5459808accdca33575614a0d83a9136b57aa\r\n*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n*3\r\n\
    :10923\r\n:16383\r\n*4\r\n$1\r\n?\r\n:21013\r\n$40\r\n\
    af6a8ab7d493b523956680fea37528075a5e90c7\r\n*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n";

    // Valkey 8.1.8, `CLUSTER SHARDS` at 127.0.0.1:21012 with cluster-preferred-endpoint-type
    // hostname: endpoint `?` or the hostname; 21013 and 21016 have been killed (health fail).
    const VALKEY_SHARDS_HOSTNAME: &[u8] = b"\
    *4\r\n*4\r\n$5\r\nslots\r\n*0\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n$40\r\n\
    0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1\r\n$4\r\nport\r\n:21016\r\n$2\r\nip\r\n$9\r\n\
    127.0.0.1\r\n$8\r\nendpoint\r\n$1\r\n?\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
    replication-offset\r\n:14\r\n$6\r\nhealth\r\n$4\r\nfail\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n\
    :5460\r\n$5\r\nnodes\r\n*2\r\n*14\r\n$2\r\nid\r\n$40\r\n\
    09bd939c8b386c78006c0b0968e7f54ae3e27d19\r\n$4\r\nport\r\n:21011\r\n$2\r\nip\r\n$9\r\n\
    127.0.0.1\r\n$8\r\nendpoint\r\n$1\r\n?\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
    replication-offset\r\n:112\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*14\r\n$2\r\nid\r\n$40\r\n\
    8116309cf79874effb86ba5414418b74e084852c\r\n$4\r\nport\r\n:21014\r\n$2\r\nip\r\n$9\r\n\
    127.0.0.1\r\n$8\r\nendpoint\r\n$1\r\n?\r\n$4\r\nrole\r\n$7\r\nreplica\r\n$18\r\n\
    replication-offset\r\n:112\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n*2\r\n\
    :5461\r\n:10922\r\n$5\r\nnodes\r\n*1\r\n*16\r\n$2\r\nid\r\n$40\r\n\
    acbf5459808accdca33575614a0d83a9136b57aa\r\n$4\r\nport\r\n:21012\r\n$2\r\nip\r\n$9\r\n\
    127.0.0.1\r\n$8\r\nendpoint\r\n$13\r\nnode2.example\r\n$8\r\nhostname\r\n$13\r\n\
    node2.example\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\n\
    health\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n*2\r\n:10923\r\n:16383\r\n$5\r\nnodes\r\n\
    *1\r\n*14\r\n$2\r\nid\r\n$40\r\naf6a8ab7d493b523956680fea37528075a5e90c7\r\n$4\r\nport\r\n\
    :21013\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$1\r\n?\r\n$4\r\nrole\r\n$6\r\n\
    master\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$4\r\nfail\r\n";

    // Redis 7.0.15, `CLUSTER NODES` at 127.0.0.1:21001 (same moment as REDIS_SHARDS_RESP2), after
    // `CLUSTER SETSLOT 42 MIGRATING <21002's id>`.
    const REDIS_NODES_MIGRATING: &str = r#"5019d6f94c79616dc8c3a4729d1b1dd7af86a335 127.0.0.1:21004@31004 slave 6901d2f27ca20a78dff17f496b958368683aab1e 0 1795989113000 1 connected
e45852feb38a885187a341f6515b7bc739776c37 127.0.0.1:21003@31003 master - 0 1795989113114 0 connected 10923-16383
5da04f504145c92d300c302f9d4dd5f5dc385436 127.0.0.1:21006@31006 master - 0 1795989113114 4 connected
54af685f18c0ef0d0a26240a6be0c01d5795e658 127.0.0.1:21002@31002,node2.example master - 0 1795989113114 3 connected 5461-10922
6901d2f27ca20a78dff17f496b958368683aab1e 127.0.0.1:21001@31001 myself,master - 0 1795989112000 1 connected 0-5460 [42->-54af685f18c0ef0d0a26240a6be0c01d5795e658]
"#;

    // Redis 7.0.15, `CLUSTER NODES` at 127.0.0.1:21002, after `CLUSTER SETSLOT 42 IMPORTING
    // <21001's id>`.
    const REDIS_NODES_IMPORTING: &str = r#"e45852feb38a885187a341f6515b7bc739776c37 127.0.0.1:21003@31003 master - 0 1795989113000 0 connected 10923-16383
54af685f18c0ef0d0a26240a6be0c01d5795e658 127.0.0.1:21002@31002,node2.example myself,master - 0 1795989112000 3 connected 5461-10922 [42-<-6901d2f27ca20a78dff17f496b958368683aab1e]
5da04f504145c92d300c302f9d4dd5f5dc385436 127.0.0.1:21006@31006 master - 0 1795989113196 4 connected
6901d2f27ca20a78dff17f496b958368683aab1e 127.0.0.1:21001@31001 master - 0 1795989112893 1 connected 0-5460
5019d6f94c79616dc8c3a4729d1b1dd7af86a335 127.0.0.1:21004@31004 slave 6901d2f27ca20a78dff17f496b958368683aab1e 0 1795989113095 1 connected
"#;

    // Valkey 8.1.8, `CLUSTER NODES` at the replica 127.0.0.1:21014 (note `0 0` ping/pong on its own
    // line).
    const VALKEY_NODES_REPLICA: &str = r#"0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1 127.0.0.1:21016@31016 master - 0 1795989112291 4 connected
09bd939c8b386c78006c0b0968e7f54ae3e27d19 127.0.0.1:21011@31011 master - 0 1795989113197 1 connected 0-5460
af6a8ab7d493b523956680fea37528075a5e90c7 127.0.0.1:21013@31013 master - 0 1795989113093 0 connected 10923-16383
acbf5459808accdca33575614a0d83a9136b57aa 127.0.0.1:21012@31012,node2.example master - 0 1795989112893 2 connected 5461-10922
8116309cf79874effb86ba5414418b74e084852c 127.0.0.1:21014@31014 myself,slave 09bd939c8b386c78006c0b0968e7f54ae3e27d19 0 0 1 connected
"#;

    // Redis 7.0.15, `CLUSTER NODES` at 127.0.0.1:21001 after 21003 was killed (now `fail`) and, 2 s
    // ago,
    // 21006 too (only suspected so far: `fail?`).
    const REDIS_NODES_FAILING: &str = r#"5019d6f94c79616dc8c3a4729d1b1dd7af86a335 127.0.0.1:21004@31004 slave 6901d2f27ca20a78dff17f496b958368683aab1e 0 1795989141113 1 connected
e45852feb38a885187a341f6515b7bc739776c37 127.0.0.1:21003@31003 master,fail - 1795989123061 1795989122055 0 disconnected 10923-16383
5da04f504145c92d300c302f9d4dd5f5dc385436 127.0.0.1:21006@31006 master,fail? - 1795989139097 1795989138091 4 disconnected
54af685f18c0ef0d0a26240a6be0c01d5795e658 127.0.0.1:21002@31002,node2.example master - 0 1795989141113 3 connected 5461-10922
6901d2f27ca20a78dff17f496b958368683aab1e 127.0.0.1:21001@31001 myself,master - 0 1795989141000 1 connected 0-5460 [42->-54af685f18c0ef0d0a26240a6be0c01d5795e658]
"#;

    // Valkey 8.1.8, `CLUSTER NODES` at 127.0.0.1:21012 (importing slot 42) right after
    // `CLUSTER MEET 127.0.0.1 21099` (nothing listens there) with 21013 and 21016 killed.
    const VALKEY_NODES_HANDSHAKE: &str = r#"af6a8ab7d493b523956680fea37528075a5e90c7 127.0.0.1:21013@31013 master,fail - 1795989123071 1795989122066 0 disconnected 10923-16383
8116309cf79874effb86ba5414418b74e084852c 127.0.0.1:21014@31014 slave 09bd939c8b386c78006c0b0968e7f54ae3e27d19 0 1795989148184 1 connected
acbf5459808accdca33575614a0d83a9136b57aa 127.0.0.1:21012@31012,node2.example myself,master - 0 0 2 connected 5461-10922 [42-<-09bd939c8b386c78006c0b0968e7f54ae3e27d19]
09bd939c8b386c78006c0b0968e7f54ae3e27d19 127.0.0.1:21011@31011 master - 0 1795989148083 1 connected 0-5460
8e4003122e13473ff498261d69a3f07ef738a1b1 127.0.0.1:21099@31099 handshake - 0 0 0 disconnected
0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1 127.0.0.1:21016@31016 master,fail - 1795989139111 1795989138104 4 disconnected
"#;

    // Redis 7.0.15, `CLUSTER NODES` of a lone node (127.0.0.1:21005): it does not know its own IP.
    const REDIS_NODES_LONE: &str =
        "4cf999639a7f9fc8e0271c1ebc9649e079888e9b :21005@31005 myself,master - 0 0 0 connected 0-99\n";

    fn resp(bytes: &[u8]) -> Value {
        let (value, used) = parse(bytes).unwrap().unwrap();
        assert_eq!(used, bytes.len(), "fixture holds exactly one reply");
        value
    }

    fn id(text: &str) -> NodeId {
        NodeId::new(text).unwrap()
    }

    fn slot(n: u16) -> Slot {
        Slot::new(n).unwrap()
    }

    fn addr(text: &str) -> NodeAddr {
        text.parse().unwrap()
    }

    fn range(a: u16, b: u16) -> SlotRange {
        SlotRange::new(slot(a), slot(b)).unwrap()
    }

    /// Per shard: its slots and its node ids (primary first).
    fn layout(view: &TopologyView) -> Vec<(Vec<SlotRange>, Vec<&str>)> {
        view.shards
            .iter()
            .map(|s| {
                (
                    s.slots.clone(),
                    s.nodes.iter().map(|n| n.id.as_str()).collect(),
                )
            })
            .collect()
    }

    fn redis_layout() -> Vec<(Vec<SlotRange>, Vec<&'static str>)> {
        vec![
            (vec![range(0, 5460)], vec![R1, R4]),
            (vec![range(5461, 10922)], vec![R2]),
            (vec![range(10923, 16383)], vec![R3]),
            (vec![], vec![R6]),
        ]
    }

    #[test]
    fn reads_redis_7_0_15_shards_resp2_in_canonical_order() {
        let view = TopologyView::from_shards(&resp(REDIS_SHARDS_RESP2)).unwrap();
        assert_eq!(view.source, TopologySource::Shards);
        // The server listed the 10923-16383 shard first; the view orders by first slot.
        assert_eq!(layout(&view), redis_layout());
        assert_eq!(view.myself, None);
        assert!(view.migrating.is_empty() && view.importing.is_empty());

        let primary = view.node(&id(R1)).unwrap();
        assert_eq!(primary.addr, Some(addr("127.0.0.1:21001")));
        assert_eq!(primary.role, NodeRole::Primary);
        assert_eq!(primary.health, NodeHealth::Online);
        assert!(primary.flags.is_empty());
        assert_eq!(primary.config_epoch, None);
        let replica = view.node(&id(R4)).unwrap();
        assert_eq!(replica.role, NodeRole::Replica);
        assert_eq!(replica.primary_id, Some(id(R1)));
        let named = view.node(&id(R2)).unwrap();
        assert_eq!(named.hostname.as_deref(), Some("node2.example"));
        assert_eq!(named.addr, Some(addr("127.0.0.1:21002")));

        assert_eq!(view.assigned_slots(), 16384);
        assert_eq!(view.owner_of(slot(42)), Some(&id(R1)));
        assert_eq!(view.owner_of(Slot::for_key(b"foo")), Some(&id(R3)));
        assert_eq!(view.shards[0].primary().map(|p| p.id.as_str()), Some(R1));
        let addrs: Vec<String> = view.addresses().iter().map(ToString::to_string).collect();
        assert_eq!(
            addrs,
            [
                "127.0.0.1:21001",
                "127.0.0.1:21002",
                "127.0.0.1:21003",
                "127.0.0.1:21004",
                "127.0.0.1:21006"
            ]
        );
    }

    #[test]
    fn shards_resp2_and_resp3_give_equal_views_despite_moving_offsets() {
        // The two replies differ in replication offsets only, which the view does not keep.
        assert_ne!(
            VALKEY_SHARDS_RESP2.len(),
            VALKEY_SHARDS_RESP3.len(),
            "RESP3 uses maps"
        );
        let resp2 = TopologyView::from_shards(&resp(VALKEY_SHARDS_RESP2)).unwrap();
        let resp3 = TopologyView::from_shards(&resp(VALKEY_SHARDS_RESP3)).unwrap();
        assert_eq!(resp2, resp3);
        assert_eq!(
            layout(&resp3),
            vec![
                (vec![range(0, 5460)], vec![V1, V4]),
                (vec![range(5461, 10922)], vec![V2]),
                (vec![range(10923, 16383)], vec![V3]),
                (vec![], vec![V6]),
            ]
        );
    }

    #[test]
    fn reads_redis_7_0_15_slots_grouped_by_primary() {
        let view = TopologyView::from_slots(&resp(REDIS_SLOTS_RESP2)).unwrap();
        assert_eq!(view.source, TopologySource::Slots);
        // CLUSTER SLOTS does not list the slotless primary.
        assert_eq!(layout(&view), redis_layout()[..3].to_vec());
        let replica = view.node(&id(R4)).unwrap();
        assert_eq!(replica.health, NodeHealth::Unknown);
        assert_eq!(replica.primary_id, Some(id(R1)));
        assert_eq!(replica.addr, Some(addr("127.0.0.1:21004")));
        assert_eq!(
            view.node(&id(R2)).unwrap().hostname.as_deref(),
            Some("node2.example")
        );
        let shards = TopologyView::from_shards(&resp(REDIS_SHARDS_RESP2)).unwrap();
        assert_eq!(view.slot_owners(), shards.slot_owners());
    }

    #[test]
    fn reads_valkey_8_1_8_slots_resp3_metadata_maps() {
        let view = TopologyView::from_slots(&resp(VALKEY_SLOTS_RESP3)).unwrap();
        assert_eq!(view.shards.len(), 3);
        assert_eq!(
            view.node(&id(V2)).unwrap().hostname.as_deref(),
            Some("node2.example")
        );
        assert_eq!(view.owner_of(slot(16383)), Some(&id(V3)));
    }

    #[test]
    fn slots_merge_several_ranges_of_one_primary_into_one_shard() {
        let node = |port: i64, id: &str| {
            Value::Array(vec![
                Value::Bulk(b"10.0.0.1".to_vec()),
                Value::Integer(port),
                Value::Bulk(id.as_bytes().to_vec()),
            ])
        };
        let entry = |a: i64, b: i64, primary: Value| {
            Value::Array(vec![Value::Integer(a), Value::Integer(b), primary])
        };
        let reply = Value::Array(vec![
            entry(100, 199, node(7001, R2)),
            entry(0, 99, node(7000, R1)),
            entry(200, 299, node(7000, R1)),
            entry(300, 300, node(7000, R1)),
        ]);
        let view = TopologyView::from_slots(&reply).unwrap();
        assert_eq!(
            layout(&view),
            vec![
                (vec![range(0, 99), range(200, 300)], vec![R1]),
                (vec![range(100, 199)], vec![R2]),
            ]
        );
        assert_eq!(view.assigned_slots(), 301);
    }

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
    fn shards_health_fail_reads_as_failed() {
        let view = TopologyView::from_shards(&resp(REDIS_SHARDS_FAILED)).unwrap();
        assert_eq!(view.node(&id(R3)).unwrap().health, NodeHealth::Failed);
        assert_eq!(view.node(&id(R1)).unwrap().health, NodeHealth::Online);
        assert_eq!(NodeHealth::parse("failed"), NodeHealth::Failed);
        assert_eq!(NodeHealth::parse("loading"), NodeHealth::Loading);
        assert_eq!(NodeHealth::parse("weird"), NodeHealth::Unknown);
    }

    #[test]
    fn unknown_endpoints_fall_back_to_the_ip() {
        // cluster-preferred-endpoint-type hostname: `?` where no hostname is set.
        let slots = TopologyView::from_slots(&resp(VALKEY_SLOTS_HOSTNAME)).unwrap();
        assert_eq!(
            slots.node(&id(V1)).unwrap().addr,
            Some(addr("127.0.0.1:21011"))
        );
        assert_eq!(
            slots.node(&id(V2)).unwrap().addr,
            Some(addr("node2.example:21012"))
        );
        let shards = TopologyView::from_shards(&resp(VALKEY_SHARDS_HOSTNAME)).unwrap();
        assert_eq!(
            shards.node(&id(V4)).unwrap().addr,
            Some(addr("127.0.0.1:21014"))
        );
        assert_eq!(
            shards.node(&id(V2)).unwrap().addr,
            Some(addr("node2.example:21012"))
        );
        assert_eq!(shards.node(&id(V3)).unwrap().health, NodeHealth::Failed);
        assert_eq!(shards.node(&id(V6)).unwrap().health, NodeHealth::Failed);
    }

    #[test]
    fn reads_redis_7_0_15_nodes_with_a_migrating_slot() {
        let view = TopologyView::from_nodes(REDIS_NODES_MIGRATING).unwrap();
        assert_eq!(view.source, TopologySource::Nodes);
        assert_eq!(layout(&view), redis_layout());
        assert_eq!(view.myself, Some(id(R1)));
        assert_eq!(
            view.migrating,
            [SlotMigration {
                slot: slot(42),
                peer: id(R2)
            }]
        );
        assert!(view.importing.is_empty());
        let me = view.node(&id(R1)).unwrap();
        assert_eq!(me.flags, ["myself", "master"]);
        assert_eq!(me.config_epoch, Some(1));
        assert_eq!(me.link_connected, Some(true));
        assert_eq!(me.health, NodeHealth::Online);
        let replica = view.node(&id(R4)).unwrap();
        assert_eq!(replica.role, NodeRole::Replica);
        assert_eq!(replica.primary_id, Some(id(R1)));
        assert_eq!(replica.flags, ["slave"]);
        let named = view.node(&id(R2)).unwrap();
        assert_eq!(named.hostname.as_deref(), Some("node2.example"));
        assert_eq!(named.addr, Some(addr("127.0.0.1:21002")));
        assert_eq!(view.node(&id(R3)).unwrap().config_epoch, Some(0));
        // The migrating slot still belongs to its source until SETSLOT NODE.
        assert_eq!(view.owner_of(slot(42)), Some(&id(R1)));
    }

    #[test]
    fn reads_redis_7_0_15_nodes_with_an_importing_slot() {
        let view = TopologyView::from_nodes(REDIS_NODES_IMPORTING).unwrap();
        assert_eq!(view.myself, Some(id(R2)));
        assert!(view.migrating.is_empty());
        assert_eq!(
            view.importing,
            [SlotMigration {
                slot: slot(42),
                peer: id(R1)
            }]
        );
        assert_eq!(layout(&view), redis_layout());
    }

    #[test]
    fn reads_valkey_8_1_8_nodes_from_a_replica() {
        let view = TopologyView::from_nodes(VALKEY_NODES_REPLICA).unwrap();
        assert_eq!(view.myself, Some(id(V4)));
        let me = view.node(&id(V4)).unwrap();
        assert_eq!(me.role, NodeRole::Replica);
        assert_eq!(me.flags, ["myself", "slave"]);
        assert_eq!(me.primary_id, Some(id(V1)));
        assert_eq!(view.shards[0].nodes[1].id, id(V4));
        assert_eq!(view.assigned_slots(), 16384);
    }

    #[test]
    fn nodes_fail_is_failed_but_suspected_fail_stays_online() {
        let view = TopologyView::from_nodes(REDIS_NODES_FAILING).unwrap();
        let failed = view.node(&id(R3)).unwrap();
        assert_eq!(failed.health, NodeHealth::Failed);
        assert_eq!(failed.flags, ["master", "fail"]);
        assert_eq!(failed.link_connected, Some(false));
        let suspected = view.node(&id(R6)).unwrap();
        assert_eq!(suspected.health, NodeHealth::Online);
        assert!(suspected.has_flag("fail?"));
        // A failed primary still owns its slots until a replica takes over.
        assert_eq!(view.owner_of(slot(16383)), Some(&id(R3)));
    }

    #[test]
    fn nodes_handshake_peer_is_a_slotless_primary_with_its_flag() {
        let view = TopologyView::from_nodes(VALKEY_NODES_HANDSHAKE).unwrap();
        let stranger = view
            .node(&id("8e4003122e13473ff498261d69a3f07ef738a1b1"))
            .unwrap();
        assert_eq!(stranger.role, NodeRole::Primary);
        assert_eq!(stranger.flags, ["handshake"]);
        assert_eq!(stranger.link_connected, Some(false));
        assert_eq!(stranger.addr, Some(addr("127.0.0.1:21099")));
        assert_eq!(view.shards.len(), 5);
        assert_eq!(view.myself, Some(id(V2)));
        assert_eq!(view.importing.len(), 1);
        assert_eq!(view.node(&id(V3)).unwrap().health, NodeHealth::Failed);
    }

    #[test]
    fn nodes_order_of_lines_does_not_matter() {
        let reversed: String = REDIS_NODES_MIGRATING
            .lines()
            .rev()
            .map(|l| format!("{l}\r\n"))
            .collect();
        assert_eq!(
            TopologyView::from_nodes(&reversed).unwrap(),
            TopologyView::from_nodes(REDIS_NODES_MIGRATING).unwrap()
        );
    }

    #[test]
    fn nodes_ignore_ping_and_pong_times() {
        let later = REDIS_NODES_MIGRATING.replace("1795989113114", "1795989999999");
        assert_ne!(later, REDIS_NODES_MIGRATING);
        assert_eq!(
            TopologyView::from_nodes(&later).unwrap(),
            TopologyView::from_nodes(REDIS_NODES_MIGRATING).unwrap()
        );
    }

    #[test]
    fn nodes_addresses_cover_empty_ip_noaddr_ipv6_and_aux_fields() {
        let text = format!(
            "{R1} :7000@17000 myself,master - 0 0 1 connected 0-10\n\
             {R2} :0@0 master,noaddr - 0 0 2 disconnected 11\n\
             {R3} ::1:7002@17002 master - 0 0 3 connected\n\
             {R4} 10.0.0.4:7003@17003,,tls-port=7443,shard-id=ab slave {R1} 0 0 1 connected\n\
             {R6} 10.0.0.6:7004 master,nofailover - 0 0 5 connected\n"
        );
        let view = TopologyView::from_nodes(&text).unwrap();
        assert_eq!(view.node(&id(R1)).unwrap().addr, None);
        assert_eq!(view.node(&id(R2)).unwrap().addr, None);
        assert_eq!(view.node(&id(R3)).unwrap().addr, Some(addr("[::1]:7002")));
        let aux = view.node(&id(R4)).unwrap();
        assert_eq!(aux.addr, Some(addr("10.0.0.4:7003")));
        assert_eq!(aux.tls_port, Some(7443));
        assert_eq!(aux.hostname, None);
        assert_eq!(
            view.node(&id(R6)).unwrap().addr,
            Some(addr("10.0.0.6:7004"))
        );
        assert_eq!(view.owner_of(slot(11)), Some(&id(R2)));
        assert_eq!(view.assigned_slots(), 12);
    }

    #[test]
    fn a_replica_of_an_unlisted_primary_forms_a_shard_without_primary() {
        let text = format!("{R4} 10.0.0.4:7003@17003 myself,slave {R1} 0 0 1 connected\n");
        let view = TopologyView::from_nodes(&text).unwrap();
        assert_eq!(view.shards.len(), 1);
        assert_eq!(view.shards[0].primary(), None);
        assert!(view.slot_owners().iter().all(Option::is_none));
    }

    #[test]
    fn shards_and_nodes_of_the_same_node_agree() {
        let shards = TopologyView::from_shards(&resp(REDIS_SHARDS_RESP2)).unwrap();
        let nodes = TopologyView::from_nodes(REDIS_NODES_MIGRATING).unwrap();
        assert_eq!(layout(&shards), layout(&nodes));
        assert_eq!(shards.slot_owners(), nodes.slot_owners());
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
        let owners = view.slot_owners();
        assert_eq!(owners.len(), 16384);
        assert_eq!(owners[4], Some(id(R1)));
        assert_eq!(owners[5], Some(id(R2)));
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

    #[test]
    fn rejects_malformed_nodes_lines_with_line_number() {
        let bad = |text: &str| TopologyView::from_nodes(text).unwrap_err();
        let good = format!("{R1} 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-10\n");
        let err = bad(&format!("{good}{R2} 10.0.0.2:7000@17000 master - 0 0\n"));
        assert!(
            matches!(err, TopologyError::NodesLine { line: 2, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("line 2"));
        for line in [
            format!("{R2} 10.0.0.2:7000@17000 master - 0 0 1 connected 16384"),
            format!("{R2} 10.0.0.2:7000@17000 master - 0 0 1 connected 10-5"),
            format!("{R2} 10.0.0.2:7000@17000 master - 0 0 1 connected [42-?-{R1}]"),
            format!("{R2} 10.0.0.2:7000@17000 master - 0 0 1 connected [x->-{R1}]"),
            format!("{R2} 10.0.0.2:7000@17000 master - 0 0 x connected"),
            format!("{R2} 10.0.0.2:7000@17000 master - 0 0 1 linked"),
            format!("{R2} 10.0.0.2@17000 master - 0 0 1 connected"),
            format!("{R2} 10.0.0.2:99999@17000 master - 0 0 1 connected"),
        ] {
            let err = bad(&line);
            assert!(
                matches!(err, TopologyError::NodesLine { line: 1, .. }),
                "{line}: {err}"
            );
        }
    }

    #[test]
    fn rejects_malformed_replies_with_context() {
        let err =
            TopologyView::from_shards(&Value::Error("ERR unknown command".into())).unwrap_err();
        assert!(matches!(
            err,
            TopologyError::ErrorReply {
                command: "CLUSTER SHARDS",
                ..
            }
        ));
        let err = TopologyView::from_slots(&Value::Integer(3)).unwrap_err();
        assert!(matches!(err, TopologyError::Shape { .. }));

        let shard = |slots: Vec<Value>, node: Vec<Value>| {
            Value::Array(vec![Value::Array(vec![
                Value::Simple("slots".into()),
                Value::Array(slots),
                Value::Simple("nodes".into()),
                Value::Array(vec![Value::Array(node)]),
            ])])
        };
        let kv = |k: &str, v: Value| [Value::Simple(k.into()), v];
        let good_node: Vec<Value> = [
            kv("id", Value::Simple(R1.into())),
            kv("port", Value::Integer(7000)),
            kv("role", Value::Simple("master".into())),
        ]
        .concat();
        assert!(TopologyView::from_shards(&shard(vec![], good_node.clone())).is_ok());
        let odd = TopologyView::from_shards(&shard(vec![Value::Integer(1)], good_node.clone()));
        assert!(matches!(odd, Err(TopologyError::Shape { .. })));
        let out_of_range = shard(
            vec![Value::Integer(0), Value::Integer(16384)],
            good_node.clone(),
        );
        let err = TopologyView::from_shards(&out_of_range).unwrap_err();
        assert!(matches!(err, TopologyError::BadValue { field: "slot", .. }));
        assert!(err.to_string().contains("shard 0"), "{err}");
        let no_id = shard(vec![], good_node[2..].to_vec());
        assert!(matches!(
            TopologyView::from_shards(&no_id),
            Err(TopologyError::MissingField { field: "id", .. })
        ));
        let bad_role = [&good_node[..4], &kv("role", Value::Simple("boss".into()))].concat();
        assert!(matches!(
            TopologyView::from_shards(&shard(vec![], bad_role)),
            Err(TopologyError::BadValue { field: "role", .. })
        ));
        let bad_port = [
            &good_node[..2],
            &kv("port", Value::Integer(70000)),
            &good_node[4..],
        ]
        .concat();
        assert!(matches!(
            TopologyView::from_shards(&shard(vec![], bad_port)),
            Err(TopologyError::BadValue { field: "port", .. })
        ));

        let short = Value::Array(vec![Value::Array(vec![
            Value::Integer(0),
            Value::Integer(1),
        ])]);
        assert!(matches!(
            TopologyView::from_slots(&short),
            Err(TopologyError::Shape { .. })
        ));
        let no_id = Value::Array(vec![Value::Array(vec![
            Value::Integer(0),
            Value::Integer(1),
            Value::Array(vec![
                Value::Bulk(b"10.0.0.1".to_vec()),
                Value::Integer(7000),
            ]),
        ])]);
        assert!(matches!(
            TopologyView::from_slots(&no_id),
            Err(TopologyError::MissingField { field: "id", .. })
        ));
    }
}
