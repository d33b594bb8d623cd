//! Client variants: a model, its options and the node failures it meets.

use std::collections::BTreeMap;

use crate::metrics::ms_to_secs;
use crate::replay::{FaultKind, FaultWindow, Hypotheses, SimCluster, MODELS};
use crate::time::{TimeSpan, Timestamp};

/// Which node failures a variant replays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Faults {
    /// The recording's: poll timeouts and connection errors as fault windows.
    Recorded,
    /// None: would it have happened without the failures the recording shows?
    Cleared,
    /// The recording's and one more: a failure the poller may have missed.
    Added(FaultWindow),
}

impl Faults {
    /// `recorded`, `none` or e.g. `+timeout 10.0.0.1:6379 2.0s at +20.0s` (the time from
    /// `origin`, the recording's start).
    pub fn label(&self, origin: Timestamp) -> String {
        match self {
            Faults::Recorded => "recorded".into(),
            Faults::Cleared => "none".into(),
            Faults::Added(w) => format!(
                "+{} {} {:.1}s at +{:.1}s",
                match w.kind {
                    FaultKind::Timeout => "timeout",
                    FaultKind::ConnectionError => "connection error",
                },
                w.node,
                ms_to_secs(w.span.millis()),
                ms_to_secs(w.span.start.millis_since(origin)),
            ),
        }
    }

    /// `cluster` with these faults.
    pub(super) fn apply(&self, cluster: &SimCluster) -> SimCluster {
        match self {
            Faults::Recorded => cluster.clone(),
            Faults::Cleared => cluster.with_faults(&[]),
            Faults::Added(w) => cluster.with_fault_added(w),
        }
    }
}

/// A client variant: a model, its options and the node failures it meets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The model name.
    pub model: String,
    /// `key=value` options (see [`ModelOptions::set`](crate::replay::ModelOptions::set)).
    pub config: BTreeMap<String, String>,
    /// The failures replayed.
    pub faults: Faults,
}

impl Variant {
    /// A variant of `model` with `config`, meeting the recorded failures.
    pub fn new(model: &str, config: &[(&str, String)]) -> Variant {
        Variant {
            model: model.to_owned(),
            config: config
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
            faults: Faults::Recorded,
        }
    }

    /// The same variant meeting `faults`.
    #[must_use]
    pub fn with_faults(mut self, faults: Faults) -> Variant {
        self.faults = faults;
        self
    }

    /// `model`, then ` key=value` for each option, then ` faults=…` unless recorded (times from
    /// `origin`).
    pub fn label(&self, origin: Timestamp) -> String {
        let mut s = self.model.clone();
        for (k, v) in &self.config {
            s.push_str(&format!(" {k}={v}"));
        }
        if self.faults != Faults::Recorded {
            s.push_str(&format!(" faults={}", self.faults.label(origin)));
        }
        s
    }
}

/// How long the missed stall of [`standard_variants`] lasts.
pub const MISSED_STALL_MS: u64 = 2_000;

/// The standard set for `cluster`, read from every model's [`Hypotheses`] in the order of
/// [`MODELS`]: each suspect (`redis-py@5.0.0` and `redis-py@8.0.0`) plain, with its per-node
/// option (`address_remap`) to each node, with each of its single options
/// (`reinitialize_steps=0` and `=1`), then the fault axis: without the recorded failures when
/// there are any, else with a missed [`MISSED_STALL_MS`] timeout of the seed node at the first
/// slot move; then the other libraries with their defaults, then with their extra option sets
/// (Lettuce with every adaptive refresh trigger on); then the contrast (`ideal`).
pub fn standard_variants(cluster: &SimCluster) -> Vec<Variant> {
    let nodes = cluster.nodes();
    let mut v = Vec::new();
    let fault = if !cluster.faults().is_empty() {
        Some(Faults::Cleared)
    } else {
        let seed = cluster.seed().or_else(|| nodes.first());
        seed.zip(cluster.changes().first()).map(|(node, &t)| {
            Faults::Added(FaultWindow {
                node: node.clone(),
                span: TimeSpan::new(t, Timestamp(t.0.saturating_add(MISSED_STALL_MS))),
                kind: FaultKind::Timeout,
            })
        })
    };
    for m in MODELS {
        let Hypotheses::Suspect { per_node, each } = m.hypotheses else {
            continue;
        };
        v.push(Variant::new(m.name, &[]));
        for n in nodes {
            v.push(Variant::new(m.name, &[(per_node, n.to_string())]));
        }
        for (key, value) in each {
            v.push(Variant::new(m.name, &[(key, (*value).to_owned())]));
        }
        if let Some(f) = &fault {
            v.push(Variant::new(m.name, &[]).with_faults(f.clone()));
        }
    }
    for m in MODELS {
        if let Hypotheses::Library { .. } = m.hypotheses {
            v.push(Variant::new(m.name, &[]));
        }
    }
    for m in MODELS {
        let Hypotheses::Library { extra } = m.hypotheses else {
            continue;
        };
        for set in extra {
            let config: Vec<(&str, String)> =
                set.iter().map(|(k, val)| (*k, (*val).to_owned())).collect();
            v.push(Variant::new(m.name, &config));
        }
    }
    for m in MODELS {
        if m.hypotheses == Hypotheses::Contrast {
            v.push(Variant::new(m.name, &[]));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::node::NodeAddr;

    fn two_nodes(fault: bool) -> SimCluster {
        use crate::replay::SimClusterBuilder;
        use crate::slot::SlotRange;
        let (a, b): (NodeAddr, NodeAddr) =
            ("10.0.0.1:1".parse().unwrap(), "10.0.0.2:1".parse().unwrap());
        let all = SlotRange::try_from((0, 16383)).unwrap();
        let (lo, hi) = (
            SlotRange::try_from((0, 8191)).unwrap(),
            SlotRange::try_from((8192, 16383)).unwrap(),
        );
        let mut builder = SimClusterBuilder::new();
        builder.layout(Timestamp(0), &[(all, a.clone())], &[]);
        builder.add_node(&b);
        builder.layout(Timestamp(20_000), &[(lo, a.clone()), (hi, b)], &[]);
        if fault {
            builder.fault(FaultWindow {
                node: a,
                span: TimeSpan::new(Timestamp(10_000), Timestamp(12_000)),
                kind: FaultKind::Timeout,
            });
        }
        builder.build()
    }

    #[test]
    fn standard_variants_cover_each_node_and_the_fault_axis() {
        let with_fault = two_nodes(true);
        let v = standard_variants(&with_fault);
        // The other libraries' variants, read from MODELS so that adding a model changes no
        // test: each one's defaults and its extra option sets.
        let libraries: usize = MODELS
            .iter()
            .map(|m| match m.hypotheses {
                Hypotheses::Library { extra } => 1 + extra.len(),
                _ => 0,
            })
            .sum();
        assert_eq!(v.len(), 2 * (1 + 2 + 2 + 1) + libraries + 1);
        // Every variant names a model that exists and options it takes.
        for variant in &v {
            let mut opts = crate::replay::ModelOptions::new("10.0.0.1:1".parse().unwrap());
            for (k, val) in &variant.config {
                opts.set(k, val).unwrap();
            }
            assert!(
                crate::replay::model(&variant.model, opts).is_ok(),
                "{variant:?}"
            );
        }
        let origin = Timestamp(0);
        assert_eq!(
            v[1].label(origin),
            "redis-py@5.0.0 address_remap=10.0.0.1:1"
        );
        assert_eq!(v[5].label(origin), "redis-py@5.0.0 faults=none");
        assert_eq!(v.last().unwrap().model, "ideal");
        assert_eq!(v[5].faults.apply(&with_fault).faults(), vec![]);
        // Without recorded failures: a missed stall of the first node at the slot move.
        let v = standard_variants(&two_nodes(false));
        assert_eq!(
            v[5].label(origin),
            "redis-py@5.0.0 faults=+timeout 10.0.0.1:1 2.0s at +20.0s"
        );
        let applied = v[5].faults.apply(&two_nodes(false)).faults();
        assert_eq!(applied.len(), 1);
        assert_eq!(
            applied[0].span,
            TimeSpan::new(Timestamp(20_000), Timestamp(22_000))
        );
    }
}
