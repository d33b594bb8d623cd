//! The nodes a model knows: each address numbered once, with the model's own state per node
//! beside it ([`KnownNodes`]), and the slot table a `CLUSTER SLOTS` answer gives
//! ([`KnownNodes::fill_table`]).

use crate::node::NodeAddr;
use crate::slot::SlotRange;
use crate::timeline::{NodeIdx, NodeTable, SlotTable};

/// The addresses a model knows, numbered (the numbers are what its tables hold), each with a `T`
/// of the model's (its connection, its pool, its backoff…), made from a first value when the
/// address is first seen.
#[derive(Clone, Debug)]
pub(super) struct KnownNodes<T> {
    table: NodeTable,
    state: Vec<T>,
    first: T,
}

impl<T: Clone> KnownNodes<T> {
    /// No node yet; each node's state starts as `first`.
    pub(super) fn new(first: T) -> KnownNodes<T> {
        KnownNodes {
            table: NodeTable::new(),
            state: Vec::new(),
            first,
        }
    }

    /// The number of `addr`, numbered on first sight (`None` only past 65,535 addresses: the
    /// address is then unusable).
    pub(super) fn intern(&mut self, addr: &NodeAddr) -> Option<NodeIdx> {
        let (i, new) = self.table.intern_addr(addr).ok()?;
        if new {
            self.state.push(self.first.clone());
        }
        Some(i)
    }

    /// The address of node `n`.
    pub(super) fn addr(&self, n: NodeIdx) -> Option<&NodeAddr> {
        self.table.addr(n)
    }

    /// Every node, in the order first seen.
    pub(super) fn ids(&self) -> impl Iterator<Item = NodeIdx> + '_ {
        self.table.iter().map(|(n, _)| n)
    }

    /// The state of node `n` (numbered by this table).
    pub(super) fn get(&self, n: NodeIdx) -> &T {
        &self.state[n.index()]
    }

    /// The state of node `n`, to change.
    pub(super) fn get_mut(&mut self, n: NodeIdx) -> &mut T {
        &mut self.state[n.index()]
    }

    /// Every node's state, to change, with its number.
    pub(super) fn states_mut(&mut self) -> impl Iterator<Item = (NodeIdx, &mut T)> + '_ {
        self.table.iter().map(|(n, _)| n).zip(self.state.iter_mut())
    }

    /// The nodes whose state passes `keep`, in the order first seen.
    pub(super) fn filter(&self, keep: impl Fn(&T) -> bool) -> Vec<NodeIdx> {
        self.ids().filter(|n| keep(self.get(*n))).collect()
    }

    /// How many nodes' states pass `keep` (e.g. the connections open now).
    pub(super) fn count(&self, keep: impl Fn(&T) -> bool) -> u64 {
        let n = self.state.iter().filter(|s| keep(s)).count();
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// Makes `table` the slot table of a `CLUSTER SLOTS` answer: cleared, then each range given
    /// to its node, numbered by `number` (which may do more for a node it sees, as go-redis's
    /// `GetOrCreate` does; a node it cannot number is left out). Returns the nodes the answer
    /// names, each once, in the order first named.
    pub(super) fn fill_table(
        &mut self,
        table: &mut SlotTable,
        ranges: Vec<(SlotRange, NodeAddr)>,
        number: impl FnMut(&mut Self, &NodeAddr) -> Option<NodeIdx>,
    ) -> Vec<NodeIdx> {
        let (owners, named) = self.number_ranges(ranges, number);
        table.clear();
        for (r, i) in owners {
            table.fill(r, Some(i));
        }
        named
    }

    /// A `CLUSTER SLOTS` answer's ranges with their nodes numbered by `number` (as
    /// [`fill_table`](Self::fill_table) numbers them), and the nodes it names, each once, in the
    /// order first named.
    pub(super) fn number_ranges(
        &mut self,
        ranges: Vec<(SlotRange, NodeAddr)>,
        mut number: impl FnMut(&mut Self, &NodeAddr) -> Option<NodeIdx>,
    ) -> (Vec<(SlotRange, NodeIdx)>, Vec<NodeIdx>) {
        let mut owners = Vec::with_capacity(ranges.len());
        let mut named = Vec::new();
        for (r, a) in ranges {
            let Some(i) = number(self, &a) else {
                continue;
            };
            if !named.contains(&i) {
                named.push(i);
            }
            owners.push((r, i));
        }
        (owners, named)
    }
}
