//! The `CLUSTER SLOTS` parser (all versions; deprecated since 7.0): [`TopologyView::from_slots`].

use std::collections::BTreeMap;

use super::node::{NodeHealth, NodeRole, TopoNode};
use super::reply::{array, known_host, pairs, port, range, top_level};
use super::view::{Shard, TopologySource, TopologyView};
use super::TopologyError;
use crate::node::{NodeAddr, NodeId};
use crate::resp::Value;

impl TopologyView {
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
}

/// One node of an entry: `[ip, port, id, metadata]`.
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

#[cfg(test)]
mod tests {
    use crate::resp::Value;
    use crate::topology::fixture::*;
    use crate::topology::{NodeHealth, TopologySource, TopologyView};

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
        assert_eq!(owners(&view), owners(&shards));
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
}
