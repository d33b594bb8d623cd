//! The failure flags other nodes' views put on a node (`CLUSTER NODES`: `fail?` when the
//! reporter alone suspects it, `fail` once enough masters agreed and one broadcast `FAIL`), kept
//! per node and flag with when and by whom, for the story of a failover.

use std::collections::{BTreeMap, BTreeSet};

use crate::time::{TimeSpan, Timestamp};

use super::NodeIdx;

/// A failure flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FailFlag {
    /// `fail?` (PFAIL): the reporter has not heard from the node for `cluster-node-timeout`.
    Suspected,
    /// `fail`: the masters agreed it failed.
    Failed,
}

impl FailFlag {
    /// The flag as `CLUSTER NODES` prints it.
    pub fn text(self) -> &'static str {
        match self {
            FailFlag::Suspected => "fail?",
            FailFlag::Failed => "fail",
        }
    }

    /// The flag among a node's printed flags, the stronger first.
    pub fn of(flags: &[String]) -> Option<FailFlag> {
        if flags.iter().any(|f| f == "fail") {
            Some(FailFlag::Failed)
        } else if flags.iter().any(|f| f == "fail?") {
            Some(FailFlag::Suspected)
        } else {
            None
        }
    }
}

/// The views that flagged a node within a span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagSighting {
    /// The first and the last view that did.
    pub span: TimeSpan,
    /// How many nodes' views did.
    pub reporters: usize,
}

/// Every view that flagged a node, in time order, per node and flag.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct FlagLog {
    seen: BTreeMap<(NodeIdx, FailFlag), Vec<(Timestamp, NodeIdx)>>,
}

impl FlagLog {
    /// `reporter`'s view at `t` flagged `node` so.
    pub(super) fn push(&mut self, node: NodeIdx, flag: FailFlag, t: Timestamp, reporter: NodeIdx) {
        self.seen
            .entry((node, flag))
            .or_default()
            .push((t, reporter));
    }

    /// The views within `within` (ends included) that flagged `node` with `flag`.
    pub(super) fn sighting(
        &self,
        node: NodeIdx,
        flag: FailFlag,
        within: TimeSpan,
    ) -> Option<FlagSighting> {
        let seen = self.seen.get(&(node, flag))?;
        let inside: Vec<&(Timestamp, NodeIdx)> = seen
            .iter()
            .filter(|(t, _)| *t >= within.start && *t <= within.end)
            .collect();
        let first = inside.iter().map(|(t, _)| *t).min()?;
        let last = inside.iter().map(|(t, _)| *t).max()?;
        let by: BTreeSet<NodeIdx> = inside.iter().map(|(_, r)| *r).collect();
        Some(FlagSighting {
            span: TimeSpan::new(first, last),
            reporters: by.len(),
        })
    }
}
