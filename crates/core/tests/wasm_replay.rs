//! The replay engine in a real browser: the core built for `wasm32-unknown-unknown`, run by
//! `wasm-bindgen-test-runner` in headless Chromium (see `.cargo/config.toml`).
//!
//! - The correctness checks are those of `tests/replay_twin.rs` (included below as a module): the
//!   synthetic incidents of `tests/replay.rs` replayed through the client models, every count of
//!   the report pinned to the exact number the native build gives, so both platforms give one
//!   answer.
//! - `replay_throughput` (ignored by default; `scripts/bench-wasm` runs it in release mode) times
//!   the workloads and models of `benches/replay.rs` with `performance.now()` and prints simulated
//!   commands per second per case. It reports, it asserts nothing about time.
//!
//! ```sh
//! cargo test -p slotscope-core --target wasm32-unknown-unknown --test wasm_replay
//! ```
#![cfg(target_arch = "wasm32")]

use slotscope_core::replay::{
    model, replay, ModelOptions, SimCluster, SimClusterBuilder, Workload, WorkloadSpec,
};
use slotscope_core::{NodeAddr, SlotRange, Timestamp};
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[path = "replay_twin.rs"]
mod twin;

#[wasm_bindgen_test]
fn workloads_are_the_same_as_native() {
    twin::check_workloads();
}

#[wasm_bindgen_test]
fn incident1_redis_py_5_wedges_at_10_s() {
    twin::check_incident1_redis_py_5();
}

#[wasm_bindgen_test]
fn incident1_redis_py_8_recovers() {
    twin::check_incident1_redis_py_8();
}

#[wasm_bindgen_test]
fn incident1_redis_py_8_socket_timeout() {
    twin::check_incident1_redis_py_8_socket_timeout();
}

#[wasm_bindgen_test]
fn incident1_ideal() {
    twin::check_incident1_ideal();
}

#[wasm_bindgen_test]
fn incident2_address_remap() {
    twin::check_incident2_address_remap();
}

#[wasm_bindgen_test]
fn incident2_plain() {
    twin::check_incident2_plain();
}

// --- Throughput: the cases of benches/replay.rs ---------------------------------------------------

const T0: u64 = 1_700_000_000_000;
const COMMANDS: u32 = 200_000;
/// Timed runs per case: at least this many, and at least `MIN_CASE_MS` of them in all.
const MIN_RUNS: usize = 10;
const MIN_CASE_MS: f64 = 2000.0;
/// Untimed runs per case before the timed ones, for at least this long.
const WARM_UP_MS: f64 = 500.0;

fn addr(s: &str) -> NodeAddr {
    s.parse().expect("address")
}

/// Incident 2's layout: two shards, half the slots each.
fn bench_cluster() -> SimCluster {
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

/// 200 000 `zrevrange` commands on 100 000 keys: 10 000/s for 20 s.
fn bench_workload() -> Workload {
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

/// One replay of the whole workload; returns the commands issued (so that the work is used).
fn replay_once(cluster: &SimCluster, w: &Workload, name: &str, remap: bool) -> u64 {
    let mut opts = ModelOptions::new(addr("10.0.0.1:6379"));
    if remap {
        opts.set("address_remap", "10.0.0.1:6379").expect("option");
    }
    let mut client = model(name, opts).expect("model");
    std::hint::black_box(replay(cluster, w, client.as_mut())).commands
}

#[wasm_bindgen_test]
#[ignore = "benchmark: scripts/bench-wasm runs it (release build)"]
fn replay_throughput() {
    throughput("", &bench_workload());
}

/// The same with 64 commands in flight (a test of its own: one test's synchronous run must
/// stay under the driver's 30 s wait for the page).
#[wasm_bindgen_test]
#[ignore = "benchmark: scripts/bench-wasm runs it (release build)"]
fn replay_throughput_in_flight() {
    throughput(" in-flight 64", &bench_workload().with_in_flight(64));
}

/// Times every model on `w` and prints simulated commands per second (`shape` names the case).
fn throughput(shape: &str, w: &Workload) {
    let window = web_sys::window().expect("a window");
    let performance = window.performance().expect("window.performance");
    let cluster = bench_cluster();
    console_log!(
        "replay throughput in {}: {COMMANDS} commands per run",
        window.navigator().user_agent().unwrap_or_default()
    );
    for name in ["redis-py@5.0.0", "redis-py@8.0.0", "ideal"] {
        for remap in [false, true] {
            if remap && name == "ideal" {
                continue;
            }
            let id = format!("{name}{}{shape}", if remap { " address_remap" } else { "" });
            // Untimed runs first, for at least `WARM_UP_MS`: the allocator's pages, and V8's
            // optimising tier (the module starts in its baseline compiler).
            let warm_up = performance.now();
            while performance.now() - warm_up < WARM_UP_MS {
                replay_once(&cluster, w, name, remap);
            }
            let mut ms = Vec::new();
            let mut total = 0.0;
            while ms.len() < MIN_RUNS || total < MIN_CASE_MS {
                let start = performance.now();
                let issued = replay_once(&cluster, w, name, remap);
                let took = performance.now() - start;
                assert!(issued > 0 && issued <= u64::from(COMMANDS));
                ms.push(took);
                total += took;
            }
            ms.sort_by(f64::total_cmp);
            let per_sec = |ms: f64| f64::from(COMMANDS) / ms / 1000.0;
            let median = ms[ms.len() / 2];
            console_log!(
                "wasm replay/{id}: {:.2} M commands/s (median of {} runs, {median:.1} ms/run; \
             best {:.2} M/s, worst {:.2} M/s)",
                per_sec(median),
                ms.len(),
                per_sec(ms[0]),
                per_sec(ms[ms.len() - 1]),
            );
        }
    }
}
