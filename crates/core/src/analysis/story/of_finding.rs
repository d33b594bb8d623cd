//! A finding as a story step: one short sentence of what the clients did, the finding's group,
//! its labelled numbers as evidence, and how sure the attribution is.

use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::time::format_millis;

use super::step::{Confidence, Role, Step, StepKind};

/// Who a finding is about, in a sentence, and the group label when one group is named.
fn who(f: &Finding) -> (String, Option<String>) {
    match &f.attribution {
        Some(Attribution::Group { group, .. }) => (format!("group {group}"), Some(group.clone())),
        Some(Attribution::Ambiguous { groups, .. }) => {
            (format!("one of the groups {}", groups.join(" / ")), None)
        }
        Some(Attribution::Unknown { commands }) if !commands.is_empty() => {
            (format!("the clients of {}", commands.join(", ")), None)
        }
        _ => ("the clients".to_owned(), None),
    }
}

/// The commands a finding is carried by, as a phrase (`its commands` without any).
fn commands(f: &Finding) -> String {
    let c = match &f.attribution {
        Some(
            Attribution::Group { commands, .. }
            | Attribution::Ambiguous { commands, .. }
            | Attribution::Unknown { commands },
        ) => commands.clone(),
        None => Vec::new(),
    };
    if c.is_empty() {
        "its commands".to_owned()
    } else {
        c.join(", ")
    }
}

/// A number of the finding, 0 when absent.
fn n(f: &Finding, key: &str) -> f64 {
    f.numbers.get(key).copied().unwrap_or(0.0)
}

/// The MOVED share of the commands carrying a storm (the largest per-command share), or the
/// share of all commands when none is named.
fn carried_share(f: &Finding) -> f64 {
    f.numbers
        .iter()
        .filter(|(k, _)| k.starts_with("moved_share:"))
        .map(|(_, v)| *v)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
        .unwrap_or_else(|| n(f, "redirect_share"))
}

/// The step of finding `i`, `None` for findings that are not events (informational ones, and
/// known defects, which the root cause cites instead).
pub(super) fn step(i: usize, f: &Finding) -> Option<Step> {
    if f.severity == Severity::Info || f.kind == FindingKind::KnownClientDefect {
        return None;
    }
    let (who, group) = who(f);
    let cmds = commands(f);
    let duration = format_millis(f.span.millis());
    let text = match f.kind {
        FindingKind::ClientGroupLost if n(f, "commands_per_sec_after") < 0.1 * n(f, "commands_per_sec_before") => format!(
            "{who} stops: successful {cmds} fall from {:.1}/s to {:.1}/s and do not return",
            n(f, "commands_per_sec_before"),
            n(f, "commands_per_sec_after")
        ),
        FindingKind::ClientGroupLost => format!(
            "{who} loses {:.0} % of its successful {cmds} ({:.1}/s to {:.1}/s) until the end",
            n(f, "lost_share") * 100.0,
            n(f, "commands_per_sec_before"),
            n(f, "commands_per_sec_after")
        ),
        FindingKind::ClientGroupPaused => format!(
            "{who} pauses for {duration}: successful {cmds} fall from {:.1}/s to {:.1}/s, then recover",
            n(f, "commands_per_sec_before"),
            n(f, "commands_per_sec_after")
        ),
        FindingKind::RedirectStorm => format!(
            "{who} keeps being redirected: {:.1} % of {cmds} answered MOVED/ASK for {duration}{}",
            carried_share(f) * 100.0,
            f.node.as_ref().map_or_else(String::new, |n| format!(
                "; every command lands first on {n} (an address remap to it is likely)"
            ))
        ),
        FindingKind::ConnectionChurn => format!(
            "connections churn for {duration}: {:.1} new connections/s against {:.0} open",
            n(f, "new_connections_per_sec"),
            n(f, "open_connections")
        ),
        FindingKind::IdleShard => format!(
            "node {} owns {:.0} slots ({:.0} % of the keyspace) and receives no commands",
            f.node.as_ref().map_or_else(|| "?".to_owned(), ToString::to_string),
            n(f, "slots"),
            n(f, "slot_share") * 100.0
        ),
        _ => f.title.clone(),
    };
    let confidence = match (&f.attribution, f.severity) {
        (Some(Attribution::Group { .. }), _) => Confidence::Likely,
        (None, _) if matches!(f.kind, FindingKind::IdleShard | FindingKind::SlotCoverage) => {
            Confidence::Certain
        }
        _ => Confidence::Possible,
    };
    let evidence: Vec<String> = f
        .attribution
        .iter()
        .map(|a| format!("attributed to {}", a.describe()))
        .collect();
    Some(Step {
        at: f.span.start,
        until: Some(f.span.end),
        kind: StepKind::Finding,
        finding_kind: Some(f.kind),
        text,
        evidence,
        confidence,
        role: Role::Context,
        root_cause: false,
        group,
        finding: Some(i),
    })
}
