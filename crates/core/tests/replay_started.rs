//! A command a synchronous model decides when it starts (`ClientModel::start`,
//! `Started::At`): the driver keeps its outcome, not a task, and the application has it at the
//! moment its task would have given it. Checked against the boxed task every model also has
//! (`ClientModel::execute`), on the benchmark's cluster in its three modes.

#[allow(dead_code)] // the benchmark's workload and runner are not used here
#[path = "bench_cases/mod.rs"]
mod cases;

use cases::{Mode, MODELS};
use slotscope_core::replay::{
    model, replay, ClientModel, ClientSnapshot, ClientState, Execution, Net, Outcome, Routed,
    Timing, Workload, WorkloadSpec,
};
use slotscope_core::Timestamp;

/// A model with the default `start`: every command a boxed task the driver polls.
struct AsTask(Box<dyn ClientModel>);

impl ClientModel for AsTask {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn execute<'a>(&'a self, cmd: Routed, net: &'a Net<'_>) -> Execution<'a> {
        self.0.execute(cmd, net)
    }

    fn execute_instant(&self, cmd: Routed, net: &Net<'_>) -> Outcome {
        self.0.execute_instant(cmd, net)
    }

    fn state(&self) -> ClientState {
        self.0.state()
    }

    fn snapshot(&self) -> ClientSnapshot {
        self.0.snapshot()
    }

    fn socket_timeout_ms(&self) -> Option<u64> {
        self.0.socket_timeout_ms()
    }

    fn set_concurrency(&mut self, in_flight: u32) {
        self.0.set_concurrency(in_flight);
    }
}

/// 1,000 commands a second for the 20 s of the benchmark's cluster (its dead node from +8 s to
/// +11 s), `n` in flight, exchanges of `rtt_us`.
fn workload(n: u32, rtt_us: u32) -> Workload {
    Workload::generate(&WorkloadSpec {
        start: Timestamp(1_700_000_000_000),
        duration_ms: 20_000,
        rate_per_sec: 1_000,
        keys: 5_000,
        key_prefix: "device_imp".into(),
        command: "zrevrange".into(),
        seed: 11,
    })
    .expect("workload")
    .with_in_flight(n)
    .with_timing(Timing {
        rtt_us,
        service_us: Vec::new(),
        default_us: 10,
    })
}

#[test]
fn a_command_decided_when_it_starts_lands_when_its_task_would() {
    let mut compared = 0;
    let mut failed = 0;
    for mode in Mode::ALL {
        let cluster = cases::cluster(mode);
        // Few in flight with slow exchanges (commands wait for a place, replies overlap) and
        // many with fast ones.
        for w in [workload(3, 2_500), workload(64, 250)] {
            for name in MODELS {
                let Some(opts) = cases::options(name, mode) else {
                    continue;
                };
                let mut direct = model(name, opts.clone()).expect("model");
                let mut boxed = AsTask(model(name, opts).expect("model"));
                let started = replay(&cluster, &w, direct.as_mut());
                let polled = replay(&cluster, &w, &mut boxed);
                assert_eq!(started, polled, "{name}, {}", mode.label());
                compared += 1;
                failed += started.failed;
            }
        }
    }
    // Every model in every mode it has (go-redis, Jedis, Lettuce and redis-rs have no remap),
    // and the dead node fails some commands: the outcomes compared are not all successes.
    assert_eq!(compared, 2 * (3 * MODELS.len() - 4));
    assert!(failed > 0);
}
