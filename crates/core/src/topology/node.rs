//! The nodes of a topology: [`TopoNode`], its [`NodeRole`] and [`NodeHealth`].

use serde::{Deserialize, Serialize};

use crate::node::{NodeAddr, NodeId};

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
    /// A node with neither address nor flags, nor anything else `CLUSTER NODES` adds.
    pub(super) fn new(id: NodeId, role: NodeRole, health: NodeHealth) -> TopoNode {
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
