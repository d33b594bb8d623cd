//! The `CLUSTER SHARDS` parser (Redis 7.0+, Valkey): [`TopologyView::from_shards`].

use super::node::{NodeHealth, NodeRole, TopoNode};
use super::reply::{array, known_host, pairs, port, range, top_level};
use super::view::{Shard, TopologySource, TopologyView};
use super::TopologyError;
use crate::node::{NodeAddr, NodeId};
use crate::resp::Value;
use crate::slot::SlotRange;

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

/// One node of a shard's `nodes`.
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

#[cfg(test)]
mod tests {
    use crate::topology::fixture::*;
    use crate::topology::{NodeHealth, NodeRole, TopologySource, TopologyView};
    use crate::Slot;

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
    fn shards_health_fail_reads_as_failed() {
        let view = TopologyView::from_shards(&resp(REDIS_SHARDS_FAILED)).unwrap();
        assert_eq!(view.node(&id(R3)).unwrap().health, NodeHealth::Failed);
        assert_eq!(view.node(&id(R1)).unwrap().health, NodeHealth::Online);
        assert_eq!(NodeHealth::parse("failed"), NodeHealth::Failed);
        assert_eq!(NodeHealth::parse("loading"), NodeHealth::Loading);
        assert_eq!(NodeHealth::parse("weird"), NodeHealth::Unknown);
    }
}
