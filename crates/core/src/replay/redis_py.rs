//! redis-py's asyncio cluster client (`redis.asyncio.cluster.RedisCluster`) in two generations,
//! and an ideal client for contrast.
//!
//! Written from the wheels' `redis/asyncio/cluster.py`: 5.0.0 (the 4.4.0–7.1.1 behaviour: a
//! connection error or timeout pops the node from `startup_nodes` and closes everything) and 8.0.0
//! (7.2.0+: the node is marked for reconnect and moved to the end of `startup_nodes`).

use super::client::{
    numbered_once, ClientModel, ClientSnapshot, ClientState, ErrorClass, ModelOptions, Outcome,
    Transport,
};
use super::cluster::Reply;
use super::pool::{Lease, Link, Pools};
use super::{ReplayError, Routed};
use crate::node::NodeAddr;
use crate::redirect::Redirect;
use crate::slot::{Slot, SlotRange, SLOT_COUNT};
use crate::time::Timestamp;
use crate::timeline::{NodeIdx, NodeTable, SlotTable};

/// The redis-py models' own options (besides `startup_nodes` and `socket_timeout`).
pub(super) const OPTIONS: &[(&str, &str)] = &[
    (
        "reinitialize_steps",
        "full re-initialisation every this many MOVED (default 5, 0 never)",
    ),
    (
        "dynamic_startup_nodes",
        "replace startup_nodes by the discovered nodes (default true; 5.0.0 always does)",
    ),
    (
        "address_remap",
        "HOST:PORT: every address of a CLUSTER SLOTS answer becomes this one",
    ),
    (
        "cluster_error_retry_attempts",
        "retries after a connection error or timeout (default 3; alias retry_attempts)",
    ),
];

/// Builds `redis-py@5.0.0`, `redis-py@8.0.0` or `ideal`.
pub(super) fn build(
    name: &str,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    let flavor = match name {
        "redis-py@5.0.0" => Flavor::Py5,
        "redis-py@8.0.0" => Flavor::Py8,
        "ideal" => Flavor::Ideal,
        other => return Err(ReplayError::UnknownModel(other.to_owned())),
    };
    options.library_options_for(name, &[])?;
    if flavor == Flavor::Py5 && !options.dynamic_startup_nodes {
        return Err(ReplayError::Unsupported {
            model: name.to_owned(),
            what: "dynamic_startup_nodes=false (the asyncio client of 5.0.0 always replaces \
                   startup_nodes by the discovered nodes)"
                .to_owned(),
        });
    }
    Ok(Box::new(Client::new(name, flavor, options)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavor {
    /// redis-py 4.4.0–7.1.1 asyncio: pops the failing node from startup_nodes.
    Py5,
    /// redis-py 7.2.0+ asyncio: marks the node for reconnect, moves it last.
    Py8,
    /// Patches every MOVED, never re-initialises on its own, keeps its seeds.
    Ideal,
}

/// `max_connections` per node: 2**31 in 5.0.0 (no practical limit), 100 from 7.x.
const MAX_CONNECTIONS_PY5: usize = 1 << 31;
const MAX_CONNECTIONS_PY8: usize = 100;
/// redis-py's `RedisClusterRequestTTL`.
const REQUEST_TTL: u32 = 16;

/// How one attempt ended, when not with a reply.
enum Fail {
    /// A connection error or timeout on that node: retryable.
    Node(ErrorClass, NodeIdx),
    /// Raised to the application at once.
    Raise(ErrorClass),
}

struct Client {
    name: String,
    flavor: Flavor,
    opts: ModelOptions,
    /// The addresses the client knows, numbered; the numbers are what the tables hold.
    nodes: NodeTable,
    /// Each node's connections (`ClusterNode._connections` / `_free`).
    pools: Pools,
    /// When the last `initialize()` ended: one held `_initialize_lock` until then, and a task
    /// that needs one meanwhile waits for it.
    init_until: Timestamp,
    /// Whether that initialisation succeeded.
    init_ok: bool,
    /// Slot → node.
    table: SlotTable,
    /// The owner ranges `table` was last built from (numbered, remapped): a re-initialisation
    /// that gets the same answer only undoes the MOVED patches since.
    built_from: Vec<(SlotRange, NodeIdx)>,
    /// Slots patched after a MOVED since the table was built, with the owner they had then.
    patched: Vec<(Slot, Option<NodeIdx>)>,
    startup: Vec<NodeIdx>,
    needs_init: bool,
    moved_counter: u32,
    state: ClientState,
}

impl Client {
    fn new(name: &str, flavor: Flavor, opts: ModelOptions) -> Client {
        let mut c = Client {
            name: name.to_owned(),
            flavor,
            opts,
            nodes: NodeTable::new(),
            pools: Pools::new(if flavor == Flavor::Py5 {
                MAX_CONNECTIONS_PY5
            } else {
                MAX_CONNECTIONS_PY8
            }),
            init_until: Timestamp(0),
            init_ok: false,
            table: SlotTable::new(),
            built_from: Vec::new(),
            patched: Vec::new(),
            startup: Vec::new(),
            needs_init: true,
            moved_counter: 0,
            state: ClientState::default(),
        };
        let seeds = c.opts.startup_nodes.clone();
        c.startup = numbered_once(&seeds, |a| c.intern(a));
        c.refresh_state();
        c
    }

    /// The number of `addr` (`None` only past 65,535 addresses: the address is then unusable).
    fn intern(&mut self, addr: &NodeAddr) -> Option<NodeIdx> {
        self.nodes.intern_addr(addr).ok().map(|(n, _)| n)
    }

    /// Takes a connection to `node` for one exchange now.
    fn lease(&mut self, node: NodeIdx, net: &dyn Transport) -> Lease {
        self.pools.acquire(node, net.now())
    }

    /// Gives the connection back after `reply` (the transport's clock already moved past a
    /// timeout's wait, during which the connection was held): a timeout drops it
    /// (`disconnect_on_error`), so does a refusal.
    fn give_back(&mut self, lease: Lease, reply: &Reply, net: &dyn Transport) {
        let link = match reply {
            Reply::ConnectionError => Link::Refused,
            Reply::Timeout => Link::TimedOut,
            _ => Link::Answered,
        };
        self.pools.finish(lease, link, net.now());
        self.state.new_connections = self.pools.opened();
    }

    /// `close()`: every connection dropped, re-initialise before the next command.
    fn close(&mut self) {
        self.pools.disconnect_all();
        self.needs_init = true;
    }

    fn refresh_state(&mut self) {
        self.state.startup_nodes = self.startup.len();
        self.state.wedged = self.needs_init && self.startup.is_empty();
    }

    /// Makes `owners` the slot table. The same answer as last time only undoes the patches since
    /// (a replay-speed shortcut with the same result as a rebuild).
    fn load_table(&mut self, owners: Vec<(SlotRange, NodeIdx)>) {
        if owners == self.built_from {
            for &(slot, was) in self.patched.iter().rev() {
                self.table.set(slot, was);
            }
        } else {
            self.table.clear();
            for &(r, i) in &owners {
                self.table.fill(r, Some(i));
            }
            self.built_from = owners;
        }
        self.patched.clear();
    }

    /// `initialize()` under `_initialize_lock`: a task that finds another's initialisation
    /// running waits for it to end; if it succeeded, that one served this task's request too
    /// (it clears `_initialize`), else the task runs its own.
    fn initialize(&mut self, net: &mut dyn Transport) -> Result<(), ErrorClass> {
        let now = net.now();
        if now < self.init_until {
            net.sleep(self.init_until.millis_since(now));
            if self.init_ok {
                self.needs_init = false;
                return Ok(());
            }
        }
        let result = self.initialize_now(net);
        self.init_until = net.now();
        self.init_ok = result.is_ok();
        result
    }

    /// `NodesManager.initialize()`: `CLUSTER SLOTS` from each startup node in turn until one
    /// answers.
    fn initialize_now(&mut self, net: &mut dyn Transport) -> Result<(), ErrorClass> {
        for k in 0..self.startup.len() {
            let s = self.startup[k];
            let lease = self.lease(s, net);
            self.state.cluster_slots_calls += 1;
            // Every number this client holds is one its table gave out.
            let Some(addr) = self.nodes.addr(s).cloned() else {
                continue;
            };
            let answer = net.cluster_slots(&addr);
            self.give_back(lease, answer.as_ref().err().unwrap_or(&Reply::Ok), net);
            if let Ok(ranges) = answer {
                let mut owners = Vec::with_capacity(ranges.len());
                let mut discovered = Vec::new();
                for (r, a) in ranges {
                    let i = match &self.opts.address_remap {
                        Some(to) => self.intern(&to.clone()),
                        None => self.intern(&a),
                    };
                    let Some(i) = i else {
                        continue;
                    };
                    if !discovered.contains(&i) {
                        discovered.push(i);
                    }
                    owners.push((r, i));
                }
                self.load_table(owners);
                if self.flavor == Flavor::Ideal {
                    for d in discovered {
                        if !self.startup.contains(&d) {
                            self.startup.push(d);
                        }
                    }
                } else if self.opts.dynamic_startup_nodes {
                    self.startup = discovered;
                }
                self.needs_init = false;
                self.state.full_reinits += 1;
                return Ok(());
            }
        }
        Err(ErrorClass::RedisClusterException)
    }

    fn on_node_error(&mut self, node: NodeIdx) {
        match self.flavor {
            Flavor::Py5 => {
                self.startup.retain(|&s| s != node);
                self.close();
            }
            Flavor::Py8 => {
                // update_active_connections_for_reconnect + disconnect_free_connections.
                self.pools.disconnect(node);
                if let Some(p) = self.startup.iter().position(|&s| s == node) {
                    let n = self.startup.remove(p);
                    self.startup.push(n);
                }
                self.needs_init = true;
            }
            Flavor::Ideal => self.pools.disconnect(node),
        }
    }

    fn attempt(&mut self, cmd: Routed, net: &mut dyn Transport) -> Result<(), Fail> {
        let slot: Slot = cmd.slot;
        let Some(mut target) = self.table.get(slot) else {
            self.needs_init = true;
            return Err(Fail::Raise(ErrorClass::RedisClusterException));
        };
        let mut asking = false;
        for _ in 0..REQUEST_TTL {
            let lease = self.lease(target, net);
            let Some(addr) = self.nodes.addr(target) else {
                return Err(Fail::Raise(ErrorClass::ConnectionError));
            };
            let reply = net.send(addr, cmd, asking);
            self.give_back(lease, &reply, net);
            match reply {
                Reply::Ok => return Ok(()),
                Reply::Redirect(Redirect::Moved { slot, to }) => {
                    asking = false;
                    self.moved_counter += 1;
                    let steps = self.opts.reinitialize_steps;
                    if self.flavor != Flavor::Ideal && steps > 0 && self.moved_counter % steps == 0
                    {
                        // Full close(); the slot table is kept until the next initialize(),
                        // so this command is retried on the stale owner.
                        self.close();
                        self.moved_counter = 0;
                        target = match self.table.get(slot).or_else(|| self.intern(&to)) {
                            Some(t) => t,
                            None => return Err(Fail::Raise(ErrorClass::ConnectionError)),
                        };
                    } else {
                        let Some(i) = self.intern(&to) else {
                            return Err(Fail::Raise(ErrorClass::ConnectionError));
                        };
                        if self.patched.len() < usize::from(SLOT_COUNT) {
                            self.patched.push((slot, self.table.get(slot)));
                        } else {
                            // More patches than slots: the next initialisation rebuilds.
                            self.built_from.clear();
                        }
                        self.table.set(slot, Some(i));
                        target = i;
                    }
                }
                Reply::Redirect(Redirect::Ask { to, .. }) => {
                    let Some(i) = self.intern(&to) else {
                        return Err(Fail::Raise(ErrorClass::ConnectionError));
                    };
                    target = i;
                    asking = true;
                }
                Reply::ConnectionError => {
                    return Err(Fail::Node(ErrorClass::ConnectionError, target))
                }
                Reply::Timeout => return Err(Fail::Node(ErrorClass::TimeoutError, target)),
                Reply::ClusterDown => return Err(Fail::Raise(ErrorClass::ClusterDownError)),
            }
        }
        Err(Fail::Raise(ErrorClass::ClusterError))
    }
}

impl ClientModel for Client {
    fn name(&self) -> &str {
        &self.name
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.opts.socket_timeout_ms
    }

    fn set_concurrency(&mut self, in_flight: u32) {
        self.pools
            .set_burst(usize::try_from(in_flight).unwrap_or(usize::MAX));
    }

    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        let attempts = 1 + self.opts.retry_attempts;
        let mut last = ErrorClass::ConnectionError;
        let mut outcome = None;
        for _ in 0..attempts {
            if self.needs_init {
                if let Err(e) = self.initialize(net) {
                    outcome = Some(Outcome::Failed(e));
                    break;
                }
            }
            match self.attempt(cmd, net) {
                Ok(()) => {
                    outcome = Some(Outcome::Ok);
                    break;
                }
                Err(Fail::Node(class, node)) => {
                    self.on_node_error(node);
                    last = class;
                }
                Err(Fail::Raise(class)) => {
                    outcome = Some(Outcome::Failed(class));
                    break;
                }
            }
        }
        self.refresh_state();
        outcome.unwrap_or(Outcome::Failed(last))
    }

    fn state(&self) -> ClientState {
        self.state
    }

    fn snapshot(&self) -> ClientSnapshot {
        ClientSnapshot::of_table(&self.table, self.pools.open())
    }
}
