//! The one node interner: cluster nodes (an address, and an id once known) numbered in order of
//! first appearance, so tables over nodes (slot owners, pools, rates) hold a small index.

use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroU16;

use crate::node::{NodeAddr, NodeId};

/// A node's number in a [`NodeTable`].
///
/// Invariant: the index is below `u16::MAX` (a table holds at most 65,535 nodes). It is stored
/// plus one in a `NonZeroU16`, so `Option<NodeIdx>` (a slot without owner) takes two bytes, like
/// the index itself.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeIdx(NonZeroU16);

impl NodeIdx {
    /// The most nodes a table holds.
    pub const MAX_NODES: usize = u16::MAX as usize;

    /// The node numbered `i`; `None` from [`MAX_NODES`](Self::MAX_NODES) on.
    #[inline]
    pub fn new(i: usize) -> Option<NodeIdx> {
        let stored = u16::try_from(i.checked_add(1)?).ok()?;
        NonZeroU16::new(stored).map(NodeIdx)
    }

    /// The index, for tables kept per node (`vec[n.index()]`).
    #[inline]
    pub fn index(self) -> usize {
        usize::from(self.0.get() - 1)
    }
}

impl fmt::Debug for NodeIdx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.index())
    }
}

/// Why a node could not be interned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InternError {
    /// Neither an address nor a known id: nothing to number the node by.
    #[error("a node without an address whose id is not known yet")]
    Unnamed,
    /// The table already holds [`NodeIdx::MAX_NODES`] nodes.
    #[error("more than {} nodes", NodeIdx::MAX_NODES)]
    Full,
}

/// Up to this many nodes, [`NodeTable::find_addr`] scans the first addresses before the map.
const SCAN_MAX: usize = 16;

/// Nodes by address and by id, each numbered once, in order of first appearance.
///
/// A node is found by its id first, then by its address: a node seen at a second address (its id
/// already known) keeps its number, and the second address leads to it too; a second id at a
/// known address (a node listed in handshake under a provisional id, then under its own) becomes
/// the node's id, and both lead to it. A node is created only with an address (something to reach
/// it at); an id seen first without one is not numbered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeTable {
    /// Each node's first address, by number.
    addrs: Vec<NodeAddr>,
    /// Each node's id, once known, by number.
    ids: Vec<Option<NodeId>>,
    by_addr: BTreeMap<NodeAddr, NodeIdx>,
    by_id: BTreeMap<NodeId, NodeIdx>,
}

impl NodeTable {
    /// An empty table.
    pub fn new() -> NodeTable {
        NodeTable::default()
    }

    /// The number of the node with id `id` (found first) or at `addr`, adding it if new. An id
    /// learnt for a node known only by address is kept; an address learnt for a node known by id
    /// leads to it from now on (unless that address already leads to another node).
    pub fn intern(
        &mut self,
        addr: Option<&NodeAddr>,
        id: Option<&NodeId>,
    ) -> Result<NodeIdx, InternError> {
        let by_id = id.and_then(|id| self.by_id.get(id)).copied();
        let n = match by_id.or_else(|| addr.and_then(|a| self.find_addr(a))) {
            Some(n) => n,
            None => {
                let addr = addr.ok_or(InternError::Unnamed)?;
                let n = NodeIdx::new(self.addrs.len()).ok_or(InternError::Full)?;
                self.addrs.push(addr.clone());
                self.ids.push(None);
                self.by_addr.insert(addr.clone(), n);
                n
            }
        };
        if let (Some(_), Some(a)) = (by_id, addr) {
            // Found by id: the address leads here too, unless it is the node's first (the usual
            // case, checked without the map) or already leads somewhere.
            if self.addrs[n.index()] != *a && !self.by_addr.contains_key(a) {
                self.by_addr.insert(a.clone(), n);
            }
        }
        if let Some(id) = id {
            let known = &mut self.ids[n.index()];
            if known.as_ref() != Some(id) {
                // A first id, or a new one at a known address: a node leaves the handshake
                // with another id than the one it was first listed under (or a node was
                // replaced at that address). The old id still leads here.
                *known = Some(id.clone());
                self.by_id.insert(id.clone(), n);
            }
        }
        Ok(n)
    }

    /// The number of the node at `addr`, and whether it was added now (the caller then grows
    /// its per-node tables).
    pub fn intern_addr(&mut self, addr: &NodeAddr) -> Result<(NodeIdx, bool), InternError> {
        if let Some(n) = self.find_addr(addr) {
            return Ok((n, false));
        }
        let n = self.intern(Some(addr), None)?;
        Ok((n, true))
    }

    /// The node at `addr`, if known.
    pub fn find_addr(&self, addr: &NodeAddr) -> Option<NodeIdx> {
        // A client model asks this on every redirect: a few nodes are found faster by their first
        // address (port first, the cheaper compare) than in the map.
        if self.addrs.len() <= SCAN_MAX {
            let first = self
                .addrs
                .iter()
                .position(|a| a.port() == addr.port() && a.host() == addr.host());
            if let Some(i) = first {
                return NodeIdx::new(i);
            }
        }
        self.by_addr.get(addr).copied()
    }

    /// The node with id `id`, if known.
    pub fn find_id(&self, id: &NodeId) -> Option<NodeIdx> {
        self.by_id.get(id).copied()
    }

    /// The address node `n` was first seen at (`None`: not a node of this table).
    #[inline]
    pub fn addr(&self, n: NodeIdx) -> Option<&NodeAddr> {
        self.addrs.get(n.index())
    }

    /// Node `n`'s id, once known.
    pub fn id(&self, n: NodeIdx) -> Option<&NodeId> {
        self.ids.get(n.index()).and_then(Option::as_ref)
    }

    /// How many nodes.
    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    /// Whether no node is known.
    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }

    /// Every node with its first address, in order.
    pub fn iter(&self) -> impl Iterator<Item = (NodeIdx, &NodeAddr)> + '_ {
        self.addrs
            .iter()
            .enumerate()
            .filter_map(|(i, a)| Some((NodeIdx::new(i)?, a)))
    }

    /// Every node's first address, in order (index `i` is node `i`'s).
    pub fn addrs(&self) -> Vec<NodeAddr> {
        self.addrs.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> NodeAddr {
        NodeAddr::new("127.0.0.1", port).expect("valid address")
    }

    fn id(s: &str) -> NodeId {
        NodeId::new(s).expect("non-empty id")
    }

    #[test]
    fn option_of_an_index_takes_two_bytes() {
        assert_eq!(std::mem::size_of::<Option<NodeIdx>>(), 2);
        assert_eq!(NodeIdx::new(0).map(NodeIdx::index), Some(0));
        assert_eq!(NodeIdx::new(65_534).map(NodeIdx::index), Some(65_534));
        assert_eq!(NodeIdx::new(65_535), None);
    }

    #[test]
    fn numbers_in_order_of_first_appearance() {
        let mut t = NodeTable::new();
        assert_eq!(
            t.intern_addr(&addr(7001)).map(|(n, new)| (n.index(), new)),
            Ok((0, true))
        );
        assert_eq!(
            t.intern_addr(&addr(7002)).map(|(n, new)| (n.index(), new)),
            Ok((1, true))
        );
        assert_eq!(
            t.intern_addr(&addr(7001)).map(|(n, new)| (n.index(), new)),
            Ok((0, false))
        );
        assert_eq!(t.len(), 2);
        assert_eq!(t.addrs(), vec![addr(7001), addr(7002)]);
    }

    #[test]
    fn an_id_learnt_later_finds_the_node_from_any_address() {
        let mut t = NodeTable::new();
        let a = t.intern(Some(&addr(7001)), None).expect("interned");
        let b = t
            .intern(Some(&addr(7001)), Some(&id("aaa")))
            .expect("interned");
        assert_eq!(a, b);
        // The same id at a second address is the same node; the address now leads to it.
        let c = t
            .intern(Some(&addr(9001)), Some(&id("aaa")))
            .expect("interned");
        assert_eq!(a, c);
        assert_eq!(t.find_addr(&addr(9001)), Some(a));
        assert_eq!(t.addr(a), Some(&addr(7001)));
        assert_eq!(t.id(a), Some(&id("aaa")));
        assert_eq!(t.find_id(&id("aaa")), Some(a));
    }

    #[test]
    fn a_node_out_of_handshake_keeps_its_number_under_its_own_id() {
        let mut t = NodeTable::new();
        let provisional = t
            .intern(Some(&addr(7002)), Some(&id("handshake")))
            .expect("interned");
        let real = t
            .intern(Some(&addr(7002)), Some(&id("real")))
            .expect("interned");
        assert_eq!(provisional, real);
        assert_eq!(t.id(real), Some(&id("real")));
        assert_eq!(t.find_id(&id("real")), Some(real));
        assert_eq!(t.find_id(&id("handshake")), Some(real));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn an_unknown_id_without_address_is_not_numbered() {
        let mut t = NodeTable::new();
        assert_eq!(t.intern(None, Some(&id("bbb"))), Err(InternError::Unnamed));
        assert_eq!(t.intern(None, None), Err(InternError::Unnamed));
        assert!(t.is_empty());
    }

    #[test]
    fn a_full_table_says_so() {
        let mut t = NodeTable::new();
        for i in 0..NodeIdx::MAX_NODES {
            let host = format!("h{i}");
            let a = NodeAddr::new(host, 1).expect("valid address");
            assert!(t.intern_addr(&a).is_ok());
        }
        assert_eq!(t.intern_addr(&addr(1)), Err(InternError::Full));
        let first = NodeAddr::new("h0", 1).expect("valid address");
        assert_eq!(t.intern_addr(&first).map(|(n, _)| n.index()), Ok(0));
    }
}
