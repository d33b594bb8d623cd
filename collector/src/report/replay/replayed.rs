//! A replay's report with the workload it ran, and where the workload's rate came from.

use slotscope_core::replay::{ReplayReport, Shape};

use super::timing::TimingChoice;
use super::window::Window;

/// Where the workload's rate came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateSource {
    /// `--rate`.
    Option,
    /// The business commands the recording's `INFO` samples show (see
    /// [`slotscope_core::metrics::Metrics::observed_business_rate`]).
    Observed,
    /// Nothing observed: 100 per second.
    Default,
}

impl RateSource {
    /// The name shown in reports.
    pub fn name(self) -> &'static str {
        match self {
            RateSource::Option => "option",
            RateSource::Observed => "observed",
            RateSource::Default => "default",
        }
    }
}

/// A replay's report with the workload it ran.
pub struct Replayed {
    /// The report (its `model` says which model ran and, for a library release, what it covers).
    pub report: ReplayReport,
    /// The span replayed and why.
    pub window: Window,
    /// How the application issued its commands.
    pub shape: Shape,
    /// Whether the commands came at the times of a Poisson process (else evenly spaced).
    pub poisson: bool,
    /// How long exchanges take.
    pub timing: TimingChoice,
    /// Commands per second of the workload.
    pub rate: u32,
    /// Where the rate came from.
    pub rate_source: RateSource,
    /// The commands replayed with their shares (empty: `zadd` only).
    pub mix: Vec<(String, f64)>,
}
