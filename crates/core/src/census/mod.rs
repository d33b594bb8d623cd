//! The client census: connections from `CLIENT LIST` over time, grouped by what identifies a client
//! application (library name and version, connection name; the client host when a client says
//! nothing about itself). Per group: connections open, new connections per second, connection
//! lifetimes, the commands it was seen running, and the nodes it talks to.
//!
//! The collector's own connection (the one running `CLIENT LIST` when the list is taken) is left
//! out. A connection caught by a poll mid-handshake (named but not yet versioned, or not yet
//! named) joins the group of its application when the census is finished (see `merge.rs`).
//! Clients that lived between two polls are not in `CLIENT LIST` at all; [`inferred`] finds them
//! in the counters.
//!
//! What each column of a census row means: [`COLUMNS`].

mod group;
pub mod handshake;
pub mod inferred;
mod merge;

pub use group::{ClientGroup, GroupKey, MergedKey, COLUMNS};
pub use inferred::{infer_short_lived, InferredGroup};

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::float;
use crate::metrics::ms_to_secs;
use crate::node::NodeAddr;
use crate::recording::{ClientListSample, Line};
use crate::time::{TimeSpan, Timestamp};

/// The census of a recording.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Census {
    /// Groups, most connections seen first.
    pub groups: Vec<ClientGroup>,
    /// Client groups no `CLIENT LIST` poll saw, inferred from the counters (filled by the
    /// analysis, which has the metrics: see [`infer_short_lived`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inferred: Vec<InferredGroup>,
    /// New connections seen per node and second (Unix seconds), all groups together.
    #[serde(skip)]
    pub new_by_node_second: BTreeMap<NodeAddr, BTreeMap<u64, u64>>,
    /// Per node, its first and last `CLIENT LIST` sample: when the census could see clients.
    #[serde(skip)]
    pub listed: BTreeMap<NodeAddr, TimeSpan>,
}

impl Census {
    /// Indices of the groups seen running `cmd`.
    pub fn groups_using(&self, cmd: &str) -> Vec<usize> {
        (0..self.groups.len())
            .filter(|&i| self.groups[i].commands.contains_key(cmd))
            .collect()
    }

    /// New connections the polls saw on `node` within `span` (sample times rounded down to the
    /// second), all groups together.
    pub fn new_on(&self, node: &NodeAddr, span: TimeSpan) -> u64 {
        let from = span.start.as_millis() / 1000;
        let to = span.end.as_millis().div_ceil(1000);
        // Looked up by the borrowed address: the analysis asks this of every interval.
        self.new_by_node_second.get(node).map_or(0, |by_second| {
            by_second.range(from..=to).map(|(_, n)| n).sum()
        })
    }
}

#[derive(Clone, Debug)]
struct Conn {
    group: usize,
    age: u64,
    first: Timestamp,
    /// The second it was counted as new in, if it was (not in its node's first sample).
    new_at: Option<u64>,
}

#[derive(Clone, Debug, Default)]
struct NodeState {
    first_sample: Option<Timestamp>,
    last_sample: Option<Timestamp>,
    own_ids: BTreeSet<u64>,
    open: BTreeMap<u64, Conn>,
}

/// Builds the census one `client_list` line at a time.
#[derive(Clone, Debug, Default)]
pub struct CensusBuilder {
    groups: Vec<ClientGroup>,
    index: BTreeMap<GroupKey, usize>,
    nodes: BTreeMap<NodeAddr, NodeState>,
    new_after_first: Vec<u64>,
    new_by_node_second: BTreeMap<NodeAddr, BTreeMap<u64, u64>>,
    open_by_time: BTreeMap<(Timestamp, usize), u64>,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
}

impl CensusBuilder {
    /// Folds one line (only `client_list` lines matter).
    pub fn push(&mut self, line: &Line) {
        if let Line::ClientList(s) = line {
            self.push_sample(s);
        }
    }

    fn group(&mut self, key: GroupKey, t: Timestamp) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        self.groups.push(ClientGroup {
            key: key.clone(),
            hosts: BTreeSet::new(),
            nodes: BTreeSet::new(),
            commands: BTreeMap::new(),
            connections_seen: 0,
            open_last: 0,
            open_max: 0,
            new_per_sec: 0.0,
            lifetimes_secs: Vec::new(),
            new_by_second: BTreeMap::new(),
            first_seen: t,
            last_seen: t,
            merged: Vec::new(),
        });
        self.new_after_first.push(0);
        self.index.insert(key, self.groups.len() - 1);
        self.groups.len() - 1
    }

    fn push_sample(&mut self, s: &ClientListSample) {
        let t = s.t;
        self.first = Some(self.first.map_or(t, |f| f.min(t)));
        self.last = Some(self.last.map_or(t, |l| l.max(t)));
        let mut state = self.nodes.remove(&s.node.addr).unwrap_or_default();
        let first_sample = state.first_sample.is_none();
        state.first_sample.get_or_insert(t);
        state.last_sample = Some(state.last_sample.map_or(t, |l| l.max(t)));
        // The collector's own connection is the one running CLIENT LIST right now.
        for e in &s.clients {
            if e.cmd() == Some("client|list") {
                if let Some(id) = e.id() {
                    state.own_ids.insert(id);
                }
            }
        }
        let mut now_open: BTreeMap<u64, Conn> = BTreeMap::new();
        let mut per_group_open: BTreeMap<usize, u64> = BTreeMap::new();
        for e in &s.clients {
            let Some(id) = e.id() else { continue };
            if state.own_ids.contains(&id) || e.flags().is_some_and(|f| f.contains('S')) {
                // Skip the collector and replication links (flag S: a replica's connection).
                continue;
            }
            // A connection belongs to the group its latest identity names: one listed before
            // its client sent CLIENT SETNAME / SETINFO moves to its real group.
            let g = self.group(GroupKey::of(e), t);
            let known = state.open.get(&id).cloned();
            let mut new_at = known.as_ref().and_then(|c| c.new_at);
            match &known {
                Some(c) if c.group != g => {
                    let old = &mut self.groups[c.group];
                    old.connections_seen = old.connections_seen.saturating_sub(1);
                    if let Some(sec) = c.new_at {
                        if let Some(n) = old.new_by_second.get_mut(&sec) {
                            *n = n.saturating_sub(1);
                        }
                        self.new_after_first[c.group] =
                            self.new_after_first[c.group].saturating_sub(1);
                        *self.groups[g].new_by_second.entry(sec).or_default() += 1;
                        self.new_after_first[g] += 1;
                    }
                    self.groups[g].connections_seen += 1;
                }
                Some(_) => {}
                None => {
                    self.groups[g].connections_seen += 1;
                    if !first_sample {
                        let sec = t.as_millis() / 1000;
                        *self.groups[g].new_by_second.entry(sec).or_default() += 1;
                        self.new_after_first[g] += 1;
                        *self
                            .new_by_node_second
                            .entry(s.node.addr.clone())
                            .or_default()
                            .entry(sec)
                            .or_default() += 1;
                        new_at = Some(sec);
                    }
                }
            }
            let group = &mut self.groups[g];
            if let Some(h) = e.client_host() {
                group.hosts.insert(h.to_owned());
            }
            group.nodes.insert(s.node.addr.clone());
            if let Some(cmd) = e.cmd().filter(|c| !c.is_empty() && *c != "NULL") {
                *group.commands.entry(cmd.to_owned()).or_default() += 1;
            }
            group.last_seen = group.last_seen.max(t);
            group.first_seen = group.first_seen.min(t);
            let first = known.map_or(t, |c| c.first);
            *per_group_open.entry(g).or_default() += 1;
            now_open.insert(
                id,
                Conn {
                    group: g,
                    age: e.age_secs().unwrap_or(0),
                    first,
                    new_at,
                },
            );
        }
        for (id, c) in &state.open {
            if !now_open.contains_key(id) {
                self.groups[c.group].lifetimes_secs.push(c.age);
            }
        }
        // Open counts per sample time (rounded to the second so one round's nodes add up).
        let second = Timestamp(t.0 / 1000 * 1000);
        for (g, n) in per_group_open {
            *self.open_by_time.entry((second, g)).or_default() += n;
        }
        state.open = now_open;
        self.nodes.insert(s.node.addr.clone(), state);
    }

    /// The finished census: connections seen mid-handshake merged into their application's
    /// group (see `merge.rs`), then the per-group figures.
    pub fn finish(mut self) -> Census {
        let secs = match (self.first, self.last) {
            (Some(f), Some(l)) => ms_to_secs(l.millis_since(f)),
            _ => 0.0,
        };
        let into = merge::merge_partial_keys(&mut self.groups);
        for state in self.nodes.values() {
            for c in state.open.values() {
                self.groups[into[c.group]].open_last += 1;
            }
        }
        let mut open_by_time: BTreeMap<(Timestamp, usize), u64> = BTreeMap::new();
        for (&(t, g), &n) in &self.open_by_time {
            *open_by_time.entry((t, into[g])).or_default() += n;
        }
        for (&(_, g), &n) in &open_by_time {
            let group = &mut self.groups[g];
            group.open_max = group.open_max.max(n);
        }
        let mut new_after_first = vec![0u64; self.groups.len()];
        for (g, n) in self.new_after_first.iter().enumerate() {
            new_after_first[into[g]] += n;
        }
        for (g, group) in self.groups.iter_mut().enumerate() {
            group.new_per_sec = if secs > 0.0 {
                float::from_u64(new_after_first[g]) / secs
            } else {
                0.0
            };
        }
        // Groups whose every connection moved to another identity are left out.
        let mut groups: Vec<ClientGroup> = self
            .groups
            .into_iter()
            .filter(|g| g.connections_seen > 0)
            .collect();
        groups.sort_by(|a, b| {
            b.connections_seen
                .cmp(&a.connections_seen)
                .then_with(|| a.key.cmp(&b.key))
        });
        let listed = self
            .nodes
            .iter()
            .filter_map(|(a, s)| Some((a.clone(), TimeSpan::new(s.first_sample?, s.last_sample?))))
            .collect();
        Census {
            groups,
            inferred: Vec::new(),
            new_by_node_second: self.new_by_node_second,
            listed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_list::parse_client_list;
    use crate::node::NodeRef;

    fn sample(t: u64, node: &str, text: &str) -> Line {
        Line::ClientList(ClientListSample {
            t: Timestamp(t),
            node: NodeRef {
                addr: node.parse().unwrap(),
                id: None,
            },
            clients: parse_client_list(text).unwrap(),
        })
    }

    const COLLECTOR: &str =
        "id=3 addr=10.0.0.1:40000 laddr=10.0.0.9:6379 fd=8 name= age=100 idle=0 flags=N cmd=client|list lib-name= lib-ver=\n";

    #[test]
    fn groups_by_library_and_measures_lifetimes() {
        let mut b = CensusBuilder::default();
        let n = "10.0.0.9:6379";
        b.push(&sample(
            1_000,
            n,
            &format!(
                "{COLLECTOR}id=10 addr=10.1.0.1:5000 fd=9 name= age=3600 idle=0 flags=N cmd=zrevrangebyscore lib-name=redis-py lib-ver=8.0.0\n\
                 id=11 addr=10.2.0.1:5001 fd=10 name= age=1 idle=0 flags=N cmd=zrevrange lib-name=redis-py lib-ver=8.1.0\n"
            ),
        ));
        b.push(&sample(
            2_000,
            n,
            &format!(
                "{COLLECTOR}id=10 addr=10.1.0.1:5000 fd=9 name= age=3601 idle=0 flags=N cmd=zrevrangebyscore lib-name=redis-py lib-ver=8.0.0\n\
                 id=12 addr=10.2.0.2:5002 fd=11 name= age=0 idle=0 flags=N cmd=zrangebyscore lib-name=redis-py lib-ver=8.1.0\n"
            ),
        ));
        let c = b.finish();
        assert_eq!(c.groups.len(), 2, "{c:#?}");
        let rec = c
            .groups
            .iter()
            .find(|g| g.key.lib_ver.as_deref() == Some("8.1.0"))
            .unwrap();
        assert_eq!(rec.connections_seen, 2);
        assert_eq!(rec.lifetimes_secs, vec![1]);
        assert_eq!(rec.hosts.len(), 2);
        assert!(
            rec.commands.contains_key("zrevrange") && rec.commands.contains_key("zrangebyscore")
        );
        assert_eq!(rec.new_per_sec, 1.0);
        assert_eq!(c.groups_using("zrevrangebyscore").len(), 1);
        assert!(
            c.groups_using("client|list").is_empty(),
            "the collector is left out"
        );
        assert_eq!(rec.key.label(), "redis-py 8.1.0");
    }

    #[test]
    fn a_connection_listed_before_it_named_itself_joins_its_real_group() {
        let mut b = CensusBuilder::default();
        let n = "10.0.0.9:6379";
        b.push(&sample(
            1_000,
            n,
            "id=5 addr=10.3.0.1:1 fd=9 name= age=0 idle=0 flags=N cmd=hello\n",
        ));
        b.push(&sample(
            2_000,
            n,
            "id=5 addr=10.3.0.1:1 fd=9 name=api age=1 idle=0 flags=N cmd=get\n\
             id=6 addr=10.3.0.1:2 fd=9 name= age=0 idle=0 flags=N cmd=hello\n",
        ));
        b.push(&sample(
            3_000,
            n,
            "id=5 addr=10.3.0.1:1 fd=9 name=api age=2 idle=0 flags=N cmd=get\n\
             id=6 addr=10.3.0.1:2 fd=9 name=api age=1 idle=0 flags=N cmd=get\n",
        ));
        let c = b.finish();
        assert_eq!(c.groups.len(), 1, "{c:#?}");
        let g = &c.groups[0];
        assert_eq!(g.key.name.as_deref(), Some("api"));
        assert_eq!(g.connections_seen, 2);
        let all = TimeSpan::new(Timestamp(0), Timestamp(10_000));
        assert_eq!(
            g.new_in(all),
            1,
            "id 6 is new; id 5 was there at the first sample"
        );
    }

    #[test]
    fn anonymous_clients_group_by_host() {
        let mut b = CensusBuilder::default();
        b.push(&sample(
            1_000,
            "10.0.0.9:6379",
            "id=5 addr=10.3.0.1:1 fd=9 name= age=5 idle=0 flags=N cmd=get\nid=6 addr=10.3.0.2:1 fd=9 name= age=5 idle=0 flags=N cmd=get\n",
        ));
        let c = b.finish();
        assert_eq!(c.groups.len(), 2);
        assert_eq!(c.groups[0].key.host.as_deref(), Some("10.3.0.1"));
        assert_eq!(c.groups[0].new_per_sec, 0.0);
    }

    #[test]
    fn connections_seen_mid_handshake_join_their_application() {
        let mut b = CensusBuilder::default();
        let n = "10.0.0.9:6379";
        b.push(&sample(
            1_000,
            n,
            "id=5 addr=10.3.0.1:1 fd=9 name=rec age=9 idle=0 flags=N cmd=zadd lib-name=redis-py lib-ver=8.0.0\n",
        ));
        b.push(&sample(
            2_000,
            n,
            "id=5 addr=10.3.0.1:1 fd=9 name=rec age=10 idle=0 flags=N cmd=zadd lib-name=redis-py lib-ver=8.0.0\n\
             id=6 addr=10.3.0.1:2 fd=9 name= age=0 idle=0 flags=N cmd=hello\n\
             id=7 addr=10.3.0.1:3 fd=9 name=rec age=0 idle=0 flags=N cmd=client|setname\n\
             id=8 addr=10.3.0.1:4 fd=9 name=rec age=0 idle=0 flags=N cmd=client|setinfo lib-name=redis-py\n",
        ));
        b.push(&sample(
            3_000,
            n,
            "id=5 addr=10.3.0.1:1 fd=9 name=rec age=11 idle=0 flags=N cmd=zadd lib-name=redis-py lib-ver=8.0.0\n",
        ));
        let c = b.finish();
        assert_eq!(c.groups.len(), 1, "{c:#?}");
        let g = &c.groups[0];
        assert_eq!(g.key.label(), "redis-py 8.0.0 \"rec\"");
        assert_eq!(g.connections_seen, 4);
        assert_eq!(g.merged_connections(), 3);
        assert_eq!(g.lifetimes_secs.len(), 3);
        assert_eq!(g.open_max, 4);
        assert_eq!(g.open_last, 1);
        assert_eq!(g.new_in(TimeSpan::new(Timestamp(0), Timestamp(10_000))), 3);
    }

    #[test]
    fn two_applications_on_one_host_stay_two_and_a_nameless_handshake_stays_apart() {
        let mut b = CensusBuilder::default();
        let n = "10.0.0.9:6379";
        let both = "id=5 addr=10.3.0.1:1 fd=9 name=api age=9 idle=0 flags=N cmd=get\n\
                    id=6 addr=10.3.0.1:2 fd=9 name=rec age=9 idle=0 flags=N cmd=zadd\n";
        b.push(&sample(1_000, n, both));
        b.push(&sample(
            2_000,
            n,
            &format!("{both}id=7 addr=10.3.0.1:3 fd=9 name= age=0 idle=0 flags=N cmd=hello\n"),
        ));
        b.push(&sample(3_000, n, both));
        let c = b.finish();
        let labels: Vec<String> = c.groups.iter().map(|g| g.key.label()).collect();
        assert_eq!(c.groups.len(), 3, "{labels:?}");
        assert!(labels.contains(&"host 10.3.0.1".to_owned()), "{labels:?}");
        assert!(c.groups.iter().all(|g| g.merged.is_empty()));
    }
}
