//! Replay throughput: simulated commands per second through each client model, on a two-shard
//! cluster (incident 2's layout), with and without an `address_remap` that sends every slot to one
//! node (every command then meets the redirect and rebuild machinery), in the two application
//! shapes: sequential lanes, and 64 commands in flight with a 250 µs round trip (the
//! event-driven engine at its busiest: every command a task, replies landing in time order).
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use slotscope_core::replay::{
    model, replay, ModelOptions, SimCluster, SimClusterBuilder, Workload, WorkloadSpec,
};
use slotscope_core::{NodeAddr, SlotRange, Timestamp};

const T0: u64 = 1_700_000_000_000;
const COMMANDS: u32 = 200_000;

fn addr(s: &str) -> NodeAddr {
    s.parse().expect("address")
}

fn cluster() -> SimCluster {
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
    b.build()
}

fn workload() -> Workload {
    // 200 000 commands: 10 000/s for 20 s.
    Workload::generate(&WorkloadSpec {
        start: Timestamp(T0),
        duration_ms: 20_000,
        rate_per_sec: COMMANDS / 20,
        keys: 100_000,
        key_prefix: "device_imp".into(),
        command: "zrevrange".into(),
        seed: 7,
    })
    .expect("workload")
}

fn bench_models(c: &mut Criterion) {
    let cluster = cluster();
    let w = workload();
    let mut g = c.benchmark_group("replay");
    g.throughput(Throughput::Elements(u64::from(COMMANDS)));
    g.sample_size(20);
    let timed = w.clone().with_in_flight(64);
    for (shape, w) in [("", &w), (" in-flight 64", &timed)] {
        for name in ["redis-py@5.0.0", "redis-py@8.0.0", "ideal"] {
            for remap in [false, true] {
                if remap && name == "ideal" {
                    continue;
                }
                let id = format!("{name}{}{shape}", if remap { " address_remap" } else { "" });
                g.bench_with_input(BenchmarkId::from_parameter(id), &remap, |b, &remap| {
                    b.iter(|| {
                        let mut opts = ModelOptions::new(addr("10.0.0.1:6379"));
                        if remap {
                            opts.set("address_remap", "10.0.0.1:6379").expect("option");
                        }
                        let mut client = model(name, opts).expect("model");
                        black_box(replay(&cluster, w, client.as_mut()))
                    })
                });
            }
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = bench_models
}
criterion_main!(benches);
