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

/// A node's last client list as the reader rebuilds it: each connection's entry as last written,
/// and when the list was taken.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientBase {
    t: Option<Timestamp>,
    entries: BTreeMap<u64, Carried>,
}

/// `entry` with its `age` grown by the whole seconds from `from` to `to`.
fn aged(entry: &ClientEntry, from: Timestamp, to: Timestamp) -> ClientEntry {
    let mut e = entry.clone();
    if let Some(age) = entry.age_secs() {
        let grown = age + (to.millis_since(from) + 500) / 1000;
        e.fields.insert("age", grown.to_string());
    }
    e
}

impl ClientBase {
    /// Forgets the node's list (a delta then needs a whole list first).
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
    pub fn advance(&mut self, d: &ClientListDelta) -> Result<(), DeltaError> {
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
}

/// A 64-bit digest of what `e` says of its connection apart from the [`VOLATILE`] fields
/// (FNV-1a over its lasting fields and values, in field order).
pub fn lasting_digest(e: &ClientEntry) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut h = OFFSET;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
        // A separator no field name or value holds, so that ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(PRIME);
    };
    for (k, v) in e.fields.iter().filter(|(k, _)| !VOLATILE.contains(k)) {
        eat(k.as_bytes());
        eat(v.as_bytes());
    }
    h
}

/// What the writer keeps of a node's last client list: when it was taken and each connection's
/// [`lasting_digest`] (a few bytes per connection, where the reader keeps whole entries).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientListWriter {
    t: Option<Timestamp>,
    digests: BTreeMap<u64, u64>,
}

impl ClientListWriter {
    /// Forgets the node's list (the next one is written whole: a new file).
    pub fn clear(&mut self) {
        *self = ClientListWriter::default();
    }

    /// The line that records `clients`, taken at `t` from `node`: the changes since the list
    /// written before when they are smaller than the whole (connections new or changed, whole;
    /// closed ones by id), else the whole list.
    pub fn line_for(&mut self, t: Timestamp, node: NodeRef, clients: Vec<ClientEntry>) -> Line {
        let digests: Option<BTreeMap<u64, u64>> = clients
            .iter()
            .map(|e| Some((e.id()?, lasting_digest(e))))
            .collect();
        let Some(digests) = digests else {
            // A connection without an id cannot be carried: whole, and whole again next time.
            self.clear();
            return Line::ClientList(ClientListSample { t, node, clients });
        };
        let delta = self.t.and_then(|since| {
            let gone: Vec<u64> = self
                .digests
                .keys()
                .copied()
                .filter(|id| !digests.contains_key(id))
                .collect();
            let changed: Vec<&ClientEntry> = clients
                .iter()
                .filter(|e| {
                    e.id()
                        .is_none_or(|id| self.digests.get(&id) != digests.get(&id))
                })
                .collect();
            (clients.is_empty() || changed.len() + gone.len() < clients.len()).then(|| {
                ClientListDelta {
                    t,
                    node: node.clone(),
                    since,
                    changed: changed.into_iter().cloned().collect(),
                    gone,
                }
            })
        });
        self.t = Some(t);
        self.digests = digests;
        match delta {
            Some(d) => Line::ClientListDelta(d),
            None => Line::ClientList(ClientListSample { t, node, clients }),
        }
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

    /// Writes `clients` at `t` and reads the line back through `reader`.
    fn through(
        writer: &mut ClientListWriter,
        reader: &mut ClientBase,
        t: Timestamp,
        clients: Vec<ClientEntry>,
    ) -> (Line, Vec<ClientEntry>) {
        let line = writer.line_for(t, node(), clients);
        let read = match &line {
            Line::ClientList(s) => {
                reader.reset(s.t, &s.clients);
                s.clients.clone()
            }
            Line::ClientListDelta(d) => reader.apply(d).unwrap(),
            other => panic!("{other:?}"),
        };
        (line, read)
    }

    #[test]
    fn unchanged_connections_are_carried_with_their_age_grown() {
        let (mut writer, mut reader) = (ClientListWriter::default(), ClientBase::default());
        let t0 = Timestamp(1_000_000);
        let first = list(
            "id=1 addr=10.0.0.9:1 name=api age=5 idle=0 cmd=get tot-mem=100\n\
             id=2 addr=10.0.0.9:2 name=api age=9 idle=1 cmd=set tot-mem=200\n",
        );
        let (line, _) = through(&mut writer, &mut reader, t0, first);
        assert!(
            matches!(line, Line::ClientList(_)),
            "the first list is whole"
        );
        // 3 s later: 1 unchanged but for volatile fields, 2 ran another command, 3 is new.
        let t1 = Timestamp(t0.0 + 3_000);
        let second = list(
            "id=1 addr=10.0.0.9:1 name=api age=8 idle=2 cmd=get tot-mem=900\n\
             id=2 addr=10.0.0.9:2 name=api age=12 idle=0 cmd=zadd tot-mem=200\n\
             id=3 addr=10.0.0.9:3 name=api age=0 idle=0 cmd=hello tot-mem=50\n",
        );
        let (line, rebuilt) = through(&mut writer, &mut reader, t1, second);
        let Line::ClientListDelta(d) = &line else {
            panic!("a delta: {line:?}")
        };
        assert_eq!(d.since, t0);
        let ids: Vec<_> = d.changed.iter().filter_map(ClientEntry::id).collect();
        assert_eq!(ids, [2, 3]);
        assert!(d.gone.is_empty());
        assert_eq!(rebuilt.len(), 3);
        assert_eq!(rebuilt[0].age_secs(), Some(8), "5 s grown by 3");
        assert_eq!(
            rebuilt[0].get("tot-mem"),
            Some("100"),
            "volatile: as last written"
        );
        assert_eq!(rebuilt[1].cmd(), Some("zadd"));
        // 1 closes, 4 opens.
        let third = list(
            "id=2 addr=10.0.0.9:2 name=api age=13 idle=0 cmd=zadd tot-mem=200\n\
             id=3 addr=10.0.0.9:3 name=api age=1 idle=0 cmd=hello tot-mem=50\n\
             id=4 addr=10.0.0.9:4 name=api age=0 idle=0 cmd=hello tot-mem=50\n",
        );
        let (line, rebuilt) = through(&mut writer, &mut reader, Timestamp(t1.0 + 1_000), third);
        let Line::ClientListDelta(d) = &line else {
            panic!("a delta: {line:?}")
        };
        assert_eq!(d.gone, [1]);
        let ids: Vec<_> = rebuilt.iter().filter_map(ClientEntry::id).collect();
        assert_eq!(ids, [2, 3, 4]);
    }

    #[test]
    fn a_list_mostly_changed_or_without_ids_is_written_whole() {
        let mut w = ClientListWriter::default();
        let whole = |l: &Line| matches!(l, Line::ClientList(_));
        let first = list("id=1 addr=a:1 cmd=get age=1\nid=2 addr=a:2 cmd=get age=1\n");
        assert!(whole(&w.line_for(Timestamp(0), node(), first)));
        let next = list("id=3 addr=a:3 cmd=get age=0\nid=4 addr=a:4 cmd=get age=0\n");
        assert!(whole(&w.line_for(Timestamp(1000), node(), next.clone())));
        let no_id = list("addr=a:1 cmd=get age=1\n");
        assert!(whole(&w.line_for(Timestamp(2000), node(), no_id)));
        assert!(
            whole(&w.line_for(Timestamp(3000), node(), next)),
            "and whole after it"
        );
    }

    #[test]
    fn the_digest_sees_lasting_fields_only() {
        let a = &list("id=1 addr=a:1 name=x cmd=get age=1 idle=4\n")[0];
        let b = &list("id=1 addr=a:1 name=x cmd=get age=9 idle=0\n")[0];
        let c = &list("id=1 addr=a:1 name=xc md=get age=1 idle=4\n")[0];
        assert_eq!(lasting_digest(a), lasting_digest(b));
        assert_ne!(lasting_digest(a), lasting_digest(c));
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
