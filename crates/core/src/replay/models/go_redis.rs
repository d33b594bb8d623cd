//! go-redis v9's cluster client (`redis.ClusterClient`), model `go-redis@9.8.0`.
//!
//! Written from the source of `github.com/redis/go-redis/v9`: `osscluster.go` at commit
//! `006e9b56182800b7217daa246b0e2b8f0ca6100a` (the 9.7.1–9.8.0 code: it has the no-backoff-on-
//! redirect change of PR #3048 and the `Addrs()` copy fix of 9.7.1, and predates the
//! `StreamingCredentialsProvider` of 9.9.0; no `version.go` of that commit was available, so the
//! name says 9.8.0), with `error.go` (`shouldRetry`, `isBadConn`, `isMovedError`) and `redis.go`
//! (`baseClient.process`, the per-node `MaxRetries` loop).
//!
//! What is modelled, by function of `osscluster.go`:
//!
//! - `ClusterClient.process`: up to `MaxRedirects + 1` attempts (default 3 → 4). `MOVED`/`ASK`:
//!   `state.LazyReload()`, then the next attempt goes to the named node at once (`ASKING` first
//!   for `ASK`); the slot table is *not* patched. A retryable error (network error, timeout,
//!   `CLUSTERDOWN`, per `shouldRetry`): the first retry goes to the same node, later ones re-pick
//!   the slot's master (`MarkAsFailing` only matters for replica reads, so for a master it is
//!   the same node again). Before a retry that does not follow a redirect the command sleeps
//!   `RetryBackoff(attempt, MinRetryBackoff, MaxRetryBackoff)` (l. 992-996; `internal.go`
//!   l. 9-29: `min + rand(min << attempt)`, at most `max`; defaults 8 ms and 512 ms,
//!   `osscluster.go` l. 145-156), drawn here from a seeded [`SimRng`].
//! - `clusterStateHolder.Get`: no state → a synchronous `Reload`; a state older than 10 s →
//!   `LazyReload`. `LazyReload`: if no reload is running, a goroutine runs `Reload` and then sleeps
//!   200 ms before clearing the flag, so at most one reload per ~200 ms whatever the number of
//!   `MOVED`. The replay runs that background reload at the end of the command's step that
//!   started it (its end, or its pause at a retry's backoff: `go_redis/command.rs`), at the same
//!   virtual time (so before the next command); the flag stays set while the reload runs (its
//!   `ReadTimeout` on each silent node it asks) and, when it succeeded, 200 ms more (a failed
//!   reload returns before the sleep, l. 874-887).
//! - `ClusterClient.loadState`: `CLUSTER SLOTS` to the addresses of `clusterNodes.Addrs()` in a
//!   random order (`rand.Perm`, here a seeded [`SimRng`]) until one answers. `Addrs()` is
//!   `activeAddrs` when non-empty, else `addrs`: the seed `Addrs` plus every address the client
//!   ever created a node for (`GetOrCreate` appends and nothing removes), so the seeds are never
//!   forgotten and the client cannot wedge. When no address answers, `activeAddrs` is cleared.
//! - `newClusterState` schedules `clusterNodes.GC(generation)` one minute later: `activeAddrs`
//!   becomes the nodes seen in that state or a later one; other node clients are closed (a later
//!   use opens a new connection).
//! - A slot with no owner in the table is sent to `clusterNodes.Random()`.
//! - Per-node client (`redis.go`, `baseClient.process`): `MaxRetries` (the cluster default of 0
//!   becomes -1: no per-node retry); a network error or timeout removes the pooled connection
//!   (`isBadConn`), so the next command to that node opens a new one.
//! - Per-node pool (`internal/pool/pool.go`): `Get` takes an idle connection or dials a new one
//!   (l. 267-301), `Put` makes it idle again when the reply is read (l. 374), `Remove` drops a
//!   bad one (l. 407): a node's pool grows to the commands it serves at once, up to `PoolSize`
//!   (`ClusterOptions.init`: 5 per CPU, `osscluster.go` l. 125-127; the replay cannot know the
//!   CPUs, its default is 10, two CPUs). At that size `Get` first waits for a turn
//!   (`waitTurn`, l. 310-344; a turn is given back by `Put` or `Remove`, so a broken connection
//!   holds its turn until its reply): here, for the first turn another command gives back, at
//!   most `PoolTimeout` (`options.go` l. 206-212: `ReadTimeout` + 1 s, 30 s without one), then
//!   `ErrPoolTimeout`, which `shouldRetry` retries (`error.go` l. 56-58) like a network error.
//!
//! - **An incomplete `CLUSTER SLOTS` answer** (empty before the slots are assigned, or with
//!   holes) is a state like any other: `loadState` returns `newClusterState` of the first
//!   answer (`osscluster.go` line 1259 at tag `v9.8.0`) and `newClusterState` (line 660) builds
//!   the slots given, with no coverage check. A slot without a node goes to
//!   `clusterNodes.Random()` (`slotMasterNode`, line 741), which answers `CLUSTERDOWN` before the
//!   slot is assigned and `MOVED` after (so a `LazyReload`); the state is also reloaded once it
//!   is 10 s old. The seeds stay in `Addrs()`, so the client is never wedged.
//!
//! - **Connections someone closed** (`CLIENT KILL`, `replay/kills.rs`): `pool.Get` checks each
//!   idle connection it takes (`isHealthyConn`, a non-blocking read that sees `io.EOF`,
//!   `internal/pool/pool.go` l. 276-293, 510-523) and drops a dead one quietly, dialling when none
//!   is left: no error, no reload. A command waiting on a connection at the kill reads `io.EOF`,
//!   a bad connection retried once more (`shouldRetry`, `error.go` l. 52-66).
//!
//! `ReadTimeout` (default 3 s) is how long a command waits on a silent node; it is the replay's
//! `socket_timeout`. Not modelled: replica routing (`ReadOnly`, `RouteByLatency`,
//! `RouteRandomly`), pipelines and transactions, `replaceLoopbackHost`, the `ClusterSlots`
//! callback. go-redis has no address-remap option: `ClusterOptions.Dialer` (or `NewClient`) can
//! dial another address than the one named, but the slot table keeps the announced addresses.
//!
//! Release coverage: **9.8.0–9.14.x** (`docs/releases/go-redis.md`), from the module proxy's
//! sources of every v9 release, each function above compared with 9.8.0's. 9.9.0–9.14.1 change only
//! what is not modelled (replica routing, pipelines, buffer sizes, statistics, credentials). Before
//! 9.8.0 `shouldRetry` does not retry `pool.ErrPoolTimeout` (9.8.0 `error.go` l. 56-58; 9.7.3
//! `error.go` l. 41-47 lacks it): a command that waited out a full pool fails at once; before 9.6.0
//! a redirected attempt also sleeps the retry backoff first (9.5.5 `osscluster.go` l. 956, 1000).
//! From 9.15.0 a refused dial is retried five times 100 ms apart, from 9.17.0 the errors are typed
//! (`*proto.MovedError`, ...), from 9.18.0 a `LazyReload` within the 200 ms hold queues another
//! reload and 9.22.0 changed the defaults (`ReadTimeout` 5 s, staleness 60 s): none covered.

use crate::node::NodeAddr;
use crate::replay::client::ClientModel;
use crate::replay::client::{numbered_once, Transport};
use crate::replay::client_state::{ClientSnapshot, ClientState};
use crate::replay::descriptor::{Hypotheses, ModelDescriptor};
use crate::replay::known_nodes::KnownNodes;
use crate::replay::options::{ModelOption, ModelOptions};
use crate::replay::outcome::{ClientError, Failure, Outcome, ReplyErrors};
use crate::replay::release::{Coverage, Version};
use crate::replay::sequential::{boxed, run_whole, Parked, Step, SyncModel};
use crate::replay::{ReplayError, Routed, SimRng};
use crate::slot::SLOT_COUNT;
use crate::time::Timestamp;
use crate::timeline::{NodeIdx, SlotTable};

mod command;
mod limits;
mod pool;

use command::Run;
use limits::{parse_go_duration, Limits};

/// `go-redis@9.8.0`: covers **9.8.0–9.14.x** (the module reads the 9.7.1–9.8.0 `osscluster.go`
/// and 9.8.0's `error.go`; see the module doc for the releases before and after).
pub const DESCRIPTOR: ModelDescriptor = ModelDescriptor {
    name: "go-redis@9.8.0",
    about:
        "go-redis v9 ClusterClient: MOVED follows and lazily reloads (200 ms hold), 10 s staleness",
    source: "go-redis v9.8.0 `osscluster.go` l. 992-996 (retries) and l. 1259 (the reload's `CLUSTER SLOTS`)",
    options: OPTIONS,
    coverage: Some(Coverage {
        library: "go-redis",
        from: Version::new(9, 8, 0),
        until: Version::new(9, 15, 0),
        range: "9.8.0–9.14.x",
    }),
    hypotheses: Hypotheses::Library { extra: &[] },
};

/// The go-redis model's own options, by their `ClusterOptions` names.
const OPTIONS: &[ModelOption] = &[
    ModelOption {
        name: "MaxRedirects",
        doc: "attempts after the first on MOVED/ASK and retryable errors (default 3; -1 none)",
        default: "3",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "MaxRetries",
        doc: "per-node retries of a network error or timeout (default 0, which go-redis makes -1: none)",
        default: "0",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "MinRetryBackoff",
        doc: "least sleep before a retry that follows no redirect, e.g. 8ms (default 8ms; -1 none)",
        default: "8ms",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "MaxRetryBackoff",
        doc: "most sleep before such a retry, e.g. 512ms (default 512ms; -1 none)",
        default: "512ms",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "PoolSize",
        doc: "connections a node's pool holds at most (default 5 per CPU: 10, two CPUs)",
        default: "10",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "PoolTimeout",
        doc: "wait for a free connection at PoolSize, e.g. 4s (default ReadTimeout + 1s, 30s \
              without one)",
        default: "",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "ReadTimeout",
        doc: "wait on a silent node, e.g. 3s or 500ms (default 3s; -1 waits are not modelled); \
         same as socket_timeout",
        default: "3s",
        ..ModelOption::PLAIN
    },
];

/// go-redis's errors, as an application tells them apart: by the exported sentinel's name, else
/// by the error's Go type (`errors.As`), as the matrix's app does (`apps/go-redis/main.go`
/// `errorClass`). A read timeout and a refused dial are both a `*net.OpError` (`net.go`; the
/// class below tells them apart), a `CLUSTERDOWN` reply and the last `MOVED` of a command past
/// `MaxRedirects` a `proto.RedisError` (`internal/proto/reader.go`).
const ERRORS: ReplyErrors = ReplyErrors::named([
    "*net.OpError",
    "*net.OpError",
    "proto.RedisError",
    "proto.RedisError",
]);
/// `pool.ErrPoolTimeout` ("redis: connection pool timeout"): no connection of the node's pool
/// came free within `PoolTimeout`.
const POOL_TIMEOUT: ClientError = ClientError::new("pool.ErrPoolTimeout", Failure::PoolExhausted);
/// `errClusterNoNodes` ("redis: cluster has no nodes"): no address to ask for the topology or
/// to send to.
const NO_NODES: ClientError = ClientError::new("redis.errClusterNoNodes", Failure::NoTopology);

/// `LazyReload`: the goroutine sleeps this long after a successful reload.
const LAZY_RELOAD_HOLD_MS: u64 = 200;
/// `clusterStateHolder.Get`: a state older than this is lazily reloaded.
const STATE_MAX_AGE_MS: u64 = 10_000;
/// `newClusterState`: `GC` runs this long after a state was made.
const GC_DELAY_MS: u64 = 60_000;
/// `ClusterOptions.init`: default `ReadTimeout`.
const DEFAULT_READ_TIMEOUT_MS: u64 = 3_000;
/// `ClusterOptions.init`: default `MinRetryBackoff`, ms.
const DEFAULT_MIN_BACKOFF_MS: u64 = 8;
/// `ClusterOptions.init`: default `MaxRetryBackoff`, ms.
const DEFAULT_MAX_BACKOFF_MS: u64 = 512;
/// `Options.init`: `PoolTimeout` is `ReadTimeout` plus this, or [`NO_READ_TIMEOUT_POOL_MS`].
const POOL_TIMEOUT_OVER_READ_MS: u64 = 1_000;
/// `Options.init`: `PoolTimeout` without a `ReadTimeout`.
const NO_READ_TIMEOUT_POOL_MS: u64 = 30_000;
/// Seed of the generator behind `rand.Perm` and `clusterNodes.Random`.
const RNG_SEED: u64 = 0x676f_2d72_6564_6973;

/// Builds `go-redis@9.8.0`.
pub(super) fn build(
    _: Option<Version>,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    let name = DESCRIPTOR.name;
    options.check_for_model(name, OPTIONS)?;
    let max_redirects = options.library_value(
        "MaxRedirects",
        3,
        |v| match v.parse::<i32>().ok()? {
            -1 => Some(0),
            0 => Some(3),
            n => u32::try_from(n).ok().filter(|&n| n <= 100),
        },
        "an integer from -1 to 100",
    )?;
    let max_retries = options.library_value(
        "MaxRetries",
        0,
        |v| match v.parse::<i32>().ok()? {
            n if n <= 0 => Some(0),
            n => u32::try_from(n).ok().filter(|&n| n <= 100),
        },
        "an integer up to 100",
    )?;
    let read_timeout = options.library_value(
        "ReadTimeout",
        None,
        |v| parse_go_duration(v).map(Some),
        "a duration such as 3s or 500ms, or -1",
    )?;
    let timeout_ms = options
        .timeout_alias(name, "ReadTimeout", read_timeout, Some)?
        .unwrap_or(Some(DEFAULT_READ_TIMEOUT_MS));
    let backoff = |key, default_ms: u64| {
        options.library_value(
            key,
            default_ms,
            |v| match v.trim() {
                "0" => Some(default_ms),
                v if v.starts_with('-') => Some(0),
                v => parse_go_duration(v).flatten(),
            },
            "a duration such as 8ms, or -1 for none",
        )
    };
    let min_backoff_ms = backoff("MinRetryBackoff", DEFAULT_MIN_BACKOFF_MS)?;
    let max_backoff_ms = backoff("MaxRetryBackoff", DEFAULT_MAX_BACKOFF_MS)?;
    let pool_size = options.library_value(
        "PoolSize",
        10,
        |v| v.parse().ok().filter(|n| (1..=10_000).contains(n)),
        "an integer from 1 to 10000",
    )?;
    let pool_timeout_ms = options.library_value(
        "PoolTimeout",
        None,
        |v| match v.trim() {
            "0" => Some(None),
            v if v.starts_with('-') => None,
            v => parse_go_duration(v).flatten().map(Some),
        },
        "a duration such as 4s or 500ms (0: the default)",
    )?;
    let pool_timeout_ms = pool_timeout_ms.unwrap_or(match timeout_ms {
        Some(ms) => ms + POOL_TIMEOUT_OVER_READ_MS,
        None => NO_READ_TIMEOUT_POOL_MS,
    });
    Ok(boxed(Client::new(
        name,
        &options.startup_nodes,
        Limits {
            max_redirects,
            max_retries,
            timeout_ms,
            pool_size,
            pool_timeout_us: pool_timeout_ms.saturating_mul(1000),
            min_backoff_us: min_backoff_ms.saturating_mul(1000),
            max_backoff_us: max_backoff_ms.saturating_mul(1000),
        },
    )))
}

/// One `clusterState`.
struct State {
    /// Slot → master address.
    table: SlotTable,
    created: Timestamp,
}

/// What the client holds for one address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Node {
    /// Whether `clusterNodes.nodes` holds a client for the address.
    has_node: bool,
    /// That client's pool: each connection with the virtual time (µs) until which a command
    /// holds it (idle once that has passed).
    conns: Vec<u64>,
    /// Connections removed as broken: until when each still holds its turn (its reply).
    leaving: Vec<u64>,
    /// `clusterNode.generation`.
    gen: u32,
    /// Until when (µs) kills of the node's connections (`CLIENT KILL`) were looked for: every
    /// connection the pool holds was opened or found alive since.
    kills_seen_us: u64,
}

/// `clusterNodes.GetOrCreate` on the node table: the node client of `addr`, created (with no
/// connection) when there is none.
fn create(nodes: &mut KnownNodes<Node>, addr: &NodeAddr) -> Option<NodeIdx> {
    let i = nodes.intern(addr)?;
    let node = nodes.get_mut(i);
    if !node.has_node {
        node.has_node = true;
        node.conns.clear();
        node.leaving.clear();
    }
    Some(i)
}

struct Client {
    name: String,
    limits: Limits,
    rng: SimRng,
    /// The addresses the client knows, numbered, with each one's node client.
    nodes: KnownNodes<Node>,
    /// `clusterNodes.addrs`: seeds and every address a node was created for; never shrinks.
    known: Vec<NodeIdx>,
    /// `clusterNodes.activeAddrs`.
    active: Vec<NodeIdx>,
    /// `clusterNodes._generation`.
    generation: u32,
    state: Option<State>,
    /// A `LazyReload` started during this command, run after it.
    reload_due: bool,
    /// `clusterStateHolder.reloading` is set until then.
    reloading_until: Option<Timestamp>,
    /// Pending `GC(generation)` timers.
    gc: Vec<(Timestamp, u32)>,
    /// Commands paused at a retry's backoff, by ticket (a freed place is reused).
    paused: Parked<Run>,
    /// The replay runs lanes on the instant clock (told by `set_concurrency`, which only lanes
    /// call): nothing runs meanwhile, so a backoff is slept inside the command, not paused at.
    lanes: bool,
    stats: ClientState,
}

impl Client {
    fn new(name: &str, seeds: &[NodeAddr], limits: Limits) -> Client {
        let mut c = Client {
            name: name.to_owned(),
            limits,
            rng: SimRng::new(RNG_SEED),
            nodes: KnownNodes::new(Node::default()),
            known: Vec::new(),
            active: Vec::new(),
            generation: 0,
            state: None,
            reload_due: false,
            reloading_until: None,
            gc: Vec::new(),
            paused: Parked::new(),
            lanes: false,
            stats: ClientState::default(),
        };
        c.known = numbered_once(seeds, |a| c.intern(a));
        c.refresh_stats();
        c
    }

    /// The number of `addr` (`None` only past 65,535 addresses: the address is then unusable).
    fn intern(&mut self, addr: &NodeAddr) -> Option<NodeIdx> {
        self.nodes.intern(addr)
    }

    /// `clusterNodes.GetOrCreate`.
    fn get_or_create(&mut self, addr: &NodeAddr) -> Option<NodeIdx> {
        let i = create(&mut self.nodes, addr)?;
        if !self.known.contains(&i) {
            self.known.push(i);
        }
        Some(i)
    }

    /// `clusterNodes.Addrs`.
    fn addrs_for_load(&self) -> &[NodeIdx] {
        if self.active.is_empty() {
            &self.known
        } else {
            &self.active
        }
    }

    fn refresh_stats(&mut self) {
        self.stats.startup_nodes = self.addrs_for_load().len();
        // `addrs` never shrinks and loadState falls back to it: never wedged.
        self.stats.wedged = false;
    }

    /// Runs the `GC` timers due by `now`.
    fn run_gc(&mut self, now: Timestamp) {
        while let Some(p) = self.gc.iter().position(|&(due, _)| due <= now) {
            let (_, gen) = self.gc.remove(p);
            self.active.clear();
            for (n, node) in self.nodes.states_mut() {
                if !node.has_node {
                    continue;
                }
                if node.gen >= gen {
                    self.active.push(n);
                } else {
                    node.has_node = false;
                    node.conns.clear();
                    node.leaving.clear();
                }
            }
        }
    }

    /// `ClusterClient.loadState` and `clusterStateHolder.Reload`.
    fn reload(&mut self, net: &mut dyn Transport) -> Result<(), ClientError> {
        let mut order = self.addrs_for_load().to_vec();
        // rand.Perm, as a Fisher-Yates shuffle.
        self.rng.shuffle(&mut order);
        let mut first_err = None;
        for i in order {
            let Some(addr) = self.nodes.addr(i).cloned() else {
                continue;
            };
            self.get_or_create(&addr);
            let (c, fresh) = match self.connect(i, net) {
                Ok(taken) => taken,
                Err(e) => {
                    first_err.get_or_insert(e);
                    continue;
                }
            };
            self.stats.cluster_slots_calls += 1;
            let answer = net.cluster_slots(&addr);
            self.answered(i, c, fresh, answer.as_ref().err(), net.now_us());
            match answer {
                Ok(ranges) => {
                    self.generation = self.generation.wrapping_add(1);
                    let gen = self.generation;
                    let mut table = SlotTable::new();
                    let named = self.nodes.fill_table(&mut table, ranges, |nodes, a| {
                        let n = create(nodes, a)?;
                        let node = nodes.get_mut(n);
                        node.gen = node.gen.max(gen);
                        Some(n)
                    });
                    for n in named {
                        if !self.known.contains(&n) {
                            self.known.push(n);
                        }
                    }
                    let now = net.now();
                    self.state = Some(State {
                        table,
                        created: now,
                    });
                    self.gc
                        .push((Timestamp(now.0.saturating_add(GC_DELAY_MS)), gen));
                    self.stats.full_reinits += 1;
                    return Ok(());
                }
                Err(reply) => {
                    first_err.get_or_insert(ERRORS.of_reply(&reply));
                }
            }
        }
        self.active.clear();
        Err(first_err.unwrap_or(NO_NODES))
    }

    /// `clusterStateHolder.LazyReload`.
    fn lazy_reload(&mut self, now: Timestamp) {
        let running = self.reload_due || self.reloading_until.is_some_and(|t| now < t);
        if !running {
            self.reload_due = true;
        }
    }

    /// `clusterStateHolder.Get` then `slotMasterNode` (or `clusterNodes.Random`).
    fn cmd_node(&mut self, cmd: Routed, net: &mut dyn Transport) -> Result<NodeIdx, ClientError> {
        let now = net.now();
        match &self.state {
            None => self.reload(net)?,
            Some(s) if now.millis_since(s.created) > STATE_MAX_AGE_MS => self.lazy_reload(now),
            Some(_) => {}
        }
        if let Some(owner) = self.state.as_ref().and_then(|s| s.table.get(cmd.slot)) {
            return Ok(owner);
        }
        let known = self.addrs_for_load().len();
        if known == 0 {
            return Err(NO_NODES);
        }
        let k = self.rng.index_below(known);
        // The addresses are numbers of this client's table only, so both look-ups succeed.
        let addr = self.nodes.addr(self.addrs_for_load()[k]).cloned();
        addr.and_then(|a| self.get_or_create(&a)).ok_or(NO_NODES)
    }

    /// One step of a command's run: the `GC` timers due, `process` from where `run` stands, then
    /// the step's end ([`Client::after_step`]).
    fn step(&mut self, run: Run, net: &mut dyn Transport) -> Step {
        self.run_gc(net.now());
        let step = self.process(run, net);
        self.after_step(net);
        step
    }

    /// The end of a command's step: the `LazyReload` goroutine a redirect or a stale state of
    /// the step started, run now (the command does not wait for it). Its flag stays set while
    /// it runs, and 200 ms more after a reload that succeeded (`osscluster.go` l. 874-887).
    fn after_step(&mut self, net: &mut dyn Transport) {
        if self.reload_due {
            self.reload_due = false;
            let resume = net.now_us();
            let reloaded = self.reload(net);
            let ended = net.now_us();
            net.resume_at_us(resume);
            let hold_us = match reloaded {
                Ok(()) => LAZY_RELOAD_HOLD_MS * 1000,
                Err(_) => 0,
            };
            self.reloading_until = Some(Timestamp(ended.saturating_add(hold_us) / 1000));
        }
        self.refresh_stats();
    }
}

impl SyncModel for Client {
    fn name(&self) -> &str {
        &self.name
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.limits.timeout_ms
    }

    fn set_concurrency(&mut self, _in_flight: u32) {
        self.lanes = true;
    }

    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        run_whole(self, cmd, net)
    }

    fn start(&mut self, cmd: Routed, net: &mut dyn Transport) -> Step {
        self.step(Run::new(cmd), net)
    }

    fn resume(&mut self, ticket: u64, net: &mut dyn Transport) -> Step {
        match self.paused.take(ticket) {
            Some(run) => self.step(run, net),
            None => Step::Done(Outcome::Failed(ClientError::UNFINISHED)),
        }
    }

    fn state(&self) -> ClientState {
        self.stats
    }

    fn snapshot(&self) -> ClientSnapshot {
        let open: usize = self
            .nodes
            .ids()
            .map(|n| self.nodes.get(n).conns.len())
            .sum();
        let open = u64::try_from(open).unwrap_or(u64::MAX);
        match &self.state {
            Some(st) => ClientSnapshot::of_table(&st.table, open),
            None => ClientSnapshot {
                open_connections: open,
                table_nodes: 0,
                top_node_slots: 0,
                unmapped_slots: usize::from(SLOT_COUNT),
            },
        }
    }
}
