//! The replay's throughput cases, shared by the native benchmark (`benches/replay.rs`) and the
//! browser one (`tests/wasm_replay.rs`), so both time the same work.
//!
//! A two-shard cluster (incident 2's layout) and 200 000 `zrevrange` commands at 10 000/s, in three
//! modes: **plain**; **remap**, every slot's address translated to one node (each library's own
//! translation option, through `address_remap`), so every command meets the redirect and rebuild
//! machinery; **dead node**, the second shard's node refusing connections for 3 s of the 20. Each
//! in two application shapes: sequential lanes, and 64 commands in flight (250 µs round trip).

use slotscope_core::replay::{
    model, replay, FaultKind, FaultWindow, ModelOptions, SimCluster, SimClusterBuilder, Workload,
    WorkloadSpec,
};
use slotscope_core::{NodeAddr, SlotRange, TimeSpan, Timestamp};

const T0: u64 = 1_700_000_000_000;

/// Commands per replay.
pub const COMMANDS: u32 = 200_000;

/// Every model the replay has, at the release its registry names first.
pub const MODELS: [&str; 10] = [
    "redis-py@5.0.0",
    "redis-py@8.1.0",
    "ideal",
    "ioredis@6.0.0",
    "node-redis@6.3.1",
    "glide@2.5.2",
    "go-redis@9.8.0",
    "jedis@5.1.0",
    "lettuce@6.3.2",
    "redis-rs@1.8.1",
];

/// What the cluster and the client do (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing happens.
    Plain,
    /// Every address translated to the first node.
    Remap,
    /// The second node refuses connections from +8 s to +11 s.
    DeadNode,
}

impl Mode {
    /// Every mode.
    #[allow(dead_code)] // the browser's benchmark times each mode in a test of its own
    pub const ALL: [Mode; 3] = [Mode::Plain, Mode::Remap, Mode::DeadNode];

    /// Its name in a case's id.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Remap => "remap",
            Mode::DeadNode => "dead node",
        }
    }
}

fn addr(s: &str) -> NodeAddr {
    s.parse().expect("address")
}

/// The cluster of `mode`: two shards, half the slots each.
pub fn cluster(mode: Mode) -> SimCluster {
    let mut b = SimClusterBuilder::new();
    b.layout(
        Timestamp(T0),
        &[
            (
                SlotRange::try_from((0u16, 8191u16)).expect("range"),
                addr("10.0.0.1:6379"),
            ),
            (
                SlotRange::try_from((8192u16, 16383u16)).expect("range"),
                addr("10.0.0.2:6379"),
            ),
        ],
        &[],
    );
    if mode == Mode::DeadNode {
        b.fault(FaultWindow {
            node: addr("10.0.0.2:6379"),
            span: TimeSpan::new(Timestamp(T0 + 8_000), Timestamp(T0 + 11_000)),
            kind: FaultKind::ConnectionError,
        });
    }
    b.build()
}

/// 200 000 `zrevrange` commands on 100 000 keys: 10 000/s for 20 s, in lanes; with
/// `in_flight`, 64 at most in flight.
pub fn workload(in_flight: bool) -> Workload {
    let w = Workload::generate(&WorkloadSpec {
        start: Timestamp(T0),
        duration_ms: 20_000,
        rate_per_sec: COMMANDS / 20,
        keys: 100_000,
        key_prefix: "device_imp".into(),
        command: "zrevrange".into(),
        seed: 7,
    })
    .expect("workload");
    if in_flight {
        w.with_in_flight(64)
    } else {
        w
    }
}

/// The options of `name` in `mode`; `None` when the model has no address translation (remap).
pub fn options(name: &str, mode: Mode) -> Option<ModelOptions> {
    let mut opts = ModelOptions::new(addr("10.0.0.1:6379"));
    if mode == Mode::Remap {
        opts.set("address_remap", "10.0.0.1:6379").ok()?;
        model(name, opts.clone()).ok()?;
    }
    Some(opts)
}

/// One replay of `w` through `name`; returns the commands issued (so that the work is used).
pub fn replay_once(cluster: &SimCluster, w: &Workload, name: &str, opts: &ModelOptions) -> u64 {
    let mut client = model(name, opts.clone()).expect("model");
    std::hint::black_box(replay(cluster, w, client.as_mut())).commands
}
