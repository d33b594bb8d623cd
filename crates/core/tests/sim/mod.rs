//! Synthetic incidents for the replay tests: two nodes A (10.0.0.1:6379) and B (10.0.0.2:6379),
//! the founding incidents' layouts, workloads and a one-call replay.

#![allow(dead_code)] // each test binary uses a part

use slotscope_core::replay::Failure;
use slotscope_core::replay::{
    model, replay, FaultKind, FaultWindow, ModelOptions, ReplayReport, SimCluster,
    SimClusterBuilder, Timing, Workload, WorkloadSpec,
};
use slotscope_core::{float, NodeAddr, SlotRange, TimeSpan, Timestamp};

/// Time 0 of every synthetic incident.
pub const T0: u64 = 1_700_000_000_000;
/// Node A, the first master and the seed.
pub const A: &str = "10.0.0.1:6379";
/// Node B, added by incident 1, the second master of incident 2.
pub const B: &str = "10.0.0.2:6379";

/// An address from text.
pub fn addr(s: &str) -> NodeAddr {
    s.parse().unwrap()
}

/// Slots `a..=b`.
pub fn range(a: u16, b: u16) -> SlotRange {
    SlotRange::try_from((a, b)).unwrap()
}

/// `secs` after [`T0`].
pub fn at(secs: u64) -> Timestamp {
    Timestamp(T0 + secs * 1000)
}

/// Incident 1: A owns every slot; A fails (`kind`) for 2 s at 10 s; B appears at 20 s and slots
/// 8192-16383 migrate to it over 2 s.
pub fn incident1_with(kind: FaultKind) -> SimCluster {
    let (a, b) = (addr(A), addr(B));
    let mut builder = SimClusterBuilder::new();
    builder.layout(at(0), &[(range(0, 16383), a.clone())], &[]);
    builder.fault(FaultWindow {
        node: a.clone(),
        span: TimeSpan::new(at(10), at(12)),
        kind,
    });
    // B joins at 20 s, named by the migration's layout (not added before: it would be listed
    // by `CLUSTER NODES` from the start).
    let migrating: Vec<_> = range(8192, 16383)
        .slots()
        .map(|s| (s, a.clone(), b.clone()))
        .collect();
    builder.layout(at(20), &[(range(0, 16383), a.clone())], &migrating);
    builder.layout(
        at(22),
        &[(range(0, 8191), a.clone()), (range(8192, 16383), b.clone())],
        &[],
    );
    builder.build()
}

/// Incident 1 with A silent (timeouts) for 2 s.
pub fn incident1() -> SimCluster {
    incident1_with(FaultKind::Timeout)
}

/// Incident 2's layout, a builder to add to: A and B own half the slots each, from the start.
pub fn incident2_builder() -> SimClusterBuilder {
    let mut builder = SimClusterBuilder::new();
    builder.layout(
        at(0),
        &[(range(0, 8191), addr(A)), (range(8192, 16383), addr(B))],
        &[],
    );
    builder
}

/// Incident 2: A and B own half the slots each, from the start.
pub fn incident2() -> SimCluster {
    incident2_builder().build()
}

/// A builder whose layout from 0 s gives A slots 0-16382 and B slot 16383 only: B is known and
/// owns almost nothing, the start of every reshard below.
pub fn b_owns_one_slot() -> SimClusterBuilder {
    let mut builder = SimClusterBuilder::new();
    builder.layout(
        at(0),
        &[(range(0, 16382), addr(A)), (range(16383, 16383), addr(B))],
        &[],
    );
    builder
}

/// B owns slot 16383 only until `secs`, then 8192-16383 at once.
pub fn reshard_at(secs: u64) -> SimCluster {
    let mut builder = b_owns_one_slot();
    builder.layout(
        at(secs),
        &[(range(0, 8191), addr(A)), (range(8192, 16383), addr(B))],
        &[],
    );
    builder.build()
}

/// A reshard between known nodes: B owns only slot 16383 until 20 s, then 8192-16383 at once.
pub fn reshard() -> SimCluster {
    reshard_at(20)
}

/// Asserts that about half of `r`'s commands (B's half of incident 2's keys) failed, every one
/// with `error` after too many redirects: a translation that sends every node's traffic to A.
pub fn assert_other_half_fails(r: &ReplayReport, error: &str) {
    let b_half = float::from_u64(r.failed) / float::from_u64(r.commands);
    assert!((0.4..0.6).contains(&b_half), "failed share {b_half}");
    assert_eq!(r.errors[error], r.failed, "{:?}", r.errors);
    assert_eq!(r.failures[&Failure::TooManyRedirects], r.failed);
}

/// Incident 2's layout with B refusing connections from 10 s to 12 s.
pub fn b_refuses_for_two_seconds() -> SimCluster {
    incident2_with_fault(B, 10, 12, FaultKind::ConnectionError)
}

/// Incident 2's layout with `node` failing (`kind`) from `from` to `to` seconds.
pub fn incident2_with_fault(node: &str, from: u64, to: u64, kind: FaultKind) -> SimCluster {
    let mut builder = incident2_builder();
    builder.fault(FaultWindow {
        node: addr(node),
        span: TimeSpan::new(at(from), at(to)),
        kind,
    });
    builder.build()
}

/// `rate` `command`s per second for `secs` from [`T0`], on 10,000 keys `device_imp:{n}`, seed 42.
pub fn workload_of(secs: u64, rate: u32, command: &str) -> Workload {
    Workload::generate(&WorkloadSpec {
        start: at(0),
        duration_ms: secs * 1000,
        rate_per_sec: rate,
        keys: 10_000,
        key_prefix: "device_imp".into(),
        command: command.into(),
        seed: 42,
    })
    .unwrap()
}

/// 100 ZADD per second for `secs`.
pub fn workload(secs: u64) -> Workload {
    workload_of(secs, 100, "zadd")
}

/// `secs` of ZADD at `rate`/s as the tasks of an application with up to 113 in flight, on a
/// loopback's round trip (58 µs) and a 10 µs service: the remapped redis-py 5.0.0 storms of
/// docs/FIDELITY.md.
pub fn paced(secs: u64, rate: u32) -> Workload {
    workload_of(secs, rate, "zadd")
        .with_in_flight(113)
        .with_timing(Timing {
            rtt_us: 58,
            service_us: Vec::new(),
            default_us: 10,
        })
}

/// redis-py 5.0.0's options for those storms: seeded at A, every address of an answer remapped
/// to A, its own costs as `tests/scenarios/cpu_cost.py` timed them on the development machine
/// (2026-12-07), the collections' left at the release's defaults.
pub fn remapped_py5_options() -> ModelOptions {
    let mut opts = ModelOptions::new(addr(A));
    for (k, v) in REMAPPED_PY5 {
        opts.set(k, v).unwrap();
    }
    opts
}

/// The options of [`remapped_py5_options`] besides the seed, as `key=value` pairs.
pub const REMAPPED_PY5: [(&str, &str); 5] = [
    ("initialize_cpu_ms", "8.4"),
    ("command_cpu_ms", "21.2"),
    ("connect_cpu_ms", "0.25"),
    ("reply_cpu_ms", "0.064"),
    ("address_remap", A),
];

/// Replays `w` on `cluster` through `name` seeded at A, with the options `set`.
pub fn run(cluster: &SimCluster, w: &Workload, name: &str, set: &[(&str, &str)]) -> ReplayReport {
    let mut opts = ModelOptions::new(addr(A));
    for (k, v) in set {
        opts.set(k, v).unwrap();
    }
    let mut client = model(name, opts).unwrap();
    let report = replay(cluster, w, client.as_mut());
    // Every failure has a common class, and the names count the same failures.
    assert_eq!(report.failures.values().sum::<u64>(), report.failed);
    assert_eq!(report.errors.values().sum::<u64>(), report.failed);
    report
}

/// Commands of `w` issued at or after `t`.
pub fn commands_from(w: &Workload, t: Timestamp) -> u64 {
    u64::try_from(w.commands.iter().filter(|c| c.t >= t).count()).unwrap()
}

/// Commands of `w` issued in `[from, to)`.
pub fn commands_within(w: &Workload, from: Timestamp, to: Timestamp) -> u64 {
    u64::try_from(
        w.commands
            .iter()
            .filter(|c| c.t >= from && c.t < to)
            .count(),
    )
    .unwrap()
}
