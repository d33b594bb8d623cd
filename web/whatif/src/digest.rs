//! What the viewer shows of a replay's report.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use slotscope_core::replay::{Moments, ReplayReport};

/// The figures of a [`ReplayReport`] the what-if summary shows (the report's per-second timeline
/// is carried by the [`crate::Overlay`] instead).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Digest {
    /// The client model.
    pub model: String,
    /// Commands in flight at most.
    pub concurrency: u32,
    /// Whether the client ended wedged.
    pub wedged: bool,
    /// When it became wedged for good (epoch milliseconds), if it did.
    pub wedged_since: Option<u64>,
    /// Commands issued.
    pub commands: u64,
    /// Commands that raised.
    pub failed: u64,
    /// MOVED share per command.
    pub moved_share: BTreeMap<String, f64>,
    /// Exceptions the application saw, by class.
    pub errors: BTreeMap<String, u64>,
    /// Successful full initialisations.
    pub full_reinits: u64,
    /// `CLUSTER SLOTS` calls.
    pub cluster_slots_calls: u64,
    /// Connections opened.
    pub new_connections: u64,
    /// How many of the moments tried ended wedged, when a `CLIENT KILL`'s moment or a failure's
    /// edge was known only within a window (the report is then the majority's).
    pub moments: Option<Moments>,
}

impl Digest {
    /// The digest of `r`.
    pub fn of(r: &ReplayReport) -> Digest {
        Digest {
            model: r.model.clone(),
            concurrency: r.concurrency,
            wedged: r.wedged,
            wedged_since: r.wedged_since.map(|t| t.as_millis()),
            commands: r.commands,
            failed: r.failed,
            moved_share: r.moved_share.clone(),
            errors: r.errors.clone(),
            full_reinits: r.full_reinits,
            cluster_slots_calls: r.cluster_slots_calls,
            new_connections: r.new_connections,
            moments: r.moments,
        }
    }
}
