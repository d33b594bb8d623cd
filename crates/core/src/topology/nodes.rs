//! The `CLUSTER NODES` parser: [`TopologyView::from_nodes`], the only source of the reporting
//! node's own id, of flags and of the slots a node is migrating or importing.

use std::collections::BTreeMap;

use super::node::{NodeHealth, NodeRole, TopoNode};
use super::view::{Shard, SlotMigration, TopologySource, TopologyView};
use super::TopologyError;
use crate::node::{NodeAddr, NodeId};
use crate::slot::{Slot, SlotRange};

impl TopologyView {
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
}

/// One parsed line of `CLUSTER NODES`.
struct NodesLine {
    /// The node.
    node: TopoNode,
    /// Slots it serves.
    slots: Vec<SlotRange>,
    /// Slots it is migrating (on the reporting node's own line).
    migrating: Vec<SlotMigration>,
    /// Slots it is importing (on the reporting node's own line).
    importing: Vec<SlotMigration>,
}

/// One line of `CLUSTER NODES`; the error says what is wrong with it.
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

/// A slot number of `CLUSTER NODES`.
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
    use crate::topology::fixture::*;
    use crate::topology::{
        NodeHealth, NodeRole, SlotMigration, TopologyError, TopologySource, TopologyView,
    };

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
        assert!(owners(&view).iter().all(Option::is_none));
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
}
