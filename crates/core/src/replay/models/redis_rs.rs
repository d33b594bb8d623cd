//! redis-rs's async cluster client (crate `redis`, feature `cluster-async`,
//! `cluster_async::ClusterConnection`), model `redis-rs@1.8.1`.
//!
//! Written from the crate `redis` 1.8.1 (the newest non-pre-release on crates.io when read):
//! `src/cluster_handling/async_connection/mod.rs` (`refresh_slots`, `get_connection`,
//! `get_redirected_connection`, `reconnect_loop`, `reconnect_to_initial_nodes`, `poll_flush`,
//! `poll_recover`), `src/cluster_handling/async_connection/request.rs` (`choose_response`),
//! `src/cluster_handling/client.rs` (`ClusterClientBuilder`, `RetryParams`),
//! `src/errors/redis_error.rs` and `src/errors/server_error.rs` (`retry_method`).
//!
//! What is modelled:
//!
//! - `MOVED` (`RetryMethod::MovedRedirect`): the request is retried at once on the named node and
//!   the connection starts a full slot rebuild (`PollFlushAction::RebuildSlots`): there is no
//!   rate limit and no patching, every `MOVED` costs a `refresh_slots`. The rebuild runs before
//!   the redirected retry is sent: `Retry::Immediately` only builds the retry's future
//!   (`handle_retries`, `async_connection/mod.rs` lines 1498-1508 of 1.8.1), and `poll_flush`
//!   polls no request until the `Recover` state's rebuild is over (lines 1713-1742).
//! - `refresh_slots`: `CLUSTER SLOTS` to each `Connected` node of the connection map in turn
//!   until one answers (the map is a `HashMap`; the replay takes the nodes in order of first
//!   sight); if none does, a second pass reconnects and asks every node of the map again. On
//!   success the slot map is rebuilt from that one answer, nodes that left the topology are
//!   dropped from the map and a connection is made to every topology node.
//! - `ASK` (`AskRedirect`): `ASKING` and the command on the named node; no rebuild.
//! - A connection error (`Io`, connection dropped → `RetryMethod::Reconnect`): the node is
//!   marked `Reconnecting` and `reconnect_loop` repairs it in the background (backoff 50 ms
//!   doubling to 1 s, forever unless `max_connection_attempts`); the request is retried at once
//!   with its slot route. While the slot's node is not connected, `get_connection` sends to a
//!   random connected node (which answers `MOVED`); with no connection at all it fails with
//!   `ClusterConnectionNotFound`, which reconnects to the initial nodes
//!   (`ReconnectFromInitialConnections`). A redirect to a node that cannot be connected is
//!   `OperationTarget::NotFound` (`try_cmd_request`, mod.rs line 813): rebuild, then retry after
//!   a sleep (`choose_response`, `request.rs` lines 241-250). So a command for a dead node's
//!   slot costs a `MOVED` and two rebuilds, one for the `MOVED` and one for the failed connect.
//! - Connections are made only to nodes that answer (`connect_and_check`, mod.rs line 1829:
//!   connect, then `PING`): the redirect's `connect_check_and_add` (line 953), the rebuild's
//!   `refresh_connections_locked` (line 1059: each topology node's connection is checked with a
//!   `PING` or made anew, and a node that cannot be connected is left out of the map, lines
//!   1068 and 1085-1088) and each attempt of `reconnect_loop` (line 1162: the first at once, then
//!   after 50 ms doubling to 1 s). The replay asks the simulated node whether it would answer
//!   ([`Transport::probe`]). The rebuild's checks run concurrently (`buffer_unordered`, line
//!   1083) and the rebuild waits for the last of them: a silent node's costs its `PING`'s
//!   `response_timeout` on the connection held, then `connection_timeout` for a new one (the
//!   TCP connect is taken, the handshake is not answered), a node that answers or refuses next
//!   to nothing. While a rebuild runs the connection is in `Recover` and no request is polled
//!   (`poll_flush`, lines 1713-1742): a request sent meanwhile waits for its end, and fails with
//!   `Io` `TimedOut` if its overall timeout comes first (docs/FIDELITY.md, "redis-rs: a rebuild
//!   holds every request while it checks a silent node").
//! - A timeout (`Io` `TimedOut`, `RetryMethod::RetryImmediately`): no rebuild, no reconnect, the
//!   connection is kept, the request retried. `response_timeout` is unset by default: the
//!   library then waits on a silent node as long as it takes; the replay, which cannot wait,
//!   counts such a command as failed with `Io` `TimedOut` (set `response_timeout` or
//!   `socket_timeout` to model the wait).
//! - The overall timeout: `route_command` (mod.rs lines 302-305) bounds the whole request,
//!   retries, rebuilds and sleeps included, by `overall_response_timeout`, which defaults to
//!   `response_timeout` (`ClusterParams::from`, `client.rs` line 378). The request then fails
//!   with `Io` `TimedOut` at that deadline (`From<Elapsed>`, `aio/runtime.rs` line 189), whatever
//!   it was doing. So with the default the first timeout ends the request, and so does any
//!   retry's sleep; with `overall_response_timeout=none` a timeout is retried on the same node up
//!   to `retries` times.
//! - `retries` (default 16) bounds every retry of a request (redirects included). The sleeps of
//!   `RetryMethod::WaitAndRetry` (`CLUSTERDOWN`, `TRYAGAIN`, `MASTERDOWN`, `LOADING`,
//!   `server_error.rs` line 65) and of the `NotFound` path are waited out:
//!   `wait_time_for_retry(retry)` (client.rs lines 185-205) draws from `min_retry_wait` up to
//!   `min(max_retry_wait, 10·2^retry)` ms (at least `min_retry_wait` + 1), 1.28 s for the first
//!   seven retries by default: longer than any overall timeout under 1.28 s, so such a request
//!   fails with `Io` `TimedOut`. A rebuild that fails is taken up again at the next command (the
//!   library starts another at once, `poll_recover`, mod.rs line 1472).
//! - The initial nodes (`ClusterClient::new`'s list) are kept for the life of the connection, so
//!   the client never wedges: `startup_nodes` is their number.
//!
//! - **An incomplete `CLUSTER SLOTS` answer** (empty before the slots are assigned, or with
//!   holes) is taken as it is, as the library does: `query_slots` hands the parsed ranges to
//!   `build_slot_map`, which clears the map and fills what was given, with no coverage check
//!   (`redis/src/cluster_handling/async_connection/mod.rs` line 1362 at tag `redis-1.6.0`, the
//!   newest tag of the repository mirror read; `parse_slots` in `topology.rs` line 12 checks none
//!   either). `refresh_slots` then keeps only the connections of the answer's nodes (line 1079):
//!   after an empty answer none is left, the next request finds no connection
//!   (`ClusterConnectionNotFound`, line 974) and reconnects to the initial nodes, which are asked
//!   again. A slot the answer leaves out goes to a random connected node (lines 950-972). So a
//!   client started before slot assignment fails its commands until the answer covers the slot,
//!   and is never wedged.
//!
//! - **Connections someone closed** (`CLIENT KILL`, `replay/kills.rs`; RESP2, the default: with
//!   RESP3 the disconnect push would reconnect at once, not modelled): the driver task ends and
//!   nothing notices until a request meets the closed channel (`aio/multiplexed_connection.rs`
//!   l. 240-248): `BrokenPipe`, `RetryMethod::Reconnect`. `reconnect_loop` starts, but the retry
//!   goes out before its connection is made, to a random connected node whose `MOVED` starts a
//!   rebuild, whose `PING` repairs the node (`refresh_connections_locked`); `reconnect_loop` and
//!   the redirected retry (`connect_check_and_add`) each made a connection to it meanwhile,
//!   dropped after: three connections, one kept. A `CLUSTER SLOTS` over a killed connection fails
//!   at once.
//!
//! `node_address_map` (`ClusterClientBuilder::node_address_map`) maps announced addresses to
//! others at connection time only; the slot map keeps the announced addresses, so it is not an
//! `address_remap` and is not modelled. Not modelled either: replicas and read routing,
//! pipelines, multi-node commands, pub/sub resubscription.

mod topology;

use crate::node::NodeAddr;
use crate::redirect::Redirect;
use crate::replay::client::ClientModel;
use crate::replay::client::{numbered_once, Transport};
use crate::replay::client_state::{ClientSnapshot, ClientState};
use crate::replay::cluster::Reply;
use crate::replay::descriptor::{Hypotheses, ModelDescriptor};
use crate::replay::known_nodes::KnownNodes;
use crate::replay::options::{parse_count, ModelOption, ModelOptions};
use crate::replay::outcome::{ClientError, Failure, Outcome, ReplyErrors};
use crate::replay::release::{Coverage, Version};
use crate::replay::sequential::{boxed, SyncModel};
use crate::replay::{ReplayError, Routed, SimRng};
use crate::time::Timestamp;
use crate::timeline::{NodeIdx, SlotTable};

/// `redis-rs@1.8.1`: covers **1.8.0–1.8.x** (the model is written from the 1.8.1 crate; other
/// minor releases were not compared).
pub const DESCRIPTOR: ModelDescriptor = ModelDescriptor {
    name: "redis-rs@1.8.1",
    about:
        "redis-rs async ClusterConnection: every MOVED rebuilds the slot map, keeps initial_nodes",
    source: "redis-rs 1.8.1 `async_connection/mod.rs` l. 1498-1508 (`handle_retries`) and l. 813 (`try_cmd_request`)",
    options: OPTIONS,
    coverage: Some(Coverage {
        library: "redis-rs",
        from: Version::new(1, 8, 0),
        until: Version::new(1, 9, 0),
        range: "1.8.0–1.8.x",
    }),
    hypotheses: Hypotheses::Library { extra: &[] },
};

/// The redis-rs model's own options, by their `ClusterClientBuilder` names.
const OPTIONS: &[ModelOption] = &[
    ModelOption {
        name: "retries",
        doc: "retries of a request, redirects included (default 16)",
        default: "16",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "response_timeout",
        doc: "milliseconds a request waits on a silent node (default unset: waits forever); \
         same as socket_timeout",
        default: "",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "overall_response_timeout",
        doc:
            "milliseconds, or none: bound of a request with its retries (default: response_timeout)",
        default: "",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "connection_timeout",
        doc: "milliseconds to connect and be answered (default 1000): what a rebuild's check of a \
              silent node waits",
        default: "1000",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "min_retry_wait",
        doc: "milliseconds, lower bound of a retry's sleep (default 1280)",
        default: "1280",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "max_retry_wait",
        doc: "milliseconds, upper bound of a retry's sleep (default 655360)",
        default: "655360",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "max_connection_attempts",
        doc: "reconnect attempts before a node is dropped from the map (default unset: forever)",
        default: "",
        ..ModelOption::PLAIN
    },
];

/// redis-rs's errors, as the replay names them: the `RedisError` kind (`ErrorKind` /
/// `ServerErrorKind`) with what caused it.
const ERRORS: ReplyErrors = ReplyErrors::named([
    "Io (timed out)",
    "Io (connection refused)",
    "Server(ClusterDown)",
    "Server(Moved) (retries exhausted)",
]);
/// `ClusterConnectionNotFound`: no connection to send to.
const NOT_FOUND: ClientError = ClientError::new("ClusterConnectionNotFound", Failure::NoTopology);

/// `RetryParams::default().number_of_retries`.
const DEFAULT_RETRIES: u32 = 16;
/// `reconnect_loop`: first backoff.
const RECONNECT_BACKOFF_MS: u64 = 50;
/// `reconnect_loop`: backoff cap.
const RECONNECT_BACKOFF_MAX_MS: u64 = 1000;
/// `RetryParams::default()`: `factor` and `exponent_base` of `wait_time_for_retry`.
const RETRY_FACTOR: u64 = 10;
const RETRY_BASE: u64 = 2;
/// Seed of the generator behind `get_random_connection`.
const RNG_SEED: u64 = 0x7265_6469_732d_7273;

/// Builds `redis-rs@1.8.1`.
pub(super) fn build(
    _: Option<Version>,
    options: ModelOptions,
) -> Result<Box<dyn ClientModel>, ReplayError> {
    let name = DESCRIPTOR.name;
    options.check_for_model(name, OPTIONS)?;
    let ms = |v: &str| v.trim().parse::<u64>().ok().filter(|&n| n <= 3_600_000);
    let retries = options.library_value(
        "retries",
        DEFAULT_RETRIES,
        |v| parse_count(v, 100),
        "a number up to 100",
    )?;
    let response_timeout = options.library_value(
        "response_timeout",
        None,
        |v| ms(v).filter(|&n| n > 0).map(Some),
        "milliseconds in 1..=3600000",
    )?;
    // `None`: match response_timeout; `Some(None)`: no overall timeout.
    let overall = options.library_value(
        "overall_response_timeout",
        None,
        |v| match v {
            "none" | "None" => Some(Some(None)),
            v => ms(v).filter(|&n| n > 0).map(|n| Some(Some(n))),
        },
        "milliseconds in 1..=3600000, or none",
    )?;
    let connection_ms = options.library_value(
        "connection_timeout",
        1000,
        |v| ms(v).filter(|&n| n > 0),
        "milliseconds in 1..=3600000",
    )?;
    let min_wait = options.library_value("min_retry_wait", 1280, ms, "milliseconds")?;
    let max_wait = options.library_value("max_retry_wait", 655_360, ms, "milliseconds")?;
    if min_wait > max_wait {
        return Err(ReplayError::BadValue {
            option: "min_retry_wait".to_owned(),
            value: min_wait.to_string(),
            reason: format!("more than max_retry_wait ({max_wait})"),
        });
    }
    let max_connection_attempts = options.library_value(
        "max_connection_attempts",
        None,
        |v| v.parse::<u32>().ok().filter(|&n| n > 0).map(Some),
        "a positive number",
    )?;
    let timeout_ms = options.timeout_alias(name, "response_timeout", response_timeout, |t| t)?;
    // `ClusterParams::from` (client.rs line 378): unset, the overall timeout is the response's.
    let overall_ms = match overall {
        None => timeout_ms,
        Some(o) => o,
    };
    Ok(boxed(Client::new(
        name,
        &options.startup_nodes,
        Config {
            retries,
            timeout_ms,
            overall_ms,
            connection_ms,
            min_wait,
            max_wait,
            max_connection_attempts,
        },
    )))
}

struct Config {
    retries: u32,
    timeout_ms: Option<u64>,
    /// `overall_response_timeout` in effect, ms (`None`: no bound).
    overall_ms: Option<u64>,
    /// `connection_timeout`, ms.
    connection_ms: u64,
    min_wait: u64,
    max_wait: u64,
    max_connection_attempts: Option<u32>,
}

/// A `ConnState` of the connection map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conn {
    Connected,
    /// Under repair by `reconnect_loop`: next attempt at `next`.
    Reconnecting {
        next: Timestamp,
    },
    /// Left by a failed second pass of `refresh_slots`.
    Connecting,
}

/// How one attempt ended.
enum Step {
    /// The request is over.
    Done(Outcome),
    /// Retry (counting one retry) after this error, on this redirect or on the slot route.
    Retry(ClientError, Option<(NodeIdx, bool)>),
    /// Retry on the slot route after `wait_time_for_retry`'s sleep (`Retry::AfterSleep`).
    RetryAfterSleep(ClientError),
}

/// What the client holds for one address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    /// Its entry of the connection map (`None`: none).
    conn: Option<Conn>,
    /// `reconnect_loop`'s next backoff.
    backoff: u64,
    /// `reconnect_loop`'s attempts since the node last answered.
    attempts: u32,
    /// When its connection was made (or found alive by a `PING`).
    opened: Timestamp,
}

struct Client {
    name: String,
    cfg: Config,
    rng: SimRng,
    /// The addresses the client knows, numbered, with each one's entry of the connection map.
    nodes: KnownNodes<Node>,
    initial: Vec<NodeIdx>,
    /// The slot map: slot → primary.
    table: SlotTable,
    initialized: bool,
    /// A `RebuildSlots` not yet done (or whose last try failed).
    rebuild: bool,
    /// Until when (virtual µs) the connection is in `Recover`, a rebuild running: no request
    /// is polled meanwhile (`poll_flush`, mod.rs lines 1713-1742).
    recover_until_us: u64,
    stats: ClientState,
}

impl Client {
    fn new(name: &str, seeds: &[NodeAddr], cfg: Config) -> Client {
        let mut c = Client {
            name: name.to_owned(),
            cfg,
            rng: SimRng::new(RNG_SEED),
            nodes: KnownNodes::new(Node {
                conn: None,
                backoff: RECONNECT_BACKOFF_MS,
                attempts: 0,
                opened: Timestamp(0),
            }),
            initial: Vec::new(),
            table: SlotTable::new(),
            initialized: false,
            rebuild: false,
            recover_until_us: 0,
            stats: ClientState::default(),
        };
        c.initial = numbered_once(seeds, |a| c.intern(a));
        c.stats.startup_nodes = c.initial.len();
        c
    }

    /// The number of `addr` (`None` only past 65,535 addresses: the address is then unusable).
    fn intern(&mut self, addr: &NodeAddr) -> Option<NodeIdx> {
        self.nodes.intern(addr)
    }

    fn conn(&self, i: NodeIdx) -> Option<Conn> {
        self.nodes.get(i).conn
    }

    fn set_connected(&mut self, i: NodeIdx, now: Timestamp) {
        if self.conn(i) != Some(Conn::Connected) {
            self.stats.new_connections += 1;
            self.nodes.get_mut(i).opened = now;
        }
        self.nodes.get_mut(i).conn = Some(Conn::Connected);
    }

    /// Whether node `i`'s connection is one someone closed since it was made (`CLIENT KILL`):
    /// with RESP2 (the default) the driver task ends and nothing else notices until a request
    /// or a `PING` meets the closed channel (`aio/multiplexed_connection.rs` l. 240-248).
    fn killed(&self, i: NodeIdx, net: &dyn Transport) -> bool {
        let n = self.nodes.get(i);
        n.conn == Some(Conn::Connected)
            && self.nodes.addr(i).is_some_and(|a| net.killed(a, n.opened))
    }

    /// The nodes whose connection-map entry passes `keep`.
    fn nodes_where(&self, keep: impl Fn(Option<Conn>) -> bool) -> Vec<NodeIdx> {
        self.nodes.filter(|n| keep(n.conn))
    }

    /// `get_connection` for the slot route: the primary if connected, else a random connected
    /// node.
    fn route(&mut self, cmd: Routed) -> Option<NodeIdx> {
        let owner = self.table.get(cmd.slot);
        if let Some(owner) = owner.filter(|&o| self.conn(o) == Some(Conn::Connected)) {
            return Some(owner);
        }
        let connected = self.nodes_where(|c| c == Some(Conn::Connected));
        if connected.is_empty() {
            return None;
        }
        let k = self.rng.index_below(connected.len());
        Some(connected[k])
    }

    /// `get_redirected_connection` and the attempt on it.
    fn redirected(
        &mut self,
        to: NodeIdx,
        asking: bool,
        cmd: Routed,
        net: &mut dyn Transport,
    ) -> Step {
        let prev = self.conn(to);
        if prev == Some(Conn::Connected) {
            return self.attempt(to, asking, None, cmd, net);
        }
        // connect_check_and_add: a new connection, kept (and counted) only if it works.
        let now = net.now();
        let n = self.nodes.get_mut(to);
        n.conn = Some(Conn::Connected);
        n.opened = now;
        self.attempt(to, asking, Some(prev), cmd, net)
    }

    /// Sends on `node`; `fresh` holds the map entry before a connection made for this attempt.
    fn attempt(
        &mut self,
        node: NodeIdx,
        asking: bool,
        fresh: Option<Option<Conn>>,
        cmd: Routed,
        net: &mut dyn Transport,
    ) -> Step {
        let now = net.now();
        // A connection someone closed (`CLIENT KILL`) fails at once, before it was used
        // (`BrokenPipe`, no byte written), or loses the reply it waited for.
        let mut killed = fresh.is_none() && self.killed(node, net);
        let reply = match self.nodes.addr(node) {
            _ if killed => Reply::ConnectionError,
            Some(addr) => {
                let reply = net.send(addr, cmd, asking);
                if fresh.is_none() && net.killed(addr, now) {
                    killed = true;
                    Reply::ConnectionError
                } else {
                    reply
                }
            }
            None => Reply::ConnectionError,
        };
        let answered = !matches!(reply, Reply::ConnectionError | Reply::Timeout);
        if let (Some(prev), true) = (fresh, answered) {
            if prev != Some(Conn::Connected) {
                self.stats.new_connections += 1;
            }
            self.reset_backoff(node);
        }
        match reply {
            Reply::Ok => {
                self.reset_backoff(node);
                Step::Done(Outcome::Ok)
            }
            Reply::Redirect(Redirect::Moved { to, .. }) => {
                self.rebuild = true;
                Step::Retry(
                    ERRORS.too_many_redirects,
                    self.intern(&to).map(|n| (n, false)),
                )
            }
            Reply::Redirect(Redirect::Ask { to, .. }) => Step::Retry(
                ERRORS.too_many_redirects,
                self.intern(&to).map(|n| (n, true)),
            ),
            // RetryMethod::WaitAndRetry.
            Reply::ClusterDown => Step::RetryAfterSleep(ERRORS.cluster_down),
            Reply::ConnectionError | Reply::Timeout => {
                let class = ERRORS.of_reply(&reply);
                if let Some(prev) = fresh {
                    // The connection could not be made: OperationTarget::NotFound, rebuild,
                    // then retry on the slot route after a sleep.
                    self.nodes.get_mut(node).conn = prev;
                    self.rebuild = true;
                    return Step::RetryAfterSleep(class);
                }
                if reply == Reply::Timeout {
                    return if self.cfg.timeout_ms.is_some() {
                        // RetryImmediately keeps the routing (the overall timeout ends it).
                        Step::Retry(class, asking.then_some((node, true)))
                    } else {
                        // No response_timeout: the library would wait (see the module doc).
                        Step::Done(Outcome::Failed(class))
                    };
                }
                if killed {
                    // `reconnect_loop` starts, but its connection needs round trips the retry
                    // does not wait for: the retry goes to a random connected node (a `MOVED`
                    // and a rebuild follow), the rebuild's `PING` repairs the node. Before the
                    // rebuild, `reconnect_loop`'s connection and the redirected retry's own
                    // (`connect_check_and_add`, polled once before the rebuild starts) are made
                    // to the live node and dropped: three connections where one is kept.
                    if !matches!(self.conn(node), Some(Conn::Reconnecting { .. })) {
                        let answers = self.nodes.addr(node).cloned().map(|a| net.probe(&a));
                        if matches!(answers, Some(Ok(()))) {
                            self.stats.new_connections += 2;
                        }
                    }
                    self.nodes.get_mut(node).conn = Some(Conn::Reconnecting {
                        next: Timestamp(now.0.saturating_add(1)),
                    });
                } else {
                    self.start_reconnect(node, now, net);
                }
                Step::Retry(class, None)
            }
        }
    }

    /// `wait_time_for_retry(retry)` (client.rs lines 185-205), ms.
    fn wait_time_for_retry(&mut self, retry: u32) -> u64 {
        let base = RETRY_BASE
            .saturating_pow(retry)
            .saturating_mul(RETRY_FACTOR);
        let (min, max) = (self.cfg.min_wait, self.cfg.max_wait);
        // cluster_retry_wait_upper_ms: exclusive, always above min.
        let upper = base
            .max(min.saturating_add(1))
            .min(max)
            .max(min.saturating_add(1));
        min + self.rng.below(upper - min)
    }

    /// One request, with `choose_response`'s retries, within the overall timeout.
    fn request(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        let start = net.now();
        let deadline = self.cfg.overall_ms.map(|ms| start.0.saturating_add(ms));
        let timed_out = Outcome::Failed(ERRORS.of_reply(&Reply::Timeout));
        let mut redirect: Option<(NodeIdx, bool)> = None;
        let mut last = ERRORS.connection;
        for retry in 0..=self.cfg.retries {
            self.poll_reconnects(net.now(), net);
            let step = match redirect.take() {
                Some((to, asking)) => self.redirected(to, asking, cmd, net),
                None => match self.route(cmd) {
                    Some(node) => self.attempt(node, false, None, cmd, net),
                    None => {
                        // ClusterConnectionNotFound → ReconnectFromInitialConnections.
                        let _ = self.reconnect_to_initial_nodes(net);
                        Step::Retry(NOT_FOUND, None)
                    }
                },
            };
            // PollFlushAction::RebuildSlots: the rebuild runs before the retry is polled.
            if self.rebuild && self.refresh_slots(net).is_ok() {
                self.rebuild = false;
            }
            let sleep = match step {
                Step::Done(o) => return o,
                Step::Retry(class, next) => {
                    last = class;
                    redirect = next;
                    false
                }
                Step::RetryAfterSleep(class) => {
                    last = class;
                    true
                }
            };
            if retry == self.cfg.retries {
                break;
            }
            if sleep {
                let wait = self.wait_time_for_retry(retry + 1);
                let now = net.now().0;
                if let Some(d) = deadline.filter(|&d| now.saturating_add(wait) >= d) {
                    net.sleep(d.saturating_sub(now));
                    return timed_out;
                }
                net.sleep(wait);
            }
            if let Some(d) = deadline.filter(|&d| net.now().0 >= d) {
                // Its overall timeout fired meanwhile (during a rebuild, say): it failed then;
                // the rebuild goes on (`recover_until_us`).
                net.resume_at_us(d.saturating_mul(1000));
                return timed_out;
            }
        }
        Outcome::Failed(last)
    }
}

impl SyncModel for Client {
    fn name(&self) -> &str {
        &self.name
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.cfg.timeout_ms
    }

    fn execute(&mut self, cmd: Routed, net: &mut dyn Transport) -> Outcome {
        let now_us = net.now_us();
        if now_us < self.recover_until_us {
            // A rebuild runs (another request's): this one is not polled until it is over, and
            // its overall timeout runs meanwhile.
            let wait = self.recover_until_us - now_us;
            if let Some(overall) = self.cfg.overall_ms.map(|ms| ms.saturating_mul(1000)) {
                if wait >= overall {
                    net.sleep_us(overall);
                    return Outcome::Failed(ERRORS.of_reply(&Reply::Timeout));
                }
            }
            net.sleep_us(wait);
        }
        if !self.initialized {
            // ClusterConnection::new: create_initial_connections, then refresh_slots.
            if let Err(class) = self.reconnect_to_initial_nodes(net) {
                return Outcome::Failed(class);
            }
        }
        if self.rebuild {
            // Requests wait while the connection is in `Recover`; a failed rebuild fails them.
            match self.refresh_slots(net) {
                Ok(()) => self.rebuild = false,
                Err(class) => return Outcome::Failed(class),
            }
        }
        self.request(cmd, net)
    }

    fn state(&self) -> ClientState {
        self.stats
    }

    fn snapshot(&self) -> ClientSnapshot {
        let open = self.nodes.count(|n| n.conn == Some(Conn::Connected));
        ClientSnapshot::of_table(&self.table, open)
    }
}
