//! What a pre-flight needs of a recording, read line by line ([`BasisBuilder`]): the cluster it
//! ends with ([`Start`]), its client groups' workloads, its census and counters, where its
//! clients start, and when it ends. The CLI folds a file's lines into it, the viewer a loaded
//! recording's bytes.

use crate::census::{Census, CensusBuilder};
use crate::hypothesis::{group_workloads, layout_change_spans, GroupWorkload};
use crate::metrics::Metrics;
use crate::node::NodeAddr;
use crate::recording::{Header, Line};
use crate::replay::SimClusterBuilder;
use crate::time::Timestamp;

use super::clients::{clients, Assumption, Client};
use super::start::Start;

/// Why a recording cannot be the basis of a pre-flight.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BasisError {
    /// No slot layout to carry the plan out on.
    #[error("the recording holds no slot layout to carry the plan out on")]
    NoCluster,
}

/// What a pre-flight needs of a recording.
#[derive(Clone, Debug)]
pub struct Basis {
    /// The cluster the recording ends with.
    pub start: Start,
    /// Its client groups' workloads (census order).
    pub workloads: Vec<GroupWorkload>,
    /// Its census.
    pub census: Census,
    /// Its counters.
    pub metrics: Metrics,
    /// Where its clients start (the recording's seed).
    pub seed: NodeAddr,
    /// When it ends.
    pub end: Timestamp,
}

impl Basis {
    /// The keys the nodes hold at the recording's end (each node's last `INFO keyspace`,
    /// summed): how far the clients' keys spread, when they are the cluster's only writers
    /// (`None`: none recorded).
    pub fn keys(&self) -> Option<u64> {
        let keys: u64 = self
            .metrics
            .nodes
            .iter()
            .filter_map(|n| n.intervals.last())
            .map(|i| i.keys)
            .sum();
        (keys > 0).then_some(keys)
    }

    /// The clients to replay, with `assumed` applied (see [`clients`]).
    pub fn clients(&self, assumed: &[Assumption]) -> Result<Vec<Client>, String> {
        clients(&self.workloads, Some(&self.census), assumed)
    }
}

/// Folds a recording's lines into its [`Basis`].
pub struct BasisBuilder {
    cluster: SimClusterBuilder,
    metrics: Metrics,
    census: CensusBuilder,
    samples: Vec<Timestamp>,
    seed: NodeAddr,
}

impl BasisBuilder {
    /// A builder for the recording that starts with `header`.
    pub fn new(header: &Header) -> BasisBuilder {
        BasisBuilder {
            cluster: SimClusterBuilder::for_recording(header),
            metrics: Metrics::default(),
            census: CensusBuilder::default(),
            samples: Vec::new(),
            seed: header.seed.clone(),
        }
    }

    /// Folds one line.
    pub fn push(&mut self, line: &Line) {
        if let Line::Topology(t) = line {
            self.samples.push(t.t);
        }
        self.cluster.push(line);
        self.metrics.push(line);
        self.census.push(line);
    }

    /// The basis.
    ///
    /// # Errors
    ///
    /// A recording without a slot layout or a time span.
    pub fn finish(self) -> Result<Basis, BasisError> {
        let start = Start::at_end_of(self.cluster.timeline());
        if start.masters.is_empty() {
            return Err(BasisError::NoCluster);
        }
        let recorded = self.cluster.build();
        let span = recorded.span().ok_or(BasisError::NoCluster)?;
        let census = self.census.finish();
        let changes = layout_change_spans(&recorded.changes(), &self.samples);
        let workloads = group_workloads(Some(&census), &self.metrics, span, &changes);
        Ok(Basis {
            start,
            workloads,
            census,
            metrics: self.metrics,
            seed: self.seed,
            end: span.end,
        })
    }
}
