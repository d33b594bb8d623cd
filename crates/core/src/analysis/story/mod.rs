//! The story of a recording: the events that matter, in time order, each with its evidence and
//! how sure it is, the root cause marked. What the collector saw the cluster do (nodes that
//! stopped answering, joined or left, slots that moved, the creation) and what the findings say
//! the clients did (a group that stopped, a redirect storm, churn, a shard left idle) are put on
//! one line of time; then the step that explains the others is marked (see [`cause`]), and what
//! the recording cannot tell is said (see [`limits`]).

mod cause;
mod election;
mod events;
mod failover;
mod limits;
mod of_finding;
mod step;

use serde::{Deserialize, Serialize};

use crate::finding::Finding;
use crate::time::Timestamp;

use super::context::Context;

pub use limits::CutShort;
pub use step::{Confidence, Role, Step, StepKind};

/// The story of a recording.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Story {
    /// The events, in time order.
    pub steps: Vec<Step>,
    /// What the recording cannot tell (it began mid-migration, it was cut short, …).
    pub limits: Vec<String>,
    /// Set when the recording was cut short.
    pub cut_short: Option<CutShort>,
}

impl Story {
    /// The root cause step, if one was marked.
    pub fn root_cause(&self) -> Option<&Step> {
        self.steps.iter().find(|s| s.root_cause)
    }

    /// Forgets that the recording ends without an end line: for a preview of a recording still
    /// loading, whose end is yet to come.
    pub fn forget_cut(&mut self) {
        if self.cut_short.take().is_some() {
            self.steps.retain(|s| s.kind != StepKind::RecordingCut);
            self.limits
                .retain(|l| !l.starts_with(limits::CUT_TEXT_START));
        }
    }
}

/// The story of the recording `ctx` describes, whose findings (final, in any order) are
/// `findings`.
pub(super) fn tell(ctx: &Context<'_>, findings: &[Finding]) -> Story {
    let mut steps = events::cluster_steps(ctx);
    steps.extend(
        findings
            .iter()
            .enumerate()
            .filter_map(|(i, f)| of_finding::step(i, f)),
    );
    let cut_short = limits::cut_short(ctx);
    if let Some(c) = &cut_short {
        steps.push(limits::cut_step(c));
    }
    steps.sort_by_key(|s| {
        (
            s.kind == StepKind::RecordingCut,
            s.at,
            s.kind == StepKind::Finding,
        )
    });
    cause::mark(&mut steps, findings, ctx.interval_ms);
    // An effect found up to a poll before its root cause (both known to within a poll) reads
    // after it; a trigger at the same moment reads before it.
    if let Some(cause_at) = steps.iter().find(|s| s.root_cause).map(|s| s.at) {
        let rank = |s: &Step| match s.role {
            Role::Trigger => 0,
            Role::RootCause => 1,
            _ => 2,
        };
        steps.sort_by_key(|s| {
            let at = if s.role == Role::Effect && s.at < cause_at {
                cause_at
            } else {
                s.at
            };
            (s.kind == StepKind::RecordingCut, at, rank(s))
        });
    }
    Story {
        steps,
        limits: limits::limits(ctx, findings, cut_short.as_ref()),
        cut_short,
    }
}

/// Puts the finding the root cause rests on first (the root cause's own, or, when the root cause
/// is a cluster event, its most telling effect's: a group's critical loss before a warning of
/// churn, the earliest among equals) and renumbers the story's references.
pub(super) fn lead_with_cause(story: &mut Story, findings: &mut Vec<Finding>) {
    let lead = story.root_cause().and_then(|s| s.finding).or_else(|| {
        story
            .steps
            .iter()
            .filter(|s| s.role == Role::Effect)
            .filter_map(|s| {
                let k = s.finding?;
                Some((cause::rank(findings.get(k)?).unwrap_or(u8::MAX), s.at, k))
            })
            .min()
            .map(|(_, _, k)| k)
    });
    let Some(k) = lead.filter(|&k| k > 0 && k < findings.len()) else {
        return;
    };
    let f = findings.remove(k);
    findings.insert(0, f);
    for s in &mut story.steps {
        s.finding = s.finding.map(|i| match i {
            i if i == k => 0,
            i if i < k => i + 1,
            i => i,
        });
    }
}

/// Where a finding starting at `t` sits relative to the story's cluster events: after the latest
/// one at or before it (a node that stopped answering, slots that moved, a node added), or from
/// the recording's `start`.
pub(super) fn anchor(
    story: &Story,
    t: Timestamp,
    interval_ms: u64,
    start: Option<Timestamp>,
) -> Option<String> {
    let anchor = story
        .steps
        .iter()
        .filter(|s| s.kind != StepKind::Finding && s.kind != StepKind::RecordingCut)
        .filter(|s| s.at.0 <= t.0 + interval_ms / 2)
        .max_by_key(|s| s.at);
    match anchor {
        Some(a) if a.at <= t => Some(format!(
            "{} after {} ({})",
            crate::time::format_millis(t.millis_since(a.at)),
            a.text,
            crate::moment::at(a.at, start.unwrap_or(a.at))
        )),
        Some(a) => Some(format!(
            "{} before the collector saw: {}",
            crate::time::format_millis(a.at.millis_since(t)),
            a.text
        )),
        None => start.map(|s| {
            format!(
                "{} after the recording's start",
                crate::time::format_millis(t.millis_since(s))
            )
        }),
    }
}
