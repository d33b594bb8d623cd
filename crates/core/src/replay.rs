//! Replay: a workload run against a simulated cluster through a model of a client library, to
//! show what a given client would have done during a recorded topology change.
//!
//! Everything is deterministic and sans-IO: time is virtual ([`Timestamp`] milliseconds taken from
//! the workload), randomness comes from a small seeded generator ([`SimRng`]) owned by the caller.
//!
//! - [`SimCluster`] (built with [`SimClusterBuilder`] from a recording's lines or from explicit
//!   layouts) answers a routed command at a virtual time with a [`Reply`]: `OK`, `MOVED`, `ASK`,
//!   or a connection error / timeout inside a [`FaultWindow`].
//! - [`Workload`]: commands (name and key) at times, generated from a [`WorkloadSpec`].
//! - [`ClientModel`]: a client library's routing state machine; [`model`] builds one of
//!   [`MODELS`] (each a [`ModelDescriptor`] its model's file exports) by name, or by library
//!   release (`redis-py@8.1.0`, see [`resolve`]), from [`ModelOptions`].
//! - [`replay()`]: runs the workload and returns a [`ReplayReport`] (counts in collector units,
//!   MOVED share per command, whether the client ended wedged, a per-second timeline). A command
//!   ends with an [`Outcome`]: success, or a [`ClientError`] named as its library names it, with
//!   its common [`Failure`] class.

mod client;
mod client_state;
mod cluster;
mod descriptor;
mod fault_edges;
mod key_layout;
mod kills;
mod known_nodes;
mod models;
mod moments;
mod net;
mod options;
mod outcome;
mod places;
mod pool;
mod registry;
mod release;
mod replicas;
mod report;
mod run;
mod sequential;
mod slot_cache;
mod version;
mod wakes;

pub use client::{ClientModel, Execution, Started, Transport};
pub use client_state::{ClientSnapshot, ClientState};
pub(crate) use cluster::DOWN_PAST_END_MS;
pub use cluster::{
    Answer, AskPolicy, FaultKind, FaultWindow, Reply, SimCluster, SimClusterBuilder,
};
pub use descriptor::{Build, Hypotheses, ModelDescriptor};
pub use key_layout::key_layout;
pub use models::MODELS;
pub use moments::{replay_majority, replay_over_moments, MOMENTS};
pub use net::{Delivery, Net, Parked, TaskId, Until};
pub use options::{parse_secs_ms, ModelOption, ModelOptions};
pub use outcome::{ClientError, Failure, Outcome, ReplyErrors};
pub use registry::{descriptor, model, model_names};
pub use release::{Coverage, Version};
pub use report::{
    CommandStats, Moments, NodeStats, Outcomes, ReplayReport, Second, OUTCOME_BUCKET_MS,
};
pub use run::replay;
pub use sequential::{Sequential, SyncModel};
pub use version::{coverage, covers, ranges, resolve, Resolved, VersionError};

use crate::slot::Slot;
use crate::time::Timestamp;

/// Why a replay could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// No model has this name.
    #[error("unknown client model `{0}` (known: {known})", known = model_names())]
    UnknownModel(String),
    /// A library release no model covers, or no release given (see [`resolve`]).
    #[error(transparent)]
    Version(#[from] VersionError),
    /// No model has an option of this name.
    #[error("unknown model option `{0}`")]
    UnknownOption(String),
    /// The option is not one of this model's.
    #[error("model `{model}` has no option `{option}` (see `slotscope replay --help` for each model's options)")]
    OptionOfOtherModel {
        /// The model.
        model: String,
        /// The option given.
        option: String,
    },
    /// The option's value could not be read.
    #[error("bad value `{value}` for model option `{option}`: {reason}")]
    BadValue {
        /// The option.
        option: String,
        /// The value given.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// The model does not support this option value.
    #[error("model `{model}` does not support {what}")]
    Unsupported {
        /// The model.
        model: String,
        /// The option and value.
        what: String,
    },
    /// The workload parameters describe no command.
    #[error("bad workload: {0}")]
    BadWorkload(String),
}

/// A small seeded generator (SplitMix64): deterministic, owned by the caller, never global.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimRng {
    state: u64,
}

impl SimRng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> SimRng {
        SimRng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }

    /// A number in `0..n` (`0` when `n == 0`), with the negligible bias of a modulo.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// An index in `0..len` (`0` when `len` is 0 or 1): `below(len)`.
    pub fn index_below(&mut self, len: usize) -> usize {
        let n = u64::try_from(len).unwrap_or(u64::MAX);
        usize::try_from(self.below(n))
            .unwrap_or(0)
            .min(len.saturating_sub(1))
    }

    /// Shuffles `v` in place (Fisher–Yates from the end: `rand.Perm`, `Collections.shuffle`).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.index_below(i + 1);
            v.swap(i, j);
        }
    }
}

/// The SplitMix64 finaliser: a well-mixed 64-bit hash of `z`.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One command of a workload, as a client routes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Routed {
    /// The key's slot.
    pub slot: Slot,
    /// The key's index in the workload's key space (the per-key migration coin uses it).
    pub key: u32,
}

/// One command of a workload at its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkCommand {
    /// When the application issues it.
    pub t: Timestamp,
    /// Index into [`Workload::names`].
    pub name: u16,
    /// Index of the key (see [`Workload::key_name`]).
    pub key: u32,
}

/// Commands (name and key) at times, in time order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Command names, as `INFO commandstats` names them (lower case).
    pub names: Vec<String>,
    /// Key prefix: key `n` is `prefix:{n}` (the number is the hash tag).
    pub key_prefix: String,
    /// The slot of every key, by key index.
    pub key_slots: Vec<Slot>,
    /// The commands, in time order.
    pub commands: Vec<WorkCommand>,
    /// How many commands the application can have in flight at once (its tasks or threads
    /// sharing the one client; at least 1). A command scheduled while every one of them waits out a
    /// timeout is not issued.
    pub concurrency: u32,
    /// How the application issues commands: sequential lanes (the default) or tasks with a cap
    /// on commands in flight.
    pub shape: Shape,
    /// How long exchanges take (used with [`Shape::InFlight`]).
    pub timing: Timing,
}

/// How the application issues its commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Shape {
    /// `concurrency` lanes, commands one after another in the order issued: a command's effects
    /// on the client count from when it was issued; only waiting (timeouts, sleeps) takes time.
    #[default]
    Lanes,
    /// Each command is a task sent at its time, at most this many in flight (a semaphore): each
    /// exchange takes a round trip plus the command's service time, its effects land when its
    /// reply arrives, and a command whose time comes while the cap is reached waits for a free
    /// place (commands whose time passed meanwhile are not issued: no burst after a stall).
    InFlight(u32),
}

/// How long one exchange takes, in microseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timing {
    /// The network round trip (and the client's own overhead per exchange).
    pub rtt_us: u32,
    /// Service time per command name (by index into [`Workload::names`]; missing: `default_us`).
    pub service_us: Vec<u32>,
    /// Service time of a command without its own figure, and of `CLUSTER SLOTS`.
    pub default_us: u32,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            rtt_us: DEFAULT_RTT_US,
            service_us: Vec::new(),
            default_us: DEFAULT_SERVICE_US,
        }
    }
}

/// The default round trip: a loopback or same-zone network and a client's own work.
pub const DEFAULT_RTT_US: u32 = 250;
/// The default service time of a command.
pub const DEFAULT_SERVICE_US: u32 = 10;

/// Parameters of a generated workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadSpec {
    /// Time of the first command.
    pub start: Timestamp,
    /// Length of the workload in milliseconds.
    pub duration_ms: u64,
    /// Commands per second (evenly spaced).
    pub rate_per_sec: u32,
    /// Number of distinct keys (`prefix:{0}` … `prefix:{keys-1}`), each command picks one at random.
    pub keys: u32,
    /// Key prefix.
    pub key_prefix: String,
    /// Command name (`zadd`, `hgetall`, …).
    pub command: String,
    /// Seed of the key choice.
    pub seed: u64,
}

impl Workload {
    /// Generates the workload `spec` describes: `rate_per_sec` evenly spaced commands per second
    /// for `duration_ms`, each on a key drawn uniformly with a [`SimRng`] seeded by `spec.seed`.
    pub fn generate(spec: &WorkloadSpec) -> Result<Workload, ReplayError> {
        if spec.rate_per_sec == 0 || spec.keys == 0 || spec.duration_ms == 0 {
            return Err(ReplayError::BadWorkload(
                "rate, keys and duration must be positive".into(),
            ));
        }
        let rate = u64::from(spec.rate_per_sec);
        let count = spec
            .duration_ms
            .checked_mul(rate)
            .map(|n| n / 1000)
            .ok_or_else(|| ReplayError::BadWorkload("too many commands".into()))?;
        if count > 100_000_000 {
            return Err(ReplayError::BadWorkload(format!(
                "{count} commands is more than the 100 million a replay takes"
            )));
        }
        let key_slots = (0..spec.keys)
            .map(|n| Slot::for_key(key_name(&spec.key_prefix, n).as_bytes()))
            .collect();
        let mut rng = SimRng::new(spec.seed);
        let keys = u64::from(spec.keys);
        let mut commands = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        for i in 0..count {
            let offset = i.saturating_mul(1000) / rate;
            let key = u32::try_from(rng.below(keys)).unwrap_or(0);
            commands.push(WorkCommand {
                t: Timestamp(spec.start.0.saturating_add(offset)),
                name: 0,
                key,
            });
        }
        Ok(Workload {
            names: vec![spec.command.to_ascii_lowercase()],
            key_prefix: spec.key_prefix.clone(),
            key_slots,
            commands,
            concurrency: 1,
            shape: Shape::Lanes,
            timing: Timing::default(),
        })
    }

    /// The same workload with its commands named after `mix` (command name, weight: e.g. the
    /// calls a recording shows): each command's name is drawn in proportion to the weights with
    /// a [`SimRng`] seeded by `seed`. An empty mix or one of zero weights changes nothing.
    #[must_use]
    pub fn with_mix(mut self, mix: &[(String, u64)], seed: u64) -> Workload {
        let total: u64 = mix.iter().map(|(_, w)| *w).sum();
        if total == 0 || mix.len() > usize::from(u16::MAX) {
            return self;
        }
        let mut rng = SimRng::new(seed ^ 0x6D69_785F_6E61_6D65);
        for c in &mut self.commands {
            let mut draw = rng.below(total);
            let mut name = 0;
            for (i, (_, w)) in mix.iter().enumerate() {
                if draw < *w {
                    name = i;
                    break;
                }
                draw -= w;
            }
            c.name = u16::try_from(name).unwrap_or(0);
        }
        self.names = mix.iter().map(|(n, _)| n.to_ascii_lowercase()).collect();
        self
    }

    /// The same workload with `n` commands in flight at most (`n` of at least 1).
    #[must_use]
    pub fn with_concurrency(mut self, n: u32) -> Workload {
        self.concurrency = n.max(1);
        self
    }

    /// The same workload issued as tasks with at most `n` commands in flight ([`Shape::InFlight`],
    /// `n` of at least 1).
    #[must_use]
    pub fn with_in_flight(mut self, n: u32) -> Workload {
        self.shape = Shape::InFlight(n.max(1));
        self
    }

    /// The same commands at the times of a Poisson process of the same rate (independent
    /// arrivals, exponential gaps drawn with a [`SimRng`] seeded by `seed`), from the same start:
    /// an application whose commands come from many independent requests rather than a timer.
    /// Several commands may then fall in the same millisecond and go out together.
    #[must_use]
    pub fn with_poisson_arrivals(mut self, seed: u64) -> Workload {
        let (Some(first), Some(last)) = (self.commands.first(), self.commands.last()) else {
            return self;
        };
        let start = first.t.0;
        let n = self.commands.len();
        // The even schedule's mean gap, in µs: its span over its gaps.
        let span_us = crate::float::from_u64((last.t.0 - start).saturating_mul(1000));
        let gaps = crate::float::from_u64(u64::try_from(n - 1).unwrap_or(u64::MAX));
        let mean_gap_us = if n > 1 { span_us / gaps } else { 0.0 };
        let mut rng = SimRng::new(seed ^ 0x6172_7269_7661_6C73);
        let mut at_us = 0.0_f64;
        for c in &mut self.commands {
            c.t = Timestamp(start.saturating_add((at_us / 1000.0) as u64));
            // 1 - u is in (0, 1]: its logarithm is finite.
            let u = crate::float::from_u64(rng.next_u64() >> 11) / crate::float::from_u64(1 << 53);
            at_us += -(1.0 - u).ln() * mean_gap_us;
        }
        self
    }

    /// The same workload with exchanges taking `timing`.
    #[must_use]
    pub fn with_timing(mut self, timing: Timing) -> Workload {
        self.timing = timing;
        self
    }

    /// The name of key `n`: `prefix:{n}`.
    pub fn key_name(&self, n: u32) -> String {
        key_name(&self.key_prefix, n)
    }
}

fn key_name(prefix: &str, n: u32) -> String {
    format!("{prefix}:{{{n}}}")
}
