//! Pre-flight (issue 25): a planned change checked before it is made. A [`Plan`] (JSON, or a
//! short form: [`short_form`]) is carried out on paper on the cluster a recording ends with
//! ([`Schedule::of`]): every step checked against the cluster as the steps before leave it, and
//! written out as slot layouts and faults over time, what the replay's simulated cluster takes.
//!
//! Not yet: the replay of each census group through its model against the schedule, and the
//! report (the parts 2 to 4).

mod inline;
mod plan;
mod schedule;
mod start;

pub use inline::short_form;
pub use plan::{
    parse_duration, parse_range, Action, Plan, PlanError, Slots, Step, DEFAULT_MOVE_RATE,
    DEFAULT_NODE_TIMEOUT_MS, ELECTION_MS,
};
pub use schedule::{PlannedFault, PlannedFaultKind, PlannedLayout, Schedule};
pub use start::Start;
