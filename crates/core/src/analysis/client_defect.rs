//! Known client defects: client groups running a library version with a known cluster-routing
//! defect (see [`crate::defect`]).

use std::collections::BTreeMap;

use crate::defect::known_defects;
use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::float;
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
                        (
                            "connections_seen".to_owned(),
                            float::from_u64(g.connections_seen),
                        ),
                        ("hosts".to_owned(), float::from_u64(g.hosts.len() as u64)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{clients, found, A, T0};

    fn listing(lib: &str) -> Vec<crate::recording::Line> {
        vec![
            clients(
                T0,
                7000,
                A,
                &format!(
                    "id=9 addr=10.9.0.1:4000 fd=9 name= age=9 idle=0 flags=N cmd=zadd {lib}\n"
                ),
            ),
            clients(
                T0 + 5000,
                7000,
                A,
                &format!(
                    "id=9 addr=10.9.0.1:4000 fd=9 name= age=14 idle=0 flags=N cmd=zadd {lib}\n"
                ),
            ),
        ]
    }

    #[test]
    fn a_group_on_a_defective_version_is_named() {
        let f = found(&ClientDefect, &listing("lib-name=redis-py lib-ver=5.0.0"));
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(f.kind, FindingKind::KnownClientDefect);
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.title.starts_with("redis-py 5.0.0 runs redis-py 5.0.0: "),
            "{}",
            f.title
        );
        assert!(
            f.explanation.contains("Upstream: redis/redis-py#2555"),
            "{}",
            f.explanation
        );
        assert_eq!(f.numbers["connections_seen"], 1.0);
        assert_eq!(f.numbers["hosts"], 1.0);
        assert_eq!(f.span, TimeSpan::new(Timestamp(T0), Timestamp(T0 + 5001)));
        assert_eq!(
            f.attribution,
            Some(Attribution::Group {
                group: "redis-py 5.0.0".into(),
                commands: vec!["zadd".into()],
            })
        );
    }

    #[test]
    fn fixed_or_unversioned_clients_are_not_named() {
        assert!(found(&ClientDefect, &listing("lib-name=redis-py lib-ver=7.2.0")).is_empty());
        assert!(found(&ClientDefect, &listing("lib-name=redis-py")).is_empty());
        assert!(found(&ClientDefect, &listing("")).is_empty());
    }
}
