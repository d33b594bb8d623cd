//! redis-py's asyncio cluster client (`redis.asyncio.cluster.RedisCluster`) in two generations,
//! and an ideal client for contrast.
//!
//! Written from the wheels' `redis/asyncio/cluster.py`: 5.0.0 (the 4.4.0–7.1.1 behaviour: a
//! connection error or timeout pops the node from `startup_nodes` and closes everything) and 8.0.0
//! (7.2.0+: the node is marked for reconnect and moved to the end of `startup_nodes`). Line
//! numbers below are of 5.0.0's and 8.1.0's `redis/asyncio/cluster.py`.
//!
//! Each command is an `async` task as in the library, sharing the client with the others in
//! flight; what a reply does lands when the reply arrives:
//!
//! - **Topology answers** (`NodesManager.initialize`, 5.0.0 l. 1195–1324, 8.1.0 l. 2220–2411):
//!   each startup node is asked in turn until one answer covers all 16384 slots; if none does,
//!   `RedisClusterException` ("All slots are not covered…", 5.0.0 l. 1306, 8.1.0 l. 2376) or
//!   ("Redis Cluster cannot be connected…") when none answered. The failed initialisation closes
//!   every connection (`RedisCluster.initialize`'s `except BaseException`, 5.0.0 l. 397, 8.1.0
//!   l. 685) and keeps `startup_nodes`. A task that needs an initialisation while another runs it
//!   waits on `_lock` and is served by it when it succeeded (l. 671–689).
//! - **A reset under commands in flight.** `close()` / `aclose()` (5.0.0 l. 403, 8.1.0 l. 691,
//!   after every `reinitialize_steps`-th MOVED or, in 5.0.0, a connection error) disconnects every
//!   connection, the ones commands are waiting on included. It does so under `_lock`, after the
//!   tasks already waiting on it for an initialisation: when that ends they go on first, so each
//!   initialisation serves every command that waited for it (`lock.rs`). A command whose reply
//!   the event loop had taken in still reads it; one whose reply was on its way, or waiting for
//!   the busy loop's next turn, loses it as a `ConnectionError` (`reset.rs`), which counts as no
//!   exchange of the application's: in 5.0.0 it pops its node from `startup_nodes` and closes
//!   again (l. 762–772), so a reset under load drains the startup nodes; in 7.2+ it marks the
//!   node for reconnect and is retried after an initialisation (l. 1315–1330), unseen by the
//!   application.
//!   Only a new connection whose handshake reply had arrived and was waiting for the busy event
//!   loop when the reset came writes next to the `None` writer the closing task left: the
//!   `AttributeError` of redis-py #4028, raised to the application, not retried. The model
//!   takes that wait to be as long as the command's own reply waited for the loop (measured
//!   live: 2 % of the handshakes a reset ended at 6 in flight, 13 % at 64, docs/FIDELITY.md,
//!   "redis-py 8.1.0 `AttributeError` under `address_remap`").
//! - **The client's own work holds its event loop** (the timed clock only): building the slot
//!   cache, the `COMMAND` table of every initialisation, each connection opened (its handshake),
//!   each reply read, each attempt failed by a connection error and each initialisation that
//!   failed (its exception, the connections its `except` closes), with the release's measured
//!   costs ([`CPU_PY5`], [`CPU_PY8`]; options `initialize_cpu_ms`, `command_cpu_ms`,
//!   `connect_cpu_ms`, `reply_cpu_ms`, `error_cpu_ms`, `closed_error_cpu_ms`,
//!   `refused_cpu_ms`, `disconnect_cpu_ms`): a connection that ended under its command (a
//!   reply a reset lost) costs little beyond the command's own work, a refused connect a
//!   fraction of a handshake, a timeout more. Under a storm of reconnects this is what makes
//!   the application fall behind and skip. The slot cache and the `COMMAND` table an
//!   initialisation builds are in place before its hold, and the initialisation counts as done
//!   before the table's parse ends (what runs next sees them: the commands due meanwhile skip
//!   `_lock`). A refused connect is known as such only for a command's attempt; an
//!   initialisation's refused connects cost a connection's handshake, as before.
//! - **CPython's full collections** (`gc_full_ms`, `gc_full_every`): the slot cache each
//!   initialisation builds outlives the younger collections, so the initialisations fill the
//!   oldest generation, and every few of them (4.6 in 5.0.0, whose cache holds a list per slot;
//!   20 in 8.1.0) the slot cache's step ends in a full collection of about 10 ms (timed by
//!   `tests/scenarios/cpu_cost.py`). Such an initialisation lasts longer, more commands come due
//!   meanwhile and go out together at its end: in a remapped 5.0.0 storm a burst large enough
//!   for its fifth MOVED to reset the client under a command still in flight on the startup
//!   node, which pops it (docs/FIDELITY.md).
//! - **The start, from 7.1.0.** With a default node known, a command's slot is determined before
//!   the retry loop's initialisation (8.1.0 `execute_command` l. 1136-1139; 8.0.0 l. 987-990,
//!   7.2.0 l. 855-858, 7.1.0 alike), so a command issued while the first `COMMAND` table is on
//!   its way finds it empty and fetches its own (`get_keys`, `_parsers/commands.py` l. 456):
//!   live (8.1.0), the initialisations' `COMMAND`s and 0-10 more at 60-570/s. 4.4.0-7.0.x
//!   determine it after the initialisation.
//! - **Routing while a reset is pending** (7.2+ and 5.0.0 alike): `aclose()` keeps the slot cache,
//!   so the command that triggered it and every command already past its `initialize()` check go
//!   on to the stale owners and meet MOVED again until an initialisation lands (8.1.0 l. 1359–1377;
//!   `aclose()` does nothing while `_initialize` is set, l. 693).
//! - **No default node, no key** (7.1.0+, `keyless.rs`): a reset drops the default node until
//!   the next initialisation, and a command that starts meanwhile goes to a random primary.
//! - **Connections someone closed** (`CLIENT KILL`, the recording's `INFO commandstats`,
//!   `replay/kills.rs`): the next command on a connection open at the kill writes to a closed
//!   socket and reads end-of-file at once, a `ConnectionError` (5.0.0 `redis/_parsers/base.py`
//!   l. 226-228) handled as any other (5.0.0 closes everything, 7.2+ marks the node for
//!   reconnect, both initialise again); a command in flight at the kill loses its reply.
//! - **Connections** (`ClusterNode.acquire_connection`, 8.1.0 l. 1715–1740): a command takes a
//!   free connection or opens one; at `max_connections` (100 from 8.0.0, 2**31 before) 7.2+
//!   raises `MaxConnectionsError`, not retried (l. 1302). A connection error marks the node's
//!   connections in use for reconnect and closes its free ones (l. 1315–1330), and every
//!   successful initialisation marks every connection of the nodes it keeps for reconnect
//!   (`set_nodes`, 8.1.0 l. 2052–2103), so each refresh costs one reconnect per pooled connection.
//!
//! - **A dead node.** A command that meets a connection error or timeout is retried
//!   `cluster_error_retry_attempts` times (3 up to 7.4.x, 10 from 8.0.0), each retry after a
//!   full `initialize()`: `CLUSTER SLOTS`, then `COMMAND` to the default node, the first of
//!   `nodes_cache`. 7.2+ moves the failing node to the end of `nodes_cache` (8.1.0 l. 1325), so
//!   the default node is a live one and each retry costs `COMMAND`'s tens of milliseconds: a
//!   client with few commands in flight spends about half a second per command on a dead node
//!   and fails few of them (live, redis-py 8.1.0, a killed primary, one in flight: 11 attempts
//!   in 0.41 s before the `ConnectionError`).
//!
//! Not modelled: 7.2+'s shuffle of `startup_nodes` before an initialisation (every node answers
//! the same topology here), the `INFO` 5.0.0 sends before `CLUSTER SLOTS`, replicas.

mod exception;
mod initialisation;
mod keyless;
mod lock;
mod reset;
mod settings;
mod state;

use std::cell::RefCell;
use std::pin::pin;

use crate::replay::client::{numbered_once, ClientModel, Execution};
use crate::replay::client_state::{ClientSnapshot, ClientState};
use crate::replay::cluster::Answer;
use crate::replay::descriptor::{Hypotheses, ModelDescriptor};
use crate::replay::net::Net;
use crate::replay::options::ModelOptions;
use crate::replay::outcome::Outcome;
use crate::replay::pool::{Link, Pools};
use crate::replay::release::{Coverage, Version};
use crate::replay::slot_cache::SlotCache;
use crate::replay::{ReplayError, Routed, SimRng};
use crate::slot::Slot;
use crate::time::Timestamp;
use crate::timeline::{NodeIdx, NodeTable};
use exception::Exception;
use keyless::Keyless;
use reset::{lost, Fail};
use settings::{Settings, CPU_PY5, CPU_PY8, OPTIONS};
use state::{InitLock, Shared};

/// `redis-py@5.0.0`: covers **4.4.0–7.1.x**. The asyncio `RedisCluster._execute_command` pops a
/// node that raised `ConnectionError`/`TimeoutError` from `nodes_manager.startup_nodes`
/// (`redis/asyncio/cluster.py` line 744 of the 4.4.0 wheel, line 978 of the 7.1.1 wheel); 4.3.6
/// does not (it retries the same node after 0.25 s, line 681), so 4.3.x is not covered.
pub const V5: ModelDescriptor = ModelDescriptor {
    name: "redis-py@5.0.0",
    about: "redis-py 4.4.0-7.1.1 asyncio RedisCluster: a node error pops it from startup_nodes",
    source: "redis-py 5.0.0 `redis/asyncio/cluster.py` l. 762-772 (the node popped from `startup_nodes`; 4.4.0 l. 744, 7.1.1 l. 978)",
    options: OPTIONS,
    coverage: Some(Coverage {
        library: "redis-py",
        from: Version::new(4, 4, 0),
        until: Version::new(7, 2, 0),
        range: "4.4.0–7.1.x",
    }),
    hypotheses: SUSPECT,
};

/// `redis-py@8.0.0`: covers **7.2.0–8.x**. From 7.2.0 the failed node is moved to the end of the
/// cached startup nodes instead (`move_node_to_end_of_cached_nodes(target_node.name)`, line 983
/// of the 7.2.0 wheel, defined line 1513), as in the 7.4.0, 8.0.0 and 8.1.0 wheels.
pub const V8: ModelDescriptor = ModelDescriptor {
    name: "redis-py@8.0.0",
    about: "redis-py 7.2.0+ asyncio RedisCluster: a node error moves it last in startup_nodes",
    source: "redis-py 8.1.0 `redis/asyncio/cluster.py` l. 1315-1330 (`move_node_to_end_of_cached_nodes`; 7.2.0 l. 983)",
    options: OPTIONS,
    coverage: Some(Coverage {
        library: "redis-py",
        from: Version::new(7, 2, 0),
        until: Version::new(9, 0, 0),
        range: "7.2.0–8.x",
    }),
    hypotheses: SUSPECT,
};

/// `ideal`: no library, only a name; redis-py's client with every MOVED patched, no
/// re-initialisation of its own and its seeds kept. It takes redis-py's options.
pub const IDEAL: ModelDescriptor = ModelDescriptor {
    name: "ideal",
    about: "patches its slot table on every MOVED, keeps its seeds, never rebuilds on its own",
    source: "",
    options: &[],
    coverage: None,
    hypotheses: Hypotheses::Contrast,
};

/// How the hypotheses replay both redis-py models: every node as `address_remap`, and
/// `reinitialize_steps` 0 and 1.
const SUSPECT: Hypotheses = Hypotheses::Suspect {
    per_node: "address_remap",
    each: &[("reinitialize_steps", "0"), ("reinitialize_steps", "1")],
};

/// Builds `redis-py@5.0.0`.
pub(super) fn build_v5(
    asked: Option<Version>,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    // 7.1.x looks for a request policy first (`keyless.rs`), determining the slot before the
    // retry loop (7.1.0 `redis/asyncio/cluster.py` l. 855-858); 4.4.0-7.0.x route by key.
    let from_7_1 = asked.is_some_and(|v| v >= Version::new(7, 1, 0));
    let routing = Routing {
        slot_first: from_7_1,
        keyless: if from_7_1 {
            Keyless::NoDefaultOrSlotZero
        } else {
            Keyless::Never
        },
    };
    build(V5.name, Flavor::Py5, RETRY_ATTEMPTS_PY5, routing, options)
}

/// Builds `redis-py@8.0.0`. redis-py 7.2.0-7.4.x share 8.0.0's routing but not its defaults:
/// `max_connections` is 2**31 there (7.4.1 `redis/asyncio/cluster.py` l. 283), 100 from 8.0.0
/// (l. 340); `cluster_error_retry_attempts` is 3 there (7.4.0 l. 281), 10 from 8.0.0
/// (`DEFAULT_RETRY_COUNT`, `redis/_defaults.py` l. 37, taken at 8.0.0 l. 339, 8.1.0 l. 415).
pub(super) fn build_v8(
    asked: Option<Version>,
    mut options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    let before_8 = asked.is_some_and(|v| v < Version::new(8, 0, 0));
    if before_8 {
        options
            .library
            .entry("max_connections".to_owned())
            .or_insert_with(|| (1_u64 << 31).to_string());
    }
    let retries = if before_8 {
        RETRY_ATTEMPTS_PY5
    } else {
        RETRY_ATTEMPTS_PY8
    };
    // Every release from 7.1.0 determines the slot before the retry loop's initialisation when
    // it has a default node (see `Client::run`; 7.2.0 l. 855-858, 7.4.0 l. 905-908, 8.0.0
    // l. 987-990, 8.1.0 l. 1135-1139).
    let routing = Routing {
        slot_first: true,
        keyless: Keyless::NoDefault,
    };
    build(V8.name, Flavor::Py8, retries, routing, options)
}

/// Builds `ideal`.
pub(super) fn build_ideal(
    _: Option<Version>,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    let routing = Routing {
        slot_first: false,
        keyless: Keyless::Never,
    };
    build(
        IDEAL.name,
        Flavor::Ideal,
        RETRY_ATTEMPTS_PY8,
        routing,
        options,
    )
}

/// How a release routes a command before its first exchange.
#[derive(Clone, Copy, Debug)]
struct Routing {
    /// Determines a command's slot before its initialisation (7.1.0+), so each command issued
    /// while the first `COMMAND` table is on its way fetches its own.
    slot_first: bool,
    /// When a keyed command goes to a random primary (`keyless.rs`).
    keyless: Keyless,
}

/// Builds the client of `flavor`, named `name`, whose `cluster_error_retry_attempts` is
/// `retries` unless given, routing as `routing` says.
fn build(
    name: &str,
    flavor: Flavor,
    retries: u32,
    routing: Routing,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    options.check_for_model(name, OPTIONS)?;
    if flavor == Flavor::Py5 && !Settings::dynamic_startup_nodes(&options)? {
        return Err(ReplayError::Unsupported {
            model: name.to_owned(),
            what: "dynamic_startup_nodes=false (the asyncio client of 5.0.0 always replaces \
                   startup_nodes by the discovered nodes)"
                .to_owned(),
        });
    }
    let (max_connections, cpu) = match flavor {
        Flavor::Py5 => (MAX_CONNECTIONS_PY5, CPU_PY5),
        Flavor::Py8 | Flavor::Ideal => (MAX_CONNECTIONS_PY8, CPU_PY8),
    };
    let settings = Settings::read(&options, retries, max_connections, cpu)?;
    Ok(Box::new(Client::new(
        name, flavor, settings, routing, &options,
    )))
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

/// `cluster_error_retry_attempts` by default: 3 up to 7.4.x, 10 from 8.0.0 (see [`build_v8`]).
const RETRY_ATTEMPTS_PY5: u32 = 3;
const RETRY_ATTEMPTS_PY8: u32 = 10;
/// `max_connections` per node: 2**31 in 5.0.0 (no practical limit), 100 from 8.0.0.
const MAX_CONNECTIONS_PY5: usize = 1 << 31;
const MAX_CONNECTIONS_PY8: usize = 100;
/// Seed of the generator behind Python's `random` (`get_random_primary_node`), unless
/// `random_seed` gives one.
const RNG_SEED: u64 = 0x7265_6469_732d_7079;
/// redis-py's `RedisClusterRequestTTL`.
const REQUEST_TTL: u32 = 16;

/// A redis-py client (or the ideal one): its settings and the state its tasks share.
struct Client {
    name: String,
    flavor: Flavor,
    /// Its settings (with [`CPU_PY5`] or [`CPU_PY8`] when not given).
    opts: Settings,
    /// `socket_timeout` in milliseconds.
    socket_timeout_ms: Option<u64>,
    /// How it routes a command before its first exchange.
    routing: Routing,
    shared: RefCell<Shared>,
}

impl Client {
    fn new(
        name: &str,
        flavor: Flavor,
        settings: Settings,
        routing: Routing,
        opts: &ModelOptions,
    ) -> Client {
        let mut shared = Shared {
            nodes: NodeTable::new(),
            pools: Pools::new(settings.max_connections),
            init_until: Timestamp(0),
            init_ok: false,
            lock: InitLock::default(),
            table: SlotCache::default(),
            startup: Vec::new(),
            cache: Vec::new(),
            cluster_of: Vec::new(),
            from_cluster: Vec::new(),
            needs_init: true,
            moved_counter: 0,
            commands_loaded: false,
            default_known: false,
            rng: SimRng::new(settings.random_seed.unwrap_or(RNG_SEED)),
            gc_debt: 0,
            state: ClientState::default(),
        };
        shared.startup = numbered_once(&opts.startup_nodes, |a| shared.intern(a));
        shared.refresh_state();
        Client {
            name: name.to_owned(),
            flavor,
            socket_timeout_ms: opts.socket_timeout_ms,
            routing,
            opts: settings,
            shared: RefCell::new(shared),
        }
    }

    /// The client's own work to open a connection and run its handshake, when `connect`.
    /// (Letting the other ready tasks take their connections first, as asyncio does between the
    /// socket's connect and the handshake, was tried: on fresh draws it opened far more
    /// connections than the real 5.0.0 before it wedged; docs/FIDELITY.md.)
    async fn open_cost(&self, connect: bool, net: &Net<'_>) {
        if connect {
            hold(net, self.opts.cpu.connect_us).await;
        }
    }

    async fn on_node_error(&self, node: NodeIdx, net: &Net<'_>) {
        match self.flavor {
            Flavor::Py5 => {
                self.shared.borrow_mut().startup.retain(|&s| s != node);
                self.aclose(net).await;
            }
            Flavor::Py8 => {
                // update_active_connections_for_reconnect + disconnect_free_connections.
                let mut sh = self.shared.borrow_mut();
                sh.pools.mark(node);
                sh.move_to_end(node);
                sh.needs_init = true;
            }
            Flavor::Ideal => self
                .shared
                .borrow_mut()
                .pools
                .disconnect(node, net.now_us()),
        }
    }

    /// `_determine_nodes`, then `_execute_command`: up to `RedisClusterRequestTTL` exchanges
    /// following redirects; `keyless`: the first goes to a random primary (`keyless.rs`).
    async fn attempt(&self, cmd: Routed, keyless: bool, net: &Net<'_>) -> Result<(), Fail> {
        let slot: Slot = cmd.slot;
        let owner = {
            let mut sh = self.shared.borrow_mut();
            if keyless {
                sh.random_primary()
            } else {
                sh.table.get(slot)
            }
        };
        let Some(mut target) = owner else {
            self.shared.borrow_mut().needs_init = true;
            return Err(Fail::Raise(Exception::RedisClusterException));
        };
        let mut asking = false;
        let mut moved = false;
        for _ in 0..REQUEST_TTL {
            let lease = {
                let mut sh = self.shared.borrow_mut();
                if moved {
                    // The slot cache as it is now: patched, or stale while a reset is pending.
                    target = match sh.table.get(slot) {
                        Some(t) => t,
                        None => return Err(Fail::Raise(Exception::ConnectionError)),
                    };
                    moved = false;
                }
                let lease = match sh.pools.acquire(target, net.now_us()) {
                    Ok(l) => l,
                    Err(_) => return Err(Fail::Raise(Exception::MaxConnectionsError)),
                };
                let node = sh.cluster_idx(target, net);
                if sh.killed(lease, node, net) {
                    None
                } else {
                    Some((lease, node, !lease.was_connected()))
                }
            };
            let Some((lease, node, connect)) = lease else {
                // Written to the socket someone closed: the command's own work, then its read
                // meets the end of the stream.
                hold(net, self.opts.cpu.reply_us).await;
                return Err(Fail::Closed(target));
            };
            // A refused connect does none of the handshake's work: its whole attempt is
            // `refused_cpu_ms`, charged when it fails.
            let refused = connect && net.refuses(node, asking);
            self.open_cost(connect && !refused, net).await;
            // The command goes out once the handshake of a new connection is done.
            let written = net.now_us() + if connect { net.connect_us() } else { 0 };
            let delivery = net.send_to(node, cmd, asking, connect);
            let arrives = delivery.arrives_us();
            let answer = delivery.await;
            // How long the reply waited for the event loop: other tasks' work held it.
            let waited = net.now_us().saturating_sub(arrives);
            hold(net, self.opts.cpu.reply_us).await;
            // Whether this reply's MOVED calls for aclose(), awaited once the state is let go.
            let close = {
                let mut sh = self.shared.borrow_mut();
                let mut close = false;
                // Someone closed the connection while the command was out: its reply is lost.
                let killed_out = node.is_some_and(|c| net.killed(c, written, arrives));
                let link = if killed_out {
                    Link::Refused
                } else {
                    Link::of(answer)
                };
                if let Some(closed) = sh.give_back(lease, link, net.now()) {
                    if let Some(fail) = lost(
                        self.flavor,
                        target,
                        connect,
                        closed,
                        written,
                        arrives,
                        waited,
                    ) {
                        net.unread(node, answer);
                        return Err(fail);
                    }
                }
                if killed_out {
                    net.unread(node, answer);
                    return Err(Fail::Closed(target));
                }
                match answer {
                    Answer::Ok => return Ok(()),
                    Answer::Moved { slot, to } => {
                        asking = false;
                        moved = true;
                        sh.moved_counter += 1;
                        let steps = self.opts.reinitialize_steps;
                        if self.flavor != Flavor::Ideal
                            && steps > 0
                            && sh.moved_counter.is_multiple_of(steps)
                        {
                            // Full close(); the slot table is kept until the next initialize(),
                            // so this command is retried on the stale owner.
                            close = true;
                            sh.moved_counter = 0;
                        } else {
                            let Some(i) = sh.own_idx(to, net) else {
                                return Err(Fail::Raise(Exception::ConnectionError));
                            };
                            sh.table.set(slot, Some(i));
                        }
                    }
                    Answer::Ask { to, .. } => {
                        let Some(i) = sh.own_idx(to, net) else {
                            return Err(Fail::Raise(Exception::ConnectionError));
                        };
                        target = i;
                        asking = true;
                    }
                    // A new connection refused; an open one read at its end.
                    Answer::ConnectionError if connect => return Err(Fail::Refused(target)),
                    Answer::ConnectionError => return Err(Fail::Closed(target)),
                    Answer::Timeout => return Err(Fail::Node(Exception::TimeoutError, target)),
                    Answer::ClusterDown => return Err(Fail::Raise(Exception::ClusterDownError)),
                }
                close
            };
            if close {
                self.aclose(net).await;
            }
        }
        Err(Fail::Raise(Exception::ClusterError))
    }

    /// `RedisCluster.execute_command`: initialise when due, then attempt, retrying after a
    /// connection error or timeout.
    async fn run(&self, cmd: Routed, net: &Net<'_>) -> Outcome {
        // The request policy, taken once before the retry loop (`keyless.rs`).
        let keyless = {
            let sh = self.shared.borrow();
            self.routing.keyless.applies(sh.default_known, cmd.slot)
        };
        if self.routing.slot_first && !keyless {
            // 7.1.0+ `execute_command` (8.1.0 l. 1136-1139): with a default node known, the slot is
            // determined before the retry loop's initialize(); `get_keys` finds the command
            // table still empty while the first initialisation fetches it and fetches its own
            // (`_parsers/commands.py` l. 445-456), raised to the application if it fails.
            let default = {
                let sh = self.shared.borrow();
                sh.cache.first().copied().filter(|_| !sh.commands_loaded)
            };
            if let Some(node) = default {
                if let Err(e) = self.command_table(Some(node), false, net).await {
                    return Outcome::Failed(e.into());
                }
            }
        }
        let attempts = 1 + self.opts.retry_attempts;
        let mut last = Exception::ConnectionError;
        let mut outcome = None;
        for _ in 0..attempts {
            let due = self.shared.borrow().needs_init;
            if due {
                if let Err(e) = self.initialize(net).await {
                    outcome = Some(Outcome::Failed(e.into()));
                    break;
                }
            }
            match self.attempt(cmd, keyless, net).await {
                Ok(()) => {
                    outcome = Some(Outcome::Ok);
                    break;
                }
                Err(Fail::Raise(class)) => {
                    outcome = Some(Outcome::Failed(class.into()));
                    break;
                }
                Err(fail) => {
                    if let Some((class, node)) = fail.retried() {
                        // The exception raised and handled holds the loop.
                        hold(net, fail.cpu_us(&self.opts.cpu)).await;
                        self.on_node_error(node, net).await;
                        last = class;
                    }
                }
            }
        }
        self.shared.borrow_mut().refresh_state();
        outcome.unwrap_or(Outcome::Failed(last.into()))
    }
}

/// Holds the client's event loop `us` microseconds of its own work (nothing when 0: a task that
/// does no work does not wait for the loop).
async fn hold(net: &Net<'_>, us: u64) {
    if us > 0 {
        net.cpu(us).await;
    }
}

impl ClientModel for Client {
    fn name(&self) -> &str {
        &self.name
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.socket_timeout_ms
    }

    fn set_concurrency(&mut self, in_flight: u32) {
        let n = usize::try_from(in_flight).unwrap_or(usize::MAX);
        self.shared.get_mut().pools.set_burst(n);
    }

    fn execute<'a>(&'a self, cmd: Routed, net: &'a Net<'_>) -> Execution<'a> {
        if net.timed() {
            self.shared.borrow_mut().pools.set_strict(true);
        }
        Box::pin(self.run(cmd, net))
    }

    fn execute_instant(&self, cmd: Routed, net: &Net<'_>) -> Outcome {
        net.block_on(pin!(self.run(cmd, net)))
            .unwrap_or(Outcome::Failed(Exception::ConnectionError.into()))
    }

    fn state(&self) -> ClientState {
        self.shared.borrow().state
    }

    fn snapshot(&self) -> ClientSnapshot {
        let sh = self.shared.borrow();
        ClientSnapshot::of_table(sh.table.table(), sh.pools.open())
    }
}
