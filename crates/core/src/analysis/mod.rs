//! Analysis of a whole recording: metrics, client census, shard traffic before and after each
//! topology change, and the findings, each with the evidence it rests on. Folded from lines like
//! the summary, so the viewer computes the same analysis in the browser.
//!
//! The pipeline: an [`Analyzer`] folds the lines; [`Analyzer::finishing`] turns it into a
//! [`Finishing`], which derives one thing per [`Finishing::step`]: the shard traffic
//! ([`ShardTraffic`]), then the findings of each detector in turn, then the findings placed
//! relative to outside evidence and sorted, most important first. Each detector (idle shard, lost
//! client group, redirects, connection churn, slot coverage, known client defects) lives in a file
//! of its own and sees the recording through a shared `Context`.

mod attribution;
mod churn;
mod client_defect;
mod context;
mod coverage;
mod detector;
mod evidence_link;
#[cfg(test)]
mod fixture;
mod fleet;
mod idle_by_keys;
mod idle_shard;
mod kills;
mod lost_group;
mod outage;
mod redirects;
mod shard_traffic;
mod short_lived;
mod story;
mod stream;
mod traffic;

use serde::{Deserialize, Serialize};

use crate::census::{infer_short_lived, Census, CensusBuilder};
use crate::finding::Finding;
use crate::metrics::Metrics;
use crate::recording::{Annotation, Header, Line};
use crate::summary::{Summary, SummaryBuilder};
use crate::tap::{versus, TapSummary, Versus};
use crate::timeline::{ClusterTimeline, Consensus};

pub use churn::CHURN_RATIO;
pub use idle_shard::IDLE_SHARE;
pub use lost_group::LOST_SHARE;
pub use redirects::REDIRECT_SHARE;
pub use shard_traffic::{Rates, ShardTraffic};
pub use story::{Confidence, CutShort, Role, Step, StepKind, Story};

use context::Context;
use detector::Detector;

/// Every detector, in the order [`Finishing::step`] runs them, one per step. Findings of equal
/// importance keep this order (the final sort is stable).
const DETECTORS: &[&dyn Detector] = &[
    &idle_shard::IdleShard,
    &idle_by_keys::IdleByKeys,
    &lost_group::LostGroup,
    &short_lived::ShortLived,
    &redirects::Redirects,
    &churn::Churn,
    &coverage::Coverage,
    &client_defect::ClientDefect,
];

/// The analysis of a recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// What happened, in time order, the root cause marked.
    pub story: Story,
    /// What the recording holds (nodes, slot moves, failures).
    pub summary: Summary,
    /// Per node traffic before and after the topology changes.
    pub shard_traffic: Vec<ShardTraffic>,
    /// The client census.
    pub census: Census,
    /// Findings: the one the root cause rests on first, then the rest by importance.
    pub findings: Vec<Finding>,
    /// Outside evidence set against itself and the recording: "first client error 12 s after
    /// \"Migrating slots …\"".
    pub evidence: Vec<String>,
    /// Per-node metrics over time (not serialised: large; use the viewer or the library).
    #[serde(skip)]
    pub metrics: Metrics,
    /// What a client recorded through `slotscope tap` saw (empty without tap lines).
    #[serde(default, skip_serializing_if = "TapSummary::is_empty")]
    pub tap: TapSummary,
    /// Slot owners, migrations and nodes over time (not serialised: the summary says it).
    #[serde(skip)]
    pub timeline: ClusterTimeline,
}

impl Analysis {
    /// The tapped client's per-command counts beside the servers' (empty without tap lines).
    pub fn versus(&self) -> Vec<Versus> {
        versus(&self.tap, &self.metrics, self.summary.span)
    }
}

/// Builds an [`Analysis`] one line at a time.
#[derive(Clone, Debug)]
pub struct Analyzer {
    summary: SummaryBuilder,
    metrics: Metrics,
    census: CensusBuilder,
    tap: TapSummary,
    annotations: Vec<Annotation>,
    interval_ms: u64,
}

impl Analyzer {
    /// An analyzer for a recording with this header.
    pub fn new(header: Header) -> Analyzer {
        let interval_ms = header.options.interval_ms.max(1);
        Analyzer {
            summary: SummaryBuilder::new(header),
            metrics: Metrics::default(),
            census: CensusBuilder::default(),
            tap: TapSummary::default(),
            annotations: Vec::new(),
            interval_ms,
        }
    }

    /// Folds one line.
    pub fn push(&mut self, line: &Line) {
        self.fold(line);
        self.metrics.push(line);
    }

    /// Folds one line it may keep: as [`Analyzer::push`], without copying an `INFO` reply.
    pub fn push_owned(&mut self, line: Line) {
        self.fold(&line);
        self.metrics.push_owned(line);
    }

    fn fold(&mut self, line: &Line) {
        self.summary.push(line);
        self.census.push(line);
        self.tap.push(line);
        if let Line::Annotation(a) = line {
            self.annotations.push(a.clone());
        }
    }

    /// Notes a partial last line (see [`crate::reader::RecordingReader::truncated_tail`]).
    pub fn set_truncated_tail(&mut self, line: Option<u64>) {
        self.summary.set_truncated_tail(line);
    }

    /// The finished analysis.
    pub fn finish(self) -> Analysis {
        let mut f = self.finishing();
        while !f.step() {}
        f.done()
    }

    /// The analysis to finish one derivation at a time, for a caller that must not be busy for
    /// long at once (the viewer, on a day-long recording): call [`Finishing::step`] until it
    /// returns `true`, then [`Finishing::done`].
    pub fn finishing(self) -> Finishing {
        let (summary, timeline) = self.summary.into_parts();
        let owners = timeline.consensus();
        let mut census = self.census.finish();
        let rejects = crate::fingerprint::any_rejects_setinfo(
            summary.nodes.iter().filter_map(|n| n.server.as_ref()),
        );
        census.inferred = infer_short_lived(&census, &self.metrics, self.interval_ms, rejects);
        Finishing {
            summary,
            timeline,
            census,
            metrics: self.metrics,
            tap: self.tap.finish(),
            owners,
            annotations: self.annotations,
            interval_ms: self.interval_ms,
            shard_traffic: Vec::new(),
            findings: Vec::new(),
            story: Story::default(),
            next: 0,
        }
    }
}

/// An analysis being finished one derivation at a time (see [`Analyzer::finishing`]).
#[derive(Debug)]
pub struct Finishing {
    summary: Summary,
    /// Slot owners, migrations and nodes over time.
    timeline: ClusterTimeline,
    census: Census,
    metrics: Metrics,
    tap: TapSummary,
    /// Owner of every slot at the end, from the nodes' latest topology views.
    owners: Consensus,
    annotations: Vec<Annotation>,
    interval_ms: u64,
    shard_traffic: Vec<ShardTraffic>,
    findings: Vec<Finding>,
    story: Story,
    /// The next derivation.
    next: u8,
}

/// One step of finishing an analysis.
#[derive(Clone, Copy)]
enum Derivation {
    /// The shard traffic around the topology changes.
    Traffic,
    /// One detector's findings.
    Detect(&'static dyn Detector),
    /// The findings placed relative to outside evidence, then sorted.
    Placement,
}

impl Derivation {
    /// The derivation of step `k`: the shard traffic, then each of [`DETECTORS`], then the
    /// placement; `None` past the last.
    fn of_step(k: u8) -> Option<Derivation> {
        match usize::from(k) {
            0 => Some(Derivation::Traffic),
            k if k <= DETECTORS.len() => Some(Derivation::Detect(DETECTORS[k - 1])),
            k if k == DETECTORS.len() + 1 => Some(Derivation::Placement),
            _ => None,
        }
    }

    /// What it derives, in a few words.
    fn name(self) -> &'static str {
        match self {
            Derivation::Traffic => "shard traffic",
            Derivation::Detect(d) => d.name(),
            Derivation::Placement => "the story and the findings' order",
        }
    }
}

impl Finishing {
    /// Steps in all, for progress: the shard traffic, one per detector, then placing and sorting
    /// the findings.
    #[allow(clippy::cast_possible_truncation)] // a handful of detectors
    pub const STEPS: u8 = (DETECTORS.len() + 2) as u8;

    /// Steps done so far.
    pub fn steps_done(&self) -> u8 {
        self.next
    }

    /// What the next step derives, in a few words ("shard traffic", "idle shard", …), for
    /// progress text; `None` when every step is done.
    pub fn next_step(&self) -> Option<&'static str> {
        Derivation::of_step(self.next).map(Derivation::name)
    }

    /// The metrics (final: every line is folded before finishing starts).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The cluster timeline (final, like the metrics).
    pub fn timeline(&self) -> &ClusterTimeline {
        &self.timeline
    }

    /// Runs the next derivation; `true` when there is none left.
    pub fn step(&mut self) -> bool {
        let Some(derivation) = Derivation::of_step(self.next) else {
            return true;
        };
        match derivation {
            Derivation::Traffic => {
                let traffic = traffic::shard_traffic(&self.context());
                self.shard_traffic = traffic;
            }
            Derivation::Detect(detector) => {
                let found = detector.detect(&self.context());
                self.findings.extend(found);
            }
            Derivation::Placement => {
                self.findings.sort_by_key(Finding::importance_key);
                let mut story = story::tell(&self.context(), &self.findings);
                story::lead_with_cause(&mut story, &mut self.findings);
                for f in &mut self.findings {
                    let mut context = evidence_link::relate(f.span, &self.annotations);
                    context.extend(story::anchor(
                        &story,
                        f.span.start,
                        self.interval_ms,
                        self.summary.span.map(|s| s.start),
                    ));
                    context.append(&mut f.context);
                    f.context = context;
                }
                self.story = story;
            }
        }
        self.next += 1;
        self.next >= Self::STEPS
    }

    /// What the detectors share, over what is derived so far.
    fn context(&self) -> Context<'_> {
        Context::new(
            &self.summary,
            &self.metrics,
            &self.census,
            &self.owners,
            &self.timeline,
            &self.shard_traffic,
            self.interval_ms,
        )
    }

    /// The analysis (finishing whatever steps are left).
    pub fn done(mut self) -> Analysis {
        while !self.step() {}
        let evidence = evidence_link::relate_evidence(&self.annotations, &self.summary);
        Analysis {
            story: self.story,
            summary: self.summary,
            shard_traffic: self.shard_traffic,
            census: self.census,
            findings: self.findings,
            evidence,
            metrics: self.metrics,
            tap: self.tap,
            timeline: self.timeline,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{header, reshard_lines};
    use crate::finding::FindingKind;

    fn analyzer(lines: &[Line]) -> Analyzer {
        let mut a = Analyzer::new(header());
        for l in lines {
            a.push(l);
        }
        a
    }

    #[test]
    fn finishing_runs_the_traffic_each_detector_then_the_placement() {
        let mut f = analyzer(&reshard_lines(false)).finishing();
        assert_eq!(usize::from(Finishing::STEPS), DETECTORS.len() + 2);
        let mut names = Vec::new();
        let mut done = false;
        while !done {
            assert_eq!(usize::from(f.steps_done()), names.len());
            names.push(f.next_step().unwrap());
            done = f.step();
        }
        assert_eq!(f.steps_done(), Finishing::STEPS);
        assert_eq!(f.next_step(), None);
        assert!(f.step(), "no step is left");
        assert_eq!(f.steps_done(), Finishing::STEPS);
        assert_eq!(
            names,
            [
                "shard traffic",
                "idle shard",
                "idle shard by keys",
                "lost client group",
                "short-lived clients",
                "redirects",
                "connection churn",
                "slot coverage",
                "known client defect",
                "the story and the findings' order",
            ]
        );
    }

    #[test]
    fn finishing_in_steps_gives_the_same_analysis_as_at_once() {
        let lines = reshard_lines(false);
        let mut f = analyzer(&lines).finishing();
        f.step();
        f.step();
        let stepped = f.done();
        let at_once = analyzer(&lines).finish();
        assert_eq!(stepped, at_once);
        // The storm is what the clients did wrong: the root cause, set off by the move, leads;
        // the idle shard is its effect. Both are placed after the move.
        let kinds: Vec<FindingKind> = at_once.findings.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [FindingKind::RedirectStorm, FindingKind::IdleShard]);
        let cause = at_once.story.root_cause().expect("a root cause");
        assert_eq!(cause.finding, Some(0));
        assert_eq!(cause.finding_kind, Some(FindingKind::RedirectStorm));
        let roles: Vec<(StepKind, Role)> = at_once
            .story
            .steps
            .iter()
            .map(|s| (s.kind, s.role))
            .collect();
        assert_eq!(
            roles,
            [
                (StepKind::SlotsMoved, Role::Trigger),
                // The idle shard shows a poll before the storm, yet reads as its effect.
                (StepKind::Finding, Role::RootCause),
                (StepKind::Finding, Role::Effect),
                // The lines end without an end line.
                (StepKind::RecordingCut, Role::Context),
            ]
        );
        let contexts: Vec<&[String]> = at_once.findings.iter().map(|f| &f.context[..]).collect();
        assert_eq!(contexts.len(), 2);
        for c in contexts {
            assert!(c[0].contains(" after 8192 slots move from "), "{c:?}");
        }
        assert_eq!(at_once.shard_traffic.len(), 2);
    }
}
