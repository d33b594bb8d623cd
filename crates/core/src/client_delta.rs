//! Client lists written as changes. A node with thousands of connections answers `CLIENT LIST`
//! with a megabyte of text, nearly all of it what its previous reply said. The collector writes a
//! node's first list in a file whole, and then only what changed ([`ClientListDelta`]): the
//! connections that are new or whose lasting fields changed, whole, and the ids of those that
//! closed. [`crate::reader::RecordingReader`] rebuilds every list whole, so nothing that reads a
//! recording sees the difference.
//!
//! Every connection's first sighting is written whole (it is new), and so is every change of
//! what it is (name, library, user, flags, last command, …). A connection carried over is its
//! entry as last written with `age` grown by the whole seconds since (exact to the second the
//! server rounds to): its last sighting keeps everything but the fields in [`VOLATILE`], which
//! move on every reply (idle time, buffers, memory, traffic counters) and stay as last written.

use std::collections::BTreeMap;

use crate::client_list::ClientEntry;
use crate::node::NodeRef;
use crate::recording::{ClientListDelta, ClientListSample, Line};
use crate::time::Timestamp;

/// Fields that move on every reply without saying anything new about the connection: a change
/// in them alone does not write the connection again.
pub const VOLATILE: &[&str] = &[
    "age",
    "idle",
    "qbuf",
    "qbuf-free",
    "argv-mem",
    "multi-mem",
    "obl",
    "oll",
    "omem",
    "tot-mem",
    "rbs",
    "rbp",
    "tot-net-in",
    "tot-net-out",
    "tot-cmds",
    "io-thread",
];

/// A delta that does not fit the list it should change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeltaError {
    /// No whole list of the node came before it.
    #[error("client_list_delta of {node} with no whole client list of that node before it")]
    NoBase {
        /// The node.
        node: String,
    },
    /// The list it changes is not the node's previous one (a line in between is missing).
    #[error(
        "client_list_delta of {node} changes the list of {since} but the node's previous list is of {previous} (a line is missing)"
    )]
    Gap {
        /// The node.
        node: String,
        /// The time the delta says it changes.
        since: String,
        /// The time of the list there is.
        previous: String,
    },
}

/// A connection as last written.
#[derive(Clone, Debug, PartialEq)]
struct Carried {
    /// When its entry was written.
    written: Timestamp,
    /// The entry then.
    entry: ClientEntry,
}

/// A node's last client list as the reader rebuilds it (and as the writer knows the reader has
/// it): each connection's entry as last written, and when the list was taken.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientBase {
    t: Option<Timestamp>,
    entries: BTreeMap<u64, Carried>,
}

/// Whether `a` and `b` say the same about a connection, apart from [`VOLATILE`] fields.
pub fn same_lasting_fields(a: &ClientEntry, b: &ClientEntry) -> bool {
    fn lasting(e: &ClientEntry) -> impl Iterator<Item = (&String, &String)> {
        e.fields
            .iter()
            .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
    }
    lasting(a).eq(lasting(b))
}

/// `entry` with its `age` grown by the whole seconds from `from` to `to`.
fn aged(entry: &ClientEntry, from: Timestamp, to: Timestamp) -> ClientEntry {
    let mut e = entry.clone();
    if let Some(age) = entry.age_secs() {
        let grown = age + (to.millis_since(from) + 500) / 1000;
        e.fields.insert("age".to_owned(), grown.to_string());
    }
    e
}

impl ClientBase {
    /// Whether a list of the node is known.
    pub fn is_known(&self) -> bool {
        self.t.is_some()
    }

    /// Forgets the node's list (the next one is written whole).
    pub fn clear(&mut self) {
        *self = ClientBase::default();
    }

    /// Starts again from a whole list taken at `t`.
    pub fn reset(&mut self, t: Timestamp, clients: &[ClientEntry]) {
        self.t = Some(t);
        self.entries = clients
            .iter()
            .filter_map(|e| {
                Some((
                    e.id()?,
                    Carried {
                        written: t,
                        entry: e.clone(),
                    },
                ))
            })
            .collect();
    }

    /// The changes that turn this list into `clients`, taken at `t` from `node`; `None` when the
    /// list is better written whole: no list is known, a connection has no id, or the changes
    /// are not smaller than the list.
    pub fn delta(
        &self,
        t: Timestamp,
        node: &NodeRef,
        clients: &[ClientEntry],
    ) -> Option<ClientListDelta> {
        let since = self.t?;
        let mut changed = Vec::new();
        let mut present = Vec::with_capacity(clients.len());
        for e in clients {
            let id = e.id()?;
            present.push(id);
            match self.entries.get(&id) {
                Some(c) if same_lasting_fields(&c.entry, e) => {}
                _ => changed.push(e.clone()),
            }
        }
        present.sort_unstable();
        let gone: Vec<u64> = self
            .entries
            .keys()
            .copied()
            .filter(|id| present.binary_search(id).is_err())
            .collect();
        if !clients.is_empty() && changed.len() + gone.len() >= clients.len() {
            return None;
        }
        Some(ClientListDelta {
            t,
            node: node.clone(),
            since,
            changed,
            gone,
        })
    }

    /// Applies `d` and gives the whole list it stands for, in id order.
    ///
    /// # Errors
    ///
    /// When no list of the node is known, or the known one is not the one `d` changes.
    pub fn apply(&mut self, d: &ClientListDelta) -> Result<Vec<ClientEntry>, DeltaError> {
        self.advance(d)?;
        Ok(self
            .entries
            .values()
            .map(|c| aged(&c.entry, c.written, d.t))
            .collect())
    }

    /// Moves on by `d` (as [`ClientBase::apply`], without building the list).
    fn advance(&mut self, d: &ClientListDelta) -> Result<(), DeltaError> {
        let node = || d.node.addr.to_string();
        let Some(previous) = self.t else {
            return Err(DeltaError::NoBase { node: node() });
        };
        if previous != d.since {
            return Err(DeltaError::Gap {
                node: node(),
                since: d.since.to_rfc3339(),
                previous: previous.to_rfc3339(),
            });
        }
        for id in &d.gone {
            self.entries.remove(id);
        }
        for e in &d.changed {
            if let Some(id) = e.id() {
                self.entries.insert(
                    id,
                    Carried {
                        written: d.t,
                        entry: e.clone(),
                    },
                );
            }
        }
        self.t = Some(d.t);
        Ok(())
    }

    /// The line that records `clients`, taken at `t` from `node`: the changes since this list
    /// when they are smaller than the whole, else the whole list; this base moves on to it.
    pub fn line_for(&mut self, t: Timestamp, node: NodeRef, clients: Vec<ClientEntry>) -> Line {
        if let Some(d) = self.delta(t, &node, &clients) {
            if self.advance(&d).is_ok() {
                return Line::ClientListDelta(d);
            }
        }
        self.reset(t, &clients);
        Line::ClientList(ClientListSample { t, node, clients })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_list::parse_client_list;

    fn node() -> NodeRef {
        NodeRef {
            addr: "10.0.0.1:7000".parse().unwrap(),
            id: None,
        }
    }

    fn list(text: &str) -> Vec<ClientEntry> {
        parse_client_list(text).unwrap()
    }

    #[test]
    fn unchanged_connections_are_carried_with_their_age_grown() {
        let t0 = Timestamp(1_000_000);
        let first = list(
            "id=1 addr=10.0.0.9:1 name=api age=5 idle=0 cmd=get tot-mem=100\n\
             id=2 addr=10.0.0.9:2 name=api age=9 idle=1 cmd=set tot-mem=200\n",
        );
        let mut writer = ClientBase::default();
        assert!(writer.delta(t0, &node(), &first).is_none(), "no base yet");
        writer.reset(t0, &first);
        let mut reader = writer.clone();
        // 3 s later: 1 unchanged but for volatile fields, 2 ran another command, 3 is new.
        let t1 = Timestamp(t0.0 + 3_000);
        let second = list(
            "id=1 addr=10.0.0.9:1 name=api age=8 idle=2 cmd=get tot-mem=900\n\
             id=2 addr=10.0.0.9:2 name=api age=12 idle=0 cmd=zadd tot-mem=200\n\
             id=3 addr=10.0.0.9:3 name=api age=0 idle=0 cmd=hello tot-mem=50\n",
        );
        let d = writer.delta(t1, &node(), &second).expect("a delta");
        assert_eq!(d.since, t0);
        let ids: Vec<_> = d.changed.iter().filter_map(ClientEntry::id).collect();
        assert_eq!(ids, [2, 3]);
        assert!(d.gone.is_empty());
        let rebuilt = reader.apply(&d).unwrap();
        assert_eq!(rebuilt.len(), 3);
        assert_eq!(rebuilt[0].age_secs(), Some(8), "5 s grown by 3");
        assert_eq!(
            rebuilt[0].get("tot-mem"),
            Some("100"),
            "volatile: as last written"
        );
        assert_eq!(rebuilt[1].cmd(), Some("zadd"));
        // 1 closes.
        writer.apply(&d).unwrap();
        let t2 = Timestamp(t1.0 + 1_000);
        let third = list(
            "id=2 addr=10.0.0.9:2 name=api age=13 idle=0 cmd=zadd tot-mem=200\n\
             id=3 addr=10.0.0.9:3 name=api age=1 idle=0 cmd=hello tot-mem=50\n\
             id=4 addr=10.0.0.9:4 name=api age=0 idle=0 cmd=hello tot-mem=50\n",
        );
        let d = writer.delta(t2, &node(), &third).expect("a delta");
        assert_eq!(d.gone, [1]);
        let rebuilt = reader.apply(&d).unwrap();
        let ids: Vec<_> = rebuilt.iter().filter_map(ClientEntry::id).collect();
        assert_eq!(ids, [2, 3, 4]);
    }

    #[test]
    fn a_list_mostly_changed_is_written_whole() {
        let t0 = Timestamp(0);
        let mut b = ClientBase::default();
        b.reset(
            t0,
            &list("id=1 addr=a:1 cmd=get age=1\nid=2 addr=a:2 cmd=get age=1\n"),
        );
        let next = list("id=3 addr=a:3 cmd=get age=0\nid=4 addr=a:4 cmd=get age=0\n");
        assert!(b.delta(Timestamp(1000), &node(), &next).is_none());
        let no_id = list("addr=a:1 cmd=get age=1\n");
        assert!(b.delta(Timestamp(1000), &node(), &no_id).is_none());
    }

    #[test]
    fn a_delta_without_its_list_is_an_error() {
        let d = ClientListDelta {
            t: Timestamp(2000),
            node: node(),
            since: Timestamp(1000),
            changed: Vec::new(),
            gone: vec![1],
        };
        let mut b = ClientBase::default();
        assert!(matches!(b.apply(&d), Err(DeltaError::NoBase { .. })));
        b.reset(Timestamp(500), &list("id=1 addr=a:1 cmd=get age=1\n"));
        let e = b.apply(&d).unwrap_err();
        assert!(e.to_string().contains("a line is missing"), "{e}");
    }
}
