//! Jedis 5.x `redis.clients.jedis.JedisCluster`, model `jedis@5.1.0`.
//!
//! Written from the `redis/jedis` sources:
//!
//! - `src/main/java/redis/clients/jedis/executors/ClusterCommandExecutor.java` (commit
//!   `0c6ed231d7b72a2705bdf62bb56de8ae0afeed8d`, 5.x): `executeCommand`,
//!   `handleConnectionProblem`, `getBackoffSleepMillis`;
//! - `src/main/java/redis/clients/jedis/JedisClusterInfoCache.java` (commit
//!   `000e07b8b0dcf323fdcccfdfd6528971ce6ac63f`, the 5.x line after 5.1.0 with the
//!   `TopologyRefreshTask` of PR #3596): `renewClusterSlots`, `discoverClusterSlots`,
//!   `discoverClusterNodesAndSlots`, `checkClusterSlotSequence`, `setupNodeIfNotExist`,
//!   the `topologyRefreshPeriod` constructor (`scheduleWithFixedDelay`);
//! - `src/main/java/redis/clients/jedis/providers/ClusterConnectionProvider.java` (commit
//!   `0131f087af710f298582f1cc9b6a5f34327cccfc`, a later line whose methods used here are
//!   unchanged): `initializeSlotsCache`, `renewSlotCache`, `getConnection(HostAndPort)`,
//!   `getConnectionFromSlot`, `getConnection()`.
//!
//! `topologyRefreshPeriod` arrived in 5.1.0 (PR #3596); the routing paths modelled are the same
//! from 5.1.0 through 6.2.0 (`docs/releases/jedis-lettuce.md`: the sources of 5.1.0–5.1.5, 5.2.0,
//! 6.0.0, 6.1.0 and 6.2.0 compared: what they add is opt-in, the client-side cache,
//! `readOnlyForRedisClusterReplicas`, AuthX; 6.2.0 draws its last-resort random node from the
//! primaries seen at start-up, a path the defaults never reach). 4.4.0–5.0.2 accept a `CLUSTER
//! SLOTS` answer with holes (5.0.0 `JedisClusterInfoCache.java:134-138` checks only emptiness;
//! 5.1.0 :200-206 the whole range) and have no `topologyRefreshPeriod`; 7.x changed its pools and
//! connections: neither covered.
//!
//! # What is modelled
//!
//! - **Start-up** (`initializeSlotsCache`): the start nodes, shuffled, each over a new connection,
//!   until one answers `CLUSTER SLOTS` with all 16384 slots (`checkClusterSlotSequence` refuses an
//!   answer with holes). Here it happens at the first command; a failure fails that command
//!   (`JedisClusterOperationException`: "Could not initialize cluster slots cache.") and the next
//!   command tries again.
//!   An empty answer ("Cluster slots list is empty.") or one with holes ("Cluster slots have
//!   holes.") is refused, by `discoverClusterNodesAndSlots` and `discoverClusterSlots`
//!   (`src/main/java/redis/clients/jedis/JedisClusterInfoCache.java` lines 112-117 and 201-206
//!   at tag `v5.1.0`, unless the `jedis.cluster.initNoError` property is set): the old table and
//!   the start nodes are kept, so a client started before slot assignment fails its commands
//!   until an answer covers every slot, and is never wedged.
//! - **`executeCommand`**: up to `maxAttempts` (default 5) attempts within
//!   `maxTotalRetriesDuration` (default `soTimeout × maxAttempts` = 10 s).
//!   - `MOVED`: `renewSlotCache(connection)`: a full `CLUSTER SLOTS` refresh, first through the
//!     connection that got the `MOVED`, on **every** `MOVED`; the next attempt goes to the target.
//!   - `ASK`: the next attempt goes to the target after `ASKING`; no refresh.
//!   - `JedisConnectionException` (refused, reset, read timeout): the next attempt goes to the
//!     slot's node again. From two consecutive failures on (`maxAttempts >= 3`), a random
//!     backoff sleep (`0..=millisLeft / attemptsLeft²`), then `renewSlotCache()` and the failure
//!     count and redirect are reset; with `maxAttempts < 3`, a refresh when no attempt is left.
//!     A backoff with the deadline already passed raises at once.
//!   - After each failed attempt past the deadline, and when attempts run out:
//!     `JedisClusterOperationException`. A `CLUSTERDOWN` reply raises `JedisClusterException`.
//! - **`renewClusterSlots`**: only under `rediscoverLock.tryLock()`
//!   (`JedisClusterInfoCache.java:151-153` at tag `v5.1.0`): a renewal that finds the lock held
//!   by another command's renewal returns at once, sending nothing. Commands run one after
//!   another here, each from its own start time, so the lock is held on the virtual clock from a
//!   renewal's start to its end (a renewal waiting on a silent node holds it for the socket
//!   timeout), kept as a set of spans (an earlier command's late renewal does not block a later
//!   command's earlier one): with many commands in flight in a stall, most of their renewals are dropped, as
//!   live runs show (7 `CLUSTER SLOTS` for 929 in flight through a 2.4 s stall). Then: the
//!   given connection first, then every start node over a new connection — the start nodes are
//!   never dropped, so the client can always recover — then the other known nodes, shuffled,
//!   through their pools (a start node's pool lends a connection first and is then skipped,
//!   `JedisClusterInfoCache.java:179-184` at tag `v5.1.0`). The first complete answer replaces
//!   the slot table; every node it lists, owner or replica, has a pool, and the nodes it does
//!   not list are removed and their pools destroyed (`discoverClusterSlots`). A failed refresh
//!   changes nothing and raises nothing.
//! - **`topologyRefreshPeriod`** (default none: off): `renewClusterSlots(null)` every period,
//!   first one period after the client was built.
//! - **Connections**: one pool per known node; a redirect to an unknown node creates its pool
//!   (`setupNodeIfNotExist`). Each attempt borrows a connection of its node's pool
//!   (`ClusterConnectionProvider.getConnection*`, commons-pool `borrowObject`: an idle one, else
//!   a new one) and holds it until the attempt is over, a `MOVED`'s renewal through it included
//!   (`executors/ClusterCommandExecutor.java:80-122`, closed in its `finally` at :120-121); so a
//!   pool grows to the most attempts on its node at once, as the live runs' connection counts do
//!   (the pool is never the limit: `apps/java` sizes it to the commands in flight); the model
//!   runs each command whole when it is sent, so a connection is held over spans of the virtual
//!   clock and lent to any command at a moment outside them (`jedis/pool.rs`). A connection
//!   that fails is broken and destroyed, the next use opens a new one; `new_connections` counts
//!   each connection established (a refused one is not). A new connection sends its handshake
//!   first (`CLIENT SETINFO`, `CLIENT SETNAME`) and waits for the replies
//!   (`Connection.java:390-440`): over a new connection to a silent node, `CLUSTER SLOTS` is
//!   never written and not counted.
//!
//! - **`hostAndPortMapper`** (`DefaultJedisClientConfig.Builder.hostAndPortMapper`, default
//!   none; read from `jedis-5.1.0-sources.jar`, paths under `redis/clients/jedis/`): Jedis asks
//!   the mapper for the address of **every socket it opens**, in
//!   `DefaultJedisSocketFactory.getSocketHostAndPort` (`DefaultJedisSocketFactory.java:131-139`,
//!   called by `createSocket`, :88; a `null` answer keeps the address met): the seed connections
//!   of `initializeSlotsCache` (`providers/ClusterConnectionProvider.java:54`), the start-node
//!   connections of a renewal (`JedisClusterInfoCache.java:169`) and every pooled connection
//!   (`ConnectionFactory.java:30`). It is never applied to addresses Jedis *holds*: the slot
//!   cache takes the `CLUSTER SLOTS` answer's addresses as announced (`generateHostAndPort`,
//!   `JedisClusterInfoCache.java:260-264`), pools are keyed by them (`setupNodeIfNotExist`,
//!   :266-279), and a `MOVED`/`ASK` is followed to its target as named
//!   (`executors/ClusterCommandExecutor.java:84`). The model maps one address (the replay's
//!   remap: every node to one `HOST:PORT`, as `apps/java` sets it) at each connect and keeps the
//!   announced addresses in its table and pools. So with every node mapped to one node, a command
//!   for another node's slot meets `MOVED` on each attempt, each `MOVED` renews the slot cache
//!   (to the same table), and the command fails after `maxAttempts` `MOVED`s.
//! - **State**: `startup_nodes` is the number of start nodes (never dropped, so the client is
//!   never `wedged`); `full_reinits` counts applied `CLUSTER SLOTS` answers (start-up included).
//!
//! # Choices of the model
//!
//! - Time inside a command: each read timeout costs `socket_timeout` (Jedis's `soTimeout`,
//!   2 s when not set) and each backoff its sleep, against `maxTotalRetriesDuration`. With
//!   `socket_timeout` set the replay also waits them out: later attempts of the command are
//!   answered that much later (a node back from a stall answers), and the application's lane
//!   stays busy meanwhile.
//! - Applying a `CLUSTER SLOTS` answer costs the client `renew_cpu_ms` (default 0.5 ms, measured
//!   on Jedis 5.1.0: see [`RENEW_CPU_US`]) on the command's thread, inside the renewal and so
//!   under the rediscover lock: with commands in flight and every command renewing (a remap),
//!   about half of the renewals find the lock taken, as in the live runs.
//! - The background refresh runs before the next command after it is due, once however many
//!   periods passed (the fixed-delay schedule restarts from then).
//! - Shuffles and backoff draw from a [`SimRng`] seeded with a constant: replays are
//!   deterministic. A start-node set is taken in the given order (Jedis's is a `HashSet`).
//! - `getConnection()` (a random node, for a slot the table lacks even after a refresh) pings the
//!   node first; the ping is not sent here, the node is only picked.
//! - **Connections someone closed** (`CLIENT KILL`, `replay/kills.rs`) stay in the pool: nothing
//!   tests a connection on borrow (`testOnBorrow` off, commons-pool2 2.12.0
//!   `GenericObjectPool.java:343-347`), so each attempt that borrows one fails ("Unexpected end
//!   of stream.", `RedisInputStream.java:242-251`) and counts as a connection problem (the second
//!   in a row renews the slots); a command waiting on one at the kill fails its attempt too.
//! - Exceptions: `JedisClusterOperationException` (common class no-topology when the slots
//!   cache could not be initialised, connection when no node is reachable, too-many-redirects
//!   when the attempts or their time ran out), `JedisClusterException` (cluster-down). A
//!   `JedisConnectionException` never reaches the application (the executor wraps it).

mod pool;
mod topology;

use pool::Pool;

use crate::node::NodeAddr;
use crate::redirect::Redirect;
use crate::replay::client::ClientModel;
use crate::replay::client::{numbered_once, Transport};
use crate::replay::client_state::{ClientSnapshot, ClientState};
use crate::replay::cluster::Reply;
use crate::replay::descriptor::{Hypotheses, ModelDescriptor};
use crate::replay::known_nodes::KnownNodes;
use crate::replay::options::{
    parse_cpu_ms, parse_mapped_addr, parse_secs_ms, ModelOption, ModelOptions,
};
use crate::replay::outcome::{ClientError, Failure, Outcome};
use crate::replay::release::{Coverage, Version};
use crate::replay::sequential::{boxed, SyncModel};
use crate::replay::{ReplayError, Routed, SimRng};
use crate::time::Timestamp;
use crate::timeline::{NodeIdx, SlotTable};

/// `jedis@5.1.0`: covers **5.1.0–6.x** (`topologyRefreshPeriod` arrived in 5.1.0 and the
/// routing paths are the same through 6.2.0, see the module doc).
pub const DESCRIPTOR: ModelDescriptor = ModelDescriptor {
    name: "jedis@5.1.0",
    about: "Jedis 5.x JedisCluster: every MOVED renews the slot cache, start nodes always retried",
    source: "Jedis 5.1.0 `redis/clients/jedis/JedisClusterInfoCache.java` l. 112-117, 151-153 and 201-206 (the renewal)",
    options: OPTIONS,
    coverage: Some(Coverage {
        library: "jedis",
        from: Version::new(5, 1, 0),
        until: Version::new(7, 0, 0),
        range: "5.1.0–6.x",
    }),
    hypotheses: Hypotheses::Library { extra: &[] },
};

/// Jedis's own options, by their constructor parameter names (besides `startup_nodes` and
/// `socket_timeout`, which is Jedis's `soTimeout`).
const OPTIONS: &[ModelOption] = &[
    ModelOption {
        name: "maxAttempts",
        doc: "attempts of a command, redirects and connection failures alike (default 5)",
        default: "5",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "maxTotalRetriesDuration",
        doc: "seconds a command may spend retrying (default soTimeout x maxAttempts = 10)",
        default: "10",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "hostAndPortMapper",
        doc:
            "HOST:PORT: every socket Jedis opens connects here (seeds, pools, renewals); the slot \
              cache, the pools and MOVED/ASK targets keep the announced addresses (default none)",
        default: "none",
        aliases: &[],
        check: Some(|v| parse_mapped_addr(v).map(drop)),
    },
    ModelOption {
        name: "renew_cpu_ms",
        doc: "the client's own time to rebuild its slot cache from a CLUSTER SLOTS answer, on \
              the command's thread and under the rediscover lock (default 0.5, measured on 5.1.0)",
        default: "0.5",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "topologyRefreshPeriod",
        doc: "seconds between background CLUSTER SLOTS refreshes (default none: off)",
        default: "none",
        ..ModelOption::PLAIN
    },
];

/// The client's own time to apply a `CLUSTER SLOTS` answer, in microseconds: Jedis 5.1.0's
/// `ClusterConnectionProvider.renewSlotCache(Connection)` against a 3-master Redis 7.0 cluster on
/// loopback took 0.48–0.66 ms a call once the JIT was warm (3,000 calls a round, 6 rounds, on
/// the project's 2-core machine under load), against 0.03–0.10 ms for a `ZADD` exchange on the
/// same connection: about 0.5 ms of the client's own work (`discoverClusterSlots` rebuilds the
/// whole slot array under the cache's write lock, `JedisClusterInfoCache.java:198-258`).
const RENEW_CPU_US: u64 = 500;

/// Jedis's `Protocol.DEFAULT_TIMEOUT` in milliseconds (`soTimeout`).
const DEFAULT_SO_TIMEOUT_MS: u64 = 2000;
/// Seed of the shuffles and backoff draws.
const RNG_SEED: u64 = 0x4A45_4449_535F_3531;

/// Builds `jedis@5.1.0`.
pub(super) fn build(
    _: Option<Version>,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    let name = DESCRIPTOR.name;
    options.check_for_model(name, OPTIONS)?;
    let max_attempts = options.library_value(
        "maxAttempts",
        5u32,
        |v| v.parse().ok().filter(|n: &u32| (1..=100).contains(n)),
        "a number of attempts from 1 to 100",
    )?;
    let so_timeout_ms = options.socket_timeout_ms.unwrap_or(DEFAULT_SO_TIMEOUT_MS);
    let max_total_ms = options.library_value(
        "maxTotalRetriesDuration",
        so_timeout_ms.saturating_mul(u64::from(max_attempts)),
        parse_secs_ms,
        "a number of seconds",
    )?;
    let refresh_period_ms = options.library_value(
        "topologyRefreshPeriod",
        None,
        |v| match v {
            "" | "none" | "None" | "null" => Some(None),
            v => parse_secs_ms(v).filter(|&ms| ms > 0).map(Some),
        },
        "a positive number of seconds, or none",
    )?;
    let mapper = options.parsed_value("hostAndPortMapper", None, parse_mapped_addr)?;
    let renew_cpu_us = options.library_value(
        "renew_cpu_ms",
        RENEW_CPU_US,
        parse_cpu_ms,
        "milliseconds in [0, 10000]",
    )?;
    Ok(boxed(Client::new(
        name,
        Settings {
            mapper,
            renew_cpu_us,
            max_attempts,
            max_total_ms,
            so_timeout_ms,
            refresh_period_ms,
        },
        &options,
    )))
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Settings {
    /// `hostAndPortMapper`: where every socket connects, whatever node it is for.
    mapper: Option<NodeAddr>,
    /// `renew_cpu_ms`, in microseconds.
    renew_cpu_us: u64,
    max_attempts: u32,
    max_total_ms: u64,
    so_timeout_ms: u64,
    refresh_period_ms: Option<u64>,
}

/// `JedisClusterOperationException` "Could not initialize cluster slots cache.": no start node
/// gave a complete answer.
const NO_SLOTS_CACHE: ClientError =
    ClientError::new("JedisClusterOperationException", Failure::NoTopology);
/// `JedisClusterOperationException` "No reachable node in cluster.": no pool to pick a node from.
const NO_REACHABLE_NODE: ClientError =
    ClientError::new("JedisClusterOperationException", Failure::Connection);
/// `JedisClusterOperationException` "No more cluster attempts left." or "Cluster retry deadline
/// exceeded.": the attempts or their time ran out.
const GAVE_UP: ClientError =
    ClientError::new("JedisClusterOperationException", Failure::TooManyRedirects);
/// `JedisClusterException`: a `CLUSTERDOWN` reply.
const CLUSTER_DOWN: ClientError = ClientError::new("JedisClusterException", Failure::ClusterDown);

/// How one attempt ended, when not served.
enum Attempt {
    /// `JedisRedirectionException`: `MOVED` (true) or `ASK` (false) to the node, through `via`.
    Redirect {
        moved: bool,
        to: NodeIdx,
        via: NodeIdx,
    },
    /// `JedisConnectionException` (refused, reset or read timeout).
    Connection,
    /// Raised to the application at once.
    Raise(ClientError),
}

/// What the client holds for one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Node {
    /// The node's pool.
    pool: Pool,
    /// `nodes`: the node has a pool.
    known: bool,
    /// Until when (µs) kills of the node's connections (`CLIENT KILL`) were looked for: the
    /// connections idle at a kill found then are dead.
    kills_seen_us: u64,
}

/// A connection borrowed from a node's pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Borrowed {
    /// Its place in the pool.
    i: usize,
    /// Made for the borrow.
    fresh: bool,
    /// Closed by someone while it was idle (`CLIENT KILL`).
    dead: bool,
}

/// Which connection a `CLUSTER SLOTS` goes over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Over {
    /// The connection the command holds (`renewSlotCache(connection)`).
    Held,
    /// One borrowed from the node's pool and returned after.
    Pool,
    /// A new connection, closed after (`new Connection(hostAndPort, clientConfig)`).
    Fresh,
}

struct Client {
    name: String,
    cfg: Settings,
    socket_timeout_ms: Option<u64>,
    rng: SimRng,
    /// The addresses the client knows, numbered, with each node's pool.
    nodes: KnownNodes<Node>,
    /// `startNodes`.
    seeds: Vec<NodeIdx>,
    /// `slots`: slot → node, each table with the moment a renewal made it, in time order
    /// (never empty). A command runs on to its end when it is sent, so its renewal (after a
    /// timeout, say) is made before the commands sent meanwhile run: each of those reads the
    /// table in force when it was sent ([`Client::table_at`]), as the library's other threads
    /// do. Tables replaced before the running command started are forgotten.
    tables: Vec<(Timestamp, SlotTable)>,
    initialized: bool,
    next_refresh: Option<Timestamp>,
    /// When renewals held `rediscoverLock`, `[start, end)` in µs of the virtual clock: a renewal
    /// that starts inside one is dropped. Commands run one after another by their start time
    /// but each runs on to its own end, so a renewal late in an earlier command can lie after one
    /// early in a later command: the lock is a set of spans, not one time. Spans that ended
    /// before the running command started are forgotten.
    locked: Vec<(u64, u64)>,
    /// The pooled connection the running command holds: its node and its place in the pool.
    held: Option<(NodeIdx, usize)>,
    state: ClientState,
}

impl Client {
    fn new(name: &str, cfg: Settings, opts: &ModelOptions) -> Client {
        let mut c = Client {
            name: name.to_owned(),
            cfg,
            socket_timeout_ms: opts.socket_timeout_ms,
            rng: SimRng::new(RNG_SEED),
            nodes: KnownNodes::new(Node::default()),
            seeds: Vec::new(),
            tables: vec![(Timestamp(0), SlotTable::new())],
            initialized: false,
            next_refresh: None,
            locked: Vec::new(),
            held: None,
            state: ClientState::default(),
        };
        c.seeds = numbered_once(&opts.startup_nodes, |a| c.intern(a));
        c.state.startup_nodes = c.seeds.len();
        c
    }

    /// The number of `addr` (`None` only past 65,535 addresses: the address is then unusable).
    fn intern(&mut self, addr: &NodeAddr) -> Option<NodeIdx> {
        self.nodes.intern(addr)
    }

    /// The address a socket for `node` connects to: `getSocketHostAndPort` asks the
    /// `hostAndPortMapper` (`DefaultJedisSocketFactory.java:131-139`).
    fn dial(&self, node: NodeIdx) -> Option<&NodeAddr> {
        let announced = self.nodes.addr(node)?;
        Some(self.cfg.mapper.as_ref().unwrap_or(announced))
    }

    /// The nodes that have a pool.
    fn pools(&self) -> Vec<NodeIdx> {
        self.nodes.filter(|n| n.known)
    }

    /// Borrows a connection of `node`'s pool (`GenericObjectPool.borrowObject`): an idle one,
    /// else a new one (the pool is never the limit: `apps/java` sizes it to the commands in
    /// flight). Idle ones someone closed since the last borrow (`CLIENT KILL`) stay in the pool,
    /// dead: nothing tests a connection on borrow (`testOnBorrow` off, commons-pool2
    /// `GenericObjectPool.java:343-347`).
    fn borrow(&mut self, node: NodeIdx, net: &dyn Transport) -> Borrowed {
        let now_us = net.now_us();
        let seen = self.nodes.get(node).kills_seen_us;
        let killed = self
            .dial(node)
            .is_some_and(|a| net.killed(a, Timestamp(seen / 1000)));
        let n = self.nodes.get_mut(node);
        if killed {
            n.pool.kill_idle(now_us);
        }
        n.kills_seen_us = n.kills_seen_us.max(now_us);
        let (i, fresh) = n.pool.take(now_us);
        let dead = n.pool.get(i).is_some_and(|c| c.dead);
        Borrowed { i, fresh, dead }
    }

    /// Ends the use of connection `i` of `node`, borrowed as `fresh`, whose exchange got
    /// `reply` (`None`: an answer) at `now_us`: a connection made counts once (a refused connect
    /// makes none); a broken one is destroyed (true: it is not, and stays held).
    fn settle(
        &mut self,
        node: NodeIdx,
        (i, fresh): (usize, bool),
        reply: Option<&Reply>,
        now_us: u64,
    ) -> bool {
        let reached = !matches!(reply, Some(Reply::ConnectionError));
        if reached && fresh {
            self.state.new_connections += 1;
        }
        let broken = matches!(reply, Some(Reply::ConnectionError | Reply::Timeout));
        if broken {
            self.nodes.get_mut(node).pool.destroy(i, now_us);
        }
        !broken
    }

    /// Returns connection `i` of `node` to its pool at the current time.
    fn give_back(&mut self, node: NodeIdx, i: usize, net: &dyn Transport) {
        let now = net.now_us();
        self.nodes.get_mut(node).pool.give_back(i, now);
    }

    /// Returns the running command's connection, if it holds one.
    fn release(&mut self, net: &dyn Transport) {
        if let Some((node, i)) = self.held.take() {
            self.give_back(node, i, net);
        }
    }

    /// One attempt: the connection, then the command.
    fn attempt(
        &mut self,
        cmd: Routed,
        redirect: Option<(NodeIdx, bool)>,
        elapsed: &mut u64,
        net: &mut dyn Transport,
    ) -> Result<(), Attempt> {
        let (node, asking) = match redirect {
            Some((to, moved)) => {
                // getConnection(HostAndPort): setupNodeIfNotExist().
                self.nodes.get_mut(to).known = true;
                (to, !moved)
            }
            None => (self.slot_node(cmd, elapsed, net)?, false),
        };
        if self.dial(node).is_none() {
            return Err(Attempt::Connection);
        }
        // The attempt's connection, held until the attempt is over (a MOVED's renewal included:
        // `ClusterCommandExecutor.executeCommand` closes it in its `finally`).
        let Borrowed { i, fresh, dead } = self.borrow(node, net);
        let sent = net.now();
        let reply = match self.dial(node) {
            Some(addr) if !dead => match net.send(addr, cmd, asking) {
                // Closed while the command waited for its reply.
                _ if net.killed(addr, sent) => Reply::ConnectionError,
                r => r,
            },
            // Closed while idle (`CLIENT KILL`): the write or the read fails at once
            // ("Unexpected end of stream.", `RedisInputStream.java:242-251`). (Never `None`:
            // the address was there before the borrow.)
            _ => Reply::ConnectionError,
        };
        if self.settle(node, (i, fresh), Some(&reply), net.now_us()) {
            self.held = Some((node, i));
        }
        match reply {
            Reply::Ok => Ok(()),
            Reply::Redirect(Redirect::Moved { to, .. }) => match self.intern(&to) {
                Some(to) => Err(Attempt::Redirect {
                    moved: true,
                    to,
                    via: node,
                }),
                None => Err(Attempt::Connection),
            },
            Reply::Redirect(Redirect::Ask { to, .. }) => match self.intern(&to) {
                Some(to) => Err(Attempt::Redirect {
                    moved: false,
                    to,
                    via: node,
                }),
                None => Err(Attempt::Connection),
            },
            Reply::ConnectionError => Err(Attempt::Connection),
            Reply::Timeout => {
                // The broken connection was destroyed (`settle`).
                *elapsed = elapsed.saturating_add(self.cfg.so_timeout_ms);
                Err(Attempt::Connection)
            }
            Reply::ClusterDown => Err(Attempt::Raise(CLUSTER_DOWN)),
        }
    }

    /// The slot table in force at `t`: the last one made at or before `t` (the first if none).
    fn table_at(&self, t: Timestamp) -> &SlotTable {
        let i = self.tables.partition_point(|(from, _)| *from <= t);
        &self.tables[i.saturating_sub(1)].1
    }

    /// `getConnectionFromSlot`: the slot's node; else a refresh and again; else a random node.
    fn slot_node(
        &mut self,
        cmd: Routed,
        elapsed: &mut u64,
        net: &mut dyn Transport,
    ) -> Result<NodeIdx, Attempt> {
        if let Some(n) = self.table_at(net.now()).get(cmd.slot) {
            return Ok(n);
        }
        self.renew(None, elapsed, net);
        if let Some(n) = self.table_at(net.now()).get(cmd.slot) {
            return Ok(n);
        }
        let pools = self.pools();
        if pools.is_empty() {
            // getConnection(): "No reachable node in cluster."
            return Err(Attempt::Raise(NO_REACHABLE_NODE));
        }
        Ok(pools[self.rng.index_below(pools.len())])
    }

    /// `handleConnectionProblem`: true when the failure count and redirect are to be reset.
    fn connection_problem(
        &mut self,
        attempts_left: u32,
        failures: u32,
        elapsed: &mut u64,
        net: &mut dyn Transport,
    ) -> Result<bool, ClientError> {
        if self.cfg.max_attempts < 3 {
            if attempts_left == 0 {
                self.renew(None, elapsed, net);
                return Ok(true);
            }
            return Ok(false);
        }
        if failures < 2 {
            return Ok(false);
        }
        // getBackoffSleepMillis()
        if attempts_left > 0 {
            let left = self.cfg.max_total_ms.checked_sub(*elapsed).ok_or(GAVE_UP)?;
            let squared = u64::from(attempts_left).saturating_mul(u64::from(attempts_left));
            let sleep = self.rng.below(left / squared + 1);
            *elapsed = elapsed.saturating_add(sleep);
            if self.socket_timeout_ms.is_some() {
                // Waiting is modelled: the retry happens that much later.
                net.sleep(sleep);
            }
        }
        self.renew(None, elapsed, net);
        Ok(true)
    }

    /// `executeCommand`.
    fn execute_command(&mut self, cmd: Routed, net: &mut dyn Transport) -> Result<(), ClientError> {
        let mut elapsed = 0u64;
        let mut redirect: Option<(NodeIdx, bool)> = None;
        let mut failures = 0u32;
        for attempts_left in (1..=self.cfg.max_attempts).rev() {
            let attempt = self.attempt(cmd, redirect, &mut elapsed, net);
            match attempt {
                Ok(()) => {
                    self.release(net);
                    return Ok(());
                }
                Err(Attempt::Raise(class)) => {
                    self.release(net);
                    return Err(class);
                }
                Err(Attempt::Connection) => {
                    self.release(net);
                    failures += 1;
                    if self.connection_problem(attempts_left - 1, failures, &mut elapsed, net)? {
                        failures = 0;
                        redirect = None;
                    }
                }
                Err(Attempt::Redirect { moved, to, via }) => {
                    failures = 0;
                    redirect = Some((to, moved));
                    if moved {
                        self.renew(Some(via), &mut elapsed, net);
                    }
                    self.release(net);
                }
            }
            if elapsed > self.cfg.max_total_ms {
                // "Cluster retry … deadline exceeded."
                return Err(GAVE_UP);
            }
        }
        // "No more cluster attempts left."
        Err(GAVE_UP)
    }
}

impl SyncModel for Client {
    fn name(&self) -> &str {
        &self.name
    }

    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        let now = net.now_us();
        self.locked.retain(|&(_, end)| end > now);
        for (_, n) in self.nodes.states_mut() {
            n.pool.prune(now);
        }
        let sent = net.now();
        let before = self.tables.partition_point(|(from, _)| *from <= sent);
        self.tables.drain(..before.saturating_sub(1));
        if !self.initialized {
            if !self.initialize(net) {
                return Outcome::Failed(NO_SLOTS_CACHE);
            }
            self.initialized = true;
        }
        self.background(net);
        match self.execute_command(cmd, net) {
            Ok(()) => Outcome::Ok,
            Err(class) => Outcome::Failed(class),
        }
    }

    fn state(&self) -> ClientState {
        self.state
    }

    fn snapshot(&self) -> ClientSnapshot {
        let open: usize = self
            .nodes
            .filter(|_| true)
            .iter()
            .map(|&n| self.nodes.get(n).pool.open())
            .sum();
        // The latest table.
        let table = self.table_at(Timestamp(u64::MAX));
        ClientSnapshot::of_table(table, u64::try_from(open).unwrap_or(u64::MAX))
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.socket_timeout_ms
    }
}
