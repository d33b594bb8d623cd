//! Client library models: the routing state machines of redis-py's asyncio cluster client and of
//! an ideal client.

use serde::Serialize;

use super::{ReplayError, Routed};
use crate::node::NodeAddr;
use crate::slot::{Slot, SlotRange, SLOT_COUNT};

use super::cluster::Reply;

/// What a client can ask the (simulated) cluster; the driver knows the time and the command.
pub trait Transport {
    /// Sends the current command for `cmd` to `to` (after `ASKING` when `asking`).
    fn send(&mut self, to: &NodeAddr, cmd: Routed, asking: bool) -> Reply;
    /// Sends `CLUSTER SLOTS` to `to`.
    fn cluster_slots(&mut self, to: &NodeAddr) -> Result<Vec<(SlotRange, NodeAddr)>, Reply>;
}

/// The exception class the application sees, named as redis-py names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ErrorClass {
    /// `RedisClusterException` (e.g. "Redis Cluster cannot be connected…" from `initialize()`).
    RedisClusterException,
    /// `ConnectionError`.
    ConnectionError,
    /// `TimeoutError`.
    TimeoutError,
    /// `ClusterDownError`.
    ClusterDownError,
    /// `ClusterError` ("TTL exhausted": too many redirects).
    ClusterError,
}

impl ErrorClass {
    /// The class name.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::RedisClusterException => "RedisClusterException",
            ErrorClass::ConnectionError => "ConnectionError",
            ErrorClass::TimeoutError => "TimeoutError",
            ErrorClass::ClusterDownError => "ClusterDownError",
            ErrorClass::ClusterError => "ClusterError",
        }
    }
}

/// What one application command came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It succeeded.
    Ok,
    /// It raised this exception.
    Failed(ErrorClass),
}

/// A client's state, sampled after each command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClientState {
    /// Entries of `nodes_manager.startup_nodes`.
    pub startup_nodes: usize,
    /// True when the client needs a re-initialisation and has no startup node left: every
    /// later command fails, forever.
    pub wedged: bool,
    /// Successful full initialisations so far (one `CLUSTER SLOTS` answer each).
    pub full_reinits: u64,
    /// `CLUSTER SLOTS` calls sent so far (including failed ones).
    pub cluster_slots_calls: u64,
    /// Connections opened so far.
    pub new_connections: u64,
}

/// A client library's routing state machine.
pub trait ClientModel {
    /// The model's name, e.g. `redis-py@5.0.0`.
    fn name(&self) -> &str;
    /// Runs one application command on `cmd`'s key through `net`.
    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome;
    /// The client's state now.
    fn state(&self) -> ClientState;
    /// `socket_timeout` in milliseconds: how long a request waits on a silent node before it fails
    /// with a timeout. `None`: waiting is not modelled (every command is tried when scheduled).
    fn socket_timeout_ms(&self) -> Option<u64> {
        None
    }
}

/// Options of a model, named as the library names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelOptions {
    /// Every this many MOVED replies the client does a full re-initialisation (0: never).
    pub reinitialize_steps: u32,
    /// After an initialisation, replace `startup_nodes` by the discovered nodes.
    pub dynamic_startup_nodes: bool,
    /// `address_remap`: every address of a `CLUSTER SLOTS` answer becomes this one.
    pub address_remap: Option<NodeAddr>,
    /// The seed addresses.
    pub startup_nodes: Vec<NodeAddr>,
    /// `cluster_error_retry_attempts`: retries of a command after a connection error / timeout.
    pub retry_attempts: u32,
    /// `socket_timeout` in milliseconds. With it set, every timeout costs the client that long, and
    /// a sequential client issues none of the commands scheduled while it waits. `None` (the
    /// default here): waiting is not modelled.
    pub socket_timeout_ms: Option<u64>,
}

impl ModelOptions {
    /// Library defaults with `startup_nodes` = `[seed]`.
    pub fn new(seed: NodeAddr) -> ModelOptions {
        ModelOptions {
            reinitialize_steps: 5,
            dynamic_startup_nodes: true,
            address_remap: None,
            startup_nodes: vec![seed],
            retry_attempts: 3,
            socket_timeout_ms: None,
        }
    }

    /// Sets option `key` from its text `value` (`address_remap=host:port` maps every node to
    /// that address; `startup_nodes=a:1,b:2`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ReplayError> {
        let bad = |reason: &str| ReplayError::BadValue {
            option: key.to_owned(),
            value: value.to_owned(),
            reason: reason.to_owned(),
        };
        let addr = |v: &str| {
            v.trim()
                .parse::<NodeAddr>()
                .map_err(|e| bad(&e.to_string()))
        };
        match key {
            "reinitialize_steps" => {
                self.reinitialize_steps = value.parse().map_err(|_| bad("not a number"))?;
            }
            "retry_attempts" | "cluster_error_retry_attempts" => {
                self.retry_attempts = value
                    .parse()
                    .ok()
                    .filter(|&n| n <= 100)
                    .ok_or_else(|| bad("not a number up to 100"))?;
            }
            "dynamic_startup_nodes" => {
                self.dynamic_startup_nodes = match value {
                    "true" | "True" | "1" => true,
                    "false" | "False" | "0" => false,
                    _ => return Err(bad("expected true or false")),
                };
            }
            "address_remap" => {
                self.address_remap = match value {
                    "" | "none" | "None" => None,
                    v => Some(addr(v)?),
                };
            }
            "startup_nodes" => {
                let list = value.split(',').map(addr).collect::<Result<Vec<_>, _>>()?;
                if list.is_empty() {
                    return Err(bad("at least one address"));
                }
                self.startup_nodes = list;
            }
            "socket_timeout" => {
                self.socket_timeout_ms = match value {
                    "" | "none" | "None" => None,
                    v => {
                        let secs: f64 = v.parse().map_err(|_| bad("not a number of seconds"))?;
                        if !(secs.is_finite() && secs > 0.0 && secs <= 3600.0) {
                            return Err(bad("expected seconds in (0, 3600]"));
                        }
                        // In (0, 3.6e6]: the conversion cannot truncate.
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        let ms = (secs * 1000.0).round() as u64;
                        Some(ms.max(1))
                    }
                };
            }
            _ => return Err(ReplayError::UnknownOption(key.to_owned())),
        }
        Ok(())
    }
}

/// The model named `name` (`redis-py@5.0.0`, `redis-py@8.0.0` or `ideal`) with `options`.
pub fn model(name: &str, options: ModelOptions) -> Result<Box<dyn ClientModel>, ReplayError> {
    let flavor = match name {
        "redis-py@5.0.0" => Flavor::Py5,
        "redis-py@8.0.0" => Flavor::Py8,
        "ideal" => Flavor::Ideal,
        other => return Err(ReplayError::UnknownModel(other.to_owned())),
    };
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

const NONE: u16 = u16::MAX;
/// redis-py's `RedisClusterRequestTTL`.
const REQUEST_TTL: u32 = 16;

/// How one attempt ended, when not with a reply.
enum Fail {
    /// A connection error or timeout on that node: retryable.
    Node(ErrorClass, u16),
    /// Raised to the application at once.
    Raise(ErrorClass),
}

struct Client {
    name: String,
    flavor: Flavor,
    opts: ModelOptions,
    /// Interned addresses; indices are what the tables hold.
    addrs: Vec<NodeAddr>,
    /// Whether a connection to the address is open.
    open: Vec<bool>,
    /// Slot → address index.
    table: Vec<u16>,
    startup: Vec<u16>,
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
            addrs: Vec::new(),
            open: Vec::new(),
            table: vec![NONE; usize::from(SLOT_COUNT)],
            startup: Vec::new(),
            needs_init: true,
            moved_counter: 0,
            state: ClientState::default(),
        };
        let seeds = c.opts.startup_nodes.clone();
        for s in &seeds {
            let i = c.intern(s);
            if !c.startup.contains(&i) {
                c.startup.push(i);
            }
        }
        c.refresh_state();
        c
    }

    fn intern(&mut self, addr: &NodeAddr) -> u16 {
        if let Some(i) = self.addrs.iter().position(|a| a == addr) {
            return u16::try_from(i).unwrap_or(0);
        }
        match u16::try_from(self.addrs.len()) {
            Ok(i) if i != NONE => {
                self.addrs.push(addr.clone());
                self.open.push(false);
                i
            }
            _ => 0,
        }
    }

    fn connect(&mut self, i: u16) {
        let i = usize::from(i);
        if !self.open[i] {
            self.open[i] = true;
            self.state.new_connections += 1;
        }
    }

    /// `close()`: every connection dropped, re-initialise before the next command.
    fn close(&mut self) {
        self.open.iter_mut().for_each(|o| *o = false);
        self.needs_init = true;
    }

    fn refresh_state(&mut self) {
        self.state.startup_nodes = self.startup.len();
        self.state.wedged = self.needs_init && self.startup.is_empty();
    }

    /// `initialize()`: `CLUSTER SLOTS` from each startup node in turn until one answers.
    fn initialize(&mut self, net: &mut dyn Transport) -> Result<(), ErrorClass> {
        for k in 0..self.startup.len() {
            let s = self.startup[k];
            self.connect(s);
            self.state.cluster_slots_calls += 1;
            let addr = self.addrs[usize::from(s)].clone();
            match net.cluster_slots(&addr) {
                Ok(ranges) => {
                    self.table.iter_mut().for_each(|t| *t = NONE);
                    let mut discovered = Vec::new();
                    for (r, a) in ranges {
                        let a = self.opts.address_remap.clone().unwrap_or(a);
                        let i = self.intern(&a);
                        if !discovered.contains(&i) {
                            discovered.push(i);
                        }
                        for slot in r.slots() {
                            self.table[usize::from(slot.get())] = i;
                        }
                    }
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
                Err(_) => self.open[usize::from(s)] = false,
            }
        }
        Err(ErrorClass::RedisClusterException)
    }

    fn on_node_error(&mut self, node: u16) {
        match self.flavor {
            Flavor::Py5 => {
                self.startup.retain(|&s| s != node);
                self.close();
            }
            Flavor::Py8 => {
                self.open[usize::from(node)] = false;
                if let Some(p) = self.startup.iter().position(|&s| s == node) {
                    let n = self.startup.remove(p);
                    self.startup.push(n);
                }
                self.needs_init = true;
            }
            Flavor::Ideal => self.open[usize::from(node)] = false,
        }
    }

    fn attempt(&mut self, cmd: Routed, net: &mut dyn Transport) -> Result<(), Fail> {
        let slot: Slot = cmd.slot;
        let mut target = self.table[usize::from(slot.get())];
        if target == NONE {
            self.needs_init = true;
            return Err(Fail::Raise(ErrorClass::RedisClusterException));
        }
        let mut asking = false;
        for _ in 0..REQUEST_TTL {
            self.connect(target);
            let addr = &self.addrs[usize::from(target)];
            match net.send(addr, cmd, asking) {
                Reply::Ok => return Ok(()),
                Reply::Moved { slot, to } => {
                    asking = false;
                    self.moved_counter += 1;
                    let steps = self.opts.reinitialize_steps;
                    if self.flavor != Flavor::Ideal && steps > 0 && self.moved_counter % steps == 0
                    {
                        // Full close(); the slot table is kept until the next initialize(),
                        // so this command is retried on the stale owner.
                        self.close();
                        self.moved_counter = 0;
                        target = self.table[usize::from(slot.get())];
                        if target == NONE {
                            target = self.intern(&to);
                        }
                    } else {
                        let i = self.intern(&to);
                        self.table[usize::from(slot.get())] = i;
                        target = i;
                    }
                }
                Reply::Ask { to, .. } => {
                    target = self.intern(&to);
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
}
