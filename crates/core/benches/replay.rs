//! Replay throughput: simulated commands per second through every client model, on a two-shard
//! cluster (incident 2's layout), in three modes (plain; every address translated to one node, so
//! every command meets the redirect and rebuild machinery; the second node dead for 3 s) and two
//! application shapes (sequential lanes; 64 commands in flight with a 250 µs round trip, the
//! event-driven engine at its busiest). The cases are `tests/bench_cases`, which the browser's
//! benchmark (`tests/wasm_replay.rs`, `scripts/bench-wasm`) times too. A model without address
//! translation has no remap case. Select cases with criterion's filter, e.g.
//! `cargo bench -p slotscope-core --bench replay -- redis-py`.
#![allow(missing_docs)] // criterion's macros generate undocumented items

#[path = "../tests/bench_cases/mod.rs"]
mod cases;

use cases::{Mode, COMMANDS, MODELS};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn bench_models(c: &mut Criterion) {
    let mut g = c.benchmark_group("replay");
    g.throughput(Throughput::Elements(u64::from(COMMANDS)));
    g.sample_size(10);
    for (shape, in_flight) in [("lanes", false), ("in-flight 64", true)] {
        let w = cases::workload(in_flight);
        for mode in Mode::ALL {
            let cluster = cases::cluster(mode);
            for name in MODELS {
                let Some(opts) = cases::options(name, mode) else {
                    continue;
                };
                let id = format!("{name} {} {shape}", mode.label());
                g.bench_with_input(BenchmarkId::from_parameter(id), &opts, |b, opts| {
                    b.iter(|| cases::replay_once(&cluster, &w, name, opts));
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
