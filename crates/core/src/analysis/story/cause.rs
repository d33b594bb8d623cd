//! Marking the root cause: the first thing the clients did wrong that the findings show (a group
//! that stopped, a storm), what set it off just before (a node that stopped answering, slots that
//! moved), and the known defect that explains it when the group runs one. Everything the findings
//! show after the root cause is its effect.

use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::time::Timestamp;

use super::step::{Confidence, Role, Step, StepKind};

/// How long before the root cause a cluster event still counts as its trigger, milliseconds.
const TRIGGER_MS: u64 = 5_000;

/// The group a finding names, if one.
fn group_of(f: &Finding) -> Option<&str> {
    match &f.attribution {
        Some(Attribution::Group { group, .. }) => Some(group),
        _ => None,
    }
}

/// What a finding says the clients did: lost for good (a group lost, a storm, a client that
/// died), a pause they came back from, or nothing (what the cluster shows of it: an idle shard,
/// coverage, churn).
#[derive(Clone, Copy, PartialEq, Eq)]
enum ClientSide {
    Lasting,
    Recovered,
    No,
}

/// How much a finding's step can be the root cause: what the clients lost for good before a
/// pause they came back from (both critical: a stall hurts every group, the one that never
/// recovered tells the incident), before what the cluster shows of it.
pub(super) fn rank(f: &Finding) -> Option<u8> {
    let client_side = match f.kind {
        FindingKind::ClientGroupLost
        | FindingKind::RedirectStorm
        | FindingKind::ShortLivedClients => ClientSide::Lasting,
        FindingKind::ClientGroupPaused => ClientSide::Recovered,
        FindingKind::IdleShard
        | FindingKind::SlotCoverage
        | FindingKind::ConnectionChurn
        | FindingKind::RedirectsDecayed
        | FindingKind::KnownClientDefect => ClientSide::No,
    };
    match (f.severity, client_side) {
        (Severity::Critical, ClientSide::Lasting) => Some(0),
        (Severity::Critical, ClientSide::Recovered) => Some(1),
        (Severity::Critical, ClientSide::No) => Some(2),
        (Severity::Warning, ClientSide::Lasting | ClientSide::Recovered) => Some(3),
        _ => None,
    }
}

/// Marks the root cause among `steps` (in time order), its trigger and its effects.
pub(super) fn mark(steps: &mut [Step], findings: &[Finding], interval_ms: u64) {
    let Some(primary) = steps
        .iter()
        .enumerate()
        .filter_map(|(k, s)| {
            let f = findings.get(s.finding?)?;
            Some((rank(f)?, s.at, k))
        })
        .min()
        .map(|(_, _, k)| k)
    else {
        return;
    };
    let at = steps[primary].at;
    let trigger = steps[..primary]
        .iter()
        .rposition(|s| {
            matches!(
                s.kind,
                StepKind::NodeStopped
                    | StepKind::SlotsMoved
                    | StepKind::Promotion
                    | StepKind::NodeAdded
                    | StepKind::NodeLeft
                    | StepKind::ConnectionsKilled
            ) && s.at.0 + TRIGGER_MS >= at.0
        })
        .or_else(|| {
            // A cluster event within a poll after the fall's estimate still set it off.
            steps.iter().position(|s| {
                matches!(s.kind, StepKind::NodeStopped | StepKind::ConnectionsKilled)
                    && s.at > at
                    && s.at.0 <= at.0 + interval_ms
            })
        });
    let defect = steps[primary].group.as_deref().and_then(|g| {
        findings
            .iter()
            .find(|f| f.kind == FindingKind::KnownClientDefect && group_of(f) == Some(g))
    });
    let cause = match (defect, trigger) {
        (Some(d), t) => {
            let s = &mut steps[primary];
            s.evidence.push(format!("known defect: {}", d.title));
            if let Some(t) = t {
                steps[t].role = Role::Trigger;
            }
            primary
        }
        (None, Some(t))
            if matches!(
                steps[t].kind,
                StepKind::NodeStopped | StepKind::ConnectionsKilled
            ) && steps[primary].kind == StepKind::Finding =>
        {
            steps[primary]
                .evidence
                .push(format!("set off by: {}", steps[t].text));
            t
        }
        (None, t) => {
            if let Some(t) = t {
                steps[t].role = Role::Trigger;
            }
            primary
        }
    };
    steps[cause].role = Role::RootCause;
    steps[cause].root_cause = true;
    if steps[cause].confidence == Confidence::Possible && defect.is_some() {
        steps[cause].confidence = Confidence::Likely;
    }
    let from: Timestamp = steps[cause].at;
    for (k, s) in steps.iter_mut().enumerate() {
        // What the findings show from a poll before the root cause on follows from it (a
        // finding's start is only known to within a poll).
        if k != cause
            && s.kind == StepKind::Finding
            && s.at.0 + interval_ms >= from.0
            && s.role == Role::Context
        {
            s.role = Role::Effect;
        }
    }
    if cause != primary && steps[primary].role == Role::Context {
        steps[primary].role = Role::Effect;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TimeSpan;

    fn finding(kind: FindingKind, severity: Severity) -> Finding {
        Finding {
            kind,
            severity,
            span: TimeSpan::new(Timestamp(0), Timestamp(1)),
            title: String::new(),
            explanation: String::new(),
            numbers: std::collections::BTreeMap::new(),
            node: None,
            attribution: None,
            context: Vec::new(),
        }
    }

    #[test]
    fn a_lasting_loss_outranks_a_recovered_pause_which_outranks_the_clusters_view() {
        let r = |k, s| rank(&finding(k, s));
        let lost = r(FindingKind::ClientGroupLost, Severity::Critical);
        let paused = r(FindingKind::ClientGroupPaused, Severity::Critical);
        let idle = r(FindingKind::IdleShard, Severity::Critical);
        let churn = r(FindingKind::ConnectionChurn, Severity::Warning);
        assert!(
            lost < paused && paused < idle,
            "{lost:?} {paused:?} {idle:?}"
        );
        assert_eq!(r(FindingKind::ShortLivedClients, Severity::Critical), lost);
        assert_eq!(r(FindingKind::RedirectStorm, Severity::Critical), lost);
        assert!(idle < r(FindingKind::ClientGroupPaused, Severity::Warning));
        assert_eq!(churn, None, "churn is never the root cause");
        // An application that ended (lost_group's `info`) is never the root cause either.
        assert_eq!(r(FindingKind::ClientGroupLost, Severity::Info), None);
    }
}
