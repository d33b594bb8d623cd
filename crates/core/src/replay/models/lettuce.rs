//! Lettuce 6.x `io.lettuce.core.cluster.RedisClusterClient`, model `lettuce@6.3.2`.
//!
//! Written from the `redis/lettuce` (formerly `lettuce-io/lettuce-core`) sources of the 6.x line:
//!
//! - `src/main/java/io/lettuce/core/cluster/ClusterTopologyRefreshScheduler.java` (commit
//!   `043ea71bace8f40f243ff84c966fa7149a96ca01`, 6.2 line): `activateTopologyRefreshIfNeeded`,
//!   `onMovedRedirection`, `onAskRedirection`, `onReconnectAttempt`, `onUncoveredSlot`,
//!   `onUnknownNode`, `indicateTopologyRefreshSignal`, `acquireTimeout`, `Timeout.isExpired`;
//! - `src/main/java/io/lettuce/core/cluster/RedisClusterClient.java` (commit
//!   `07899263d106af11aea6377dc32ee53f4880bfcf`, 6.3 line): `refreshPartitionsAsync`,
//!   `loadPartitionsAsync`, `fetchPartitions`, `getTopologyRefreshSource`, `determinePartitions`;
//! - `src/main/java/io/lettuce/core/cluster/PooledClusterConnectionProvider.java` (6.x, `Intent`
//!   API): `getWriteConnection`, `getConnectionAsync(Intent, host, port)`, `beforeGetConnection`,
//!   `reconfigurePartitions` / `closeStaleConnections`;
//! - `src/main/java/io/lettuce/core/cluster/ClusterCommand.java` (commit
//!   `26895dd19ebc3567b6aa3f555dd78eec85b2f46b`): `complete` (the redirect count);
//! - `src/main/java/io/lettuce/core/cluster/ClusterDistributionChannelWriter.java`: `doWrite` (a
//!   MOVED or ASK is re-written to the target without touching the partitions);
//! - `src/main/java/io/lettuce/core/cluster/ClusterTopologyRefreshOptions.java`: the defaults;
//! - `src/main/java/io/lettuce/core/cluster/topology/DefaultClusterTopologyRefresh.java`:
//!   `loadViews` (with discovery, nodes seen in the views and not among the sources are queried
//!   too).
//!
//! The routing paths modelled are the same across 6.1–6.8 (`docs/releases/jedis-lettuce.md`: the
//! sources of every release from 6.1.0 to 6.8.2 compared: the refresh options' defaults and
//! triggers, the refresh sources, closing stale connections, `maxRedirects`, MOVED and ASK, the
//! reconnect delays and the address mapping); the model is named after 6.3.2, a release of the 6.3
//! line. One default differs: from 6.5.0 commands expire after the command timeout by default
//! (6.5.0 `ClientOptions.java:86`, `TimeoutOptions.enabled()`; 6.4.2 :70 had it off). The model
//! fails a command on a silent node or a broken connection with `RedisCommandTimeoutException`, as
//! 6.5+ does and as 6.1–6.4 do for synchronous calls or with `TimeoutOptions` on (the matrix's
//! application turns them on); an asynchronous 6.1–6.4 caller with the defaults waits for the node
//! instead. 5.3.x queries every source twice when new nodes appear and refreshes synchronously: not
//! covered.
//!
//! # What is modelled
//!
//! - **No refresh by default.** The partition table (slot → node, and the set of known nodes) is
//!   loaded once, from every seed, when the client is first used. A `MOVED` is followed
//!   (`ClusterCommand.complete` re-writes the command; `ClusterDistributionChannelWriter.doWrite`
//!   sends it to the MOVED target) but the table is **not** updated, so after a reshard every
//!   command on a moved slot meets `MOVED` first, forever. Neither periodic refresh
//!   (`enablePeriodicRefresh`, `refreshPeriod` 60 s) nor any adaptive trigger is on by default.
//! - **`maxRedirects`** (default 5): a command is re-written while `redirections < maxRedirects`;
//!   the next `MOVED`/`ASK` completes it with the error (`RedisCommandExecutionException`).
//! - **`validateClusterNodeMembership`** (default true): a redirect to a node that is not in the
//!   partition table is refused by `beforeGetConnection` (`UnknownPartitionException`, and the
//!   `UNKNOWN_NODE` trigger fires). So with the defaults, slots moved to a node that joined after
//!   the table was loaded fail on every command, forever.
//! - **Adaptive triggers** `MOVED_REDIRECT`, `ASK_REDIRECT`, `PERSISTENT_RECONNECTS` (a node's
//!   reconnect attempt number reaches `refreshTriggersReconnectAttempts`, default 5),
//!   `UNCOVERED_SLOT`, `UNKNOWN_NODE`: each signal first acquires the rate-limit `Timeout`
//!   (`adaptiveRefreshTriggersTimeout`, default 30 s: a signal is dropped until
//!   `expires < now`), then schedules a refresh.
//! - **A refresh** (`refreshPartitionsAsync`) asks every source for its view: with
//!   `dynamicRefreshSources` (default true) the sources are all nodes of the current table (sorted
//!   by address), and nodes discovered in the views are asked too; without it, the seeds only. If
//!   no source answers and the sources were not the seeds, the seeds are tried
//!   (`loadPartitionsAsync`). A failed refresh keeps the old table. After a successful one,
//!   connections to nodes that left the table are closed (`closeStaleConnections`, default true).
//!   Lettuce asks each node for `CLUSTER NODES` and `CLIENT LIST`/`INFO` over a dedicated
//!   connection opened for the refresh and closed after: here each node asked is one
//!   [`Transport::cluster_slots`] exchange; a node reached counts one query
//!   (`cluster_slots_calls`, what `apps/java` counts: `CLUSTER NODES` started) and one connection
//!   (`new_connections`), a refused one neither (nothing is sent on a connection never opened,
//!   `cluster/topology/Connections.java:104-113`). A view is that answer's slot owners with every
//!   node the cluster lists at that moment ([`Transport::cluster_members`]: `CLUSTER NODES` lists
//!   masters without slots and replicas too): those are the partitions (redirects to them are
//!   admitted) and, with discovery, the nodes asked next. So a cluster of three masters with
//!   slots, an empty fourth and a replica costs five queries at start-up, as live runs show.
//! - **Connections**: the cluster connection's own channel, opened by `connect()` once the
//!   partitions are loaded (`connectClusterAsync`, `cluster/RedisClusterClient.java:636-689`: a
//!   `DefaultEndpoint` connected through `getSocketAddressSupplier` to a node of the partitions,
//!   :673-682, :1124-1143; it carries commands without a slot, never the application's keyed
//!   ones); then one per node, opened on first use (a refused connect fails the command with
//!   `RedisConnectionException`). A connection that breaks (`ConnectionError`) is reconnected by
//!   the watchdog with Lettuce's default exponential delay (1, 2, 4, … ms, at most 30 s; reconnect
//!   attempt `n` at `2^n - 1` ms after the break, taken from `Delay.exponential()` and not re-read);
//!   commands written meanwhile are buffered. A silent node (`Timeout`) keeps its connection.
//!   A connection someone closed (`CLIENT KILL`, `replay/kills.rs`) is reconnected by the
//!   watchdog at once (`ConnectionWatchdog.channelInactive`): one new connection, no error, no
//!   refresh.
//!
//! - **`socketAddressResolver`** (`ClientResources.Builder.socketAddressResolver` with
//!   `MappingSocketAddressResolver.create(dnsResolver, mapping)`, default none; read from
//!   `lettuce-core-6.3.2.RELEASE-sources.jar`, paths under `io/lettuce/core/`): the resolver maps
//!   the `HostAndPort` of a `RedisURI` **each time a socket address is needed**, i.e. at every
//!   connect (`resource/MappingSocketAddressResolver.java:91-110`): node connections
//!   (`cluster/AbstractClusterNodeConnectionFactory.java:72-87`, `resolve` :108-110, by node id
//!   or by the host and port asked for), the topology queries' own connections
//!   (`cluster/topology/DefaultClusterTopologyRefresh.java:312`), and the seed for the first
//!   connection while no partitions are known (`cluster/RedisClusterClient.java:1136`). It is
//!   never applied to the addresses Lettuce holds: the partitions keep the addresses the nodes
//!   announce in `CLUSTER NODES` (`cluster/models/partitions/ClusterPartitionParser.java:231-234`),
//!   and a `MOVED`/`ASK` is followed to the target as named (`getMoveTarget` / `getAskTarget`,
//!   `cluster/ClusterDistributionChannelWriter.java:366-409`; `getConnectionAsync(intent, host,
//!   port)`, `cluster/PooledClusterConnectionProvider.java:471`, whose connection resolves the
//!   host and port through the resolver). The model maps one address (the replay's remap: every
//!   node to one `HOST:PORT`, as `apps/java` sets it) at each connect and keeps the announced
//!   addresses in its table. So with every node mapped to one node, a command for another node's
//!   slot meets `MOVED` on every write, follows it `maxRedirects` times to the same place and
//!   fails with the last `MOVED` (`maxRedirects + 1` of them); no topology refresh unless a
//!   trigger is on.
//! - **An incomplete topology answer**: a view with nodes but no slots (what a node answers
//!   before the slots are assigned) is applied like any other; only no answer at all fails the
//!   load (`RedisClusterClient.fetchPartitions`, "Cannot retrieve initial cluster partitions",
//!   `src/main/java/io/lettuce/core/cluster/RedisClusterClient.java` line 1039 at tag
//!   `6.3.2.RELEASE`). A command on a slot the table has no node for fails with
//!   `PartitionSelectorException` and signals `UNCOVERED_SLOT`
//!   (`PooledClusterConnectionProvider.getWriteConnection`, line 160 of the same tag): with the
//!   defaults nothing refreshes the table, so a client started before slot assignment fails every
//!   command for good (`wedged`); the `UNCOVERED_SLOT` trigger or a periodic refresh recovers it.
//! - **State**: `startup_nodes` is the number of seeds (`initialUris`, never dropped);
//!   `full_reinits` counts applied views (the initial load included); `wedged` (every later
//!   command fails, for ever) is true when the applied view maps no slot at all and neither
//!   periodic refresh nor the `UNCOVERED_SLOT` trigger is on, so nothing will ever reload it. A
//!   table that is only stale (commands meet `MOVED`, or a redirect to a node it lacks is
//!   refused) is not wedged: commands on the other slots still succeed, as the live runs of
//!   `apps/java` show (a remap onto one node: a third of the commands succeed for the whole run,
//!   and the application never reports itself wedged).
//!
//! # Choices of the model
//!
//! - Background work (a scheduled adaptive refresh, a due periodic refresh, reconnect attempts)
//!   happens before the next command after it is due: commands run one at a time, and Lettuce's
//!   refresh runs asynchronously after the command that triggered it. A periodic refresh due
//!   several times since the last command runs once.
//! - A command to a silent node (`Timeout`) or buffered on a broken connection fails with
//!   `RedisCommandTimeoutException`: the simulation answers at the command's time only, so a node
//!   silent at that time is taken as silent for Lettuce's whole `timeout` (60 s by default). Set
//!   `socket_timeout` to that timeout to make the sequential client wait it out.
//! - Exceptions (with their common class): `UnknownPartitionException` (no-topology),
//!   `RedisConnectionException` (connection: the initial topology could not be loaded or a
//!   connection could not be opened), `RedisCommandTimeoutException` (timeout),
//!   `PartitionSelectorException` (no-topology: no node for the slot in the table),
//!   `RedisCommandExecutionException` (too-many-redirects for a `MOVED`/`ASK` past
//!   `maxRedirects`, cluster-down for a `CLUSTERDOWN` reply).

mod topology;

use crate::node::NodeAddr;
use crate::redirect::Redirect;
use crate::replay::client::ClientModel;
use crate::replay::client::{numbered_once, Transport};
use crate::replay::client_state::{ClientSnapshot, ClientState};
use crate::replay::cluster::Reply;
use crate::replay::descriptor::{Hypotheses, ModelDescriptor};
use crate::replay::known_nodes::KnownNodes;
use crate::replay::options::{
    parse_bool, parse_count, parse_mapped_addr, parse_secs_ms, ModelOption, ModelOptions,
};
use crate::replay::outcome::{ClientError, Failure, Outcome};
use crate::replay::release::{Coverage, Version};
use crate::replay::sequential::{boxed, SyncModel};
use crate::replay::{ReplayError, Routed};
use crate::slot::SlotRange;
use crate::time::Timestamp;
use crate::timeline::{NodeIdx, SlotTable};

/// `lettuce@6.3.2`: covers **6.1.0–6.8.x** (the routing paths modelled are the same across
/// 6.1–6.8; 6.1–6.4 expire commands only when told to, see the module doc).
pub const DESCRIPTOR: ModelDescriptor = ModelDescriptor {
    name: "lettuce@6.3.2",
    about: "Lettuce 6.x RedisClusterClient: follows MOVED without refreshing unless refresh triggers are on",
    source: "Lettuce 6.3 `io/lettuce/core/cluster/ClusterTopologyRefreshScheduler.java` and `ClusterDistributionChannelWriter.java` (`doWrite`)",
    options: OPTIONS,
    coverage: Some(Coverage {
        library: "lettuce",
        from: Version::new(6, 1, 0),
        until: Version::new(6, 9, 0),
        range: "6.1.0–6.8.x",
    }),
    hypotheses: Hypotheses::Library {
        extra: &[&[("enableAllAdaptiveRefreshTriggers", "true")]],
    },
};

/// Lettuce's own options, by their builder names (besides `startup_nodes` and `socket_timeout`).
const OPTIONS: &[ModelOption] = &[
    ModelOption {
        name: "maxRedirects",
        doc: "MOVED/ASK redirections followed before the error is raised (default 5)",
        default: "5",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "validateClusterNodeMembership",
        doc: "refuse to connect to nodes not in the partition table (default true)",
        default: "true",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "enablePeriodicRefresh",
        doc: "refresh the topology every refreshPeriod (default false)",
        default: "false",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "refreshPeriod",
        doc: "seconds between periodic refreshes (default 60; needs enablePeriodicRefresh)",
        default: "60",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "enableAllAdaptiveRefreshTriggers",
        doc: "refresh on MOVED, ASK, persistent reconnects, uncovered slot, unknown node (default false)",
        default: "false",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "enableAdaptiveRefreshTrigger",
        doc: "comma-separated triggers: MOVED_REDIRECT, ASK_REDIRECT, PERSISTENT_RECONNECTS, \
         UNCOVERED_SLOT, UNKNOWN_NODE (default none)",
        default: "",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "adaptiveRefreshTriggersTimeout",
        doc: "seconds: adaptive triggers are ignored this long after one fired (default 30)",
        default: "30",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "refreshTriggersReconnectAttempts",
        doc: "reconnect attempts of a node before PERSISTENT_RECONNECTS fires (default 5)",
        default: "5",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "dynamicRefreshSources",
        doc: "ask every known node (true) or only the seeds (false) for the topology (default true)",
        default: "true",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "socketAddressResolver",
        doc: "HOST:PORT: a MappingSocketAddressResolver that maps every address to this one; \
              every connection (commands, topology queries, seeds) goes there, the partitions and \
              MOVED/ASK targets keep the announced addresses (default none)",
        default: "none",
        aliases: &[],
        check: Some(|v| parse_mapped_addr(v).map(drop)),
    },
    ModelOption {
        name: "closeStaleConnections",
        doc: "close connections to nodes that left the topology after a refresh (default true)",
        default: "true",
        ..ModelOption::PLAIN
    },
];

/// `ClusterTopologyRefreshOptions.RefreshTrigger`, as bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trigger {
    MovedRedirect,
    AskRedirect,
    PersistentReconnects,
    UncoveredSlot,
    UnknownNode,
}

const ALL_TRIGGERS: u8 = 31;

impl Trigger {
    fn bit(self) -> u8 {
        match self {
            Trigger::MovedRedirect => 1,
            Trigger::AskRedirect => 2,
            Trigger::PersistentReconnects => 4,
            Trigger::UncoveredSlot => 8,
            Trigger::UnknownNode => 16,
        }
    }

    fn parse(name: &str) -> Option<Trigger> {
        match name.trim() {
            "MOVED_REDIRECT" => Some(Trigger::MovedRedirect),
            "ASK_REDIRECT" => Some(Trigger::AskRedirect),
            "PERSISTENT_RECONNECTS" => Some(Trigger::PersistentReconnects),
            "UNCOVERED_SLOT" => Some(Trigger::UncoveredSlot),
            "UNKNOWN_NODE" => Some(Trigger::UnknownNode),
            _ => None,
        }
    }
}

/// Lettuce's options, read.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Settings {
    /// `socketAddressResolver`: where every connection goes, whatever node it is for.
    resolver: Option<NodeAddr>,
    max_redirects: u32,
    validate_membership: bool,
    periodic_ms: Option<u64>,
    triggers: u8,
    adaptive_timeout_ms: u64,
    reconnect_attempts: u32,
    dynamic_sources: bool,
    close_stale: bool,
}

fn parse_triggers(v: &str) -> Option<u8> {
    v.split([',', '+', '|'])
        .filter(|s| !s.trim().is_empty())
        .try_fold(0u8, |acc, s| Trigger::parse(s).map(|t| acc | t.bit()))
}

impl Settings {
    fn read(options: &ModelOptions) -> Result<Settings, ReplayError> {
        let max_redirects = options.library_value(
            "maxRedirects",
            5u32,
            |v| parse_count(v, 100),
            "a number of redirections up to 100",
        )?;
        let validate_membership = options.library_value(
            "validateClusterNodeMembership",
            true,
            parse_bool,
            "true or false",
        )?;
        let periodic =
            options.library_value("enablePeriodicRefresh", false, parse_bool, "true or false")?;
        let period = options.library_value(
            "refreshPeriod",
            60_000u64,
            |v| parse_secs_ms(v).filter(|&ms| ms > 0),
            "a positive number of seconds",
        )?;
        let all = options.library_value(
            "enableAllAdaptiveRefreshTriggers",
            false,
            parse_bool,
            "true or false",
        )?;
        let some = options.library_value(
            "enableAdaptiveRefreshTrigger",
            0u8,
            parse_triggers,
            "trigger names (MOVED_REDIRECT, ASK_REDIRECT, PERSISTENT_RECONNECTS, UNCOVERED_SLOT, \
             UNKNOWN_NODE) separated by commas",
        )?;
        let adaptive_timeout_ms = options.library_value(
            "adaptiveRefreshTriggersTimeout",
            30_000u64,
            parse_secs_ms,
            "a number of seconds",
        )?;
        let reconnect_attempts = options.library_value(
            "refreshTriggersReconnectAttempts",
            5u32,
            |v| v.parse().ok(),
            "a number of reconnect attempts",
        )?;
        let dynamic_sources =
            options.library_value("dynamicRefreshSources", true, parse_bool, "true or false")?;
        let close_stale =
            options.library_value("closeStaleConnections", true, parse_bool, "true or false")?;
        let resolver = options.parsed_value("socketAddressResolver", None, parse_mapped_addr)?;
        Ok(Settings {
            resolver,
            max_redirects,
            validate_membership,
            periodic_ms: periodic.then_some(period),
            triggers: if all { ALL_TRIGGERS } else { some },
            adaptive_timeout_ms,
            reconnect_attempts,
            dynamic_sources,
            close_stale,
        })
    }
}

/// Builds `lettuce@6.3.2`.
pub(super) fn build(
    _: Option<Version>,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    let name = DESCRIPTOR.name;
    options.check_for_model(name, OPTIONS)?;
    let settings = Settings::read(&options)?;
    Ok(boxed(Client::new(name, settings, &options)))
}

/// A node connection of the connection provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conn {
    /// None opened (or closed as stale).
    Closed,
    /// Connected since then.
    Open { since: Timestamp },
    /// Broken at `since`; the watchdog reconnects, `reported` attempts were signalled.
    Down { since: Timestamp, reported: u32 },
}

/// Reconnect attempts the watchdog made `elapsed_ms` after a break: attempt `n` waits `2^(n-1)`
/// ms (at most 30 s) after the previous one.
fn reconnect_attempts(elapsed_ms: u64) -> u32 {
    const DOUBLING_END_MS: u64 = (1 << 15) - 1;
    let n = if elapsed_ms < DOUBLING_END_MS {
        u64::from(63 - elapsed_ms.saturating_add(1).leading_zeros())
    } else {
        15 + (elapsed_ms - DOUBLING_END_MS) / 30_000
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `UnknownPartitionException`: a redirect to a node not in the partition table.
const UNKNOWN_PARTITION: ClientError =
    ClientError::new("UnknownPartitionException", Failure::NoTopology);
/// `RedisConnectionException`: the initial topology could not be loaded or a connection could
/// not be opened.
const CONNECTION: ClientError = ClientError::new("RedisConnectionException", Failure::Connection);
/// `RedisCommandTimeoutException`: no reply within the command timeout.
const COMMAND_TIMEOUT: ClientError =
    ClientError::new("RedisCommandTimeoutException", Failure::Timeout);
/// `PartitionSelectorException`: no node for the slot in the partition table.
const PARTITION_SELECTOR: ClientError =
    ClientError::new("PartitionSelectorException", Failure::NoTopology);
/// `RedisCommandExecutionException`: a `MOVED`/`ASK` past `maxRedirects`.
const REDIRECTS_EXHAUSTED: ClientError =
    ClientError::new("RedisCommandExecutionException", Failure::TooManyRedirects);
/// `RedisCommandExecutionException`: a `CLUSTERDOWN` reply.
const CLUSTER_DOWN: ClientError =
    ClientError::new("RedisCommandExecutionException", Failure::ClusterDown);

/// One node's topology view: the slot owners and every node it lists.
struct View {
    ranges: Vec<(SlotRange, NodeAddr)>,
    listed: Vec<NodeAddr>,
}

/// Why a command failed inside the routing loop.
struct Fail(ClientError);

struct Client {
    name: String,
    cfg: Settings,
    socket_timeout_ms: Option<u64>,
    /// The addresses the client knows, numbered; the numbers are what the tables hold.
    nodes: KnownNodes<Conn>,
    /// `initialUris`.
    seeds: Vec<NodeIdx>,
    /// The partition table: slot → node.
    table: SlotTable,
    /// The nodes of the partition table.
    members: Vec<NodeIdx>,
    initialized: bool,
    /// The adaptive-refresh rate limit: a trigger is taken when this is before now.
    adaptive_expires: Option<Timestamp>,
    refresh_scheduled: bool,
    next_periodic: Option<Timestamp>,
    /// Slots the partition table maps to a node (for `wedged`).
    mapped_slots: usize,
    state: ClientState,
}

impl Client {
    fn new(name: &str, cfg: Settings, opts: &ModelOptions) -> Client {
        let mut c = Client {
            name: name.to_owned(),
            cfg,
            socket_timeout_ms: opts.socket_timeout_ms,
            nodes: KnownNodes::new(Conn::Closed),
            seeds: Vec::new(),
            table: SlotTable::new(),
            members: Vec::new(),
            initialized: false,
            adaptive_expires: None,
            refresh_scheduled: false,
            next_periodic: None,
            mapped_slots: 0,
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

    /// The socket address a connection for `node` goes to: `SocketAddressResolver.resolve` of
    /// the client resources, a `MappingSocketAddressResolver` when `socketAddressResolver` is set
    /// (`resource/MappingSocketAddressResolver.java:91-110`).
    fn resolve(&self, node: NodeIdx) -> Option<&NodeAddr> {
        let announced = self.nodes.addr(node)?;
        Some(self.cfg.resolver.as_ref().unwrap_or(announced))
    }

    /// `ClusterTopologyRefreshScheduler`: a trigger signal, taken when the trigger is enabled
    /// and the rate-limit timeout has expired; the refresh runs before the next command.
    fn signal(&mut self, trigger: Trigger, now: Timestamp) {
        if self.cfg.triggers & trigger.bit() == 0 {
            return;
        }
        // acquireTimeout(): an unexpired timeout drops the signal; `isExpired` is `expires < now`.
        if self.adaptive_expires.is_some_and(|e| e >= now) {
            return;
        }
        self.adaptive_expires = Some(Timestamp(
            now.0.saturating_add(self.cfg.adaptive_timeout_ms),
        ));
        self.refresh_scheduled = true;
    }

    /// Writes the command to `node`'s connection (opening or re-opening it as Lettuce would).
    fn send(
        &mut self,
        node: NodeIdx,
        cmd: Routed,
        asking: bool,
        net: &mut dyn Transport,
    ) -> Result<Reply, Fail> {
        let now = net.now();
        if let Conn::Down { since, reported } = *self.nodes.get(node) {
            let attempts = reconnect_attempts(now.millis_since(since));
            if attempts > reported {
                *self.nodes.get_mut(node) = Conn::Down {
                    since,
                    reported: attempts,
                };
                if attempts >= self.cfg.reconnect_attempts {
                    self.signal(Trigger::PersistentReconnects, now);
                }
            }
        }
        let Some(addr) = self.resolve(node) else {
            return Err(Fail(CONNECTION));
        };
        let killed =
            matches!(*self.nodes.get(node), Conn::Open { since } if net.killed(addr, since));
        let reply = net.send(addr, cmd, asking);
        if killed {
            // Someone closed it (`CLIENT KILL`): the watchdog reconnected it at once
            // (`ConnectionWatchdog.channelInactive`), the commands waiting in its buffer.
            *self.nodes.get_mut(node) = Conn::Open { since: now };
            self.state.new_connections += 1;
        }
        match (*self.nodes.get(node), reply) {
            (Conn::Closed, Reply::ConnectionError) => Err(Fail(CONNECTION)),
            (Conn::Closed, Reply::Timeout) => Err(Fail(COMMAND_TIMEOUT)),
            (Conn::Open { .. }, Reply::ConnectionError) => {
                // The watchdog takes over; the command is buffered until it times out.
                *self.nodes.get_mut(node) = Conn::Down {
                    since: now,
                    reported: 0,
                };
                Err(Fail(COMMAND_TIMEOUT))
            }
            (Conn::Down { .. }, Reply::ConnectionError) | (_, Reply::Timeout) => {
                Err(Fail(COMMAND_TIMEOUT))
            }
            (Conn::Open { .. }, reply) => Ok(reply),
            (Conn::Closed | Conn::Down { .. }, reply) => {
                *self.nodes.get_mut(node) = Conn::Open { since: now };
                self.state.new_connections += 1;
                Ok(reply)
            }
        }
    }

    /// `beforeGetConnection`: a redirect target must be in the partition table.
    fn admit(&mut self, node: NodeIdx, now: Timestamp) -> Result<(), Fail> {
        if self.members.contains(&node) {
            return Ok(());
        }
        self.signal(Trigger::UnknownNode, now);
        if self.cfg.validate_membership {
            return Err(Fail(UNKNOWN_PARTITION));
        }
        Ok(())
    }

    fn route(&mut self, cmd: Routed, net: &mut dyn Transport) -> Result<(), Fail> {
        self.background(net)?;
        let now = net.now();
        let Some(mut target) = self.table.get(cmd.slot) else {
            self.signal(Trigger::UncoveredSlot, now);
            return Err(Fail(PARTITION_SELECTOR));
        };
        let mut asking = false;
        let mut redirections = 0u32;
        loop {
            match self.send(target, cmd, asking, net)? {
                Reply::Ok => return Ok(()),
                Reply::Redirect(Redirect::Moved { to, .. }) => {
                    if redirections >= self.cfg.max_redirects {
                        return Err(Fail(REDIRECTS_EXHAUSTED));
                    }
                    redirections += 1;
                    self.signal(Trigger::MovedRedirect, now);
                    target = self.intern(&to).ok_or(Fail(CONNECTION))?;
                    asking = false;
                    self.admit(target, now)?;
                }
                Reply::Redirect(Redirect::Ask { to, .. }) => {
                    if redirections >= self.cfg.max_redirects {
                        return Err(Fail(REDIRECTS_EXHAUSTED));
                    }
                    redirections += 1;
                    self.signal(Trigger::AskRedirect, now);
                    target = self.intern(&to).ok_or(Fail(CONNECTION))?;
                    asking = true;
                    self.admit(target, now)?;
                }
                Reply::ClusterDown => return Err(Fail(CLUSTER_DOWN)),
                Reply::ConnectionError | Reply::Timeout => return Err(Fail(COMMAND_TIMEOUT)),
            }
        }
    }

    /// `wedged`: a table without any slot, and nothing that would ever reload it.
    fn refresh_state(&mut self) {
        let can_fix =
            self.cfg.periodic_ms.is_some() || self.cfg.triggers & Trigger::UncoveredSlot.bit() != 0;
        self.state.wedged = self.initialized && self.mapped_slots == 0 && !can_fix;
    }
}

impl SyncModel for Client {
    fn name(&self) -> &str {
        &self.name
    }

    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        let outcome = match self.route(cmd, net) {
            Ok(()) => Outcome::Ok,
            Err(Fail(e)) => Outcome::Failed(e),
        };
        self.refresh_state();
        outcome
    }

    fn state(&self) -> ClientState {
        self.state
    }

    fn snapshot(&self) -> ClientSnapshot {
        ClientSnapshot::of_table(
            &self.table,
            self.nodes.count(|c| matches!(c, Conn::Open { .. })),
        )
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.socket_timeout_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconnect_attempts_follow_the_exponential_delay() {
        assert_eq!(reconnect_attempts(0), 0);
        assert_eq!(reconnect_attempts(1), 1);
        assert_eq!(reconnect_attempts(2), 1);
        assert_eq!(reconnect_attempts(3), 2);
        assert_eq!(reconnect_attempts(31), 5);
        assert_eq!(reconnect_attempts(32_766), 14);
        assert_eq!(reconnect_attempts(32_767), 15);
        assert_eq!(reconnect_attempts(32_767 + 30_000), 16);
    }

    #[test]
    fn seconds_and_triggers_parse() {
        assert_eq!(parse_secs_ms("30"), Some(30_000));
        assert_eq!(parse_secs_ms("0.5"), Some(500));
        assert_eq!(parse_secs_ms("1.25"), Some(1250));
        assert_eq!(parse_secs_ms("1.2345"), None);
        assert_eq!(parse_secs_ms("-1"), None);
        assert_eq!(parse_secs_ms(""), None);
        assert_eq!(
            parse_triggers("MOVED_REDIRECT,UNKNOWN_NODE"),
            Some(Trigger::MovedRedirect.bit() | Trigger::UnknownNode.bit())
        );
        assert_eq!(parse_triggers("MOVED"), None);
    }
}
