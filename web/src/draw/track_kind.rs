//! The tracks of the viewer, their names, titles and heights.

/// The tracks, top to bottom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrackKind {
    /// Slot ranges per node over time, migrating ranges highlighted.
    Topology,
    /// Business commands per second per node.
    NodeRate,
    /// MOVED share per command.
    MovedShare,
    /// `errorstats` rates.
    Errors,
    /// New connections per second against open connections.
    Connections,
    /// `CLUSTER SLOTS`/`SHARDS` calls per second.
    Refreshes,
    /// Poll failures, node events, annotations, and the time axis.
    Events,
}

impl TrackKind {
    /// Every track, top to bottom.
    pub const ALL: [TrackKind; 7] = [
        TrackKind::Topology,
        TrackKind::NodeRate,
        TrackKind::MovedShare,
        TrackKind::Errors,
        TrackKind::Connections,
        TrackKind::Refreshes,
        TrackKind::Events,
    ];

    /// The `data-track` name.
    pub fn name(self) -> &'static str {
        match self {
            TrackKind::Topology => "topology",
            TrackKind::NodeRate => "node-rate",
            TrackKind::MovedShare => "moved-share",
            TrackKind::Errors => "errors",
            TrackKind::Connections => "connections",
            TrackKind::Refreshes => "refreshes",
            TrackKind::Events => "events",
        }
    }

    /// The title shown above it.
    pub fn title(self) -> &'static str {
        match self {
            TrackKind::Topology => "Topology: slot ranges per node (migrating ranges in amber)",
            TrackKind::NodeRate => "Commands/s per node",
            TrackKind::MovedShare => "MOVED share per command",
            TrackKind::Errors => "Errors/s (errorstats)",
            TrackKind::Connections => "New connections/s and open connections",
            TrackKind::Refreshes => "Topology refreshes/s (CLUSTER SLOTS + SHARDS)",
            TrackKind::Events => "Poll failures · node events · annotations",
        }
    }

    /// Height in CSS pixels.
    pub fn height(self) -> u32 {
        match self {
            TrackKind::Topology => 110,
            TrackKind::NodeRate => 100,
            TrackKind::Events => 116,
            TrackKind::Refreshes => 60,
            _ => 80,
        }
    }
}
