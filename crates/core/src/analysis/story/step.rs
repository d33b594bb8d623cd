//! One step of a story: what it is about, how sure it is, what part it plays.

use serde::{Deserialize, Serialize};

use crate::finding::FindingKind;
use crate::time::Timestamp;

/// What a step is about. The snake_case names are stable (`kind` in JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Slots assigned to the nodes of a new cluster.
    Creation,
    /// A node stopped answering the collector's polls.
    NodeStopped,
    /// A node answered again.
    NodeBack,
    /// A node joined the cluster during the recording.
    NodeAdded,
    /// A node left the cluster's topology.
    NodeLeft,
    /// Someone closed client connections (`CLIENT KILL`).
    ConnectionsKilled,
    /// Slots moved from one node to another.
    SlotsMoved,
    /// A replica took over its master's slots: a failover (the master had stopped answering) or
    /// a manual one (`CLUSTER FAILOVER`, the master still answering).
    Promotion,
    /// What a finding says happened (its kind is the finding's).
    Finding,
    /// The recording ends without an end line.
    RecordingCut,
}

/// How sure a step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Inferred from counters, with other explanations possible.
    Possible,
    /// Inferred, and the evidence points one way.
    Likely,
    /// Seen directly (a poll that failed, a topology view).
    Certain,
}

impl Confidence {
    /// The word printed beside a step.
    pub fn word(self) -> &'static str {
        match self {
            Confidence::Possible => "possible",
            Confidence::Likely => "likely",
            Confidence::Certain => "seen",
        }
    }
}

/// A step's part in the story.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// What explains the incident.
    RootCause,
    /// What set the root cause off (a node's stall before a client lost its nodes).
    Trigger,
    /// What followed from it.
    Effect,
    /// Something else that happened.
    Context,
}

/// One event of the story.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// When it happened (or began).
    pub at: Timestamp,
    /// When it ended, if it did within the recording.
    pub until: Option<Timestamp>,
    /// What it is about.
    pub kind: StepKind,
    /// The finding's kind for [`StepKind::Finding`] (`client_group_lost`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding_kind: Option<FindingKind>,
    /// One sentence.
    pub text: String,
    /// What it rests on, one piece per entry ("INFO polls of 10.0.0.1:7000 failed for 2.0 s").
    pub evidence: Vec<String>,
    /// How sure it is.
    pub confidence: Confidence,
    /// Its part in the story.
    pub role: Role,
    /// Whether it is the root cause (the same as `role == RootCause`, for readers of the JSON).
    pub root_cause: bool,
    /// The client group it concerns (its census label), if one.
    pub group: Option<String>,
    /// The finding it comes from (index into `Analysis::findings`), if one.
    pub finding: Option<usize>,
}

impl Step {
    /// A cluster step: seen directly, context until the cause is marked.
    pub(super) fn seen(
        at: Timestamp,
        until: Option<Timestamp>,
        kind: StepKind,
        text: String,
    ) -> Step {
        Step {
            at,
            until,
            kind,
            finding_kind: None,
            text,
            evidence: Vec::new(),
            confidence: Confidence::Certain,
            role: Role::Context,
            root_cause: false,
            group: None,
            finding: None,
        }
    }
}
