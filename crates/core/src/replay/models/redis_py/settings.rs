//! The options of redis-py's models, as `RedisCluster` takes them: their list (with the checks
//! redis-py's constructor makes as they are given) and the [`Settings`] a client is built with.

use crate::node::NodeAddr;
use crate::replay::options::{
    parse_bool, parse_count, parse_cpu_ms, parse_mapped_addr, ModelOption, ModelOptions,
};
use crate::replay::ReplayError;

/// The redis-py models' own options (besides `startup_nodes` and `socket_timeout`).
pub(super) const OPTIONS: &[ModelOption] = &[
    ModelOption {
        name: "reinitialize_steps",
        doc: "full re-initialisation every this many MOVED (default 5, 0 never)",
        default: "5",
        aliases: &[],
        check: Some(|v| steps(v).map(drop)),
    },
    ModelOption {
        name: "dynamic_startup_nodes",
        doc: "replace startup_nodes by the discovered nodes (default true; 5.0.0 always does)",
        default: "true",
        aliases: &[],
        check: Some(|v| flag(v).map(drop)),
    },
    ModelOption {
        name: "address_remap",
        doc: "HOST:PORT: every address of a CLUSTER SLOTS answer becomes this one",
        default: "none",
        aliases: &[],
        check: Some(|v| parse_mapped_addr(v).map(drop)),
    },
    ModelOption {
        name: "cluster_error_retry_attempts",
        doc: "retries after a connection error or timeout (default 3 before 8.0.0, 10 from 8.0.0; \
              alias retry_attempts)",
        default: "10",
        aliases: &["retry_attempts"],
        check: Some(|v| attempts(v).map(drop)),
    },
    ModelOption {
        name: "max_connections",
        doc: "connections per node at most (default 2**31 in 4.4-7.4, 100 from 8.0.0)",
        default: "100",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "initialize_cpu_ms",
        doc:
            "the client's own time to build its slot cache from an answer, holding its event loop, \
              with commands in flight (default 21 for 5.0.0, 6.5 for 7.2+)",
        default: "6.5",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "command_cpu_ms",
        doc: "the time of the COMMAND table every initialisation fetches and parses, holding the \
              event loop, with commands in flight (default 50 for 5.0.0, 53 for 7.2+)",
        default: "53",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "connect_cpu_ms",
        doc: "the client's own time to open a connection and run its handshake, holding the \
              event loop (default 0.5 for 5.0.0, 1.3 for 7.2+)",
        default: "1.3",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "reply_cpu_ms",
        doc: "the client's own time to send a command and read its reply, holding the event \
              loop (default 0.09 for 5.0.0, 0.15 for 7.2+)",
        default: "0.15",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "disconnect_cpu_ms",
        doc: "the client's own time to close one open connection at a reset, holding the event \
              loop (default 0.04 for 5.0.0, 0.057 for 7.2+)",
        default: "0.057",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "gc_full_ms",
        doc: "the time of one full collection of CPython's cyclic garbage collector, holding the \
              event loop (default 10.4 for 5.0.0, 10.1 for 7.2+)",
        default: "10.1",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "gc_full_every",
        doc: "initialisations per full collection, the slot caches they build being what fills \
              the oldest generation (a decimal; default 4.6 for 5.0.0, 20 for 7.2+; 0 never)",
        default: "20",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "random_seed",
        doc: "seed of the generator behind Python's `random` (the random primary a command goes \
              to without a default node); replays under other seeds show how often a storm that \
              a few such draws set off ignites (unset: the model's own seed)",
        default: "",
        aliases: &[],
        check: Some(|v| seed(v).map(drop)),
    },
    ModelOption {
        name: "error_cpu_ms",
        doc: "the client's own time for an attempt that times out, and for an initialisation \
              that fails (the exception raised and handled), holding the event loop (default \
              0.3)",
        default: "0.3",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "refused_cpu_ms",
        doc: "the client's own time for an attempt whose new connection was refused (the command \
              routed, the connect tried, the ConnectionError raised and handled), holding the \
              event loop (default 0.11 for 5.0.0, 0.2 for 7.2+)",
        default: "0.2",
        ..ModelOption::PLAIN
    },
    ModelOption {
        name: "closed_error_cpu_ms",
        doc: "the client's own time, beyond the command's (reply_cpu_ms), for an attempt whose \
              open connection ended under it (its reply lost to a reset or a CLIENT KILL): the \
              ConnectionError raised and handled, holding the event loop (default 0.007 for \
              5.0.0, 0.083 for 7.2+)",
        default: "0.083",
        ..ModelOption::PLAIN
    },
];

/// The client's own CPU time per step (microseconds), the release's defaults or as given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cpu {
    /// `initialize_cpu_ms`: building the slot cache from an answer.
    pub(super) init_us: u64,
    /// `command_cpu_ms`: the `COMMAND` table of an initialisation.
    pub(super) command_us: u64,
    /// `connect_cpu_ms`: opening a connection and its handshake.
    pub(super) connect_us: u64,
    /// `reply_cpu_ms`: sending one command and reading its reply.
    pub(super) reply_us: u64,
    /// `error_cpu_ms`: an attempt that timed out, an initialisation that failed.
    pub(super) error_us: u64,
    /// `closed_error_cpu_ms`: an attempt whose open connection ended under it, beyond
    /// `reply_us`.
    pub(super) closed_us: u64,
    /// `refused_cpu_ms`: an attempt whose new connection was refused, the whole of it.
    pub(super) refused_us: u64,
    /// `disconnect_cpu_ms`: closing one open connection at a reset.
    pub(super) disconnect_us: u64,
    /// `gc_full_ms`: one full collection of the cyclic garbage collector.
    pub(super) gc_full_us: u64,
    /// `gc_full_every`, in thousandths: initialisations per full collection (0: none).
    pub(super) gc_every_milli: u64,
}

/// `reinitialize_steps`.
fn steps(v: &str) -> Result<u32, String> {
    v.parse().map_err(|_| "not a number".to_owned())
}

/// `cluster_error_retry_attempts`.
fn attempts(v: &str) -> Result<u32, String> {
    parse_count(v, 100).ok_or_else(|| "not a number up to 100".to_owned())
}

/// `random_seed`.
fn seed(v: &str) -> Result<u64, String> {
    v.parse()
        .map_err(|_| "not a number from 0 to 2**64-1".to_owned())
}

/// `dynamic_startup_nodes`.
fn flag(v: &str) -> Result<bool, String> {
    parse_bool(v).ok_or_else(|| "expected true or false".to_owned())
}

/// A redis-py client's settings, read from the options given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Settings {
    /// Every this many MOVED replies the client does a full re-initialisation (0: never).
    pub(super) reinitialize_steps: u32,
    /// After an initialisation, replace `startup_nodes` by the discovered nodes.
    pub(super) dynamic_startup_nodes: bool,
    /// `address_remap`: every address of a `CLUSTER SLOTS` answer becomes this one.
    pub(super) address_remap: Option<NodeAddr>,
    /// `cluster_error_retry_attempts`: retries of a command after a connection error / timeout.
    pub(super) retry_attempts: u32,
    /// `max_connections` per node.
    pub(super) max_connections: usize,
    /// The client's own CPU time per step.
    pub(super) cpu: Cpu,
    /// `random_seed`, when given.
    pub(super) random_seed: Option<u64>,
}

impl Settings {
    /// `dynamic_startup_nodes` as given (true by default).
    pub(super) fn dynamic_startup_nodes(o: &ModelOptions) -> Result<bool, ReplayError> {
        o.parsed_value("dynamic_startup_nodes", true, flag)
    }

    /// The settings `o` gives, with the release's defaults `retry_attempts`, `max_connections`
    /// and `cpu`.
    pub(super) fn read(
        o: &ModelOptions,
        retry_attempts: u32,
        max_connections: usize,
        cpu: Cpu,
    ) -> Result<Settings, ReplayError> {
        let us = "milliseconds in [0, 10000]";
        Ok(Settings {
            reinitialize_steps: o.parsed_value("reinitialize_steps", 5, steps)?,
            dynamic_startup_nodes: Settings::dynamic_startup_nodes(o)?,
            address_remap: o.parsed_value("address_remap", None, parse_mapped_addr)?,
            retry_attempts: o.parsed_value(
                "cluster_error_retry_attempts",
                retry_attempts,
                attempts,
            )?,
            max_connections: o.library_value(
                "max_connections",
                max_connections,
                |v| v.parse::<usize>().ok().filter(|&n| n > 0),
                "a positive number",
            )?,
            cpu: Cpu {
                init_us: o.library_value("initialize_cpu_ms", cpu.init_us, parse_cpu_ms, us)?,
                command_us: o.library_value("command_cpu_ms", cpu.command_us, parse_cpu_ms, us)?,
                connect_us: o.library_value("connect_cpu_ms", cpu.connect_us, parse_cpu_ms, us)?,
                reply_us: o.library_value("reply_cpu_ms", cpu.reply_us, parse_cpu_ms, us)?,
                error_us: o.library_value("error_cpu_ms", cpu.error_us, parse_cpu_ms, us)?,
                refused_us: o.library_value("refused_cpu_ms", cpu.refused_us, parse_cpu_ms, us)?,
                closed_us: o.library_value(
                    "closed_error_cpu_ms",
                    cpu.closed_us,
                    parse_cpu_ms,
                    us,
                )?,
                disconnect_us: o.library_value(
                    "disconnect_cpu_ms",
                    cpu.disconnect_us,
                    parse_cpu_ms,
                    us,
                )?,
                gc_full_us: o.library_value("gc_full_ms", cpu.gc_full_us, parse_cpu_ms, us)?,
                gc_every_milli: o.library_value(
                    "gc_full_every",
                    cpu.gc_every_milli,
                    parse_cpu_ms,
                    "a number in [0, 10000]",
                )?,
            },
            random_seed: o.parsed_value("random_seed", None, |v| seed(v).map(Some))?,
        })
    }
}

/// The client's own CPU time per step, measured on the real releases (CPython 3.11, the 2-core
/// machine the fidelity matrix runs on):
///
/// - `init_us`, one `NodesManager.initialize()` on a live answer (`INFO` and `CLUSTER SLOTS` in
///   5.0.0, `CLUSTER SLOTS` in 7.2+, then a Python loop over the 16384 slots, twice in 7.2+, with
///   a list per slot in 5.0.0), and what the failed command that called for it costs;
/// - `command_us`, `commands_parser.initialize()`: `COMMAND` on loopback and the parsing of its
///   reply (about 240 commands) into the command table.
///
///   Timed alone (`tests/scenarios/init_cost.py`, 3 runs of 100 calls per release and server, a
///   live 3-master cluster of Redis 7.0 and of Valkey 8.1, 2026-12-04; the median of the six
///   medians, the reconnect each call makes taken off as `connect_us`): `init_us` 5.0.0 21 ms
///   (22.1 - 0.5), 8.1.0 6.5 ms (7.8 - 1.3); `command_us` 5.0.0 50 ms (50.5 - 0.5), 8.1.0 53 ms
///   (54.5 - 1.3). The machine's speed drifts by a sixth between runs. Inside the application
///   (`SLOTSCOPE_APP_TRACE` of `tests/scenarios/app.py`, the same day), the same figures: 8.1.0
///   retrying on a dead node, 75 cycles, `CLUSTER SLOTS` answer to slot cache 4.5 ms (the trace's
///   own 4.4 ms taken off), slot cache to the next retry 61 ms (`COMMAND`, its connection, the
///   retry); 5.0.0 on a dead default node, 120 cycles, answer to slot cache 20.3 ms; 5.0.0's first
///   `COMMAND` tables, 59 and 69 ms to the next command. (An earlier estimate from the
///   application's CPU time over its initialisations, 13 and 41 ms for 5.0.0, 37 ms for 8.1.0's
///   pair, made the modelled client cycle about twice as fast as the real one on a dead node.)
/// - `connect_us`, `Connection.connect()` and `disconnect()` to a Redis 7.0 node, its handshake
///   included, process CPU time over 300 in a row: 5.0.0 0.47 ms, 7.4.0 1.15 ms, 8.0.0 1.43 ms,
///   8.1.0 1.27 ms (2026-12-03);
/// - `reply_us`, one `ZADD` through `RedisCluster` awaited in a row, process CPU time over 4000:
///   5.0.0 0.093 ms, 7.4.0 0.125 ms, 8.1.0 0.154 ms (2026-12-03);
/// - `error_us`, an attempt that fails with a connection error (the refused connect or the
///   closed stream, the exception through `_execute_command`'s handler and the retry loop): 8.1.0
///   retrying on a dead node with 6 in flight, the application's trace, 203 failures one after
///   the other in the same loop turn: median 0.30 ms apart (quartiles 0.30-0.40; 2026-12-04). Not
///   timed on 5.0.0, whose every failure closes the client: the same figure. Timed on refused
///   connects, it now stands for timeouts and failed initialisations: a refused connect and an
///   attempt whose open connection ended under it cost far less, and have their own figures:
/// - `closed_us`, a `ZADD` whose connection's stream is at its end when the reply is read (as a
///   reset's `disconnect()` leaves it), raised through `_execute_command`'s handler with no
///   retry, `close()` a no-op as after a reset, process CPU time, median of 200, less a `ZADD`'s
///   (`reply_us`): 5.0.0 0.005 and 0.009 ms, 8.1.0 0.082 and 0.083 ms, Redis 7.0, two runs
///   each (2026-12-07, `cpu_cost.py`). The application's traces agree: such failures back to
///   back 0.06 ms apart (5.0.0, 8 in a reset) and 0.13-0.15 ms (8.1.0, 301 on a killed node),
///   trace writes included, where refused connects came 0.49 ms apart (884);
/// - `refused_us`, a `ZADD` routed to a node whose port refuses connections, the whole attempt
///   (routing, the connect tried, the `ConnectionError` through the handler, no retry), process
///   CPU time, median of 200, Redis 7.0: 5.0.0 0.089 and 0.133 ms, 8.1.0 0.191 and 0.212 ms
///   (2026-12-07, a probe and `cpu_cost.py`). The model charged such an attempt a whole
///   connection with its handshake (`connect_us`) and `error_us`: 0.55 and 1.6 ms;
/// - `disconnect_us`, one open connection closed by `NodesManager.aclose()` (`close()` in
///   5.0.0), process CPU time over 10 closes of 150 connections each, Valkey 8.1 and Redis 7.0:
///   5.0.0 0.038-0.041 ms, 8.1.0 0.055-0.059 ms (2026-12-04). `connect_us` includes it.
/// - `gc_full_us` and `gc_every_milli`, CPython's full collections (generation 2): the slot
///   cache an initialisation builds outlives two younger collections, and once the objects so
///   promoted since the last full collection pass a quarter of the oldest generation, the next
///   collection is a full one, its time growing with the whole heap. 5.0.0's cache holds a
///   list per slot, so its initialisations fill the oldest generation fast; 7.2+'s holds far
///   fewer objects. Timed through `gc.callbacks` around 60 re-initialisations as `cpu_cost.py`
///   runs them, against a 3-master Redis 7.0 cluster, twice (2026-12-07): 5.0.0 13 full
///   collections, 9.3-11.3 ms each (median 10.4), one per 4.6 initialisations; 8.1.0 3, 9.5-10.6
///   ms, one per 20. The medians the other figures take leave these out (with them, 5.0.0's slot
///   cache took 8.0-9.5 ms in 33 cycles of 40 and 18.3-21.5 ms in the other 7; with the collector
///   off, 6.9-8.5 ms in all 40).
pub(super) const CPU_PY5: Cpu = Cpu {
    init_us: 21_000,
    command_us: 50_000,
    connect_us: 500,
    reply_us: 90,
    error_us: 300,
    closed_us: 7,
    refused_us: 110,
    disconnect_us: 40,
    gc_full_us: 10_400,
    gc_every_milli: 4_600,
};
/// [`CPU_PY5`]'s figures for 7.2+.
pub(super) const CPU_PY8: Cpu = Cpu {
    init_us: 6_500,
    command_us: 53_000,
    connect_us: 1_300,
    reply_us: 150,
    error_us: 300,
    closed_us: 83,
    refused_us: 200,
    disconnect_us: 57,
    gc_full_us: 10_100,
    gc_every_milli: 20_000,
};
