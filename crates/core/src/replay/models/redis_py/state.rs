//! The state a redis-py client's tasks share (`RedisCluster` and its `NodesManager`): the nodes
//! it knows, its connection pools, slot table and startup nodes, the initialisation lock, and how
//! it reads a `CLUSTER SLOTS` answer.

use std::collections::VecDeque;

use crate::node::NodeAddr;
use crate::replay::client_state::ClientState;
use crate::replay::cluster::Reply;
use crate::replay::net::{Net, TaskId};
use crate::replay::pool::{Lease, Link, Pools};
use crate::replay::slot_cache::{SlotCache, Unlisted};
use crate::replay::SimRng;
use crate::slot::{SlotRange, SLOT_COUNT};
use crate::time::Timestamp;
use crate::timeline::{NodeIdx, NodeTable};

/// `RedisCluster._lock` around `initialize()`: held by one task, the others queued in order.
#[derive(Debug, Default)]
pub(super) struct InitLock {
    /// Whether a task holds it.
    pub(super) held: bool,
    /// The tasks waiting for it, in order.
    pub(super) waiters: VecDeque<TaskId>,
}

/// Everything the tasks share.
pub(super) struct Shared {
    /// The addresses the client knows, numbered; the numbers are what the tables hold.
    pub(super) nodes: NodeTable,
    /// Each node's connections (`ClusterNode._connections` / `_free`).
    pub(super) pools: Pools,
    /// Instant clock: when the last `initialize()` ended (one held `_lock` until then; a task
    /// that needs one meanwhile waits for it).
    pub(super) init_until: Timestamp,
    /// Whether that initialisation succeeded.
    pub(super) init_ok: bool,
    /// `_lock`.
    pub(super) lock: InitLock,
    /// Slot → node: built by each initialisation, patched after a MOVED.
    pub(super) table: SlotCache,
    /// `startup_nodes`.
    pub(super) startup: Vec<NodeIdx>,
    /// `nodes_cache`, in its order: the nodes of the last answer as the client first met them
    /// (`set_nodes` keeps a known node in its place and appends a new one); 7.2+ moves a failing
    /// node to its end. Its first is the default node, which `COMMAND` goes to.
    pub(super) cache: Vec<NodeIdx>,
    /// The simulated cluster's number of each of this client's nodes (looked up once).
    pub(super) cluster_of: Vec<Option<Option<NodeIdx>>>,
    /// This client's number of each of the cluster's nodes a redirect named.
    pub(super) from_cluster: Vec<Option<NodeIdx>>,
    /// `_initialize`: an initialisation is due before the next command.
    pub(super) needs_init: bool,
    /// `reinitialize_counter`.
    pub(super) moved_counter: u32,
    /// Whether the `COMMAND` table has been loaded once (`commands_parser.commands` not empty).
    pub(super) commands_loaded: bool,
    /// `nodes_manager.default_node` is set: by a successful initialisation, unset by
    /// `NodesManager.aclose()` (see `keyless.rs`).
    pub(super) default_known: bool,
    /// `random` for `get_random_primary_node` (seeded, see `keyless.rs`).
    pub(super) rng: SimRng,
    /// Initialisations (in thousandths) since the last full garbage collection.
    pub(super) gc_debt: u64,
    /// What the report reads.
    pub(super) state: ClientState,
}

/// What an answer to `CLUSTER SLOTS` came to.
pub(super) enum Topology {
    /// It covers every slot: the owners, numbered (remapped), and the nodes it names.
    Covered(Vec<(SlotRange, NodeIdx)>, Vec<NodeIdx>),
    /// It leaves slots without an owner.
    Partial,
    /// The node did not answer.
    Failed,
}

impl Shared {
    /// The number of `addr` (`None` only past 65,535 addresses: the address is then unusable).
    pub(super) fn intern(&mut self, addr: &NodeAddr) -> Option<NodeIdx> {
        self.nodes.intern_addr(addr).ok().map(|(n, _)| n)
    }

    /// Gives the connection back after an exchange that ended with `link` (a timeout drops it,
    /// so does a refusal); when (µs) a reset closed it under the command, if one did.
    pub(super) fn give_back(&mut self, lease: Lease, link: Link, now: Timestamp) -> Option<u64> {
        let closed = self.pools.finish(lease, link, now);
        self.state.new_connections = self.pools.opened();
        closed
    }

    /// Whether the connection of `lease`, to the cluster's node `c`, was open and someone
    /// closed it since (a `CLIENT KILL`, `kills.rs`): if so it is given back broken. The command
    /// then goes out on the closed socket and its read meets end-of-file at once: a
    /// `ConnectionError` ("Connection closed by server.", 5.0.0 `redis/_parsers/base.py`
    /// l. 226-228) before anything reaches the node.
    pub(super) fn killed(&mut self, lease: Lease, c: Option<NodeIdx>, net: &Net<'_>) -> bool {
        let killed = lease.was_connected()
            && c.is_some_and(|c| net.killed(c, lease.opened_us(), net.now_us()));
        if killed {
            self.give_back(lease, Link::Refused, net.now());
        }
        killed
    }

    /// The `COMMAND` table is in place; `ends_init`: it ends an initialisation, which is counted
    /// done in this step (`_initialize = False` in the step that parses the table, 5.0.0
    /// `redis/asyncio/cluster.py` l. 396, 8.1.0 l. 684), not when the task resumes after the
    /// parse: a request for another made meanwhile stands.
    pub(super) fn table_loaded(&mut self, ends_init: bool) {
        self.commands_loaded = true;
        self.needs_init &= !ends_init;
    }

    /// The simulated cluster's number of node `n` (`None`: no node at its address).
    pub(super) fn cluster_idx(&mut self, n: NodeIdx, net: &Net<'_>) -> Option<NodeIdx> {
        let i = n.index();
        if let Some(Some(c)) = self.cluster_of.get(i) {
            return *c;
        }
        let c = self.nodes.addr(n).and_then(|a| net.node_index(a));
        if self.cluster_of.len() <= i {
            self.cluster_of.resize(i + 1, None);
        }
        self.cluster_of[i] = Some(c);
        c
    }

    /// This client's number of the cluster's node `c` (a redirect's target), interned on first
    /// sight.
    pub(super) fn own_idx(&mut self, c: NodeIdx, net: &Net<'_>) -> Option<NodeIdx> {
        let i = c.index();
        if let Some(Some(n)) = self.from_cluster.get(i) {
            return Some(*n);
        }
        let n = self.intern(&net.addr(c)?.clone())?;
        if self.from_cluster.len() <= i {
            self.from_cluster.resize(i + 1, None);
        }
        self.from_cluster[i] = Some(n);
        Some(n)
    }

    /// `close()` / `aclose()` at `now_us`: when no initialisation is pending, every connection
    /// dropped (the ones in use too) and one is due. Returns how many open connections it
    /// closed.
    pub(super) fn close(&mut self, now_us: u64) -> u64 {
        if self.needs_init {
            return 0;
        }
        let closed = self.pools.disconnect_all(now_us);
        self.needs_init = true;
        // NodesManager.aclose(): `self.default_node = None`.
        self.default_known = false;
        closed
    }

    /// `set_nodes(nodes_cache, tmp_nodes_cache, remove_old=True)` with the nodes an answer
    /// named, then the default node: `get_nodes_by_server_type(PRIMARY)[0]` (5.0.0 l. 1322,
    /// 8.1.0 l. 2409), the first node of `nodes_cache`.
    pub(super) fn set_nodes(&mut self, discovered: &[NodeIdx]) -> Option<NodeIdx> {
        keep_in_order(&mut self.cache, discovered);
        self.cache.first().copied()
    }

    /// `set_nodes(startup_nodes, nodes_cache, remove_old=True)` (5.0.0 l. 1319, 8.1.0 l. 2406):
    /// the startup nodes become those of `nodes_cache`, a known one in its place (7.2+: a failed
    /// one stays last).
    pub(super) fn startup_from_cache(&mut self) {
        keep_in_order(&mut self.startup, &self.cache);
    }

    /// `get_random_primary_node()`: a random node of `nodes_cache` (none when it is empty).
    pub(super) fn random_primary(&mut self) -> Option<NodeIdx> {
        let i = self.rng.index_below(self.cache.len());
        self.cache.get(i).copied()
    }

    /// `move_node_to_end_of_cached_nodes` (7.2+; 8.1.0 l. 2108–2123): a failing node goes last
    /// in `startup_nodes` and in `nodes_cache`, so it is tried last and is not the default node
    /// while another is known.
    pub(super) fn move_to_end(&mut self, node: NodeIdx) {
        for list in [&mut self.startup, &mut self.cache] {
            if let Some(p) = list.iter().position(|&s| s == node) {
                let n = list.remove(p);
                list.push(n);
            }
        }
    }

    pub(super) fn refresh_state(&mut self) {
        self.state.startup_nodes = self.startup.len();
        self.state.wedged = self.needs_init && self.startup.is_empty();
    }

    /// Makes `owners` the slot table (`slots_cache` rebuilt: unlisted slots have no owner).
    pub(super) fn load_table(&mut self, owners: Vec<(SlotRange, NodeIdx)>) {
        self.table.load(owners, Unlisted::Cleared);
    }

    /// Reads a `CLUSTER SLOTS` answer (owners by the cluster's numbers) as
    /// `NodesManager.initialize()` does.
    pub(super) fn read_answer(
        &mut self,
        answer: Result<&[(SlotRange, NodeIdx)], Reply>,
        remap: Option<&NodeAddr>,
        net: &Net<'_>,
    ) -> Topology {
        let Ok(ranges) = answer else {
            return Topology::Failed;
        };
        if !covers_every_slot(ranges) {
            return Topology::Partial;
        }
        let remapped = remap.and_then(|a| self.intern(a));
        let mut owners = Vec::with_capacity(ranges.len());
        let mut discovered = Vec::new();
        for &(r, c) in ranges {
            let own = match remap {
                Some(_) => remapped,
                None => self.own_idx(c, net),
            };
            let Some(i) = own else {
                continue;
            };
            if !discovered.contains(&i) {
                discovered.push(i);
            }
            owners.push((r, i));
        }
        Topology::Covered(owners, discovered)
    }
}

/// `set_nodes(old, new, remove_old=True)` on a list in dict order: the nodes of `old` not in
/// `new` go, those left keep their places, the others of `new` are appended in its order.
fn keep_in_order(old: &mut Vec<NodeIdx>, new: &[NodeIdx]) {
    old.retain(|n| new.contains(n));
    for &n in new {
        if !old.contains(&n) {
            old.push(n);
        }
    }
}

/// Whether `ranges` leave no slot without an owner (the `fully_covered` loop of
/// `NodesManager.initialize()`).
fn covers_every_slot(ranges: &[(SlotRange, NodeIdx)]) -> bool {
    let mut spans: Vec<(u16, u16)> = ranges
        .iter()
        .map(|(r, _)| (r.start().get(), r.end().get()))
        .collect();
    spans.sort_unstable();
    // The first slot not yet covered.
    let mut next: u32 = 0;
    for (start, end) in spans {
        if u32::from(start) > next {
            return false;
        }
        next = next.max(u32::from(end) + 1);
    }
    next >= u32::from(SLOT_COUNT)
}
