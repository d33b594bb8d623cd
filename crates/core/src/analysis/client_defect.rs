//! Known client defects: client groups running a library version with a known cluster-routing
//! defect (see [`crate::defect`]).

use std::collections::BTreeMap;

use crate::defect::known_defects;
use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::metrics::count_f64;
use crate::time::{TimeSpan, Timestamp};

use super::attribution;
use super::{Context, Detector};

/// Finds client groups running a version with a known defect.
pub(super) struct ClientDefect;

impl Detector for ClientDefect {
    fn name(&self) -> &'static str {
        "known client defect"
    }

    /// Client groups running a library version with a known cluster-routing defect.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let mut out = Vec::new();
        for g in &ctx.census.groups {
            let (Some(lib), Some(ver)) = (&g.key.lib_name, &g.key.lib_ver) else {
                continue;
            };
            for d in known_defects(lib, ver) {
                out.push(Finding {
                    kind: FindingKind::KnownClientDefect,
                    severity: Severity::Warning,
                    span: TimeSpan::new(
                        g.first_seen.max(ctx.span.start),
                        Timestamp(g.last_seen.0 + 1),
                    ),
                    title: format!("{} runs {lib} {ver}: {}", g.key.label(), d.title),
                    explanation: format!("{} Upstream: {}.", d.explanation, d.upstream),
                    numbers: BTreeMap::from([
                        ("connections_seen".to_owned(), count_f64(g.connections_seen)),
                        ("hosts".to_owned(), count_f64(g.hosts.len() as u64)),
                    ]),
                    node: None,
                    attribution: Some(Attribution::Group {
                        group: g.key.label(),
                        commands: attribution::business_commands(g),
                    }),
                    context: Vec::new(),
                });
            }
        }
        out
    }
}
