//! Which nodes `record` polls, and when a node counts as gone: the recorder's membership rules,
//! sans IO. The recorder feeds in what it sees (the seed's topology at start, each poll's outcome,
//! the topologies of a round) and gets back the [`Change`]s to record and to act upon (start or
//! stop polling a node).
//!
//! The rules:
//!
//! - **Start**: every pollable node the seed's topology lists is polled (none listed: the seed
//!   alone). A node flagged `handshake` or `noaddr` is not pollable.
//! - **Address**: a node is polled at the address the cluster reports for it (its TLS port with
//!   TLS), except the node that answered the seed when the seed is an IP address it does not
//!   report: that node is polled at the seed, which is known to work (NAT, `cluster-announce-*`,
//!   or a TLS port the cluster does not announce, as with `tls-cluster no`).
//! - **Follow the topology**: a node any topology of a round lists is polled from then on.
//! - **Left**: a node no longer polled once other nodes answered in a round and none of them
//!   lists it (its own topology does not count).
//! - **Unreachable after `gone_after`**: a node whose polls fail `gone_after` times in a row (at
//!   least once) is recorded as unreachable, once, and is still polled; its next good poll
//!   records it as recovered. A good poll resets the count.

use std::collections::BTreeMap;

use slotscope_core::recording::{Discovery, GoneReason, Line, NodeDiscovered, NodeGone};
use slotscope_core::topology::TopologyView;
use slotscope_core::{NodeAddr, NodeId, NodeRef, Timestamp};

/// A change in which nodes are polled, or in a polled node's reachability.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// Start polling `node`.
    Joined {
        /// The node, at the address to poll it at.
        node: NodeRef,
        /// How it was found.
        via: Discovery,
    },
    /// Stop polling `node`: no other node lists it any more.
    Left(NodeRef),
    /// `node` failed its polls too many times in a row; it is still polled.
    Unreachable(NodeRef),
    /// `node`, unreachable until now, answered a poll.
    Recovered(NodeRef),
}

impl Change {
    /// The recording line of this change, at `t`.
    pub fn line(&self, t: Timestamp) -> Line {
        match self {
            Change::Joined { node, via } => Line::NodeDiscovered(NodeDiscovered {
                t,
                node: node.clone(),
                via: via.clone(),
            }),
            Change::Left(node) => Line::NodeGone(NodeGone {
                t,
                node: node.clone(),
                reason: GoneReason::LeftTopology,
            }),
            Change::Unreachable(node) => Line::NodeGone(NodeGone {
                t,
                node: node.clone(),
                reason: GoneReason::Unreachable,
            }),
            Change::Recovered(node) => Line::NodeDiscovered(NodeDiscovered {
                t,
                node: node.clone(),
                via: Discovery::Recovered,
            }),
        }
    }
}

/// What the rules know of one polled node.
#[derive(Debug)]
struct Member {
    /// Its cluster id, once known.
    id: Option<NodeId>,
    /// Failed polls since the last good one.
    failures_in_row: u32,
    /// Recorded as unreachable and not recovered since.
    unreachable: bool,
}

/// The polled nodes and the rules that change them (see the module's documentation).
#[derive(Debug)]
pub struct Membership {
    addressing: Addressing,
    gone_after: u32,
    members: BTreeMap<NodeAddr, Member>,
}

impl Membership {
    /// The membership at start, from the `seed` address and the topology it reported
    /// (`seed_view`), and the nodes to poll first. `tls`: nodes are polled over TLS;
    /// `gone_after`: failed polls in a row after which a node is unreachable.
    pub fn start(
        seed: &NodeAddr,
        tls: bool,
        gone_after: u32,
        seed_view: &TopologyView,
    ) -> (Membership, Vec<Change>) {
        let addressing = Addressing::new(seed, tls, seed_view);
        let mut initial = addressing.targets(seed_view);
        if initial.is_empty() {
            initial.push((seed.clone(), None));
        }
        let mut membership = Membership {
            addressing,
            gone_after,
            members: BTreeMap::new(),
        };
        let changes = initial
            .into_iter()
            .map(|(addr, id)| {
                let via = if addr == *seed {
                    Discovery::Seed
                } else {
                    Discovery::Topology { from: seed.clone() }
                };
                membership.join(addr, id, via)
            })
            .collect();
        (membership, changes)
    }

    /// The state of the membership as the lines that start a new file of an always-on recording:
    /// every polled node as discovered (from `seed`, like at the start), and those unreachable
    /// now as gone.
    pub fn restate(&self, seed: &NodeAddr, t: Timestamp) -> Vec<Line> {
        let mut lines = Vec::with_capacity(self.members.len());
        let mut unreachable = Vec::new();
        for (addr, m) in &self.members {
            let node = NodeRef {
                addr: addr.clone(),
                id: m.id.clone(),
            };
            let via = if addr == seed {
                Discovery::Seed
            } else {
                Discovery::Topology { from: seed.clone() }
            };
            if m.unreachable {
                unreachable.push(Change::Unreachable(node.clone()).line(t));
            }
            lines.push(Change::Joined { node, via }.line(t));
        }
        lines.extend(unreachable);
        lines
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// How many polled nodes are unreachable.
    pub fn unreachable(&self) -> usize {
        self.members.values().filter(|m| m.unreachable).count()
    }

    /// The node polled at `addr`, with its id when known.
    pub fn node_ref(&self, addr: &NodeAddr) -> NodeRef {
        NodeRef {
            addr: addr.clone(),
            id: self.members.get(addr).and_then(|m| m.id.clone()),
        }
    }

    /// The node polled at `addr` says it is `id`.
    pub fn identify(&mut self, addr: &NodeAddr, id: NodeId) {
        if let Some(m) = self.members.get_mut(addr) {
            m.id = Some(id);
        }
    }

    /// A poll of `addr` succeeded (`ok`) or failed: the node's change of reachability, if any.
    pub fn polled(&mut self, addr: &NodeAddr, ok: bool) -> Option<Change> {
        let gone_after = self.gone_after.max(1);
        let m = self.members.get_mut(addr)?;
        if ok {
            m.failures_in_row = 0;
            if m.unreachable {
                m.unreachable = false;
                return Some(Change::Recovered(self.node_ref(addr)));
            }
            return None;
        }
        m.failures_in_row += 1;
        if !m.unreachable && m.failures_in_row >= gone_after {
            m.unreachable = true;
            return Some(Change::Unreachable(self.node_ref(addr)));
        }
        None
    }

    /// The topologies one round's polls reported, by the address of the node that reported each:
    /// the nodes that join (in the order the topologies list them), then those that left.
    pub fn topology(&mut self, views: &[(NodeAddr, TopologyView)]) -> Vec<Change> {
        let listed: Vec<(&NodeAddr, Vec<Target>)> = views
            .iter()
            .map(|(reporter, view)| (reporter, self.addressing.targets(view)))
            .collect();
        let mut changes = Vec::new();
        for (reporter, targets) in &listed {
            for (addr, id) in targets {
                if !self.members.contains_key(addr) {
                    let via = Discovery::Topology {
                        from: (*reporter).clone(),
                    };
                    changes.push(self.join(addr.clone(), id.clone(), via));
                }
            }
        }
        // A node has left when other nodes answered and none of them lists it any more.
        let gone: Vec<NodeAddr> = self
            .members
            .keys()
            .filter(|addr| {
                let mut others = listed.iter().filter(|(r, _)| r != addr).peekable();
                others.peek().is_some()
                    && others.all(|(_, targets)| targets.iter().all(|(a, _)| a != *addr))
            })
            .cloned()
            .collect();
        for addr in gone {
            let node = self.node_ref(&addr);
            self.members.remove(&addr);
            changes.push(Change::Left(node));
        }
        changes
    }

    fn join(&mut self, addr: NodeAddr, id: Option<NodeId>, via: Discovery) -> Change {
        self.members.insert(
            addr.clone(),
            Member {
                id: id.clone(),
                failures_in_row: 0,
                unreachable: false,
            },
        );
        Change::Joined {
            node: NodeRef { addr, id },
            via,
        }
    }
}

/// A node to poll: its address and, when known, its id.
type Target = (NodeAddr, Option<NodeId>);

/// Which address each node of a view is polled at (the module's **Address** rule).
#[derive(Debug)]
struct Addressing {
    tls: bool,
    seed_alias: Option<(NodeId, NodeAddr)>,
}

impl Addressing {
    fn new(seed: &NodeAddr, tls: bool, seed_view: &TopologyView) -> Addressing {
        let seed_is_ip = seed.host().parse::<std::net::IpAddr>().is_ok();
        let seed_alias = seed_view
            .myself
            .as_ref()
            .filter(|_| seed_is_ip)
            .and_then(|me| seed_view.node(me))
            .filter(|n| n.poll_addr(tls).as_ref() != Some(seed))
            .map(|n| (n.id.clone(), seed.clone()));
        Addressing { tls, seed_alias }
    }

    /// The pollable nodes of `view` with the address to poll each at, sorted by address.
    fn targets(&self, view: &TopologyView) -> Vec<Target> {
        let mut out: Vec<Target> = view
            .nodes()
            .filter(|n| !n.has_flag("handshake") && !n.has_flag("noaddr"))
            .filter_map(|n| {
                let addr = match &self.seed_alias {
                    Some((id, seed)) if *id == n.id => Some(seed.clone()),
                    _ => n.poll_addr(self.tls),
                }?;
                Some((addr, Some(n.id.clone())))
            })
            .collect();
        out.sort();
        out.dedup_by(|a, b| a.0 == b.0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> NodeAddr {
        s.parse().unwrap()
    }

    fn id(s: &str) -> NodeId {
        NodeId::new(s).unwrap()
    }

    /// A `CLUSTER NODES` view: `(id, address, flags)` per node, primaries without slots.
    fn view(nodes: &[(&str, &str, &str)]) -> TopologyView {
        let text: String = nodes
            .iter()
            .map(|(id, addr, flags)| format!("{id} {addr}@17000 {flags} - 0 0 1 connected\n"))
            .collect();
        TopologyView::from_nodes(&text).unwrap()
    }

    fn node(a: &str, i: Option<&str>) -> NodeRef {
        NodeRef {
            addr: addr(a),
            id: i.map(id),
        }
    }

    fn joined(a: &str, i: &str, from: Option<&str>) -> Change {
        Change::Joined {
            node: node(a, Some(i)),
            via: from.map_or(Discovery::Seed, |f| Discovery::Topology { from: addr(f) }),
        }
    }

    /// Three primaries on 127.0.0.1:7000-7002, as node `a` (7000) sees them.
    fn three() -> TopologyView {
        view(&[
            ("a", "127.0.0.1:7000", "myself,master"),
            ("b", "127.0.0.1:7001", "master"),
            ("c", "127.0.0.1:7002", "master"),
        ])
    }

    fn started(gone_after: u32) -> Membership {
        Membership::start(&addr("127.0.0.1:7000"), false, gone_after, &three()).0
    }

    #[test]
    fn restating_lists_every_polled_node_and_the_unreachable_ones_as_gone() {
        let seed = addr("127.0.0.1:7000");
        let mut m = started(2);
        let t = Timestamp(42);
        // At the start, the restatement is what the start recorded.
        let (_, initial) = Membership::start(&seed, false, 2, &three());
        let expected: Vec<Line> = initial.iter().map(|c| c.line(t)).collect();
        assert_eq!(m.restate(&seed, t), expected);
        // Node c fails twice: unreachable, still polled, restated as discovered then gone.
        m.identify(&addr("127.0.0.1:7002"), id("c"));
        assert_eq!(m.polled(&addr("127.0.0.1:7002"), false), None);
        assert!(m.polled(&addr("127.0.0.1:7002"), false).is_some());
        let lines = m.restate(&seed, t);
        assert_eq!(lines.len(), 4);
        assert_eq!(&lines[..3], &expected[..]);
        assert_eq!(
            lines[3],
            Change::Unreachable(node("127.0.0.1:7002", Some("c"))).line(t)
        );
        // Recovered: no longer restated as gone.
        assert!(m.polled(&addr("127.0.0.1:7002"), true).is_some());
        assert_eq!(m.restate(&seed, t), expected);
    }

    #[test]
    fn start_polls_every_node_the_seed_lists() {
        let (m, changes) = Membership::start(&addr("127.0.0.1:7000"), false, 3, &three());
        assert_eq!(
            changes,
            vec![
                joined("127.0.0.1:7000", "a", None),
                joined("127.0.0.1:7001", "b", Some("127.0.0.1:7000")),
                joined("127.0.0.1:7002", "c", Some("127.0.0.1:7000")),
            ]
        );
        assert_eq!(m.len(), 3);
        assert_eq!(m.unreachable(), 0);
    }

    #[test]
    fn start_without_pollable_nodes_polls_the_seed_alone() {
        let lone = view(&[("a", ":0", "myself,master,noaddr")]);
        let (m, changes) = Membership::start(&addr("127.0.0.1:7000"), false, 3, &lone);
        assert_eq!(
            changes,
            vec![Change::Joined {
                node: node("127.0.0.1:7000", None),
                via: Discovery::Seed
            }]
        );
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn handshake_and_noaddr_nodes_are_not_polled() {
        let v = view(&[
            ("a", "127.0.0.1:7000", "myself,master"),
            ("h", "127.0.0.1:7005", "handshake"),
            ("n", "127.0.0.1:7006", "master,noaddr"),
        ]);
        let (_, changes) = Membership::start(&addr("127.0.0.1:7000"), false, 3, &v);
        assert_eq!(changes, vec![joined("127.0.0.1:7000", "a", None)]);
    }

    #[test]
    fn the_seed_stands_for_the_node_that_answered_it_when_it_is_an_unreported_ip() {
        // NAT: the seed is 10.0.0.5:6379, the node says it is 127.0.0.1:7000.
        let (m, changes) = Membership::start(&addr("10.0.0.5:6379"), false, 3, &three());
        assert_eq!(
            changes,
            vec![
                joined("10.0.0.5:6379", "a", None),
                joined("127.0.0.1:7001", "b", Some("10.0.0.5:6379")),
                joined("127.0.0.1:7002", "c", Some("10.0.0.5:6379")),
            ]
        );
        // Later views keep the alias: node a is not polled twice.
        let mut m = m;
        let later = vec![(addr("127.0.0.1:7001"), three())];
        assert_eq!(m.topology(&later), vec![]);
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn a_host_name_seed_is_no_alias() {
        let (_, changes) = Membership::start(&addr("clustercfg.example:6379"), false, 3, &three());
        assert_eq!(
            changes,
            vec![
                joined("127.0.0.1:7000", "a", Some("clustercfg.example:6379")),
                joined("127.0.0.1:7001", "b", Some("clustercfg.example:6379")),
                joined("127.0.0.1:7002", "c", Some("clustercfg.example:6379")),
            ]
        );
    }

    #[test]
    fn with_tls_nodes_are_polled_at_their_tls_port() {
        let mut v = three();
        for shard in &mut v.shards {
            for n in &mut shard.nodes {
                n.tls_port = n.addr.as_ref().map(|a| a.port() + 100);
            }
        }
        let (_, changes) = Membership::start(&addr("127.0.0.1:7100"), true, 3, &v);
        assert_eq!(
            changes,
            vec![
                joined("127.0.0.1:7100", "a", None),
                joined("127.0.0.1:7101", "b", Some("127.0.0.1:7100")),
                joined("127.0.0.1:7102", "c", Some("127.0.0.1:7100")),
            ]
        );
    }

    #[test]
    fn a_node_any_topology_lists_joins_once() {
        let mut m = started(3);
        let four = view(&[
            ("a", "127.0.0.1:7000", "master"),
            ("b", "127.0.0.1:7001", "myself,master"),
            ("c", "127.0.0.1:7002", "master"),
            ("d", "127.0.0.1:7003", "master"),
        ]);
        let views = vec![
            (addr("127.0.0.1:7000"), three()),
            (addr("127.0.0.1:7001"), four.clone()),
            (addr("127.0.0.1:7002"), four),
        ];
        assert_eq!(
            m.topology(&views),
            vec![joined("127.0.0.1:7003", "d", Some("127.0.0.1:7001"))]
        );
        assert_eq!(m.topology(&views), vec![]);
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn a_node_no_other_node_lists_has_left() {
        let mut m = started(3);
        let two = view(&[
            ("a", "127.0.0.1:7000", "myself,master"),
            ("b", "127.0.0.1:7001", "master"),
        ]);
        // Node c still lists itself: its own view does not count.
        let views = vec![
            (addr("127.0.0.1:7000"), two.clone()),
            (addr("127.0.0.1:7001"), two),
            (addr("127.0.0.1:7002"), three()),
        ];
        assert_eq!(
            m.topology(&views),
            vec![Change::Left(node("127.0.0.1:7002", Some("c")))]
        );
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn a_node_one_other_node_still_lists_stays() {
        let mut m = started(3);
        let two = view(&[
            ("a", "127.0.0.1:7000", "myself,master"),
            ("b", "127.0.0.1:7001", "master"),
        ]);
        let views = vec![
            (addr("127.0.0.1:7000"), two),
            (addr("127.0.0.1:7001"), three()),
        ];
        assert_eq!(m.topology(&views), vec![]);
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn nobody_leaves_when_no_node_answered() {
        let mut m = started(3);
        assert_eq!(m.topology(&[]), vec![]);
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn a_node_never_leaves_on_its_own_word() {
        let mut m = started(3);
        // Only node a answered, and it lists nobody else: b and c have left; a has no other
        // node's word against it.
        let alone = view(&[("a", "127.0.0.1:7000", "myself,master")]);
        assert_eq!(
            m.topology(&[(addr("127.0.0.1:7000"), alone)]),
            vec![
                Change::Left(node("127.0.0.1:7001", Some("b"))),
                Change::Left(node("127.0.0.1:7002", Some("c"))),
            ]
        );
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn gone_after_failures_in_a_row_a_node_is_unreachable_once_then_recovers() {
        let mut m = started(3);
        let b = addr("127.0.0.1:7001");
        assert_eq!(m.polled(&b, false), None);
        assert_eq!(m.polled(&b, false), None);
        assert_eq!(
            m.polled(&b, false),
            Some(Change::Unreachable(node("127.0.0.1:7001", Some("b"))))
        );
        assert_eq!(m.unreachable(), 1);
        // Still polled, recorded once.
        assert_eq!(m.polled(&b, false), None);
        assert_eq!(m.len(), 3);
        assert_eq!(
            m.polled(&b, true),
            Some(Change::Recovered(node("127.0.0.1:7001", Some("b"))))
        );
        assert_eq!(m.unreachable(), 0);
        assert_eq!(m.polled(&b, true), None);
    }

    #[test]
    fn a_good_poll_resets_the_count() {
        let mut m = started(3);
        let b = addr("127.0.0.1:7001");
        for ok in [false, false, true, false, false, true] {
            assert_eq!(m.polled(&b, ok), None);
        }
        assert_eq!(m.unreachable(), 0);
    }

    #[test]
    fn gone_after_zero_counts_as_one() {
        let mut m = started(0);
        let c = addr("127.0.0.1:7002");
        assert_eq!(
            m.polled(&c, false),
            Some(Change::Unreachable(node("127.0.0.1:7002", Some("c"))))
        );
    }

    #[test]
    fn unknown_nodes_have_no_changes() {
        let mut m = started(1);
        let x = addr("127.0.0.1:7999");
        assert_eq!(m.polled(&x, false), None);
        m.identify(&x, id("x"));
        assert_eq!(m.node_ref(&x), node("127.0.0.1:7999", None));
    }

    #[test]
    fn the_id_a_node_gives_names_it_from_then_on() {
        let lone = view(&[("a", ":0", "myself,master,noaddr")]);
        let seed = addr("127.0.0.1:7000");
        let (mut m, _) = Membership::start(&seed, false, 1, &lone);
        assert_eq!(m.node_ref(&seed), node("127.0.0.1:7000", None));
        m.identify(&seed, id("a"));
        assert_eq!(
            m.polled(&seed, false),
            Some(Change::Unreachable(node("127.0.0.1:7000", Some("a"))))
        );
    }

    #[test]
    fn changes_are_recorded_as_their_lines() {
        let t = Timestamp(42);
        let n = node("127.0.0.1:7001", Some("b"));
        let gone = |reason| {
            Line::NodeGone(NodeGone {
                t,
                node: n.clone(),
                reason,
            })
        };
        let found = |via| {
            Line::NodeDiscovered(NodeDiscovered {
                t,
                node: n.clone(),
                via,
            })
        };
        assert_eq!(
            Change::Joined {
                node: n.clone(),
                via: Discovery::Seed
            }
            .line(t),
            found(Discovery::Seed)
        );
        assert_eq!(
            Change::Recovered(n.clone()).line(t),
            found(Discovery::Recovered)
        );
        assert_eq!(
            Change::Left(n.clone()).line(t),
            gone(GoneReason::LeftTopology)
        );
        assert_eq!(
            Change::Unreachable(n.clone()).line(t),
            gone(GoneReason::Unreachable)
        );
    }
}
