//! Findings: typed conclusions drawn from a recording, each with its time span, severity, the
//! numbers behind it and a paragraph that explains it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::node::NodeAddr;
use crate::time::TimeSpan;

/// What a finding is about. The snake_case names are stable: they are the `kind` in JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A shard owns slots (and keys) but receives no commands after a topology change.
    IdleShard,
    /// MOVED / ASK redirections sustained far above a reshard's normal decaying tail.
    RedirectStorm,
    /// Redirections right after a topology change that decayed: normal stale routing.
    RedirectsDecayed,
    /// New connections per second far above the connections open: clients rebuilding.
    ConnectionChurn,
    /// A client group's successful commands fell and did not return: it stopped, or what it sends
    /// fails.
    ClientGroupLost,
    /// A client group's successful commands fell for a while, then recovered.
    ClientGroupPaused,
    /// A client group no `CLIENT LIST` poll saw, inferred from the counters: it connected and
    /// went away between two polls.
    ShortLivedClients,
    /// Slots without an owner, or nodes disagreeing about owners.
    SlotCoverage,
    /// A client group runs a library version with a known cluster-routing defect.
    KnownClientDefect,
}

impl FindingKind {
    /// The kind in words, for people: `client group lost`.
    pub fn words(self) -> &'static str {
        match self {
            FindingKind::IdleShard => "idle shard",
            FindingKind::RedirectStorm => "redirect storm",
            FindingKind::RedirectsDecayed => "redirects that decayed",
            FindingKind::ConnectionChurn => "connection churn",
            FindingKind::ClientGroupLost => "client group lost",
            FindingKind::ClientGroupPaused => "client group paused",
            FindingKind::ShortLivedClients => "short-lived clients",
            FindingKind::SlotCoverage => "slot coverage",
            FindingKind::KnownClientDefect => "known client defect",
        }
    }

    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::IdleShard => "idle_shard",
            FindingKind::RedirectStorm => "redirect_storm",
            FindingKind::RedirectsDecayed => "redirects_decayed",
            FindingKind::ConnectionChurn => "connection_churn",
            FindingKind::ClientGroupLost => "client_group_lost",
            FindingKind::ClientGroupPaused => "client_group_paused",
            FindingKind::ShortLivedClients => "short_lived_clients",
            FindingKind::SlotCoverage => "slot_coverage",
            FindingKind::KnownClientDefect => "known_client_defect",
        }
    }
}

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing, not a fault.
    Info,
    /// Likely part of the incident.
    Warning,
    /// Traffic is lost or wrong.
    Critical,
}

/// How a finding's traffic was attributed to a client group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Attribution {
    /// The commands that carry it are used by this group only.
    Group {
        /// The group's label.
        group: String,
        /// The commands that tie it to the group.
        commands: Vec<String>,
    },
    /// Several groups use the commands that carry it.
    Ambiguous {
        /// The candidate groups.
        groups: Vec<String>,
        /// The commands.
        commands: Vec<String>,
    },
    /// No group was seen using the commands (no census, or connections shorter than a poll).
    Unknown {
        /// The commands.
        commands: Vec<String>,
    },
}

impl Attribution {
    /// The attribution as one line of text: `redis-py 5.0.0 (via zrevrange)`, `ambiguous: …`,
    /// `no client group identified`.
    pub fn describe(&self) -> String {
        match self {
            Attribution::Group { group, commands } if commands.is_empty() => group.clone(),
            Attribution::Group { group, commands } => {
                format!("{group} (via {})", commands.join(", "))
            }
            Attribution::Ambiguous { groups, commands } => format!(
                "ambiguous: {} share {}",
                groups.join(" / "),
                if commands.is_empty() {
                    "the window".to_owned()
                } else {
                    commands.join(", ")
                }
            ),
            Attribution::Unknown { commands } if commands.is_empty() => {
                "no client group identified".to_owned()
            }
            Attribution::Unknown { commands } => {
                format!("no client group seen using {}", commands.join(", "))
            }
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What it is about.
    pub kind: FindingKind,
    /// How much it matters.
    pub severity: Severity,
    /// When it held.
    pub span: TimeSpan,
    /// One line.
    pub title: String,
    /// One paragraph: what the numbers say and what usually causes it.
    pub explanation: String,
    /// The numbers behind it, by name.
    pub numbers: BTreeMap<String, f64>,
    /// The node it concerns, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeAddr>,
    /// The client group it concerns or is attributed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    /// Where it sits relative to outside evidence ("first client error 12 s after migration
    /// start").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<String>,
}

/// One of a finding's numbers as `analyze` and the viewer print it: whole numbers without
/// decimals, shares below 1 with three, the rest with one.
pub fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() < 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.1}")
    }
}

impl Finding {
    /// Orders findings by importance: severity, then kind, then time.
    pub fn importance_key(&self) -> (std::cmp::Reverse<Severity>, FindingKind, u64) {
        (
            std::cmp::Reverse(self.severity),
            self.kind,
            self.span.start.as_millis(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_the_reports_print_them() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.3712), "0.371");
        assert_eq!(number(12.34), "12.3");
    }

    #[test]
    fn attributions_read_as_one_line() {
        let a = Attribution::Group {
            group: "redis-py 5.0.0".into(),
            commands: vec!["zrevrange".into()],
        };
        assert_eq!(a.describe(), "redis-py 5.0.0 (via zrevrange)");
        let u = Attribution::Unknown { commands: vec![] };
        assert_eq!(u.describe(), "no client group identified");
        let m = Attribution::Ambiguous {
            groups: vec!["a".into(), "b".into()],
            commands: vec![],
        };
        assert_eq!(m.describe(), "ambiguous: a / b share the window");
    }
}
