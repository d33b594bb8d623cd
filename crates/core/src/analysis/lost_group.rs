//! Lost client groups: business traffic that vanishes or turns into errors after a topology
//! change, tied to the client groups whose connections are gone.

use std::collections::BTreeMap;

use crate::census::ClientGroup;
use crate::finding::{Finding, FindingKind, Severity};
use crate::time::{TimeSpan, Timestamp};

use super::attribution;
use super::{Context, Detector, Rates};

/// Finds the clients lost by a topology change.
pub(super) struct LostGroup;

impl Detector for LostGroup {
    fn name(&self) -> &'static str {
        "lost client group"
    }

    /// Business traffic that vanishes or turns into errors after a topology change.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let Some(after) = ctx.after else {
            return Vec::new();
        };
        let sum = |w: TimeSpan| {
            ctx.metrics.nodes.iter().fold(Rates::default(), |acc, n| {
                let r = Rates::of(n, w);
                Rates {
                    secs: acc.secs.max(r.secs),
                    calls: acc.calls + r.calls,
                    rejected: acc.rejected + r.rejected,
                    failed: acc.failed + r.failed,
                    moved: acc.moved + r.moved,
                    ask: acc.ask + r.ask,
                    new_connections: acc.new_connections + r.new_connections,
                }
            })
        };
        let b = sum(ctx.before);
        let a = sum(after);
        if b.calls < 0.5 || a.secs * 1000.0 < 3.0 * ctx.interval() {
            return Vec::new();
        }
        let ok_after = a.calls - a.failed.min(a.calls);
        if ok_after >= 0.1 * b.calls {
            return Vec::new();
        }
        // Groups seen before the change whose connections are gone by the end.
        let change_start = ctx.before.end;
        let settle = Timestamp(after.end.0.saturating_sub(2 * ctx.interval_ms));
        let vanished: Vec<&ClientGroup> = ctx
            .census
            .groups
            .iter()
            .filter(|g| g.first_seen < change_start && g.last_seen < settle)
            .collect();
        let attribution = attribution::to_groups(&vanished);
        let numbers = BTreeMap::from([
            ("commands_per_sec_before".to_owned(), b.calls),
            ("commands_per_sec_after".to_owned(), a.calls),
            ("rejected_per_sec_after".to_owned(), a.rejected),
            ("failed_per_sec_after".to_owned(), a.failed),
            ("window_secs_after".to_owned(), a.secs),
        ]);
        vec![Finding {
            kind: FindingKind::ClientGroupLost,
            severity: Severity::Critical,
            span: after,
            title: format!(
                "Successful commands fell from {:.1}/s to {:.1}/s after the topology change and did not return",
                b.calls, ok_after
            ),
            explanation: format!(
                "Before the slots moved the cluster executed {:.1} business commands/s; after the change it executed {:.1}/s \
                 ({:.1}/s rejected, {:.1}/s failed) while the server reported the cluster as healthy. The clients stopped \
                 sending, or every command they send is redirected or fails: a client whose node list or routing table did \
                 not survive the change (for example a cluster client that dropped its startup nodes on a connection error). \
                 Check the application's error logs for the same moment.",
                b.calls, a.calls, a.rejected, a.failed
            ),
            numbers,
            node: None,
            attribution,
            context: Vec::new(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{
        clients, found, info, reshard_lines, round, topology, view, Counters, A, B, T0,
    };
    use crate::finding::Attribution;
    use crate::recording::Line;

    /// 30 polls; at poll 10 slots 8192–16383 move to B. Before, A executes 200 `get`/s for
    /// `groups` (one connection each, `lib-name lib-ver`); after, nothing, and the groups'
    /// connections are gone. With `late`, a group that connects only after the change is listed.
    fn silenced_lines(groups: &[&str], late: bool) -> Vec<Line> {
        let mut lines = vec![
            topology(T0, 7000, A, view(A, "0-16383", "")),
            topology(T0, 7001, B, view(B, "0-16383", "")),
        ];
        let mut a = Counters {
            uptime: 100,
            connected: 3,
            ..Counters::default()
        };
        let mut b = Counters {
            uptime: 100,
            ..Counters::default()
        };
        for k in 0..30u64 {
            let t = T0 + k * 1000;
            if k == 10 {
                lines.push(topology(t, 7000, A, view(A, "0-8191", "8192-16383")));
                lines.push(topology(t, 7001, B, view(B, "0-8191", "8192-16383")));
            }
            a.uptime += 1;
            b.uptime += 1;
            a.commands = vec![("get", 200 * k.min(10), 0)];
            lines.push(info(t, 7000, A, &a));
            lines.push(info(t, 7001, B, &b));
            let mut list = String::new();
            if k < 10 {
                for (i, g) in groups.iter().enumerate() {
                    let (lib, ver) = g.split_once(' ').unwrap();
                    list.push_str(&format!(
                        "id={i} addr=10.2.0.{i}:5000 fd=9 name= age={k} idle=0 flags=N cmd=get lib-name={lib} lib-ver={ver}\n"
                    ));
                }
            } else if late {
                list.push_str("id=99 addr=10.9.0.1:5000 fd=9 name= age=1 idle=0 flags=N cmd=get lib-name=jedis lib-ver=5.0.0\n");
            }
            lines.push(clients(t, 7000, A, &list));
            lines.push(round(t, k));
        }
        lines
    }

    #[test]
    fn traffic_that_stops_after_the_change_is_lost_and_tied_to_the_vanished_group() {
        let f = found(&LostGroup, &silenced_lines(&["redis-py 4.6.0"], true));
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(f.kind, FindingKind::ClientGroupLost);
        assert_eq!(f.severity, Severity::Critical);
        assert!((f.numbers["commands_per_sec_before"] - 200.0).abs() < 1e-9);
        assert_eq!(f.numbers["commands_per_sec_after"], 0.0);
        assert_eq!(
            f.title,
            "Successful commands fell from 200.0/s to 0.0/s after the topology change and did not return"
        );
        // The group that connected after the change is not the one lost.
        assert_eq!(
            f.attribution,
            Some(Attribution::Group {
                group: "redis-py 4.6.0".into(),
                commands: vec!["get".into()],
            })
        );
    }

    #[test]
    fn several_vanished_groups_are_ambiguous() {
        let f = found(
            &LostGroup,
            &silenced_lines(&["redis-py 4.6.0", "go-redis 9.0.0"], false),
        );
        assert_eq!(f.len(), 1, "{f:#?}");
        match &f[0].attribution {
            Some(Attribution::Ambiguous { groups, commands }) => {
                assert_eq!(groups.len(), 2, "{groups:?}");
                assert!(commands.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_group_seen_leaves_the_finding_unattributed() {
        let f = found(&LostGroup, &silenced_lines(&[], false));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].attribution, None);
    }

    #[test]
    fn traffic_that_moves_with_the_slots_is_not_lost() {
        assert!(found(&LostGroup, &reshard_lines(true)).is_empty());
        // Half of it rejected with MOVED: still executed at half the rate, so not lost either.
        assert!(found(&LostGroup, &reshard_lines(false)).is_empty());
    }
}
