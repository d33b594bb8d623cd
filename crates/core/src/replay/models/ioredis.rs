//! ioredis's cluster client (`Redis.Cluster`), model `ioredis@6.0.0`.
//!
//! Written from the published package `ioredis@6.0.0` (`npm pack ioredis@6.0.0`; lines are of
//! its `built/` files): `cluster/index.js`, `cluster/ConnectionPool.js`, `cluster/DelayQueue.js`,
//! `cluster/ClusterOptions.js`, `Redis.js`, `redis/event_handler.js`, `utils/index.js`.
//!
//! What is modelled:
//!
//! - **Learning the topology**, `refreshSlotsCache` (`cluster/index.js:356`): unless a refresh
//!   runs (`isRefreshing`, :360, whose callers join it, :357-362), the nodes of the connection
//!   pool (`connectionPool.getNodes()`, insertion order, `ConnectionPool.js:22`) are shuffled
//!   (`utils.shuffle`, a Fisher-Yates over `Math.random`, `utils/index.js:358`; here a seeded
//!   [`SimRng`]) and asked in turn (:372-401) by `getInfoFromNode` (:811): `CLUSTER SLOTS` on a
//!   *duplicate* of the node's connection (a new connection each time, :818-829), given up after
//!   `slotsRefreshTimeout` (default 1000 ms, `ClusterOptions.js:16`; `utils.timeout`,
//!   `utils/index.js:148-159`, the error `timeout`). The first answer wins: each range's slots
//!   are set to its nodes, `natMap`ped (:844-865; slots the answer leaves out keep their old
//!   node: `this.slots` is never cleared), and the pool is `reset` to the answer's nodes (:880).
//!   When every node fails the callbacks get `ClusterAllFailedError` "Failed to refresh slots
//!   cache." (:375-377) and `slots` and the pool are kept as they were; only the refresh of
//!   `connect()` then empties the pool (:219-223).
//! - **The connection pool** (`ConnectionPool.js`): one `Redis` per node address, created lazily
//!   (`lazyConnect`, :69: it connects on its first command) with `retryStrategy: null` (:61-63,
//!   `clusterNodeRetryStrategy` defaults to null, `ClusterOptions.js:7`), so a connection that
//!   fails or closes is not reconnected: it `end`s, its queued commands are rejected with
//!   `Connection is closed.` (`redis/event_handler.js:322-324`, :350-353) and it leaves the pool
//!   (`ConnectionPool.js:108-118`); the next use of the address (a `MOVED` to it, a refresh)
//!   creates a new one. `reset` (:153-175) disconnects and removes the nodes the new topology
//!   lacks and creates the new ones. When the pool empties (`drain`, :115-117) the cluster
//!   closes (`cluster/index.js:125-127`) and reconnects after `clusterRetryStrategy`
//!   (`min(100 + 2·attempt, 2000)` ms, `ClusterOptions.js:6`; :747-765): `connect()` puts the
//!   startup nodes back in the pool (:171) and refreshes. Until the cluster is ready again,
//!   commands wait in its offline queue (`enableOfflineQueue`, :585-592) and are sent when it is
//!   (:183, :783-793).
//! - **Routing**, `sendCommand`/`tryConnection` (:406-631): `scaleReads` `master` (the default,
//!   `ClusterOptions.js:9`) sends to `slots[slot][0]`'s pool connection (:533-560); a slot with no
//!   node, or whose node is not in the pool, goes to a random master of the pool
//!   (`getSampleInstance`, :566-572, `ConnectionPool.js:29-33`).
//! - **Errors**, `handleError` (:653-710), for at most `maxRedirections` (default 16,
//!   `ClusterOptions.js:10`) errors after the first: the first error sets the budget, each later
//!   one takes one from it, and at 0 the command fails with `Too many Cluster redirections. Last
//!   error: <error>` (:654-663), so 17 errors end a command by default.
//!   - `MOVED slot addr`: after `retryDelayOnMoved` (default 0: at once, :676-682) the slot is
//!     patched to the *announced* address (`slots[slot] = [key]`, :443-449), the `natMap`ped
//!     address is found or created in the pool, or *recreated* (a new connection) when it is the
//!     connection that just answered `MOVED` and the pool still holds it (`lastRedis`, :452-467:
//!     the other commands in flight on it reuse the replacement), the command is retried on the
//!     slot's node
//!     (:468) and a refresh is started, which the command does not wait for (:470). With a
//!     `natMap` the patched address is not in the pool (the pool holds mapped addresses), so the
//!     retry goes to a random master.
//!   - `ASK slot addr`: `ASKING` and the command on the mapped address, found or created (:472-477,
//!     :562-564, :626); no refresh.
//!   - `CLUSTERDOWN`: with `retryDelayOnClusterDown` > 0 (default 100 ms, `ClusterOptions.js:14`)
//!     the command joins the `clusterdown` bucket of the `DelayQueue`: the first command pushed
//!     starts the bucket's timer, after which one refresh runs and, when it ends (whatever its
//!     outcome), every command of the bucket is retried on a *random* master
//!     (`tryConnection(true)`, :439, :692-698, `DelayQueue.js:18-35`); a command pushed while the
//!     timer is set waits for it, with no refresh of its own (the batch whose timer ran at the
//!     push, kept per bucket: the driver runs each command whole when it is sent, so a command's
//!     later retries have set timers before the next command is sent). With 0 the error reaches
//!     the application.
//!   - `Connection is closed.` (a refused connection, or a connection destroyed by
//!     `socketTimeout`, `Redis.js:516-521`): with `retryDelayOnFailover` > 0 (default 100 ms,
//!     `ClusterOptions.js:13`) the same as `CLUSTERDOWN` in the `failover` bucket (:699-706);
//!     with 0 the error reaches the application.
//! - **Periodic refresh**, `slotsRefreshInterval` (:720-733): once ready, a refresh every that
//!   many ms after the last one ended. ioredis 6.0.0's `DEFAULT_CLUSTER_OPTIONS`
//!   (`ClusterOptions.js:5-22`) has **no** `slotsRefreshInterval` (its `.d.ts` says
//!   `@default 5000`, `ClusterOptions.d.ts:101`, but nothing sets it), so by default there is
//!   none.
//! - **`natMap`** (`natMapper`, :794-810): applied to each address of a `CLUSTER SLOTS` answer
//!   (:853), of a `MOVED` (:452) and of an `ASK` (:474), not to the startup nodes. The option
//!   here maps every address to one `HOST:PORT`, as the replay's other remaps (`natMap: () =>
//!   ({host, port})`); the replay's `address_remap` is read as `natMap`.
//! - `socketTimeout` (`redisOptions.socketTimeout`, unset by default): a command's connection is
//!   destroyed when no data came for that long (`Redis.js:460-463`, :516-530), which rejects its
//!   commands with `Connection is closed.` (the failover path above). It is the replay's
//!   `socket_timeout`. Without it ioredis waits as long as the node takes; the replay's instant
//!   clock cannot wait, and counts such a command as failed (`no reply`).
//!
//! The sequential driver runs a command whole when it is sent, except on the timed clock at a
//! `DelayQueue` bucket's timer, where the command pauses ([`Step::Paused`]): the commands the
//! application sends before the timer fires run first, a command pushed while the timer is set
//! waits for the same one, and when it fires the first of them runs its `refreshSlotsCache` and
//! all are retried when that ends. In a failover's storm the new commands between the batches
//! thus meet the pool as the batches left it at their own moment (live: about half of them find
//! the dead master's address in the pool, half do not and start a refresh of their own; case
//! 2365334887738468882, traced, docs/FIDELITY.md). On the lanes' instant clock the delays and the
//! refresh run inside the command, and a batch a command run before it started less than the
//! delay after its push is joined. A refresh lasts at least its own work (`refresh_cpu_ms`, the
//! duplicate connection and the answer written into `slots` and the pool, timed by
//! `apps/node/cpu-cost.mjs`). The refresh a `MOVED` starts runs in the background from the
//! `MOVED`'s time, its answer applied when it ends. `isRefreshing` is kept as the intervals the
//! refreshes ran: a `MOVED` or a timer joins the refresh running at its moment, or one a command
//! run before it started later but less than that refresh's length after (one at a time).
//! A connection a command's run ended (its `socketTimeout`, a refused or closed connection) fails
//! the commands sent after it that waited on it, at that moment and with no connection of their
//! own, as live: the 14 commands in flight on a stalled node's connection were rejected at once
//! when `socketTimeout` destroyed it (case 5183915617031440262, traced, docs/FIDELITY.md).
//!
//! - **Connections someone closed** (`CLIENT KILL`, `replay/kills.rs`): a pool node's `Redis` has
//!   no reconnect (`clusterNodeRetryStrategy: null`, `ConnectionPool.js:61-63`): it `end`s and
//!   leaves the pool (`removeNode`, :108-118; a drained pool reconnects the cluster); the slots
//!   still name it, so its next command goes to a random master whose `MOVED` makes a new
//!   connection and a refresh. A command waiting on it gets `Connection is closed.`, handled as
//!   any closed connection (`handleError`'s failover path).
//!
//! Not modelled: replicas and `scaleReads` other than `master` (refused), `TRYAGAIN` (the
//! replay's cluster never answers it; `retryDelayOnTryAgain` is checked only), `retryDelayOnMoved`
//! grouping commands in one bucket timer (each command waits the whole delay), the
//! `enableReadyCheck` `CLUSTER INFO` of `connect()` (:193-204), `clusterNodeRetryStrategy` (null
//! by default, so node connections never reconnect, and `MaxRetriesPerRequestError`, raised by a
//! reconnecting connection's queue, `redis/event_handler.js:337-347`, never reaches a cluster
//! command), the recreated connection's other in-flight commands, pipelines, pub/sub, DNS and SRV
//! look-ups. `ClusterAllFailedError` is emitted as the cluster's `error` event (:221) and handed
//! to refresh callbacks that ignore it (`DelayQueue.js:20`), never a command's rejection.
//!
//! Release coverage: **5.4.0–6.1.x** (`docs/releases/ioredis.md`), from the packages of every
//! release between (`npm pack ioredis@X`, their `built/` files compared with 6.0.0's, each pair of
//! consecutive releases diffed). 6.1.0 differs only in what is not modelled here (routing when the
//! pool holds no master, pipelines' redirections, maintenance notifications, which cluster
//! connections turn off, the periodic refresh's timer set once, an aborted connect). 5.4.0–5.11.x
//! (`asked` below 6.0.0) differ in two modelled ways, and the model follows them:
//!
//! - a `MOVED` always `findOrCreate`s the mapped address (5.4.1 `built/cluster/index.js:376`,
//!   5.11.1 :402): there is no `recreate` of the connection that answered (6.0.0 :452-467,
//!   `ConnectionPool.js:131-148`). Without a `natMap` a node never redirects to itself and the
//!   two are the same; with one that maps every address to one, 5.x retries on the connection
//!   it has where 6.0.0 opens a new one per `MOVED`;
//! - an error reply is a `ReplyError` (`redis-parser` 3.0.0 `lib/parser.js:179`, 5.4.1
//!   `DataHandler.js:5`), not 6.0.0's `SimpleError`: the class a `CLUSTERDOWN` reaches the
//!   application with when `retryDelayOnClusterDown` is 0.
//!
//! 5.4.0–5.4.2 read `natMap` only as an object (5.4.1 `cluster/index.js:630-643`; a function is
//! ignored before 5.5.0): the option here is the mapping, whichever form it takes. Before 5.4.0
//! a refresh started while another runs calls back at once (no `_refreshSlotsCacheCallbacks`)
//! and there is no `socketTimeout` (5.4.0 `Redis.js:404-432`): 5.0.0–5.3.x are not covered.

mod command;
mod delay_queue;
mod pool;
mod topology;

use crate::node::NodeAddr;
use crate::replay::client::ClientModel;
use crate::replay::client::{numbered_once, Transport};
use crate::replay::client_state::{ClientSnapshot, ClientState};
use crate::replay::descriptor::{Hypotheses, ModelDescriptor};
use crate::replay::known_nodes::KnownNodes;
use crate::replay::options::{
    parse_count, parse_cpu_ms, parse_mapped_addr, ModelOption, ModelOptions,
};
use crate::replay::outcome::{ClientError, Failure, Outcome};
use crate::replay::release::{Coverage, Version};
use crate::replay::sequential::{boxed, run_whole, Parked, Step, SyncModel};
use crate::replay::slot_cache::SlotCache;
use crate::replay::{ReplayError, Routed, SimRng};
use crate::slot::SlotRange;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;
use pool::Node;

/// `ioredis@6.0.0`: covers **5.4.0–6.1.x** (written from the 6.0.0 package; 5.x's `MOVED` and
/// error class as its packages have them, see the module doc).
pub const DESCRIPTOR: ModelDescriptor = ModelDescriptor {
    name: "ioredis@6.0.0",
    about: "ioredis Redis.Cluster: MOVED patches the slot and refreshes, closed connections retry \
            a random master after 100 ms, 16 redirections",
    source:
        "ioredis 6.0.0 `built/cluster/index.js` :356 (`refreshSlotsCache`) and :676-682 (`MOVED`)",
    options: OPTIONS,
    coverage: Some(Coverage {
        library: "ioredis",
        from: Version::new(5, 4, 0),
        until: Version::new(6, 2, 0),
        range: "5.4.0–6.1.x",
    }),
    hypotheses: Hypotheses::Library { extra: &[] },
};

/// The ioredis model's own options, by their `ClusterOptions` names.
const OPTIONS: &[ModelOption] = &[
    ModelOption {
        name: "natMap",
        doc: "HOST:PORT: every address of a CLUSTER SLOTS answer, MOVED and ASK becomes this one \
              (default none; address_remap is read as natMap)",
        default: "none",
        aliases: &[],
        check: Some(|v| parse_mapped_addr(v).map(drop)),
    },
    ModelOption {
        name: "scaleReads",
        doc: "where commands go: only master (the default) is modelled",
        default: "master",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "maxRedirections",
        doc: "errors (MOVED, ASK, closed connections, CLUSTERDOWN) a command follows after its \
              first (default 16)",
        default: "16",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "retryDelayOnMoved",
        doc: "milliseconds before following a MOVED (default 0: at once)",
        default: "0",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "retryDelayOnFailover",
        doc: "milliseconds before a refresh and a retry on a random master after a closed \
              connection (default 100; 0: the error reaches the application)",
        default: "100",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "retryDelayOnClusterDown",
        doc: "milliseconds before a refresh and a retry on a random master after CLUSTERDOWN \
              (default 100; 0: the error reaches the application)",
        default: "100",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "retryDelayOnTryAgain",
        doc: "milliseconds before retrying a TRYAGAIN (default 100); checked, not simulated",
        default: "100",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "slotsRefreshTimeout",
        doc: "milliseconds a CLUSTER SLOTS may take before the next node is asked (default 1000)",
        default: "1000",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "slotsRefreshInterval",
        doc: "milliseconds between periodic refreshes (default unset in 6.0.0: none)",
        default: "",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "refresh_cpu_ms",
        doc: "milliseconds a refresh that got its answer lasts at least: the client's own work \
              (the duplicate connection made and closed, the answer written into the slots and \
              the pool, its round trips on loopback) on Node's thread (default 1.5, measured on \
              6.0.0; apps/node/cpu-cost.mjs times it on a host)",
        default: "1.5",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "socketTimeout",
        doc: "redisOptions.socketTimeout: milliseconds without data before a connection is \
              destroyed (default unset: waits); same as socket_timeout",
        default: "",
        ..ModelOption::PLAIN
    },
];

/// A refresh's own work in microseconds (`refresh_cpu_ms`): `apps/node/cpu-cost.mjs ioredis`
/// (`Cluster#refreshSlotsCache` 200 times against a 3-master Redis 7.0 cluster on loopback,
/// process CPU, median) gave 1.49-1.51 ms in three runs on the project's 2-core machine
/// (2026-12-07).
const REFRESH_CPU_US: u64 = 1500;

/// The replay's common name for a remap, read as `natMap`.
const ADDRESS_REMAP: &str = "address_remap";

// The errors are named as the application sees them: the class of the error the command is
// rejected with (`constructor.name`, what `apps/node/ioredis.mjs` counts). ioredis rejects most
// with a plain `Error`, whose message tells them apart; the common class does here.

/// `new Error("Too many Cluster redirections. Last error: " + error)` (`cluster/index.js:661`),
/// the last error a `MOVED` (`ReplyError: MOVED slot addr`).
const TOO_MANY_MOVED: ClientError = ClientError::new("Error", Failure::TooManyRedirects);
/// The same, the last error an `ASK`.
const TOO_MANY_ASK: ClientError = ClientError::new("Error", Failure::TooManyRedirects);
/// The same, the last error `Error: Connection is closed.`.
const TOO_MANY_CLOSED: ClientError = ClientError::new("Error", Failure::TooManyRedirects);
/// The same, the last error a `CLUSTERDOWN`.
const TOO_MANY_CLUSTERDOWN: ClientError = ClientError::new("Error", Failure::TooManyRedirects);
/// `new Error("Connection is closed.")` (`CONNECTION_CLOSED_ERROR_MSG`, `utils/index.js:375`;
/// `redis/event_handler.js:353`), with `retryDelayOnFailover` 0.
const CONNECTION_CLOSED: ClientError = ClientError::new("Error", Failure::Connection);
/// The `CLUSTERDOWN` error reply, a `SimpleError` (`resp/errors.js:5`, a `ReplyError`), with
/// `retryDelayOnClusterDown` 0.
const CLUSTER_DOWN: ClientError = ClientError::new("SimpleError", Failure::ClusterDown);
/// The same in 5.x: `redis-parser`'s `ReplyError` (`lib/parser.js:179`).
const CLUSTER_DOWN_5: ClientError = ClientError::new("ReplyError", Failure::ClusterDown);
/// A silent node without `socketTimeout`: ioredis waits; the instant clock cannot.
const NO_REPLY: ClientError = ClientError::new(
    "no reply (ioredis waits without socketTimeout)",
    Failure::Timeout,
);
/// A command left in the cluster's offline queue (never ready within the replay's bound): the
/// application's name for a command still pending at its drain.
const NEVER_READY: ClientError = ClientError::new("CancelledError", Failure::NoTopology);

/// The replay's bound on how long a command waits in the offline queue (not the library's:
/// ioredis waits as long as the cluster reconnects).
const OFFLINE_WAIT_MAX_MS: u64 = 10_000;
/// `clusterRetryStrategy` (`ClusterOptions.js:6`): `min(100 + times * 2, 2000)`.
fn cluster_retry_delay(times: u64) -> u64 {
    100u64.saturating_add(times.saturating_mul(2)).min(2000)
}
/// The `failover` bucket of the `DelayQueue` (`cluster/index.js:702`).
const FAILOVER_BUCKET: usize = 0;
/// The `clusterdown` bucket (`cluster/index.js:694`).
const CLUSTERDOWN_BUCKET: usize = 1;
/// Seed of the generator behind `Math.random` (`shuffle`, `sample`).
const RNG_SEED: u64 = 0x696f_7265_6469_7336;

/// The model's settings.
#[derive(Clone, Debug)]
struct Config {
    nat_map: Option<NodeAddr>,
    max_redirections: u32,
    delay_moved_ms: u64,
    delay_failover_ms: u64,
    delay_clusterdown_ms: u64,
    refresh_timeout_ms: u64,
    refresh_interval_ms: Option<u64>,
    socket_timeout_ms: Option<u64>,
    /// The least a refresh that got its answer lasts, its own work (`refresh_cpu_ms`).
    refresh_cpu_us: u64,
    /// Whether a `MOVED` to the address of the connection that answered it makes a new one
    /// (6.0.0's `recreate`; 5.x reuses it).
    recreate_on_moved: bool,
    /// The class a `CLUSTERDOWN` reaches the application with.
    cluster_down: ClientError,
}

/// Builds `ioredis@6.0.0`, as 5.x has it when the release `asked` is one (see the module doc).
pub(super) fn build(
    asked: Option<Version>,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    let name = DESCRIPTOR.name;
    let before_6 = asked.is_some_and(|v| v < Version::new(6, 0, 0));
    // `address_remap` is redis-py's option, the replay's common name for a remap (the fidelity
    // matrix passes it to every model with address translation): read as `natMap`.
    let mut known: Vec<&str> = OPTIONS.iter().map(|o| o.name).collect();
    known.push(ADDRESS_REMAP);
    options.library_options_for(name, &known)?;
    let ms = |v: &str| v.trim().parse::<u64>().ok().filter(|&n| n <= 3_600_000);
    let expected = "milliseconds in 0..=3600000";
    let scale = options.library_value(
        "scaleReads",
        "master".to_owned(),
        |v| matches!(v, "master" | "slave" | "all").then(|| v.to_owned()),
        "master, slave or all",
    )?;
    if scale != "master" {
        return Err(ReplayError::Unsupported {
            model: name.to_owned(),
            what: format!("scaleReads={scale} (only master is modelled: no replicas)"),
        });
    }
    let nat_map = options.mapped_addr(name, "natMap")?;
    let max_redirections = options.library_value(
        "maxRedirections",
        16,
        |v| parse_count(v, 100),
        "a number up to 100",
    )?;
    let delay_moved_ms = options.library_value("retryDelayOnMoved", 0, ms, expected)?;
    let delay_failover_ms = options.library_value("retryDelayOnFailover", 100, ms, expected)?;
    let delay_clusterdown_ms =
        options.library_value("retryDelayOnClusterDown", 100, ms, expected)?;
    options.library_value("retryDelayOnTryAgain", 100, ms, expected)?;
    let refresh_timeout_ms = options.library_value(
        "slotsRefreshTimeout",
        1000,
        |v| ms(v).filter(|&n| n > 0),
        "milliseconds in 1..=3600000",
    )?;
    let refresh_interval_ms = options.library_value(
        "slotsRefreshInterval",
        None,
        |v| ms(v).map(|n| (n > 0).then_some(n)),
        "milliseconds in 0..=3600000 (0: none)",
    )?;
    let own_timeout = options.library_value(
        "socketTimeout",
        None,
        |v| ms(v).filter(|&n| n > 0).map(Some),
        "milliseconds in 1..=3600000",
    )?;
    let socket_timeout_ms = options.timeout_alias(name, "socketTimeout", own_timeout, |t| t)?;
    let refresh_cpu_us = options.library_value(
        "refresh_cpu_ms",
        REFRESH_CPU_US,
        parse_cpu_ms,
        "milliseconds in [0, 10000]",
    )?;
    Ok(boxed(Client::new(
        name,
        &options.startup_nodes,
        Config {
            nat_map,
            max_redirections,
            delay_moved_ms,
            delay_failover_ms,
            delay_clusterdown_ms,
            refresh_timeout_ms,
            refresh_interval_ms,
            socket_timeout_ms,
            refresh_cpu_us,
            recreate_on_moved: !before_6,
            cluster_down: if before_6 {
                CLUSTER_DOWN_5
            } else {
                CLUSTER_DOWN
            },
        },
    )))
}

/// The cluster's status as routing sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// `connect()` has not run yet.
    Initial,
    /// `ready`: commands are routed.
    Ready,
    /// Closed (the pool drained, or `connect()`'s refresh failed): `connect()` again at this time.
    Reconnecting(Timestamp),
}

struct Client {
    name: String,
    cfg: Config,
    rng: SimRng,
    nodes: KnownNodes<Node>,
    startup: Vec<NodeIdx>,
    /// `this.slots`: slot → the first (master) key.
    slots: SlotCache,
    status: Status,
    /// `this.retryAttempts` of `clusterRetryStrategy`.
    retry_attempts: u64,
    /// The next pool insertion's position.
    next_order: u64,
    /// When `isRefreshing` held (microseconds, `[start, end)`), in time order: a `MOVED` or a
    /// `DelayQueue` timer joins the refresh running at its own moment. Those that ended before
    /// the command now sent are forgotten.
    refreshes: Vec<(u64, u64)>,
    /// The answers of the refreshes run in the background, applied when each ends
    /// (microseconds), in time order: until then the slots and the pool are as they were.
    answers: Vec<(u64, Vec<(SlotRange, NodeAddr)>)>,
    /// Each `DelayQueue` bucket's timer on the timed clock (when it fires, microseconds), by
    /// [`FAILOVER_BUCKET`] and [`CLUSTERDOWN_BUCKET`].
    timers: [Option<u64>; 2],
    /// Each bucket's timers that fired, when each fired and when its refresh ended (the
    /// commands that waited for it are retried then), microseconds.
    fired: [Vec<(u64, u64)>; 2],
    /// The commands waiting for a bucket's timer, by ticket.
    paused: Parked<Run>,
    /// Each `DelayQueue` bucket's batches on the lanes' instant clock, by [`FAILOVER_BUCKET`]
    /// and [`CLUSTERDOWN_BUCKET`]: when its timer started and when its commands were retried, in
    /// time order. The driver runs a command whole when it is sent there, so a command's retries
    /// set timers ahead of the commands sent after it: each of those joins the batch whose timer
    /// ran when it was pushed, not the last one set.
    buckets: [Vec<(Timestamp, Timestamp)>; 2],
    /// Each address's connections that ended (when each connected and when it ended), by node
    /// number: the driver runs a command whole when it is sent, so a command's run ends the
    /// connection the commands sent after it wait on (`pool.rs`). Those that ended before the
    /// command now sent are forgotten.
    ended: Vec<Vec<(Timestamp, Timestamp)>>,
    /// The `slotsRefreshInterval` timer.
    periodic_at: Option<Timestamp>,
    /// The replay runs lanes on the instant clock (told by `set_concurrency`, which only lanes
    /// call): there a command's run is not cut at the bucket's timer.
    lanes: bool,
    stats: ClientState,
}

/// A command's run between its steps: what `handleError` carries from one try to the next.
#[derive(Clone, Copy, Debug)]
struct Run {
    cmd: Routed,
    /// When the application sent it.
    since: Timestamp,
    /// `ttl.value` of `handleError`.
    ttl: Option<u32>,
    /// The next try goes to a random master (`tryConnection(true)`).
    random: bool,
    /// The next try is `ASKING` on this node.
    asking: Option<NodeIdx>,
    /// The bucket whose timer it waits for, and when that fires (microseconds).
    waits: Option<(usize, u64)>,
}

impl Client {
    fn new(name: &str, seeds: &[NodeAddr], cfg: Config) -> Client {
        let mut c = Client {
            name: name.to_owned(),
            cfg,
            rng: SimRng::new(RNG_SEED),
            nodes: KnownNodes::new(Node::default()),
            startup: Vec::new(),
            slots: SlotCache::default(),
            status: Status::Initial,
            retry_attempts: 0,
            next_order: 0,
            refreshes: Vec::new(),
            answers: Vec::new(),
            timers: [None, None],
            fired: [Vec::new(), Vec::new()],
            paused: Parked::new(),
            periodic_at: None,
            buckets: [Vec::new(), Vec::new()],
            ended: Vec::new(),
            lanes: false,
            stats: ClientState::default(),
        };
        c.startup = numbered_once(seeds, |a| c.nodes.intern(a));
        c.stats.startup_nodes = c.startup.len();
        c
    }

    /// `natMapper` (`cluster/index.js:794`).
    fn nat(&self, addr: &NodeAddr) -> NodeAddr {
        self.cfg.nat_map.clone().unwrap_or_else(|| addr.clone())
    }

    /// `handleCloseEvent` (`cluster/index.js:747`).
    fn close(&mut self, now: Timestamp) {
        self.retry_attempts += 1;
        let delay = cluster_retry_delay(self.retry_attempts);
        self.status = Status::Reconnecting(Timestamp(now.0.saturating_add(delay)));
        self.periodic_at = None;
    }
}

impl SyncModel for Client {
    fn name(&self) -> &str {
        &self.name
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.cfg.socket_timeout_ms
    }

    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        run_whole(self, cmd, net)
    }

    fn start(&mut self, cmd: Routed, net: &mut dyn Transport) -> Step {
        // The periodic timer first: it fired before this command.
        self.background(net);
        self.begin(cmd, net)
    }

    fn resume(&mut self, ticket: u64, net: &mut dyn Transport) -> Step {
        match self.paused.take(ticket) {
            Some(run) => self.timer_fired(run, net),
            None => Step::Done(Outcome::Failed(ClientError::UNFINISHED)),
        }
    }

    fn set_concurrency(&mut self, _in_flight: u32) {
        self.lanes = true;
    }

    fn state(&self) -> ClientState {
        let mut s = self.stats;
        // The nodes it knows: its pool (`cluster.nodes("all")`). The startup nodes are put back
        // by every `connect()`, so it is never wedged.
        s.startup_nodes = self.pool().len();
        s.wedged = false;
        s
    }

    fn snapshot(&self) -> ClientSnapshot {
        let open = self.nodes.count(|n| n.in_pool && n.connected);
        ClientSnapshot::of_table(self.slots.table(), open)
    }
}
