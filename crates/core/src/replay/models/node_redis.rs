//! node-redis's cluster client (`createCluster`), model `node-redis@6.3.1`.
//!
//! Written from the published package `@redis/client@6.3.1` (what `redis@6.3.1` loads; `npm pack
//! @redis/client@6.3.1`; lines are of its `dist/lib/` files): `cluster/index.js`,
//! `cluster/cluster-slots.js`, `cluster/cluster-reconnection-tracker.js`, `client/index.js`,
//! `client/socket.js`, `client/commands-queue.js`, `defaults.js`, `errors.js`.
//!
//! What is modelled:
//!
//! - **Learning the topology**, `#discover` (`cluster-slots.js:185-245`): a *new* client to one
//!   address (`#getShards`, :472-490, `reconnectStrategy: false`, destroyed after) sends
//!   `CLUSTER SLOTS` (:485; not `SHARDS`, not `NODES`). Only once the answer is in are the slots
//!   reset (:191) and every range given to its master (:192-202); a failed discovery (refused,
//!   timed out: :241-244) keeps the table as it was. The nodes the answer names are kept with
//!   their client whatever its state (`nodeByAddress`, :526-547); a new one gets a client that
//!   connects at once (`minimizeConnections` false by default, :189, :537-539), and the nodes the
//!   answer leaves out are destroyed and forgotten (:215-236). `connect()` (:139-160) runs
//!   `#discoverWithRootNodes` (:161-178): the root nodes from a random one on, in turn; when none
//!   answers, `RootNodesUnavailableError` and the cluster stays closed, so every command raises
//!   `ClientClosedError` (`#assertReady`, :752-759).
//! - **Rediscovery**, `rediscover(startWith, excluded)` (:618-631): a call while one runs joins it
//!   (`#runningRediscoverPromise ??=`, :619). It asks the node that answered (`startWith.options`,
//!   its mapped address), then the known masters (`#discoverWithKnownNodes`, :632-667: the ones
//!   whose client is ready first, from a random one on, then the others), then the root nodes
//!   (whose failure, `RootNodesUnavailableError`, reaches the command). Started by:
//!   - `MOVED` (`cluster/index.js:445-456`): the command *waits* for the rediscovery and is then
//!     sent to its slot's master; the slot is not patched from the reply;
//!   - `ASK` to an address `nodeByAddress` lacks (:432-440; a known one is asked at once with
//!     `ASKING`, `_handleAsk`, :240-254; still unknown after: `Error` `Cannot find node`);
//!   - a node's client reconnecting (`ClusterReconnectionTracker`,
//!     `cluster-reconnection-tracker.js:58-70`; `cluster-slots.js:568-573`, :668-689): at a
//!     reconnection attempt `topologyRefreshOnReconnectionAttemptStrategy` (default 5000 ms,
//!     :20) after the first attempt of the cycle, a rediscovery in the background without the
//!     reconnecting nodes (`excludedAddresses`).
//!
//!   Nothing else starts one: no periodic refresh, and `ClientClosedError`, timeouts and
//!   socket errors start none.
//! - **Connections**, one client per master (`nodeClient`, :607-616), whose socket goes to the
//!   node's `nodeAddressMap`ped address (:491-506, :548-550). A client that broke (`#onSocketError`,
//!   `client/socket.js:323-355`) reconnects at once and then after `reconnectStrategy`'s delay,
//!   by default `min(50·2^retries, 2000)` ms plus a jitter below 200 ms (:429-439); meanwhile its
//!   commands wait in its queue (the offline queue, `client/index.js:1126-1141`) until written or
//!   until the command timeout: `commandOptions.timeout`, default 5000 ms (`defaults.js:5`,
//!   `cluster/index.js:198`), armed only while a command waits to be written
//!   (`commands-queue.js:216-231`, removed once written, :428-431), then `TimeoutError`. The
//!   commands in flight when it broke are rejected with the socket's error (`:644-645`;
//!   Node's `Error`, `read ECONNRESET`); a command written after the node closed the connection
//!   is queued like the others (`sendCommand`, :1126-1143: the client saw the close first; the
//!   replay's node dies between two exchanges, and live no node-redis application reported
//!   `Error` after a kill). A rediscovery that leaves a reconnecting node out destroys its
//!   client (`cluster-slots.js:225-229`): its queued commands fail with
//!   `DisconnectsClientError` (`client/index.js:1530`).
//! - **`socketTimeout`** (`defaults.socket.socketTimeout`, unset by default): Node's
//!   `socket.setTimeout`, an *idle* timeout armed after the connect (`client/socket.js:303-310`):
//!   a connection without traffic (a reply awaited, or no command at all) for that long is
//!   destroyed with `SocketTimeoutError`, and the default reconnect strategy does **not**
//!   reconnect after it (:430-433): the client is closed for good (`#shouldReconnect`, :143-150,
//!   no `end` event, so the cluster keeps it: :580-583), its commands are rejected with
//!   `SocketTimeoutError` (`client/index.js:647-648`) and every later command for its slots with
//!   `ClientClosedError` (:1128-1129), until a discovery drops the node. It is the replay's
//!   `socket_timeout`. Without it a command written to a silent node waits as long as the node
//!   takes; the replay's instant clock cannot wait and counts it failed (`no reply`).
//! - **Redirections**, `_execute` (`cluster/index.js:373-460`): each error counts; past
//!   `maxCommandRedirections` (default 16, :378) the command fails, with
//!   `MaxCommandRedirectionsError` when the error was a redirect (:411-422): 17 `MOVED` end a
//!   command. Any other error (`CLUSTERDOWN`, a `SimpleError`; a closed client; a timeout) reaches
//!   the application at once (:457).
//! - **`nodeAddressMap`** (:491-498): applied to the nodes' clients and to the known nodes a
//!   rediscovery asks, not to the root nodes nor to the addresses of `MOVED`/`ASK` (an `ASK`'s
//!   address is looked up in `nodeByAddress`, by announced address). The option here maps every
//!   address to one `HOST:PORT`, as the application's `nodeAddressMap: () => ({host, port})`; the
//!   replay's `address_remap` is read as it.
//!
//! The model runs one command at a time ([`SyncModel`]): a command's rediscovery runs inside it,
//! and a command that meets `MOVED` while one runs (one an earlier command ran, from its start
//! to its end) waits for it instead. A
//! client's reconnection attempts are run when a command waits for them, or at the next command
//! (an attempt due before that command's start is made at its start).
//!
//! `wedged` (every later command fails): the cluster never connected, every master of the
//! table has a client closed for good (`ClientClosedError`) or reconnecting, or
//! `nodeAddressMap` sends every client to an address where no master of the table is (each
//! command then meets `MOVED` until it fails, and each rediscovery gives the same table).
//!
//! The idle timer counts writes too: commands written one after another to a silent node keep
//! its connection open and wait for its answer; it is destroyed only once none was written for
//! `socketTimeout` (in an application with a cap on commands in flight: when every permit waits
//! there, and by then the other nodes' connections have idled as long and close for good too).
//! On the timed clock the model applies this itself (the network waits for a silent node, see
//! `Client::exchange`), noting the silence and closing the connection at the first gap of
//! `socketTimeout` between writes; the commands that waited through that gap are counted with
//! the node's late answer, not as the `SocketTimeoutError` they get (at most the cap of them).
//! On the instant clock (lanes) a silent node's request costs `socketTimeout` and fails.
//!
//! - **Connections someone closed** (`CLIENT KILL`, `replay/kills.rs`): the socket's `close`
//!   (`client/socket.js:314-318`) reconnects the client at once (`#connect(1)`, :346-352): one
//!   new connection, no rediscovery. A command waiting for its reply is rejected with
//!   `SocketClosedUnexpectedlyError` (`client/index.js:637-645`, `errors.js:46-50`).
//!
//! - **The client's own work per discovery** (`rediscover_cpu_ms`): a `RedisClient` created
//!   and destroyed, the 16384-slot table reset and rebuilt (`#discover`, :185-245). A
//!   discovery that got its answer lasts at least that long on the timed clock (its round
//!   trips on loopback are part of that work: `apps/node/cpu-cost.mjs` times the whole call);
//!   a command joining the rediscovery waits for it too. In a `MOVED` storm, where every
//!   command waits for one, it bounds the pace of the rediscoveries as Node's one thread does.
//!   A discovery that got no answer costs its round trips only.
//! - **One rediscovery at a time**: the model runs each command whole when it is sent, so the
//!   rediscoveries an earlier command will start later are already known; a command that would
//!   start one while such a one would run (it starts within as long as the last one took)
//!   joins it, as it would have joined in the library.
//!
//! Not modelled: replicas (`useReplicas`, refused), pub/sub and `SMIGRATED`, pipelines and
//! `MULTI`, the eager connects of a discovery holding it until they end (`Promise.all`, :237; a
//! new master that refuses connections would hold every rediscovery), `connectTimeout` (checked:
//! the replay's nodes refuse or accept at once), `pingInterval` (none by default), DNS.
//!
//! Release coverage: **6.3.0–6.4.0**, every `@redis/client` release from 1.5.0 to 6.4.0 compared
//! (`docs/releases/node-redis.md`): 6.3.0's `dist/` is 6.3.1's, and 6.4.0 changes only what is
//! not modelled. 6.2.1 and before keep a node's client after a terminal connect failure (no
//! `.catch` in `#createNodeClient`, 6.3.1's :594-604); 5.x has no reconnection tracker; 4.6-4.7
//! count redirects twice: none covered.

mod delivery;
mod discovery;
mod socket;

use std::collections::VecDeque;

use crate::node::NodeAddr;
use crate::redirect::Redirect;
use crate::replay::client::ClientModel;
use crate::replay::client::Transport;
use crate::replay::client_state::{ClientSnapshot, ClientState};
use crate::replay::cluster::Reply;
use crate::replay::descriptor::{Hypotheses, ModelDescriptor};
use crate::replay::known_nodes::KnownNodes;
use crate::replay::options::{
    parse_bool, parse_count, parse_cpu_ms, parse_mapped_addr, ModelOption, ModelOptions,
};
use crate::replay::outcome::{ClientError, Failure, Outcome};
use crate::replay::release::{Coverage, Version};
use crate::replay::sequential::{boxed, SyncModel};
use crate::replay::slot_cache::SlotCache;
use crate::replay::{ReplayError, Routed, SimRng};
use crate::slot::SlotRange;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

/// `node-redis@6.3.1`: covers **6.3.0–6.4.0** (written from `@redis/client` 6.3.1; 6.3.0 and 6.4.0
/// are the same in what is modelled, 6.2.x differs, see the module doc).
pub const DESCRIPTOR: ModelDescriptor = ModelDescriptor {
    name: "node-redis@6.3.1",
    about: "node-redis createCluster: MOVED waits for a rediscovery, reconnecting nodes' commands \
            time out after 5 s, an idle socketTimeout closes a node's client for good",
    source: "@redis/client 6.3.1 `dist/lib/cluster/index.js` :445-456 (`MOVED` waits for the rediscovery)",
    options: OPTIONS,
    coverage: Some(Coverage {
        library: "node-redis",
        from: Version::new(6, 3, 0),
        until: Version::new(6, 4, 1),
        range: "6.3.0–6.4.0",
    }),
    hypotheses: Hypotheses::Library { extra: &[] },
};

/// The model's own options, by their `createCluster` names.
const OPTIONS: &[ModelOption] = &[
    ModelOption {
        name: "nodeAddressMap",
        doc: "HOST:PORT: every node's client connects there (the root nodes are not mapped; \
              default none; address_remap is read as nodeAddressMap)",
        default: "none",
        aliases: &[],
        check: Some(|v| parse_mapped_addr(v).map(drop)),
    },
    ModelOption {
        name: "maxCommandRedirections",
        doc: "errors a command may meet (MOVED, ASK) before it fails (default 16: the 17th \
              fails it with MaxCommandRedirectionsError)",
        default: "16",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "commandOptions.timeout",
        doc: "milliseconds a command may wait to be written (a reconnecting node's queue) \
              before TimeoutError (default 5000; 0: none)",
        default: "5000",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "socketTimeout",
        doc: "defaults.socket.socketTimeout: milliseconds a node's connection may stay without \
              traffic before it is destroyed (SocketTimeoutError) and, with the default \
              reconnectStrategy, closed for good (default unset: none); same as socket_timeout",
        default: "",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "connectTimeout",
        doc: "defaults.socket.connectTimeout: milliseconds a TCP connect may take (default \
              5000); checked, not simulated",
        default: "5000",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "reconnectStrategy",
        doc: "defaults.socket.reconnectStrategy: default (min(50·2^retries, 2000) ms + jitter, \
              none after SocketTimeoutError), false (never reconnect) or fixed milliseconds",
        default: "default",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "topologyRefreshOnReconnectionAttemptStrategy",
        doc: "milliseconds of reconnection attempts before a rediscovery without the \
              reconnecting nodes (default 5000; 0 or false: none)",
        default: "5000",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "minimizeConnections",
        doc: "true: a node's client connects on its first command, not when discovered \
              (default false)",
        default: "false",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "useReplicas",
        doc: "only false (the default) is modelled: no replicas",
        default: "false",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "rediscover_cpu_ms",
        doc: "milliseconds a discovery that got its answer lasts at least: the client's own \
              work (the throwaway client made and destroyed, the slot table rebuilt, its round \
              trips on loopback) on Node's thread (default 0.8, measured on 6.3.1; \
              apps/node/cpu-cost.mjs times it on a host)",
        default: "0.8",
        ..ModelOption::PLAIN
    },
];

/// A discovery's own work in microseconds (`rediscover_cpu_ms`): `apps/node/cpu-cost.mjs`
/// (`RedisClusterSlots#rediscover()` 200 times against a 3-master Redis 7.0 cluster on
/// loopback, process CPU, median) gave 0.75-0.86 ms in five runs on the project's 2-core
/// machine (2026-12-06), the whole call 0.83-0.86 ms of wall time.
const REDISCOVER_CPU_US: u64 = 800;

/// The replay's common name for a remap, read as `nodeAddressMap`.
const ADDRESS_REMAP: &str = "address_remap";

// The errors are named as the application counts them: the class of the error the command is
// rejected with (`constructor.name`, `apps/node/node-redis.mjs`; classes of `errors.js`).

/// `MaxCommandRedirectionsError` (`errors.js:116-120`; `cluster/index.js:419-421`).
const MAX_REDIRECTIONS: ClientError =
    ClientError::new("MaxCommandRedirectionsError", Failure::TooManyRedirects);
/// `ClientClosedError` (`errors.js:28-32`): the node's client is closed for good
/// (`client/index.js:1128-1129`), or the cluster never connected (`cluster-slots.js:753-754`).
const CLIENT_CLOSED: ClientError = ClientError::new("ClientClosedError", Failure::Connection);
/// `SocketTimeoutError` (`errors.js:22-26`; `client/socket.js:303-310`).
const SOCKET_TIMEOUT: ClientError = ClientError::new("SocketTimeoutError", Failure::Timeout);
/// `TimeoutError` (`errors.js:83`): the command timeout while it waited to be written
/// (`commands-queue.js:179-184`).
const COMMAND_TIMEOUT: ClientError = ClientError::new("TimeoutError", Failure::Timeout);
/// Node's own `Error` of a broken socket (`read ECONNRESET`), for the command in flight
/// (`client/index.js:637-645`).
const SOCKET_ERROR: ClientError = ClientError::new("Error", Failure::Connection);
/// `SocketClosedUnexpectedlyError` (`errors.js:46-50`; `client/socket.js:314-318`): the server
/// closed the connection (`CLIENT KILL`) while the command waited for its reply.
const SOCKET_CLOSED: ClientError =
    ClientError::new("SocketClosedUnexpectedlyError", Failure::Connection);
/// `SimpleError` (`errors.js:77`, an `ErrorReply`): `CLUSTERDOWN`, which `_execute` does not
/// retry (`cluster/index.js:457`).
const CLUSTER_DOWN: ClientError = ClientError::new("SimpleError", Failure::ClusterDown);
/// `RootNodesUnavailableError` (`errors.js:52-56`): a rediscovery found no node
/// (`cluster-slots.js:177`), raised to the command that waited for it.
const ROOT_NODES_UNAVAILABLE: ClientError =
    ClientError::new("RootNodesUnavailableError", Failure::NoTopology);
/// `new Error("Cannot find node …")` (`cluster/index.js:438-440`): an `ASK` to a node still
/// unknown after a rediscovery.
const CANNOT_FIND_NODE: ClientError = ClientError::new("Error", Failure::NoTopology);
/// `TypeError` reading `.master` of a slot the table has no shard for
/// (`cluster-slots.js:787`).
const NO_SHARD: ClientError = ClientError::new("TypeError", Failure::NoTopology);
/// `DisconnectsClientError` (`errors.js:40-44`): the command waited on a node's client that a
/// rediscovery destroyed (`client/index.js:1530`).
const DISCONNECTS_CLIENT: ClientError =
    ClientError::new("DisconnectsClientError", Failure::Connection);
/// A written command on a silent node without `socketTimeout`: node-redis waits; the instant
/// clock cannot.
const NO_REPLY: ClientError = ClientError::new(
    "no reply (node-redis waits without socketTimeout)",
    Failure::Timeout,
);
/// A command waiting, without command timeout, on a client that never connects within the
/// replay's bound.
const NEVER_CONNECTED: ClientError = ClientError::new(
    "no connection (node-redis waits without a command timeout)",
    Failure::Connection,
);

/// The replay's bound on a wait the library does not bound (a command without command timeout
/// on a reconnecting client).
const UNBOUNDED_WAIT_MS: u64 = 10_000;
/// Reconnection attempts made at most in one pass (a bound of the replay, not the library's).
const ATTEMPTS_MAX: u32 = 10_000;
/// Rediscoveries remembered for later commands to join (the model runs each command whole, so
/// a command issued later can meet `MOVED` while an earlier one's rediscovery runs).
const REDISCOVERIES_KEPT: usize = 256;
/// Destroyed reconnecting clients remembered for the commands issued before (see
/// [`Client::process`]).
const DROPS_KEPT: usize = 16;
/// Seed of the generator behind `Math.random` (random start nodes, reconnect jitter).
const RNG_SEED: u64 = 0x6e6f_6465_7265_6469;

/// `reconnectStrategy` (`client/socket.js:51-74`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reconnect {
    /// `defaultReconnectStrategy` (:429-439).
    Default,
    /// `false`: never.
    Never,
    /// A number: that many milliseconds every time.
    Fixed(u64),
}

/// The model's settings.
#[derive(Clone, Debug)]
struct Config {
    address_map: Option<NodeAddr>,
    max_redirections: u32,
    command_timeout_ms: Option<u64>,
    socket_timeout_ms: Option<u64>,
    reconnect: Reconnect,
    refresh_on_reconnect_ms: Option<u64>,
    minimize_connections: bool,
    /// The least a discovery that got its answer lasts, its own work (`rediscover_cpu_ms`).
    rediscover_cpu_us: u64,
}

/// Builds `node-redis@6.3.1`.
pub(super) fn build(
    _: Option<Version>,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    let name = DESCRIPTOR.name;
    let mut known: Vec<&str> = OPTIONS.iter().map(|o| o.name).collect();
    known.push(ADDRESS_REMAP);
    options.library_options_for(name, &known)?;
    let ms = |v: &str| v.trim().parse::<u64>().ok().filter(|&n| n <= 3_600_000);
    let expected = "milliseconds in 0..=3600000";
    if options.library_value("useReplicas", false, parse_bool, "true or false")? {
        return Err(ReplayError::Unsupported {
            model: name.to_owned(),
            what: "useReplicas=true (only masters are modelled)".to_owned(),
        });
    }
    let address_map = options.mapped_addr(name, "nodeAddressMap")?;
    let max_redirections = options.library_value(
        "maxCommandRedirections",
        16,
        |v| parse_count(v, 100),
        "a number up to 100",
    )?;
    let command_timeout_ms = options.library_value(
        "commandOptions.timeout",
        Some(5000),
        |v| ms(v).map(|n| (n > 0).then_some(n)),
        "milliseconds in 0..=3600000 (0: none)",
    )?;
    options.library_value("connectTimeout", 5000, ms, expected)?;
    let reconnect = options.library_value(
        "reconnectStrategy",
        Reconnect::Default,
        |v| match v.trim() {
            "default" => Some(Reconnect::Default),
            "false" => Some(Reconnect::Never),
            v => ms(v).map(Reconnect::Fixed),
        },
        "default, false or milliseconds in 0..=3600000",
    )?;
    let refresh_on_reconnect_ms = options.library_value(
        "topologyRefreshOnReconnectionAttemptStrategy",
        Some(5000),
        |v| match v.trim() {
            "false" => Some(None),
            v => ms(v).map(|n| (n > 0).then_some(n)),
        },
        "milliseconds in 0..=3600000 or false (0, false: none)",
    )?;
    let minimize_connections =
        options.library_value("minimizeConnections", false, parse_bool, "true or false")?;
    let own_timeout = options.library_value(
        "socketTimeout",
        None,
        |v| ms(v).map(|n| Some((n > 0).then_some(n))),
        "milliseconds in 0..=3600000 (0: none)",
    )?;
    let socket_timeout_ms = options
        .timeout_alias(name, "socketTimeout", own_timeout, |t| (t > 0).then_some(t))?
        .flatten();
    let rediscover_cpu_us = options.library_value(
        "rediscover_cpu_ms",
        REDISCOVER_CPU_US,
        parse_cpu_ms,
        "milliseconds in [0, 10000]",
    )?;
    Ok(boxed(Client::new(
        name,
        &options.startup_nodes,
        Config {
            address_map,
            max_redirections,
            command_timeout_ms,
            socket_timeout_ms,
            reconnect,
            refresh_on_reconnect_ms,
            minimize_connections,
            rediscover_cpu_us,
        },
    )))
}

/// A node's client (`node.client`), as the cluster holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Conn {
    /// No client (`node.client` undefined): `nodeClient` creates one.
    #[default]
    None,
    /// Connected (ready) from `since`; `last` is the end of its last traffic (the idle timer);
    /// `revived`: by a reconnection (before `since` it was reconnecting).
    Ready {
        since: Timestamp,
        last: Timestamp,
        revived: bool,
    },
    /// Broke at `since` and reconnecting: the next attempt at `next`, `retries` made so far;
    /// `was_ready`: it had connected once (the reconnection tracker counts only those).
    Reconnecting {
        since: Timestamp,
        next: Timestamp,
        retries: u32,
        was_ready: bool,
    },
    /// Closed for good at `at` (its reconnect strategy gave up): `ClientClosedError` after.
    Closed { at: Timestamp },
}

/// What the cluster holds for one announced address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Node {
    /// In `nodeByAddress` and `masters`: the last discovery named it.
    in_use: bool,
    conn: Conn,
    /// Timed clock: the node was silent for longer than `socketTimeout` after a write to this
    /// client's connection and answers again at this time; until then only writes count as
    /// its traffic (see [`Client::exchange`]).
    silent_until: Option<Timestamp>,
}

/// A reconnecting client a rediscovery destroyed: reconnecting from `since`, destroyed at `at`,
/// its node's slots then.
#[derive(Clone, Debug)]
struct Dropped {
    since: Timestamp,
    at: Timestamp,
    ranges: Vec<SlotRange>,
}

/// One rediscovery: when it ran (microseconds: it takes a few round trips) and whether a node
/// answered.
#[derive(Clone, Copy, Debug)]
struct Rediscovery {
    start_us: u64,
    end_us: u64,
    ok: bool,
}

/// The cluster's state (`isOpen`/`isReady`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// `connect()` not run yet (the application runs it before its first command).
    Initial,
    /// Connected: commands are routed.
    Open,
    /// `connect()` failed (`RootNodesUnavailableError`): closed for good.
    Closed,
}

struct Client {
    name: String,
    cfg: Config,
    rng: SimRng,
    nodes: KnownNodes<Node>,
    /// `rootNodes`, unmapped.
    roots: Vec<NodeAddr>,
    /// `this.slots`: slot → its master.
    slots: SlotCache,
    /// `this.masters`, in the order of the last answer.
    masters: Vec<NodeIdx>,
    status: Status,
    /// The latest rediscoveries (`#runningRediscoverPromise`): when each ran and whether a node
    /// answered; a call within one joins it.
    rediscoveries: VecDeque<Rediscovery>,
    /// The latest end of any rediscovery so far, those no longer kept included (microseconds):
    /// a call at or after it joins none, and need not look (a `MOVED` storm calls once per
    /// redirect).
    rediscovered_until_us: u64,
    /// The tracker's refresh (`#topologyRefreshPromise`) ends then.
    refresh_until: Timestamp,
    /// The latest reconnecting clients rediscoveries destroyed.
    dropped: VecDeque<Dropped>,
    /// `#firstReconnectionAt` of the tracker.
    first_reconnection: Option<Timestamp>,
    /// The start of the latest command (the moment `wedged` is read at).
    issued: Timestamp,
    /// The replay runs lanes on the instant clock (told by `set_concurrency`, which only lanes
    /// call): a silent node's request then costs `socketTimeout` and fails.
    lanes: bool,
    stats: ClientState,
}

impl Client {
    fn new(name: &str, seeds: &[NodeAddr], cfg: Config) -> Client {
        let mut roots: Vec<NodeAddr> = Vec::new();
        for s in seeds {
            if !roots.contains(s) {
                roots.push(s.clone());
            }
        }
        Client {
            name: name.to_owned(),
            cfg,
            rng: SimRng::new(RNG_SEED),
            nodes: KnownNodes::new(Node::default()),
            stats: ClientState {
                startup_nodes: roots.len(),
                ..ClientState::default()
            },
            roots,
            slots: SlotCache::default(),
            masters: Vec::new(),
            status: Status::Initial,
            rediscoveries: VecDeque::new(),
            rediscovered_until_us: 0,
            refresh_until: Timestamp(0),
            first_reconnection: None,
            dropped: VecDeque::new(),
            issued: Timestamp(0),
            lanes: false,
        }
    }

    /// `_execute` (`cluster/index.js:373-460`).
    fn process(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        // Issued while its node's client was reconnecting, and that client destroyed by a
        // rediscovery an earlier command ran later than now: it waited in that queue.
        let now = net.now();
        if let Some(d) = self
            .dropped
            .iter()
            .find(|d| d.since <= now && now < d.at && d.ranges.iter().any(|r| r.contains(cmd.slot)))
        {
            let at = d.at;
            return match self
                .cfg
                .command_timeout_ms
                .map(|t| Timestamp(now.0.saturating_add(t)))
                .filter(|&deadline| deadline < at)
            {
                Some(deadline) => {
                    net.sleep(deadline.0 - now.0);
                    Outcome::Failed(COMMAND_TIMEOUT)
                }
                None => {
                    net.sleep(at.0 - now.0);
                    Outcome::Failed(DISCONNECTS_CLIENT)
                }
            };
        }
        let Some(mut node) = self.slots.get(cmd.slot) else {
            return Outcome::Failed(NO_SHARD);
        };
        let mut asking = false;
        let mut errors = 0u32;
        loop {
            let reply = match self.deliver(node, cmd, asking, net) {
                Ok(r) => r,
                Err(e) => return Outcome::Failed(e),
            };
            asking = false;
            let redirect = match reply {
                Reply::Ok => return Outcome::Ok,
                Reply::Redirect(r) => r,
                Reply::ClusterDown => return Outcome::Failed(CLUSTER_DOWN),
                Reply::ConnectionError => return Outcome::Failed(SOCKET_ERROR),
                Reply::Timeout => return Outcome::Failed(SOCKET_TIMEOUT),
            };
            errors += 1;
            if errors > self.cfg.max_redirections {
                return Outcome::Failed(MAX_REDIRECTIONS);
            }
            match redirect {
                Redirect::Ask { to, .. } => {
                    // `getMasterByAddress` (:859-864), by announced address.
                    let mut target = self.nodes.intern(&to).filter(|&t| self.nodes.get(t).in_use);
                    if target.is_none() {
                        if !self.rediscover(Some(node), &[], net) {
                            return Outcome::Failed(ROOT_NODES_UNAVAILABLE);
                        }
                        target = self.nodes.intern(&to).filter(|&t| self.nodes.get(t).in_use);
                    }
                    let Some(t) = target else {
                        return Outcome::Failed(CANNOT_FIND_NODE);
                    };
                    node = t;
                    asking = true;
                }
                Redirect::Moved { .. } => {
                    if !self.rediscover(Some(node), &[], net) {
                        return Outcome::Failed(ROOT_NODES_UNAVAILABLE);
                    }
                    let Some(n) = self.slots.get(cmd.slot) else {
                        return Outcome::Failed(NO_SHARD);
                    };
                    node = n;
                }
            }
        }
    }
}

impl SyncModel for Client {
    fn name(&self) -> &str {
        &self.name
    }

    /// The network's per-request timeout: `socketTimeout` on the instant clock (lanes); none
    /// on the timed one, where the model applies the idle timer itself ([`Client::exchange`]).
    fn socket_timeout_ms(&self) -> Option<u64> {
        self.cfg.socket_timeout_ms.filter(|_| self.lanes)
    }

    fn set_concurrency(&mut self, _in_flight: u32) {
        self.lanes = true;
    }

    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        self.issued = net.now();
        if self.status == Status::Initial {
            // `connect()`, awaited by the application before its first command.
            self.status = if self.discover_with_roots(net) {
                Status::Open
            } else {
                Status::Closed
            };
        }
        if self.status == Status::Closed {
            return Outcome::Failed(CLIENT_CLOSED);
        }
        self.background(net);
        self.process(cmd, net)
    }

    fn state(&self) -> ClientState {
        let mut s = self.stats;
        let t = self.issued;
        s.wedged = match self.status {
            Status::Initial => false,
            Status::Closed => true,
            Status::Open => {
                let all_down = self.masters.iter().all(|&n| self.down_at(n, t));
                // Every client goes to the mapped address, and no master of the table is there:
                // each command meets MOVED until maxCommandRedirections, and each rediscovery
                // names the same table.
                let map_owns_nothing =
                    self.cfg.address_map.as_ref().is_some_and(|x| {
                        self.masters.iter().all(|&n| self.nodes.addr(n) != Some(x))
                    });
                !self.masters.is_empty() && (all_down || map_owns_nothing)
            }
        };
        s
    }

    fn snapshot(&self) -> ClientSnapshot {
        let t = self.issued;
        let open = self
            .masters
            .iter()
            .filter(|&&n| {
                matches!(self.nodes.get(n).conn, Conn::Ready { .. }) && !self.down_at(n, t)
            })
            .count();
        ClientSnapshot::of_table(self.slots.table(), u64::try_from(open).unwrap_or(u64::MAX))
    }
}
