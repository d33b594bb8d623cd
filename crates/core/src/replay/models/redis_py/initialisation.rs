//! `RedisCluster.initialize()`'s work once it holds `_lock`: `NodesManager.initialize()` (the
//! slot cache from a `CLUSTER SLOTS` answer) and `commands_parser.initialize()` (the `COMMAND`
//! table), each holding the client's event loop for its cost.

use super::state::Topology;
use super::{hold, Client, Exception, Flavor};
use crate::replay::cluster::Reply;
use crate::replay::net::Net;
use crate::replay::pool::Link;
use crate::replay::replicas::OWNER_ENTRIES;
use crate::timeline::NodeIdx;

impl Client {
    /// `commands_parser.initialize(default_node)`, the end of every `RedisCluster.initialize()`
    /// (5.0.0 l. 393, 8.1.0 l. 680): `COMMAND` to the default node (the first one the answer
    /// named) and the parsing of its reply, which holds the event loop; the table is loaded when
    /// it returns `Ok`. The timed clock only: the lanes' instant clock keeps an initialisation to
    /// its `CLUSTER SLOTS`. `ends_init`: the table ends an initialisation, which the client
    /// counts done (`_initialize = False`, 5.0.0 l. 396, 8.1.0 l. 684) in the step that parses
    /// the table, before anything else of it runs again.
    pub(super) async fn command_table(
        &self,
        node: Option<NodeIdx>,
        ends_init: bool,
        net: &Net<'_>,
    ) -> Result<(), Exception> {
        let Some(node) = node.filter(|_| net.timed()) else {
            self.shared.borrow_mut().table_loaded(ends_init);
            return Ok(());
        };
        let (lease, c, connect) = {
            let mut sh = self.shared.borrow_mut();
            let lease = sh
                .pools
                .acquire(node, net.now_us())
                .map_err(|_| Exception::MaxConnectionsError)?;
            let c = sh.cluster_idx(node, net);
            if sh.killed(lease, c, net) {
                return Err(Exception::ConnectionError);
            }
            (lease, c, !lease.was_connected())
        };
        self.open_cost(connect, net).await;
        let reply = net.keyless_to(c, connect).await;
        let link = Link::of_reply(&reply);
        let closed = self
            .shared
            .borrow_mut()
            .give_back(lease, link, net.now())
            .is_some();
        match reply {
            Err(Reply::Timeout) => return Err(Exception::TimeoutError),
            Err(_) => return Err(Exception::ConnectionError),
            Ok(()) if closed => return Err(Exception::ConnectionError),
            Ok(()) => {}
        }
        // The table is in place before the parse's hold, as the slot cache is
        // (`initialize_now`): a command issued during the hold starts after it and finds the
        // table. Only the first table matters (a later initialisation replaces a table that is
        // there), and only from 7.1.0 (`run`: the slot before the retry loop). Kept after the
        // hold, every command due during the first 53 ms fetched a table of its own, each holding
        // the loop in turn: the model's start piled up where the live ones fetch a few (the real
        // `COMMAND` calls are the initialisations' and 0-10 more; docs/FIDELITY.md).
        // So is the initialisation's end: the commands the application issues once the parse
        // frees the loop find the client initialised and go to their nodes at once, each
        // taking a connection, where a wait for `_lock` would hand them on one at a time.
        self.shared.borrow_mut().table_loaded(ends_init);
        hold(net, self.opts.cpu.command_us).await;
        Ok(())
    }

    /// `NodesManager.initialize()`: `CLUSTER SLOTS` from each startup node in turn until an
    /// answer covers every slot. A failure closes every connection and keeps `startup_nodes`.
    pub(super) async fn initialize_now(&self, net: &Net<'_>) -> Result<(), Exception> {
        let mut k = 0;
        loop {
            let (lease, node, connect) = {
                let mut sh = self.shared.borrow_mut();
                let Some(&s) = sh.startup.get(k) else {
                    break;
                };
                k += 1;
                sh.state.cluster_slots_calls += 1;
                let Ok(lease) = sh.pools.acquire(s, net.now_us()) else {
                    continue;
                };
                let node = sh.cluster_idx(s, net);
                if sh.killed(lease, node, net) {
                    continue;
                }
                (lease, node, !lease.was_connected())
            };
            self.open_cost(connect, net).await;
            let answer = net.cluster_slots_to(node, connect).await;
            let topology = {
                let mut sh = self.shared.borrow_mut();
                let link = Link::of_reply(&answer);
                if sh.give_back(lease, link, net.now()).is_some() {
                    continue;
                }
                sh.read_answer(answer, self.opts.address_remap.as_ref(), net)
            };
            // Building the slot cache holds the client's event loop, and what it builds is in
            // place when anything else of the client runs again: the state changes first, then
            // the hold (nothing else of the client runs before its end).
            let mut closed = 0;
            let default_node = {
                let mut sh = self.shared.borrow_mut();
                let Topology::Covered(owners, discovered) = topology else {
                    continue;
                };
                sh.load_table(owners);
                match self.flavor {
                    // set_nodes(): every connection of a node kept is marked for reconnect.
                    Flavor::Py8 => sh.pools.mark_all(),
                    // The answer's nodes are new `ClusterNode`s (5.0.0 l. 1244-1249), and
                    // set_nodes() disconnects each one they replace, in use or not (l. 1122-1127):
                    // every connection closed, the startup node's included.
                    Flavor::Py5 => closed = sh.pools.disconnect_all(net.now_us()),
                    Flavor::Ideal => {}
                }
                let default_node = sh.set_nodes(&discovered);
                if self.flavor == Flavor::Ideal {
                    for d in discovered {
                        if !sh.startup.contains(&d) {
                            sh.startup.push(d);
                        }
                    }
                } else if self.opts.dynamic_startup_nodes {
                    sh.startup_from_cache();
                }
                sh.state.full_reinits += 1;
                sh.default_known = default_node.is_some();
                default_node
            };
            hold(net, self.slot_cache_cost(net) + self.full_collection()).await;
            self.disconnect_cost(closed, net).await;
            if let Err(class) = self.command_table(default_node, true, net).await {
                // Raised out of RedisCluster.initialize(): nodes_manager.aclose().
                self.fail(net).await;
                return Err(class);
            }
            // `command_table` counted the initialisation done; a task that asked for another
            // while its parse held the loop keeps its request.
            return Ok(());
        }
        // `except BaseException`: nodes_manager.aclose() and aclose("startup_nodes").
        self.fail(net).await;
        Err(Exception::RedisClusterException)
    }

    /// The client's own work to build the slot cache from the answer it just read
    /// (`initialize_cpu_ms`, timed on an answer of every slot once). 4.4.0-7.1.1 walk every slot
    /// once for its owner and once more for each replica listed with it, so theirs grows with the
    /// answer's slot-node entries (`replay/replicas.rs`: 8.7 ms for 16 384 entries, 11.0-11.7 ms
    /// for 21 845, 2026-12-05); 7.2+'s did not change with a replica (3.4-3.5 ms).
    fn slot_cache_cost(&self, net: &Net<'_>) -> u64 {
        let base = self.opts.cpu.init_us;
        if self.flavor != Flavor::Py5 {
            return base;
        }
        let entries = net.answer_entries().max(OWNER_ENTRIES);
        let scaled = u128::from(base) * u128::from(entries) / u128::from(OWNER_ENTRIES);
        u64::try_from(scaled).unwrap_or(u64::MAX)
    }

    /// The full garbage collections the slot cache just built sets off, if any: one every
    /// `gc_full_every` initialisations (kept in thousandths, so a fraction carries over; more
    /// than one when it is below 1), `gc_full_ms` each (settings.rs,
    /// [`CPU_PY5`](super::CPU_PY5)), which the caller charges with the slot cache's own work.
    fn full_collection(&self) -> u64 {
        let (every, cost) = (self.opts.cpu.gc_every_milli, self.opts.cpu.gc_full_us);
        if every == 0 || cost == 0 {
            return 0;
        }
        let mut sh = self.shared.borrow_mut();
        sh.gc_debt += 1000;
        let due = sh.gc_debt / every;
        sh.gc_debt %= every;
        cost.saturating_mul(due)
    }

    /// An initialisation that failed: its `except` closes every connection and the default node
    /// is forgotten. The client's own work: the connections closed, and the exception raised
    /// through it and the retry loop to the application (`error_cpu_ms`, as a failed
    /// attempt's). A dead-node cycle of 5.0.0 timed alone (a command, its initialisation, the
    /// `COMMAND` table refused on the dead default node) takes 10.85 ms of CPU where the slot
    /// cache and the connection take 9.6 (2026-12-05).
    async fn fail(&self, net: &Net<'_>) {
        let closed = {
            let mut sh = self.shared.borrow_mut();
            sh.default_known = false;
            sh.pools.disconnect_all(net.now_us())
        };
        self.disconnect_cost(closed, net).await;
        hold(net, self.opts.cpu.error_us).await;
    }

    /// The client's own work to close `n` open connections.
    pub(super) async fn disconnect_cost(&self, n: u64, net: &Net<'_>) {
        hold(net, n.saturating_mul(self.opts.cpu.disconnect_us)).await;
    }
}
