//! The replay engine in a real browser: the core built for `wasm32-unknown-unknown`, run by
//! `wasm-bindgen-test-runner` in headless Chromium (see `.cargo/config.toml`).
//!
//! - The correctness checks are those of `tests/replay_twin.rs` (included below as a module): the
//!   synthetic incidents of `tests/replay.rs` replayed through the client models, every count of
//!   the report pinned to the exact number the native build gives, so both platforms give one
//!   answer.
//! - `replay_throughput_*` (ignored by default; `scripts/bench-wasm` runs them in release mode)
//!   time the cases of `benches/replay.rs` (`tests/bench_cases`), one test per shape and mode, with
//!   `performance.now()` and print simulated commands per second per case. They report, they
//!   assert nothing about time.
//!
//! ```sh
//! cargo test -p slotscope-core --target wasm32-unknown-unknown --test wasm_replay
//! ```
#![cfg(target_arch = "wasm32")]

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

#[path = "bench_cases/mod.rs"]
mod cases;

use cases::{Mode, COMMANDS, MODELS};

/// Timed runs per case: at least this many, and at least `MIN_CASE_MS` of them in all.
const MIN_RUNS: usize = 3;
const MIN_CASE_MS: f64 = 1000.0;
/// Untimed runs per case before the timed ones, for at least this long.
const WARM_UP_MS: f64 = 300.0;

// One test per shape and mode: one test's synchronous run must stay under the driver's 30 s wait
// for the page.

#[wasm_bindgen_test]
#[ignore = "benchmark: scripts/bench-wasm runs it (release build)"]
fn replay_throughput_lanes_plain() {
    throughput(false, Mode::Plain);
}

#[wasm_bindgen_test]
#[ignore = "benchmark: scripts/bench-wasm runs it (release build)"]
fn replay_throughput_lanes_remap() {
    throughput(false, Mode::Remap);
}

#[wasm_bindgen_test]
#[ignore = "benchmark: scripts/bench-wasm runs it (release build)"]
fn replay_throughput_lanes_dead_node() {
    throughput(false, Mode::DeadNode);
}

#[wasm_bindgen_test]
#[ignore = "benchmark: scripts/bench-wasm runs it (release build)"]
fn replay_throughput_in_flight_plain() {
    throughput(true, Mode::Plain);
}

#[wasm_bindgen_test]
#[ignore = "benchmark: scripts/bench-wasm runs it (release build)"]
fn replay_throughput_in_flight_remap() {
    throughput(true, Mode::Remap);
}

#[wasm_bindgen_test]
#[ignore = "benchmark: scripts/bench-wasm runs it (release build)"]
fn replay_throughput_in_flight_dead_node() {
    throughput(true, Mode::DeadNode);
}

/// Times every model in `mode` (64 in flight when `in_flight`, else lanes) and prints simulated
/// commands per second, each case named as the native benchmark names it.
fn throughput(in_flight: bool, mode: Mode) {
    let window = web_sys::window().expect("a window");
    let performance = window.performance().expect("window.performance");
    let cluster = cases::cluster(mode);
    let w = cases::workload(in_flight);
    let shape = if in_flight { "in-flight 64" } else { "lanes" };
    console_log!(
        "replay throughput in {}: {COMMANDS} commands per run",
        window.navigator().user_agent().unwrap_or_default()
    );
    for name in MODELS {
        let Some(opts) = cases::options(name, mode) else {
            continue;
        };
        let id = format!("{name} {} {shape}", mode.label());
        // Untimed runs first, for at least `WARM_UP_MS`: the allocator's pages, and V8's
        // optimising tier (the module starts in its baseline compiler).
        let warm_up = performance.now();
        while performance.now() - warm_up < WARM_UP_MS {
            cases::replay_once(&cluster, &w, name, &opts);
        }
        let mut ms = Vec::new();
        let mut total = 0.0;
        while ms.len() < MIN_RUNS || total < MIN_CASE_MS {
            let start = performance.now();
            let issued = cases::replay_once(&cluster, &w, name, &opts);
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
