//! Short-lived clients: client groups no `CLIENT LIST` poll saw, inferred from the counters (see
//! [`crate::census::inferred`]). One finding per inferred group; critical when most of its
//! business commands were rejected or failed (a client that died on errors).

use std::collections::BTreeMap;

use crate::census::inferred::FAILING_SHARE as CRITICAL_ERROR_SHARE;
use crate::census::InferredGroup;
use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::float;
use crate::metrics::ms_to_secs;
use crate::time::TimeSpan;

use super::context::Context;
use super::detector::Detector;

/// Finds the inferred short-lived client groups.
pub(super) struct ShortLived;

impl Detector for ShortLived {
    fn name(&self) -> &'static str {
        "short-lived clients"
    }

    /// One finding per client group the counters show and the census does not.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        ctx.census.inferred.iter().map(finding).collect()
    }
}

/// The error prefix that most of the group's errors carry (`MOVED`), if any; `ERR` only when no
/// other shows (a client's `CLIENT SETINFO` rejections on Redis before 7.2 are `ERR` too).
fn main_error(g: &InferredGroup) -> Option<&str> {
    let others = g.errors.keys().any(|p| p != "ERR");
    g.errors
        .iter()
        .filter(|(p, _)| !others || p.as_str() != "ERR")
        .max_by_key(|(p, n)| (**n, std::cmp::Reverse(p.as_str())))
        .map(|(p, _)| p.as_str())
}

/// The finding of one inferred group.
fn finding(g: &InferredGroup) -> Finding {
    let b = g.business();
    let attempts = b.attempts();
    let bad = b.rejected + b.failed;
    let share = if attempts > 0 {
        float::from_u64(bad) / float::from_u64(attempts)
    } else {
        0.0
    };
    // A cluster client meets MOVED only on a stale slot map: one that lived less than a poll and
    // saw a quarter of its commands rejected or failed most likely died of it.
    let critical = attempts > 0 && share >= CRITICAL_ERROR_SHARE;
    let when = format!(
        "between {} and {}",
        g.span.start.time_of_day(),
        g.span.end.time_of_day()
    );
    let title = if g.commands.is_empty() {
        let handshakes: u64 = g.handshake.values().sum();
        format!(
            "A client not seen in CLIENT LIST connected {} times ({handshakes} handshake commands) {when} and vanished",
            g.connections_unseen
        )
    } else {
        let runs: Vec<String> = g
            .commands
            .iter()
            .map(|(c, d)| format!("{c} {} times", d.attempts()))
            .collect();
        let errors = if bad > 0 {
            format!(
                " ({:.0} % {})",
                share * 100.0,
                main_error(g).unwrap_or("rejected or failed")
            )
        } else {
            String::new()
        };
        format!(
            "A client not seen in CLIENT LIST ran {}{errors} {when} and vanished",
            runs.join(", ")
        )
    };
    let mut explanation = format!(
        "Inferred from the INFO counters, not seen: no CLIENT LIST poll listed a connection of this \
         client, so it connected and went away between two polls. Evidence: {}.",
        g.reason
    );
    if let Some(lib) = &g.likely_library {
        explanation.push_str(&format!(
            " Its connect pattern (CLIENT SETINFO rejected by the server, two ERR per connection) \
             points at {lib}."
        ));
    }
    if critical {
        explanation.push_str(
            " Most of its commands were rejected or failed: a client that died on errors, typically \
             a cluster client wedged at startup (an address remap sending every slot to one node \
             answers MOVED to everything).",
        );
    }
    let numbers = BTreeMap::from([
        ("business_attempts".to_owned(), float::from_u64(attempts)),
        ("business_rejected".to_owned(), float::from_u64(b.rejected)),
        ("business_failed".to_owned(), float::from_u64(b.failed)),
        ("error_share".to_owned(), share),
        (
            "connections_received".to_owned(),
            float::from_u64(g.connections_received),
        ),
        (
            "connections_unseen".to_owned(),
            float::from_u64(g.connections_unseen),
        ),
        ("duration_secs".to_owned(), ms_to_secs(g.span.millis())),
        ("nodes".to_owned(), float::from_u64(g.nodes.len() as u64)),
    ]);
    Finding {
        kind: FindingKind::ShortLivedClients,
        severity: if critical {
            Severity::Critical
        } else {
            Severity::Warning
        },
        // Placed at the end of the poll that first saw it fail, when one did (its first errors
        // are in that interval; a client can go on failing for polls before it dies), else where
        // it was last seen acting; its whole life is in the title. The start of the first poll it
        // shows in may be up to a poll before its first command.
        span: TimeSpan::new(
            g.first_failing
                .map_or(g.last_active.start, |f| f.end.min(g.span.end)),
            g.span.end,
        ),
        title,
        explanation,
        numbers,
        node: (g.nodes.len() == 1)
            .then(|| g.nodes.iter().next().cloned())
            .flatten(),
        attribution: Some(Attribution::Group {
            group: g.label(),
            commands: g.commands.keys().cloned().collect(),
        }),
        context: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{clients, found, info, Counters, A, T0};
    use crate::recording::Line;

    /// 10 polls of node A. A healthy client (`get`, listed every poll, connected before the
    /// recording); with `short`, a client that is never listed runs `zadd` between polls 4 and 5
    /// (50 calls, 30 rejected with MOVED) over 3 new connections.
    fn lines(short: bool, healthy: bool) -> Vec<Line> {
        lines_at(if short { &[5] } else { &[] }, healthy)
    }

    /// As [`lines`], the short-lived client acting in the polls `acting` (50 `zadd`, 30 of
    /// them rejected, 3 connections each).
    fn lines_at(acting: &[u64], healthy: bool) -> Vec<Line> {
        let acting: Vec<(u64, u64)> = acting.iter().map(|&k| (k, 30)).collect();
        lines_rejecting(&acting, healthy)
    }

    /// As [`lines_at`], the client rejected this many of its 50 `zadd` in each poll it acts in.
    fn lines_rejecting(acting: &[(u64, u64)], healthy: bool) -> Vec<Line> {
        let mut out = Vec::new();
        let (mut get, mut zadd, mut rej, mut conns) = (0u64, 0u64, 0u64, 5u64);
        for k in 0..10u64 {
            let t = T0 + k * 1000;
            if healthy && k > 0 {
                get += 100;
            }
            if let Some(&(_, rejected)) = acting.iter().find(|(a, _)| *a == k) {
                zadd += 50;
                rej += rejected;
                conns += 3;
            }
            let mut commands = vec![("get", get, 0)];
            if zadd > 0 {
                commands.push(("zadd", zadd, rej));
            }
            out.push(info(
                t,
                7000,
                A,
                &Counters {
                    uptime: 100 + k,
                    commands,
                    moved: rej,
                    conns_received: conns,
                    connected: 2,
                    ..Counters::default()
                },
            ));
            let listed = if healthy {
                format!(
                    "id=9 addr=10.9.0.1:4000 fd=9 name=app age={} idle=0 flags=N cmd=get\n",
                    50 + k
                )
            } else {
                String::new()
            };
            out.push(clients(t + 5, 7000, A, &listed));
        }
        out
    }

    #[test]
    fn a_client_between_polls_is_inferred_from_its_counters() {
        let f = found(&ShortLived, &lines(true, true));
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(f.kind, FindingKind::ShortLivedClients);
        assert_eq!(
            f.severity,
            Severity::Critical,
            "30 of 80 attempts rejected is over a quarter"
        );
        assert!((f.numbers["error_share"] - 30.0 / 80.0).abs() < 1e-9);
        // At the end of the poll that first saw it fail (it lived between the polls at +4 s and
        // +5 s).
        assert_eq!(f.span.start.as_millis(), T0 + 5000);
        assert!(
            f.title.contains("zadd 80 times (38 % MOVED)"),
            "{}",
            f.title
        );
        assert_eq!(f.numbers["connections_unseen"], 3.0);
        assert_eq!(
            f.attribution,
            Some(Attribution::Group {
                group: "short-lived client (zadd)".into(),
                commands: vec!["zadd".into()],
            })
        );
    }

    #[test]
    fn a_healthy_long_lived_client_and_an_idle_cluster_give_nothing() {
        assert!(found(&ShortLived, &lines(false, true)).is_empty());
        assert!(found(&ShortLived, &lines(false, false)).is_empty());
    }

    /// A client that acted and failed over three polls is placed at the end of the first (the
    /// poll that first saw it fail), not where it vanished (+6 s to +7 s); its whole life is in
    /// the title.
    #[test]
    fn a_client_over_polls_is_placed_where_it_first_failed() {
        let f = found(&ShortLived, &lines_at(&[5, 6, 7], true));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].span.start.as_millis(), T0 + 5000);
        assert!(f[0].numbers["duration_secs"] >= 3.0, "{:?}", f[0].numbers);
    }

    /// A MOVED it followed to success (1 of 51 attempts) is not where it began to fail: that is
    /// the first poll with a quarter of its commands rejected.
    #[test]
    fn a_client_is_placed_where_a_quarter_of_its_commands_first_failed() {
        let f = found(
            &ShortLived,
            &lines_rejecting(&[(5, 1), (6, 30), (7, 30)], true),
        );
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].span.start.as_millis(), T0 + 6000);
    }
}
