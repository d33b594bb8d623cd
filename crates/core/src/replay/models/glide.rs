//! Valkey GLIDE's cluster client (`GlideClusterClient`), model `glide@2.5.2`.
//!
//! GLIDE's cluster logic is not in its language wrappers but in its Rust core, glide-core, over
//! its own fork of redis-rs' `cluster_async`. Written from that source at the release-2.5 commit
//! the npm package `@valkey/valkey-glide@2.5.2` was built from (`github:valkey-io/valkey-glide`
//! 2eb52e77f, the head of `release-2.5` when 2.5.2 was published; the mirror has no `v2.5.2` tag,
//! and the package's native module `valkey-glide.linux-x64-gnu.node` holds that commit's own
//! error text, "No connections available for multi-node fan-out"). Paths below are under
//! `glide-core/`; `cluster_async/` is `redis-rs/redis/src/cluster_async/`.
//!
//! What is modelled:
//!
//! - **Creation** (`ClusterConnInner::new`, `cluster_async/mod.rs:1520-1619`): a connection to
//!   each startup address (`create_initial_connections`, :1663-1745), then one topology refresh
//!   not throttled (:1588-1594). Every node GLIDE connects to gets **two** connections, the user
//!   connection and the management connection `glide_management_connection`, which topology
//!   queries use (`connect_and_check_all_connections`, `cluster_async/connections_logic.rs:106-166`,
//!   :373).
//! - **A topology refresh**, `refresh_slots_and_subscriptions_with_retries_inner` (:2465-2556):
//!   one at a time (`in_progress`, :2478-2491); a *throttable* one (every refresh but the
//!   creation's and the reconnect to the initial nodes', :2585, :3712, :4137) is skipped when the
//!   last one ran less than `SlotsRefreshRateLimit::wait_duration` ago: 15 s plus a jitter drawn
//!   uniformly in [0, 15 s) at each check (`cluster_topology.rs:33-36`, `cluster_client.rs:112-130`,
//!   :2500-2518). A refresh that runs makes up to 4 attempts (`Retry::spawn` over 3 backoffs of
//!   500 ms × 1.5ⁿ, jitter 0.8–1.2, `cluster_topology.rs:25-29`, :2520-2552); each
//!   (`refresh_slots_inner`, :2677-2827) asks `CLUSTER SLOTS` of min(nodes, 10) random nodes of its
//!   connection map, at once (`calculate_topology_from_random_nodes`, :4425-4553), and keeps the
//!   view most of them agree on (`calculate_topology`, `cluster_topology.rs:316-414`: a tie is an
//!   error before the last attempt when 3 nodes or more were asked, an agreement under 20 % is
//!   one). The new slot map replaces the old one and the connection map keeps only its nodes
//!   (:2800-2812).
//! - **Periodic checks** (`periodicChecks`, default `enabledDefaultConfigs`: every **60 s**,
//!   `src/client/mod.rs:56`, :2031-2036; `periodic_topology_check`, :2579-2602): ask
//!   max(⌊log₂ nodes⌋, 1) random nodes (`check_for_topology_diff`, :2623-2661) and, when the view
//!   differs from the one of the last refresh, run a throttable refresh.
//! - **Routing** (`get_connection`, :3348-3556): the slot's primary (`readFrom` `primary`, the
//!   default); a slot whose node has no connection waits for that node's reconnect task when one
//!   is in its first attempt, else goes to a random connected node (:3384-3447).
//! - **Errors** (`Request::poll`, :1254-1497), with `retries` 3 (`DEFAULT_RETRIES`,
//!   `src/client/mod.rs:53`, :2055): every error after the first 3 of a command fails it
//!   (:1296-1329), so a command makes at most 4 attempts. `ErrorKind`s by `retry_method`
//!   (`redis-rs/redis/src/types.rs:1125-1182`):
//!   - `MOVED slot addr`: the slot map is updated **in place** (`update_upon_moved_error`,
//!     :2877-2948; `cluster_slotmap.rs:452`, one slot: the slot goes to `addr`'s shard, or to a new
//!     shard whose primary is `addr`), the command is retried on `addr` (a new node: its two
//!     connections made first, :3477-3540), and a throttable refresh is asked
//!     (`Next::RefreshSlots`, :1418-1426, :3900-3938, `PollFlushAction::RebuildSlots`,
//!     :4137-4150) — within 15–30 s of the last refresh it does not run. While one runs, the
//!     commands in flight wait for it (`poll_flush` polls none during `Recover`, :4048-4090). A
//!     `MOVED` naming the address the command was sent to (`is_circular_moved_redirect`, :160)
//!     is retried by the slot with no update and no refresh, after a reconnect of that address
//!     that keeps its connection when it answers (`Next::Reconnect` with the request,
//!     :1401-1415; `get_or_create_conn` checks the existing one first,
//!     `connections_logic.rs:53-90`).
//!   - `ASK`: retried on the address with `ASKING` (:1389-1397); no refresh.
//!   - `CLUSTERDOWN` (and `TRYAGAIN`): `WaitAndRetry`, a sleep of `RetryParams::wait_time_for_retry`
//!     (:1441-1449): a draw in [1280, max(10·2ʳ, 1281)) ms (`cluster_client.rs:67-92`), 1280 ms
//!     for the first 7 retries.
//!   - A connection broken under a command (`FatalReceiveError`, a reset connection:
//!     `Reconnect`): the command is dropped unanswered (:1450-1466), which the application sees
//!     as a connection error, and the node's reconnect task starts (`trigger_refresh_connection_tasks`,
//!     :1910-2068): attempts for ever, the first at once, then after 200, 400, 800, 1600 ms
//!     (±20 %) and every 3200 ms (`RetryStrategy` default 2, 100, 5, 20 %,
//!     `retry_strategies.rs:17-20`, :73-93). The node leaves the connection map meanwhile; once
//!     its first attempt failed, commands for its slots go to a random node (above), whose `MOVED`
//!     back to the node finds no connection (`ConnectionNotFoundForRoute`, :3540), which asks a
//!     refresh and sleeps `wait_time_for_retry` before the retry (:1371-1381). A server that
//!     went away before the command was sent fails nothing by itself: its connections saw the
//!     end of the stream, the disconnect notifier woke the validation (:2604-2617,
//!     :1806-1872), which took the node out of the map, and the reconnect task's first attempt
//!     was refused (:1945-2000), all within a millisecond; the command takes the path above
//!     (a random node, its `MOVED` back, no connection, the sleep), and the request timeout
//!     usually ends it: a `TimeoutError`, as live.
//! - **`requestTimeout`** (default **250 ms**, `src/client/mod.rs:55`): the whole command,
//!   redirects and retries included, runs under it (`run_with_timeout`, `src/client/mod.rs:336-355`);
//!   past it the command fails with a timeout. It is the replay's `socket_timeout`.
//! - **`addressResolver`** (`BaseClient.d.ts:582` of the npm package): each startup address
//!   (`src/client/mod.rs:2037-2049`) and each address of a `CLUSTER SLOTS` answer
//!   (`cluster_topology.rs:266`) is passed through it, and so is every connection GLIDE opens
//!   (`create_connection` → `get_connection_info`, `cluster_async/connections_logic.rs:398`,
//!   `redis-rs/redis/src/cluster.rs:1000-1030`, `get_connection_addr` :1037-1050), a `MOVED`
//!   target's included; the `MOVED`'s address itself stays the slot map's key (`resolve_address`,
//!   :2836-2860, only looks an IP up). Mapped onto one node, a `MOVED` to another node is
//!   followed to a connection that reaches the same node again, whose `MOVED` names the address
//!   it was sent to: a circular `MOVED` (:1401-1415), retried, until the 4th fails the command
//!   (4 `MOVED` per failed command). The option here maps every address to one `HOST:PORT`, as
//!   the matrix's application does; the replay's `address_remap` is read as it.
//!
//! The errors are named as the Node.js application sees them, by the class GLIDE rejects the
//! command with (`build-ts/Errors.js:20-44`; `src/errors.rs` `error_type`): a timeout is a
//! `TimeoutError`, a broken connection a `ConnectionError`, an error reply (the last `MOVED`,
//! `ASK` or `CLUSTERDOWN` of a command that used its retries) a `RequestError`, a client whose
//! creation failed a `ClosingError`.
//!
//! The sequential driver runs a command's refresh (when it runs), sleeps and redirects inside the
//! command; periodic checks run before the command that comes after their time. A connection
//! that breaks breaks every address whose connections reach the same server (through
//! `addressResolver`), and each is reconnected. The client is **wedged** while it holds no
//! connection at all: every command fails (`AllConnectionsUnavailable`, the reconnect to the
//! initial nodes failing too, :3680-3690, :1760-1803) until a startup node answers again.
//!
//! - **Replicas**: each refresh keeps the replicas its answer lists beside the primaries
//!   (`cluster_topology.rs:285-289`, whatever `readFrom` is); a `MOVED` naming a replica of the
//!   slot's shard promotes it for the whole shard (above). An address translated by
//!   `addressResolver` is not the `MOVED`'s, so a remapped client moves one slot at a time.
//!
//! Not modelled: the connections GLIDE keeps to replicas (counted here when a command first
//! needs the node), replicas in the comparison of views, `readFrom` other than
//! `primary` (refused), the connection validation every 3 s (`CONNECTION_CHECKS_INTERVAL`,
//! `src/client/mod.rs:80`; `validate_all_user_connections`, :1806-1872: here a node of the slot
//! map is connected when a command first needs it, and a broken one when its reconnect attempt
//! is due; a kill of its connections, `CLIENT KILL`, is seen when a command next needs the node,
//! and it reconnects then, or fails the command that was waiting on the connection with
//! `ConnectionError`, `mc:755-767`, `types.rs:1177`), the reconnect attempts no command waits
//! for (counted when one succeeds), the
//! recovery queue's bound (`recoveryRequestsQueueSize`, 1000), `inflightRequestsLimit` (1000),
//! pub/sub, pipelines, the circuit breaker, DNS.
//!
//! Release coverage: 2.5.x. Written from release-2.5 at 2.5.2. Between `v2.5.0` and it, the
//! cluster code (`git log v2.5.0..2eb52e77f` over `cluster_async/`, `cluster_topology.rs`,
//! `cluster_client.rs`, `cluster_slotmap.rs`, `cluster.rs`, `retry_strategies.rs`,
//! `src/client/mod.rs`) changed three times: multi-node fan-outs (#6810) and the buffering of
//! commands during a recovery (#6656, #6707), none of which the model reads. 2.4.x is outside:
//! the reconnect on a circular `MOVED` (#5893) and `addressResolver` (#5328) came in 2.5.0.

mod connection;
mod topology;

use crate::node::NodeAddr;
use crate::redirect::Redirect;
use crate::replay::client::{numbered_once, ClientModel, Transport};
use crate::replay::client_state::{ClientSnapshot, ClientState};
use crate::replay::cluster::Reply;
use crate::replay::descriptor::{Hypotheses, ModelDescriptor};
use crate::replay::known_nodes::KnownNodes;
use crate::replay::options::{parse_mapped_addr, ModelOption, ModelOptions};
use crate::replay::outcome::{ClientError, Failure, Outcome};
use crate::replay::release::{Coverage, Version};
use crate::replay::sequential::{boxed, SyncModel};
use crate::replay::{ReplayError, Routed, SimRng};
use crate::slot::SlotRange;
use crate::time::Timestamp;
use crate::timeline::{NodeIdx, SlotTable};

/// `glide@2.5.2`: covers **2.5.x** (written from release-2.5 at 2.5.2).
pub const DESCRIPTOR: ModelDescriptor = ModelDescriptor {
    name: "glide@2.5.2",
    about: "Valkey GLIDE GlideClusterClient: MOVED patches the slot, refreshes at most every \
            15-30 s, checks the topology every 60 s, 250 ms request timeout, 3 retries",
    source: "GLIDE 2.5.2 `redis-rs/redis/src/cluster_async/mod.rs` :1520-1619 and `cluster_topology.rs` :33-36 (refresh timing)",
    options: OPTIONS,
    coverage: Some(Coverage {
        library: "glide",
        from: Version::new(2, 5, 0),
        until: Version::new(2, 6, 0),
        range: "2.5.x",
    }),
    hypotheses: Hypotheses::Library { extra: &[] },
};

/// The GLIDE model's own options, by their `GlideClusterClientConfiguration` names.
const OPTIONS: &[ModelOption] = &[
    ModelOption {
        name: "periodicChecks",
        doc: "topology checks: enabledDefaultConfigs (every 60 s, the default), disabled, or the \
              interval in seconds (duration_in_sec)",
        default: "enabledDefaultConfigs",
        aliases: &[],
        check: Some(|v| periodic_checks(v).map(drop)),
    },
    ModelOption {
        name: "requestTimeout",
        doc: "milliseconds a command may take, redirects and retries included, before it fails \
              with TimeoutError (default 250); same as socket_timeout",
        default: "",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "connectionTimeout",
        doc: "advancedConfiguration.connectionTimeout: milliseconds a connection may take to \
              open (default 2000); checked, not simulated (the replay's connections open in a \
              round trip or are refused)",
        default: "2000",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "addressResolver",
        doc: "HOST:PORT: every startup address and every address of a CLUSTER SLOTS answer \
              becomes this one, not a MOVED's (default none; address_remap is read as it)",
        default: "none",
        aliases: &[],
        check: Some(|v| parse_mapped_addr(v).map(drop)),
    },
    ModelOption {
        name: "readFrom",
        doc: "where reads go: only primary (the default) is modelled",
        default: "primary",
        ..ModelOption::PLAIN
    },
];

/// The replay's common name for a remap, read as `addressResolver`.
const ADDRESS_REMAP: &str = "address_remap";

/// `periodicChecks`: the interval in milliseconds, `None` when disabled.
fn periodic_checks(v: &str) -> Result<Option<u64>, String> {
    match v.trim() {
        "enabledDefaultConfigs" => Ok(Some(DEFAULT_PERIODIC_CHECKS_MS)),
        "disabled" => Ok(None),
        n => match n.parse::<u64>() {
            Ok(secs) if (1..=86_400).contains(&secs) => Ok(Some(secs * 1000)),
            _ => Err("enabledDefaultConfigs, disabled, or seconds in 1..=86400".to_owned()),
        },
    }
}

/// A command past `requestTimeout` (`io::ErrorKind::TimedOut`, `RequestErrorType::Timeout`).
const TIMEOUT: ClientError = ClientError::new("TimeoutError", Failure::Timeout);
/// A command dropped on a broken connection, or sent to a node with no connection after its
/// retries (`RequestErrorType::Disconnect`: "Received connection error ... Will attempt to
/// reconnect").
const CONNECTION: ClientError = ClientError::new("ConnectionError", Failure::Connection);
/// The last `MOVED` or `ASK` of a command that used its 3 retries (an error reply,
/// `RequestErrorType::Unspecified`).
const TOO_MANY_REDIRECTS: ClientError = ClientError::new("RequestError", Failure::TooManyRedirects);
/// The last `CLUSTERDOWN` of a command that used its 3 retries.
const CLUSTER_DOWN: ClientError = ClientError::new("RequestError", Failure::ClusterDown);
/// The client could not be created: no startup node answered its topology query
/// (`createClient` rejects with a `ClosingError`); the replay creates it again at the next
/// command.
const NOT_CREATED: ClientError = ClientError::new("ClosingError", Failure::NoTopology);

/// `DEFAULT_PERIODIC_TOPOLOGY_CHECKS_INTERVAL` (`src/client/mod.rs:56`), ms.
const DEFAULT_PERIODIC_CHECKS_MS: u64 = 60_000;
/// `DEFAULT_RESPONSE_TIMEOUT` (`src/client/mod.rs:55`), ms.
const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 250;
/// `DEFAULT_CONNECTION_TIMEOUT` of the wrappers (`connectionTimeout` "a default value of 2000
/// milliseconds", `BaseClient.d.ts`), ms.
const DEFAULT_CONNECTION_TIMEOUT_MS: u64 = 2000;
/// `DEFAULT_RETRIES` (`src/client/mod.rs:53`): errors a command is retried after.
const RETRIES: u32 = 3;
/// `DEFAULT_SLOTS_REFRESH_WAIT_DURATION` (`cluster_topology.rs:33`), ms.
const REFRESH_WAIT_MS: u64 = 15_000;
/// `DEFAULT_SLOTS_REFRESH_MAX_JITTER_MILLI` (`cluster_topology.rs:36`), ms.
const REFRESH_JITTER_MS: u64 = 15_000;
/// `DEFAULT_NUMBER_OF_REFRESH_SLOTS_RETRIES` (`cluster_topology.rs:25`).
const REFRESH_RETRIES: usize = 3;
/// `DEFAULT_REFRESH_SLOTS_RETRY_BASE_DURATION_MILLIS` (`cluster_topology.rs:27`).
const REFRESH_RETRY_BASE_MS: f64 = 500.0;
/// `DEFAULT_REFRESH_SLOTS_RETRY_BASE_FACTOR` (`cluster_topology.rs:29`).
const REFRESH_RETRY_FACTOR: f64 = 1.5;
/// `MAX_REQUESTED_NODES` of `refresh_slots_inner` (:2683).
const MAX_REQUESTED_NODES: usize = 10;
/// `MIN_AGREEMENT_RATE` of `calculate_topology` (`cluster_topology.rs:404`), in tenths.
const MIN_AGREEMENT_TENTHS: usize = 2;
/// Connections GLIDE opens to each node: the user and the management connection.
const CONNECTIONS_PER_NODE: u64 = 2;
/// The reconnect backoff before its 3200 ms plateau, ms (`RetryStrategy` default: base 2,
/// factor 100, 5 retries, `retry_strategies.rs:17-20`).
const RECONNECT_BACKOFF_MS: [u64; 5] = [200, 400, 800, 1600, 3200];
/// Its jitter, percent either way (`DEFAULT_JITTER_PERCENT`).
const RECONNECT_JITTER_PERCENT: u64 = 20;
/// Seed of the generator behind `rand::rng()` (random nodes, jitters).
const RNG_SEED: u64 = 0x676c_6964_6532_3532;

/// The model's settings.
#[derive(Clone, Debug)]
struct Config {
    periodic_ms: Option<u64>,
    request_timeout_ms: u64,
    resolver: Option<NodeAddr>,
}

/// Builds `glide@2.5.2`.
pub(super) fn build(
    _: Option<Version>,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    let name = DESCRIPTOR.name;
    let mut known: Vec<&str> = OPTIONS.iter().map(|o| o.name).collect();
    known.push(ADDRESS_REMAP);
    options.library_options_for(name, &known)?;
    let ms = |v: &str| {
        v.trim()
            .parse::<u64>()
            .ok()
            .filter(|&n| (1..=3_600_000).contains(&n))
    };
    let expected = "milliseconds in 1..=3600000";
    let read_from = options.library_value(
        "readFrom",
        "primary".to_owned(),
        |v| {
            matches!(
                v,
                "primary"
                    | "preferReplica"
                    | "AZAffinity"
                    | "AZAffinityReplicasAndPrimary"
                    | "allNodes"
            )
            .then(|| v.to_owned())
        },
        "primary, preferReplica, AZAffinity, AZAffinityReplicasAndPrimary or allNodes",
    )?;
    if read_from != "primary" {
        return Err(ReplayError::Unsupported {
            model: name.to_owned(),
            what: format!("readFrom={read_from} (only primary is modelled: no replicas)"),
        });
    }
    let resolver = options.mapped_addr(name, "addressResolver")?;
    let periodic_ms = options.parsed_value(
        "periodicChecks",
        Some(DEFAULT_PERIODIC_CHECKS_MS),
        periodic_checks,
    )?;
    let own_timeout =
        options.library_value("requestTimeout", None, |v| ms(v).map(Some), expected)?;
    let request_timeout_ms = options
        .timeout_alias(name, "requestTimeout", own_timeout, |t| t)?
        .unwrap_or(DEFAULT_REQUEST_TIMEOUT_MS);
    options.library_value(
        "connectionTimeout",
        DEFAULT_CONNECTION_TIMEOUT_MS,
        ms,
        expected,
    )?;
    Ok(boxed(Client::new(
        name,
        &options.startup_nodes,
        Config {
            periodic_ms,
            request_timeout_ms,
            resolver,
        },
    )))
}

/// A node's reconnect task (`trigger_refresh_connection_tasks`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Reconnect {
    /// Attempts made (the first fails: `ReconnectingTooLong`, commands no longer wait for it).
    attempts: u32,
    /// When the next attempt is due.
    next_at: Timestamp,
}

/// What the client holds for one address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Node {
    /// In the connection map, with its two connections open.
    open: bool,
    /// When they were opened.
    since: Timestamp,
    /// A reconnect task runs for it.
    reconnect: Option<Reconnect>,
}

/// Where a command goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Redirected {
    /// The slot's node (`SpecificNode`).
    No,
    /// A `MOVED`'s node.
    Moved(NodeIdx),
    /// An `ASK`'s node, with `ASKING`.
    Ask(NodeIdx),
}

/// A `CLUSTER SLOTS` view, its addresses resolved and numbered.
type View = Vec<(SlotRange, NodeIdx)>;

struct Client {
    name: String,
    cfg: Config,
    rng: SimRng,
    nodes: KnownNodes<Node>,
    startup: Vec<NodeIdx>,
    /// The slot map: slot → primary.
    slots: SlotTable,
    /// The replicas of the last refresh's answer, each `(replica, primary)`: the shards' other
    /// members (`ShardAddrs`, `cluster_slotmap.rs:120-150`).
    replicas: Vec<(NodeIdx, NodeIdx)>,
    /// The view of the last refresh (`get_current_topology_hash`).
    topology: Option<View>,
    /// Created (`createClient` resolved).
    created: bool,
    /// `slot_refresh_state.last_run`: when the last refresh attempt started.
    last_run: Option<Timestamp>,
    /// When the next periodic check is due.
    next_check: Option<Timestamp>,
    stats: ClientState,
}

impl Client {
    fn new(name: &str, seeds: &[NodeAddr], cfg: Config) -> Client {
        let mut c = Client {
            name: name.to_owned(),
            cfg,
            rng: SimRng::new(RNG_SEED),
            nodes: KnownNodes::new(Node::default()),
            startup: Vec::new(),
            slots: SlotTable::new(),
            replicas: Vec::new(),
            topology: None,
            created: false,
            last_run: None,
            next_check: None,
            stats: ClientState::default(),
        };
        let seeds: Vec<NodeAddr> = seeds.iter().map(|a| c.resolve(a)).collect();
        c.startup = numbered_once(&seeds, |a| c.nodes.intern(a));
        c.stats.startup_nodes = c.startup.len();
        c
    }

    /// `addressResolver`.
    fn resolve(&self, addr: &NodeAddr) -> NodeAddr {
        self.cfg.resolver.clone().unwrap_or_else(|| addr.clone())
    }

    /// Where node `i`'s connections go (`addressResolver` of its address), without a copy.
    fn resolved(&self, i: NodeIdx) -> Option<&NodeAddr> {
        let addr = self.nodes.addr(i)?;
        Some(self.cfg.resolver.as_ref().unwrap_or(addr))
    }

    /// `update_upon_moved_error` (:2877-2948): when `to` is a replica of the slot's shard (a
    /// failover), it becomes the shard's primary and the old primary its replica
    /// (`std::mem::swap` of the two, `cluster_routing.rs:1462-1465`, "scenario 2", :2895-2900):
    /// every slot of the shard goes to it at once. Otherwise the slot alone goes to `to` (its
    /// shard, or a new one).
    fn moved(&mut self, slot: crate::slot::Slot, to: NodeIdx) {
        let shard = self
            .slots
            .get(slot)
            .filter(|&p| self.replicas.contains(&(to, p)));
        let Some(old) = shard else {
            self.slots.set(slot, Some(to));
            return;
        };
        self.slots.reassign(old, to);
        for pair in &mut self.replicas {
            if *pair == (to, old) {
                *pair = (old, to);
            } else if pair.1 == old {
                pair.1 = to;
            }
        }
    }

    /// `RetryParams::wait_time_for_retry` (`cluster_client.rs:85-92`) with the defaults (min
    /// 1280, max 655360, base 2, factor 10): a draw in [1280, min(10·2ʳ, 655360).max(1281)) ms,
    /// 1280 ms for the first 7 retries.
    fn wait_time_for_retry(&mut self, retry: u32) -> u64 {
        const MIN: u64 = 1280;
        let base = 2u64.saturating_pow(retry).saturating_mul(10);
        let clamped = base.clamp(MIN + 1, 655_360);
        MIN + self.rng.below(clamped - MIN)
    }

    /// `ConnectionNotFoundForRoute` for a redirect's node (:3540): a refresh is asked and, unless
    /// the retries are used, the retry waits `wait_time_for_retry` (`OperationTarget::NotFound`,
    /// :1371-1381) and goes to the slot's node.
    fn not_found(&mut self, retry: &mut u32, net: &mut dyn Transport) -> Option<Outcome> {
        self.refresh(net, true);
        if *retry >= RETRIES {
            return Some(Outcome::Failed(CONNECTION));
        }
        *retry += 1;
        let wait = self.wait_time_for_retry(*retry);
        net.sleep(wait);
        None
    }

    /// A random node of the connection map.
    fn random_open(&mut self) -> Option<NodeIdx> {
        let open = self.open_nodes();
        (!open.is_empty()).then(|| open[self.rng.index_below(open.len())])
    }

    /// One send to `i`'s connection, which reaches `i`'s address through `addressResolver`; a
    /// node not yet connected is connected by it (its two connections counted when it answers).
    /// With the reply, whether the connection broke while the command waited on it (someone
    /// closed it, `CLIENT KILL`): the reading task ends and drops the reply (`FatalReceiveError`,
    /// `multiplexed_connection.rs:754-765`, `Reconnect`, `types.rs:1177`).
    fn send(
        &mut self,
        i: NodeIdx,
        cmd: Routed,
        asking: bool,
        net: &mut dyn Transport,
    ) -> (Reply, bool) {
        let Some(addr) = self.resolved(i) else {
            return (Reply::ConnectionError, false);
        };
        let sent = net.now();
        let was_open = self.nodes.get(i).open;
        let mut reply = net.send(addr, cmd, asking);
        let dropped = was_open && net.killed(addr, sent);
        if dropped {
            reply = Reply::ConnectionError;
        }
        if !matches!(reply, Reply::ConnectionError | Reply::Timeout) {
            self.open(i, net.now());
        }
        (reply, dropped)
    }

    fn process(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        let since = net.now();
        let deadline = Timestamp(since.0.saturating_add(self.cfg.request_timeout_ms));
        let timed_out = |net: &mut dyn Transport| {
            if net.now() > deadline {
                net.resume_at(deadline);
            }
            Outcome::Failed(TIMEOUT)
        };
        if !self.created {
            self.create(net);
            if !self.created {
                return Outcome::Failed(NOT_CREATED);
            }
        }
        let mut retry = 0u32;
        let mut to = Redirected::No;
        loop {
            if net.now() >= deadline {
                return timed_out(net);
            }
            let now = net.now();
            // get_connection.
            let (node, asking) = match to {
                Redirected::Moved(i) | Redirected::Ask(i) => {
                    let asking = matches!(to, Redirected::Ask(_));
                    let n = *self.nodes.get(i);
                    if !n.open
                        && n.reconnect
                            .is_some_and(|r| r.attempts > 0 && r.next_at > now)
                    {
                        if let Some(failed) = self.not_found(&mut retry, net) {
                            return failed;
                        }
                        to = Redirected::No;
                        continue;
                    }
                    (i, asking)
                }
                Redirected::No => {
                    let owner = self.slots.get(cmd.slot);
                    let usable = owner.filter(|&o| {
                        let n = self.nodes.get(o);
                        n.open
                            || n.reconnect
                                .is_none_or(|r| r.attempts == 0 || r.next_at <= now)
                    });
                    match usable.or_else(|| self.random_open()) {
                        Some(i) => (i, false),
                        None => {
                            // `AllConnectionsUnavailable`: `ReconnectToInitialNodes`, the
                            // command retried after it.
                            if retry >= RETRIES || !self.reconnect_initial(net) {
                                return Outcome::Failed(CONNECTION);
                            }
                            retry += 1;
                            continue;
                        }
                    }
                }
            };
            let n = *self.nodes.get(node);
            if n.open && self.resolved(node).is_some_and(|a| net.killed(a, n.since)) {
                // Someone closed its connections (`CLIENT KILL`) since they were opened: the
                // reading task saw it and the disconnect notifier woke the validation, which
                // reconnects both connections of each such node at once (no error, no refresh).
                self.broken_with(node, now);
            }
            let was_open = self.nodes.get(node).open;
            let reconnecting = self.nodes.get(node).reconnect.is_some();
            let (reply, dropped) = self.send(node, cmd, asking, net);
            match reply {
                Reply::Ok => return Outcome::Ok,
                Reply::Timeout => return timed_out(net),
                Reply::ConnectionError => {
                    if dropped {
                        // The connection broke under the command: it is dropped (`Reconnect`,
                        // no retry, `mod.rs:1459-1474`). Every connection to that server broke
                        // with it (several addresses reach one server through
                        // `addressResolver`): each is reconnected.
                        self.broken_with(node, now);
                        return Outcome::Failed(CONNECTION);
                    }
                    if was_open {
                        // The server went away before the command was sent: its connections
                        // saw the end of the stream, the disconnect notifier woke the
                        // validation (`mod.rs:2604-2617`, :1806-1872), which took the node out
                        // of the map and started its reconnect task, whose first attempt was
                        // refused (:1945-2000). The command finds no connection, as below.
                        self.broken_with(node, now);
                    } else if !reconnecting {
                        // No connection could be made (a node's first connection): its task
                        // goes on with the backoff.
                        self.broken(node, now);
                    }
                    self.attempt_failed(node, now);
                    if to != Redirected::No {
                        if let Some(failed) = self.not_found(&mut retry, net) {
                            return failed;
                        }
                        to = Redirected::No;
                    }
                    // The slot's node: the command waited for the first attempt and goes to a
                    // random node.
                }
                Reply::Redirect(Redirect::Moved { slot, to: addr }) => {
                    let Some(target) = self.nodes.intern(&addr) else {
                        return Outcome::Failed(CONNECTION);
                    };
                    if retry >= RETRIES {
                        // The last error: `Next::RefreshSlots` with the MOVED (:1296-1311).
                        self.moved(slot, target);
                        self.refresh(net, true);
                        return Outcome::Failed(TOO_MANY_REDIRECTS);
                    }
                    retry += 1;
                    if target == node {
                        // A circular MOVED: the address is reconnected (its connection kept,
                        // it answers) and the command routed by its slot again (:1401-1415).
                        to = Redirected::No;
                    } else {
                        self.moved(slot, target);
                        self.refresh(net, true);
                        to = Redirected::Moved(target);
                    }
                }
                Reply::Redirect(Redirect::Ask { to: addr, .. }) => {
                    if retry >= RETRIES {
                        return Outcome::Failed(TOO_MANY_REDIRECTS);
                    }
                    retry += 1;
                    to = match self.nodes.intern(&addr) {
                        Some(t) => Redirected::Ask(t),
                        None => return Outcome::Failed(CONNECTION),
                    };
                }
                Reply::ClusterDown => {
                    if retry >= RETRIES {
                        return Outcome::Failed(CLUSTER_DOWN);
                    }
                    retry += 1;
                    let wait = self.wait_time_for_retry(retry);
                    net.sleep(wait);
                    to = Redirected::No;
                }
            }
        }
    }
}

impl SyncModel for Client {
    fn name(&self) -> &str {
        &self.name
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        Some(self.cfg.request_timeout_ms)
    }

    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        if self.created {
            self.background(net);
        }
        self.process(cmd, net)
    }

    fn state(&self) -> ClientState {
        let mut s = self.stats;
        // GLIDE keeps its initial nodes for the reconnect to them.
        s.startup_nodes = self.startup.len();
        // Created, and holding no connection at all: every command fails
        // (`AllConnectionsUnavailable`, the reconnect to the initial nodes failing too) until a
        // startup node answers again.
        s.wedged = self.created && self.open_nodes().is_empty();
        s
    }

    fn snapshot(&self) -> ClientSnapshot {
        let open = self.nodes.count(|n| n.open) * CONNECTIONS_PER_NODE;
        ClientSnapshot::of_table(&self.slots, open)
    }
}
