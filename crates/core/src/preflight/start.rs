//! The cluster a plan starts from, as a recording ends with it.

use std::collections::BTreeMap;

use crate::slot::SlotRange;
use crate::time::Timestamp;
use crate::timeline::{ClusterTimeline, NodeIdx};

/// The cluster a plan starts from: its masters and their slots, and which node replicates which.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Start {
    /// Each master's address and slots.
    pub masters: Vec<(String, Vec<SlotRange>)>,
    /// `(replica, master)` addresses.
    pub replicas: Vec<(String, String)>,
}

impl Start {
    /// The cluster `timeline` ends with: the owners of its last state, each node that is no
    /// owner there as the replica of the primary the views listed it with last, and every other
    /// node the recorder still polls as a master owning no slot.
    pub fn at_end_of(timeline: &ClusterTimeline) -> Start {
        let nodes = timeline.nodes();
        let name = |n: NodeIdx| nodes.addr(n).map(ToString::to_string);
        let mut masters: Vec<(String, Vec<SlotRange>)> = Vec::new();
        let owners = timeline
            .states()
            .last()
            .map(|s| s.owners.ranges())
            .unwrap_or_default();
        for (range, n) in &owners {
            let Some(a) = name(*n) else { continue };
            match masters.iter_mut().find(|(m, _)| *m == a) {
                Some((_, ranges)) => ranges.push(*range),
                None => masters.push((a, vec![*range])),
            }
        }
        let mut latest: BTreeMap<NodeIdx, (NodeIdx, Timestamp)> = BTreeMap::new();
        for (r, p, span) in timeline.replica_pairs() {
            if owners.iter().any(|(_, o)| *o == r) {
                continue;
            }
            if latest.get(&r).is_none_or(|(_, t)| span.end > *t) {
                latest.insert(r, (p, span.end));
            }
        }
        // Members that own nothing and replicate nothing: masters that joined empty (a scale-out's
        // target before its slots move).
        for n in timeline.members_at(Timestamp(u64::MAX)) {
            if owners.iter().any(|(_, o)| *o == n) || latest.contains_key(&n) {
                continue;
            }
            if let Some(a) = name(n) {
                masters.push((a, Vec::new()));
            }
        }
        let replicas = latest
            .into_iter()
            .filter_map(|(r, (p, _))| Some((name(r)?, name(p)?)))
            .collect();
        Start { masters, replicas }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::plan::parse_range;

    #[test]
    fn a_recording_gives_its_last_owners_and_replicas() {
        use crate::node::{NodeAddr, NodeId, NodeRef};
        use crate::recording::{Line, TopologySample};
        use crate::topology::TopologyView;
        let (a, b, r) = ("a".repeat(40), "b".repeat(40), "c".repeat(40));
        let text = format!(
            "{a} 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-8191\n\
             {b} 10.0.0.1:7001@17001 master - 0 0 2 connected 8192-16383\n\
             {r} 10.0.0.1:7002@17002 slave {a} 0 0 1 connected\n"
        );
        let mut tl = ClusterTimeline::new();
        tl.push(&Line::Topology(TopologySample {
            t: Timestamp(1_000),
            node: NodeRef {
                addr: NodeAddr::new("10.0.0.1", 7000).unwrap(),
                id: NodeId::new(a.clone()),
            },
            view: TopologyView::from_nodes(&text).unwrap(),
        }));
        let s = Start::at_end_of(&tl);
        assert_eq!(
            s.masters,
            vec![
                (
                    "10.0.0.1:7000".to_owned(),
                    vec![parse_range("0-8191").unwrap()]
                ),
                (
                    "10.0.0.1:7001".to_owned(),
                    vec![parse_range("8192-16383").unwrap()]
                ),
            ]
        );
        assert_eq!(
            s.replicas,
            vec![("10.0.0.1:7002".to_owned(), "10.0.0.1:7000".to_owned())]
        );
        // A master that joined empty, polled by the recorder: a master owning no slot.
        let empty: Line = serde_json::from_str(
            r#"{"type":"node_discovered","t":1500,"node":{"addr":"10.0.0.1:7003"},"via":{"kind":"seed"}}"#,
        )
        .unwrap();
        tl.push(&empty);
        let s = Start::at_end_of(&tl);
        assert_eq!(s.masters.len(), 3);
        assert_eq!(s.masters[2], ("10.0.0.1:7003".to_owned(), Vec::new()));
        assert_eq!(s.replicas.len(), 1);
    }
}
