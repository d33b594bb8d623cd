//! The cluster as one node sees it: parsed `CLUSTER NODES` and `CLUSTER SLOTS` replies.

use std::io;

use slotscope_core::topology::TopologyView;
use slotscope_core::{NodeAddr, SlotRange};

use crate::client::Client;

/// One line of `CLUSTER NODES`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeEntry {
    /// The node id (40 hex characters).
    pub id: String,
    /// The `ip:port` part of the address (without `@busport` and hostname).
    pub addr: String,
    /// Flags: `myself`, `master`, `slave`, `fail?`, `fail`, `handshake`, `noaddr`, …
    pub flags: Vec<String>,
    /// The master's id, for a replica.
    pub master: Option<String>,
    /// The config epoch.
    pub epoch: u64,
    /// `connected` or `disconnected`.
    pub link: String,
    /// Slot ranges served (open `[slot->-id]` migration entries are left out).
    pub slots: Vec<SlotRange>,
}

impl NodeEntry {
    /// Whether the line carries `flag`.
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// Whether the node is a master (`master` flag).
    pub fn is_master(&self) -> bool {
        self.has_flag("master")
    }
}

/// Parses the text of a `CLUSTER NODES` reply.
///
/// # Errors
///
/// If a line has fewer than 8 fields or a malformed number.
pub fn parse_cluster_nodes(text: &str) -> io::Result<Vec<NodeEntry>> {
    let bad =
        |line: &str, why: &str| io::Error::other(format!("CLUSTER NODES line `{line}`: {why}"));
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 {
            return Err(bad(line, "fewer than 8 fields"));
        }
        let addr = f[1].split(['@', ',']).next().unwrap_or_default().to_owned();
        let mut slots = Vec::new();
        for s in &f[8..] {
            if s.starts_with('[') {
                continue;
            }
            let (a, b) = s.split_once('-').unwrap_or((s, s));
            let a: u16 = a.parse().map_err(|_| bad(line, "bad slot"))?;
            let b: u16 = b.parse().map_err(|_| bad(line, "bad slot"))?;
            slots.push(SlotRange::try_from((a, b)).map_err(|e| bad(line, &e.to_string()))?);
        }
        out.push(NodeEntry {
            id: f[0].to_owned(),
            addr,
            flags: f[2].split(',').map(str::to_owned).collect(),
            master: (f[3] != "-").then(|| f[3].to_owned()),
            epoch: f[6].parse().map_err(|_| bad(line, "bad epoch"))?,
            link: f[7].to_owned(),
            slots,
        });
    }
    Ok(out)
}

/// `CLUSTER NODES` of the node behind `client`, parsed.
///
/// # Errors
///
/// On a transport failure, an error reply or an unparsable reply.
pub fn cluster_nodes(client: &mut Client) -> io::Result<Vec<NodeEntry>> {
    parse_cluster_nodes(&client.cmd_text(&["CLUSTER", "NODES"])?)
}

/// One range of `CLUSTER SLOTS`: the slots and the master serving them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotOwner {
    /// The slots.
    pub range: SlotRange,
    /// The master's address as reported.
    pub addr: NodeAddr,
    /// The master's node id.
    pub id: String,
    /// Addresses of the replicas listed for the range.
    pub replicas: Vec<NodeAddr>,
}

/// `CLUSTER SLOTS` of the node behind `client`, parsed by the core's topology parser and sorted by
/// range. A node that does not know its own address (a lone master) is given the client's.
///
/// # Errors
///
/// On a transport failure, an error reply or an unparsable reply.
pub fn cluster_slots(client: &mut Client) -> io::Result<Vec<SlotOwner>> {
    let reply = client.cmd_ok(&["CLUSTER", "SLOTS"])?;
    let mut view = TopologyView::from_slots(&reply)
        .map_err(|e| io::Error::other(format!("CLUSTER SLOTS reply: {e}")))?;
    let asked = client.addr().clone();
    // CLUSTER SLOTS names no `myself`: the node that reports an empty host for itself is the one
    // asked, so fill that address in.
    for shard in &mut view.shards {
        for node in &mut shard.nodes {
            if node.addr.is_none() {
                node.addr = Some(asked.clone());
            }
        }
    }
    let mut out = Vec::new();
    for shard in &view.shards {
        let Some(primary) = shard.nodes.first() else {
            continue;
        };
        let addr = primary
            .addr
            .clone()
            .ok_or_else(|| io::Error::other("CLUSTER SLOTS reply: a primary without address"))?;
        let replicas: Vec<NodeAddr> = shard.nodes[1..]
            .iter()
            .filter_map(|n| n.addr.clone())
            .collect();
        for &range in &shard.slots {
            out.push(SlotOwner {
                range,
                addr: addr.clone(),
                id: primary.id.to_string(),
                replicas: replicas.clone(),
            });
        }
    }
    out.sort_by_key(|o| o.range);
    Ok(out)
}

/// Parses `field:value` lines of `INFO` or `CLUSTER INFO` and returns the value of `field`.
pub fn info_field<'a>(info: &'a str, field: &str) -> Option<&'a str> {
    info.lines().find_map(|l| {
        l.trim_end()
            .split_once(':')
            .filter(|(k, _)| *k == field)
            .map(|(_, v)| v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cluster_nodes_lines() {
        let text = "\
07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,host replica e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922 [5460-<-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460 16383
";
        let n = parse_cluster_nodes(text).unwrap();
        assert_eq!(n.len(), 3);
        assert_eq!(n[0].addr, "127.0.0.1:30004");
        assert_eq!(
            n[0].master.as_deref(),
            Some("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca")
        );
        assert_eq!(
            n[1].slots,
            vec![SlotRange::try_from((5461, 10922)).unwrap()]
        );
        assert!(n[2].has_flag("myself") && n[2].is_master());
        assert_eq!(n[2].slots.len(), 2);
        assert_eq!(n[2].epoch, 1);
    }

    #[test]
    fn finds_info_fields() {
        let info = "cluster_state:ok\r\ncluster_known_nodes:3\r\n";
        assert_eq!(info_field(info, "cluster_state"), Some("ok"));
        assert_eq!(info_field(info, "cluster_known_nodes"), Some("3"));
        assert_eq!(info_field(info, "cluster_size"), None);
    }
}
