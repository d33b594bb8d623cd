//! Pre-flight (issue 25): a planned change checked before it is made. A [`Plan`] (JSON, or a
//! short form: [`short_form`]) is carried out on paper on the cluster a recording ends with
//! ([`Schedule::of`]): every step checked against the cluster as the steps before leave it, and
//! written out as slot layouts and faults over time, what the replay's simulated cluster takes.
//!
//!
//! Then [`predict`]: each client group of the recording ([`clients`]: its rate, its command mix,
//! the models that may stand for it) replayed against the schedule's simulated cluster
//! ([`simulate`]), a [`Verdict`] per model, why, and the changes that, replayed, help
//! ([`remedy`](candidates)).

mod basis;
mod clients;
mod inline;
mod plan;
mod prediction;
mod remedy;
mod schedule;
mod simulation;
mod start;
mod verdict;

pub use basis::{Basis, BasisBuilder, BasisError};
pub use clients::{clients, Assumption, Chosen, Client, ModelChoice, MAX_IN_FLIGHT, UNEXPLAINED};

pub use inline::short_form;
pub use plan::{
    parse_duration, parse_range, promotion_ms, Action, Plan, PlanError, Slots, Step,
    DEFAULT_MOVE_RATE, DEFAULT_NODE_TIMEOUT_MS, ELECTION_MS,
};
pub use prediction::{predict, GroupPrediction, Prediction, PreflightError, Remedy, Run, Setup};
pub use remedy::{candidates, half_speed, Candidate, RemedyKind};
pub use schedule::{PlannedFault, PlannedFaultKind, PlannedLayout, Schedule};
pub use simulation::{address_of, simulate, Frame, SimulationError, ADDED_NODE_PORT};
pub use start::Start;
pub use verdict::{
    is_blip, Figures, Stretch, Verdict, VerdictKind, BLIP_MAX_MS, BLIP_SHARE, STORM_MIN_SECS,
    STORM_SHARE, WEDGED_MIN_MS,
};
