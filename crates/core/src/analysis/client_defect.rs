//! Known client defects: client groups running a library version with a known cluster-routing
//! defect (see [`crate::defect`]). A group that reports its library (`lib-name`, `lib-ver`) is
//! matched directly; one without a `lib-name` on a server that rejects `CLIENT SETINFO` is
//! matched through the rejection fingerprint its connections leave (see [`crate::fingerprint`]),
//! naming the candidate libraries and how sure that is, but only when every library that fits
//! is the one with the defect (issue 28: a fingerprint several libraries share claims none).

use std::collections::BTreeMap;

use crate::census::handshake;
use crate::census::ClientGroup;
use crate::defect::{defects_in_range, known_defects, Defect};
use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::fingerprint::{self, Candidate, HandshakeCounts, SetinfoRejection};
use crate::float;
use crate::time::{TimeSpan, Timestamp};

use super::attribution;
use super::context::Context;
use super::detector::Detector;

/// Finds client groups running a version with a known defect.
pub(super) struct ClientDefect;

impl Detector for ClientDefect {
    fn name(&self) -> &'static str {
        "known client defect"
    }

    /// Client groups running a library version with a known cluster-routing defect.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let mut out = Vec::new();
        let rejects = fingerprint::any_rejects_setinfo(
            ctx.summary.nodes.iter().filter_map(|n| n.server.as_ref()),
        );
        for g in &ctx.census.groups {
            if g.key.lib_name.is_none() {
                out.extend(by_fingerprint(ctx, g, rejects));
            }
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

/// The known-defect findings of a group without `lib-name` whose connections left the `CLIENT
/// SETINFO` rejection fingerprint: one per defect a candidate's versions carry. Only groups
/// seen running business commands are considered (an application, not a tool).
fn by_fingerprint(ctx: &Context<'_>, g: &ClientGroup, rejects: Option<bool>) -> Vec<Finding> {
    if attribution::business_commands(g).is_empty() {
        return Vec::new();
    }
    let counts = handshake::handshake_counts(ctx.metrics, g, ctx.interval_ms);
    let Some(r) = fingerprint::setinfo_rejection(&counts, rejects) else {
        return Vec::new();
    };
    // A defect is claimed only where the fingerprint singles out its library: a pattern other
    // libraries leave as well (redis-py 8.0, go-redis v9 and GLIDE 2.5 each leave two `ERR` per
    // `HELLO`) says which libraries fit (the census's candidates), not which one runs.
    if r.library().is_none() {
        return Vec::new();
    }
    let mut defects: Vec<(&Candidate, &'static Defect)> = Vec::new();
    for c in &r.candidates {
        for d in defects_in_range(c.lib_name, c.from, c.to) {
            defects.push((c, d));
        }
    }
    defects
        .into_iter()
        .map(|(c, d)| fingerprint_finding(ctx, g, &r, &counts, c, d))
        .collect()
}

/// One known-defect finding inferred from the rejection fingerprint.
fn fingerprint_finding(
    ctx: &Context<'_>,
    g: &ClientGroup,
    r: &SetinfoRejection,
    counts: &HandshakeCounts,
    c: &Candidate,
    d: &Defect,
) -> Finding {
    let names: Vec<String> = r.candidates.iter().map(Candidate::label).collect();
    let hello = if c.hello {
        "with a HELLO before it"
    } else {
        "without a HELLO"
    };
    Finding {
        kind: FindingKind::KnownClientDefect,
        severity: Severity::Warning,
        span: TimeSpan::new(
            g.first_seen.max(ctx.span.start),
            Timestamp(g.last_seen.0 + 1),
        ),
        title: format!(
            "{} (no lib-name, CLIENT SETINFO rejected) is {} {}; {} {}: {}",
            g.key.label(),
            r.certainty.word(),
            names.join(" or "),
            c.lib_name,
            d.versions(),
            d.title
        ),
        explanation: format!(
            "Inferred, not reported: the server rejects CLIENT SETINFO (Redis before 7.2), so              these connections carry no lib-name. The rejection itself is a fingerprint: {} ERR              replies came with {} connections received around this group's sightings, two per              connection as a library that sends CLIENT SETINFO LIB-NAME and LIB-VER at connect              and ignores the error leaves them, {hello} ({:.1} HELLO per connection). That fits              {} ({}; source: {}). If it is {} {}: {} Upstream: {}.",
            counts.err,
            counts.connections,
            r.hello_per_connection,
            names.join(" or "),
            r.certainty.word(),
            c.source,
            c.lib_name,
            d.versions(),
            d.explanation,
            d.upstream
        ),
        numbers: BTreeMap::from([
            (
                "connections_seen".to_owned(),
                float::from_u64(g.connections_seen),
            ),
            ("hosts".to_owned(), float::from_u64(g.hosts.len() as u64)),
            ("setinfo_errors".to_owned(), float::from_u64(counts.err)),
            (
                "fingerprinted_connections".to_owned(),
                float::from_u64(r.connections),
            ),
            ("hello_per_connection".to_owned(), r.hello_per_connection),
        ]),
        node: None,
        attribution: Some(Attribution::Group {
            group: g.key.label(),
            commands: attribution::business_commands(g),
        }),
        context: Vec::new(),
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
