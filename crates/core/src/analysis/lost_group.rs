//! Lost client groups: a group whose successful commands fall and do not return (it stopped, or
//! everything it sends fails), found per traffic stream at the poll where the fall begins, and
//! the triggers just before it (a node that stopped answering, slots that moved). A fall that
//! recovers is a pause.

use std::collections::BTreeMap;

use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::moment::at;
use crate::time::{format_millis, TimeSpan, Timestamp};

use super::attribution::business_commands;
use super::outage::{outages, Outage};
use super::stream::{streams, Grid, Stream};
use super::{Context, Detector};

/// Finds client groups whose traffic fell and did not return, or paused.
pub(super) struct LostGroup;

/// A fall smaller than this share of the level before it is noise.
pub const LOST_SHARE: f64 = 0.2;
/// Buckets before a fall that set the level it falls from, at most.
const BASELINE_BUCKETS: usize = 20;
/// Buckets a fall must last, at least (and at least [`MIN_AFTER_MS`]), to be a stop rather than
/// the end of an application's run at the end of the recording.
const MIN_AFTER_BUCKETS: usize = 4;
/// Milliseconds a fall must last, at least.
const MIN_AFTER_MS: u64 = 2_000;
/// How long before a fall a node's outage or a slot move still counts as its trigger.
const TRIGGER_WINDOW_MS: u64 = 5_000;

/// The median of `v` (0 for none).
fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied().unwrap_or(0.0)
}

/// The mean of `v` (0 for none).
fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// A fall in one stream.
#[derive(Clone, Debug, PartialEq)]
struct Fall {
    /// When it began (see [`moment`]).
    moment: Timestamp,
    /// The bucket after which it had recovered, `None` when it lasts to the end.
    recovered: Option<usize>,
    /// Successful commands per second before.
    before: f64,
    /// Successful commands per second during the fall (mean).
    during: f64,
    /// Failed or rejected commands per second during the fall (mean).
    errors_during: f64,
    /// Failed or rejected commands per second before.
    errors_before: f64,
}

impl Fall {
    /// The share of the level before that was lost.
    fn share(&self) -> f64 {
        if self.before > 0.0 {
            (1.0 - self.during / self.before).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

/// The stream's buckets with data, as (bucket, successes, errors).
fn points(s: &Stream) -> Vec<(usize, f64, f64)> {
    (0..s.ok.len())
        .filter(|&i| s.seen[i])
        .map(|i| (i, s.ok[i], s.errors[i]))
        .collect()
}

/// The first fall of `s` that lasts: a point from which every later point stays below the level
/// before it by more than half of the loss, for at least [`MIN_AFTER_BUCKETS`] buckets; or that
/// recovers (a pause) after at least two low buckets.
fn first_fall(s: &Stream, grid: Grid) -> Option<Fall> {
    let p = points(s);
    let start = p.iter().position(|&(_, ok, _)| ok > 0.0)?;
    let min_after = MIN_AFTER_BUCKETS
        .max(usize::try_from(MIN_AFTER_MS.div_ceil(grid.bucket_ms)).unwrap_or(MIN_AFTER_BUCKETS));
    for c in start + 2..p.len() {
        let from = c.saturating_sub(BASELINE_BUCKETS).max(start);
        let base_ok: Vec<f64> = p[from..c].iter().map(|x| x.1).collect();
        let before = median(&base_ok);
        if before <= 0.0 || p[c].1 >= before * (1.0 - LOST_SHARE) {
            continue;
        }
        // The fall begins at c (perhaps part-way through the bucket). It lasts while later
        // points stay below the threshold halfway between the level before and the low.
        let low: Vec<f64> = p[c + 1..].iter().map(|x| x.1).collect();
        let floor = low
            .iter()
            .take(min_after)
            .copied()
            .fold(f64::INFINITY, f64::min);
        if !floor.is_finite() {
            return None;
        }
        let threshold = before - (before - floor.min(p[c].1)) / 2.0;
        let run = low.iter().take_while(|&&v| v < threshold).count();
        let errors_before = mean(&p[from..c].iter().map(|x| x.2).collect::<Vec<_>>());
        let moment = |during: f64| moment(&p, c, grid, before, during);
        if run == low.len() && run >= min_after {
            let during = mean(&low);
            let moment = moment(during);
            let fall = Fall {
                moment,
                recovered: None,
                before,
                during,
                errors_during: mean(&p[c + 1..].iter().map(|x| x.2).collect::<Vec<_>>()),
                errors_before,
            };
            if fall.share() >= LOST_SHARE {
                return Some(fall);
            }
        } else if run >= 2 && run < low.len() {
            let during = mean(&low[..run]);
            let moment = moment(during);
            let fall = Fall {
                moment,
                recovered: Some(p[c + 1 + run].0),
                before,
                during,
                errors_during: mean(
                    &p[c + 1..c + 1 + run]
                        .iter()
                        .map(|x| x.2)
                        .collect::<Vec<_>>(),
                ),
                errors_before,
            };
            if fall.share() >= 0.5 {
                return Some(fall);
            }
        }
    }
    None
}

/// When a fall from `before` to `during` that shows first in point `c` began: each of the points
/// `c - 1` and `c` spent the share `(before - x) / (before - during)` of its bucket after the fall,
/// so the fall began that much time before the end of bucket `c` (noise in the point before `c`
/// moves the estimate by a fraction of a bucket).
fn moment(p: &[(usize, f64, f64)], c: usize, grid: Grid, before: f64, during: f64) -> Timestamp {
    let depth = before - during;
    let after_share = |x: f64| {
        if depth > 0.0 {
            ((before - x) / depth).clamp(0.0, 1.0)
        } else {
            1.0
        }
    };
    let mut share = after_share(p[c].1);
    if c > 0 && p[c - 1].0 + 1 == p[c].0 && share >= 0.999 {
        share += after_share(p[c - 1].1);
    }
    let end = grid.time(p[c].0 + 1).0;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // at most two buckets
    let back = (share * crate::float::from_u64(grid.bucket_ms)) as u64;
    Timestamp(end.saturating_sub(back))
}

/// What happened just before a fall at `t`: a node that stopped answering, slots that moved.
fn triggers(ctx: &Context<'_>, outages: &[Outage], t: Timestamp) -> Vec<String> {
    let window = TimeSpan::new(
        Timestamp(t.0.saturating_sub(TRIGGER_WINDOW_MS)),
        Timestamp(t.0 + ctx.interval_ms + 1),
    );
    let start = ctx.span.start;
    let mut out = Vec::new();
    for o in outages.iter().filter(|o| window.contains(o.last_answer)) {
        let how_long = match o.answered_again {
            Some(_) => format!("for {}", format_millis(o.millis(ctx.span.end))),
            None => "until the end".to_owned(),
        };
        out.push(format!(
            "node {} stopped answering after {} ({how_long})",
            o.node,
            at(o.last_answer, start)
        ));
    }
    for m in ctx
        .summary
        .changes()
        .filter(|m| window.contains(m.span.start))
    {
        out.push(format!(
            "{} slots began moving at {}",
            m.slots,
            at(m.span.start, start)
        ));
    }
    for k in super::kills::kills(ctx)
        .into_iter()
        .filter(|k| window.contains(k.at))
    {
        out.push(k.text(start));
    }
    out
}

/// The group a stream belongs to, as an attribution: its own group; for commands several groups
/// share, the one of them whose connections were gone a few polls after the fall (at `t`), or
/// all of them.
fn attribution_of(ctx: &Context<'_>, s: &Stream, t: Timestamp) -> Attribution {
    match s.group {
        Some(g) => Attribution::Group {
            group: ctx.census.groups[g].key.label(),
            commands: s.commands.clone(),
        },
        None => {
            let using: Vec<&crate::census::ClientGroup> = ctx
                .census
                .groups
                .iter()
                .filter(|g| business_commands(g).iter().any(|c| s.commands.contains(c)))
                .collect();
            let settle = Timestamp(t.0 + 3 * ctx.interval_ms);
            let gone: Vec<_> = using
                .iter()
                .filter(|g| g.first_seen <= t && g.last_seen < settle)
                .collect();
            if let [one] = gone.as_slice() {
                return Attribution::Group {
                    group: one.key.label(),
                    commands: s.commands.clone(),
                };
            }
            let users: Vec<String> = using.iter().map(|g| g.key.label()).collect();
            if users.is_empty() {
                Attribution::Unknown {
                    commands: s.commands.clone(),
                }
            } else {
                Attribution::Ambiguous {
                    groups: users,
                    commands: s.commands.clone(),
                }
            }
        }
    }
}

/// Who a fall is about, in a sentence: the group it is attributed to, or its commands' clients.
fn who(attribution: &Attribution, s: &Stream) -> String {
    match attribution {
        Attribution::Group { group, .. } => format!("client group {group}"),
        _ => format!("the clients of {}", s.commands_text()),
    }
}

/// The finding of one fall.
fn finding(ctx: &Context<'_>, grid: Grid, s: &Stream, f: &Fall, outages: &[Outage]) -> Finding {
    let t = f.moment;
    let start = ctx.span.start;
    let trig = triggers(ctx, outages, t);
    let erroring = f.errors_during > f.errors_before * 2.0 + 0.5;
    let stopped = f.during < f.before * 0.1;
    let attribution = attribution_of(ctx, s, t);
    let who = who(&attribution, s);
    let cmds = s.commands_text();
    let lost_pct = f.share() * 100.0;
    // A client whose commands failed on the client side (timeouts) reconnects; one that only
    // waited for a stalled node does not: the group's new connections in the census during the
    // pause and the two polls after it tell the two apart.
    let pause_end = f.recovered.map_or(ctx.span.end, |r| grid.time(r));
    let reconnected = match &attribution {
        Attribution::Group { group, .. } => ctx
            .census
            .groups
            .iter()
            .find(|g| &g.key.label() == group)
            .is_some_and(|g| {
                g.new_in(TimeSpan::new(
                    t,
                    Timestamp(pause_end.0 + 2 * ctx.interval_ms),
                )) > 0
            }),
        _ => false,
    };
    // A loss that lasts is critical when something set it off or the servers failed the group's
    // commands; with neither, an application stopped on purpose looks the same.
    let lasting = if trig.is_empty() && !erroring {
        Severity::Warning
    } else {
        Severity::Critical
    };
    let (kind, severity, title) = match (f.recovered, stopped) {
        // A pause loses the group's traffic while it lasts when its commands failed: the servers
        // failed them, or something the collector saw set it off (a node that stopped answering)
        // and the group reconnected (as a client does after timeouts). A client that only waited,
        // or a pause with no cause seen (a process paused on the client side), is a warning.
        (Some(r), _) => (
            FindingKind::ClientGroupPaused,
            if erroring || (!trig.is_empty() && reconnected) {
                Severity::Critical
            } else {
                Severity::Warning
            },
            format!(
                "{who} paused at {}: {cmds} fell from {:.1}/s to {:.1}/s for {}, then recovered",
                at(t, start),
                f.before,
                f.during,
                format_millis(grid.time(r).millis_since(t))
            ),
        ),
        (None, true) => (
            FindingKind::ClientGroupLost,
            lasting,
            format!(
                "{who} stopped at {}: successful {cmds} fell from {:.1}/s to {:.1}/s and did not return",
                at(t, start),
                f.before,
                f.during
            ),
        ),
        (None, false) => (
            FindingKind::ClientGroupLost,
            lasting,
            format!(
                "{who} lost {lost_pct:.0} % of its successful commands at {}: {cmds} fell from {:.1}/s to {:.1}/s and stayed there",
                at(t, start),
                f.before,
                f.during
            ),
        ),
    };
    let cause = if trig.is_empty() {
        "Nothing the collector saw came just before it: no node stopped answering and no slots \
         moved. An application that was stopped on purpose looks the same from the servers."
            .to_owned()
    } else {
        format!("Just before it: {}.", trig.join("; "))
    };
    let errors = if erroring {
        format!(
            " Meanwhile the servers rejected or failed {:.1} of its commands per second (from {:.1}/s before).",
            f.errors_during, f.errors_before
        )
    } else {
        String::new()
    };
    let fleet = match (&attribution, f.recovered, stopped) {
        (Attribution::Group { group, .. }, None, false) => {
            let hosts = ctx
                .census
                .groups
                .iter()
                .find(|g| &g.key.label() == group)
                .map_or(0, |g| g.hosts.len());
            super::fleet::shape(f.share(), hosts).map(|s| (s, group.clone()))
        }
        _ => None,
    };
    let fleet_text = fleet.as_ref().map_or_else(String::new, |(s, group)| {
        format!(
            " The loss stays at {:.1} % of the group's traffic: the shape of {} stopping while the \
             others go on (a partial fleet: instances still on an old build or config).",
            f.share() * 100.0,
            s.text(group)
        )
    });
    let explanation = format!(
        "From the poll at {} the servers executed {:.1} successful {cmds}/s for this group, against \
         {:.1}/s before ({lost_pct:.0} % lost).{errors}{fleet_text} {cause} A cluster client that lost its node \
         list or its routing table stops sending (every call raises before it reaches a server) or \
         keeps sending to a node that rejects it; a client that stays connected to a dead node keeps \
         failing the commands for that node's slots. Check the application's error log from the same \
         moment.",
        at(t, start),
        f.during,
        f.before,
    );
    let mut numbers = BTreeMap::from([
        ("commands_per_sec_before".to_owned(), f.before),
        ("commands_per_sec_after".to_owned(), f.during),
        ("errors_per_sec_before".to_owned(), f.errors_before),
        ("errors_per_sec_after".to_owned(), f.errors_during),
        ("lost_share".to_owned(), f.share()),
    ]);
    if let Some((s, _)) = &fleet {
        numbers.insert(
            "fleet_instances_affected".to_owned(),
            crate::float::from_u64(s.k),
        );
        numbers.insert("fleet_instances".to_owned(), crate::float::from_u64(s.n));
    }
    let end = f.recovered.map_or(ctx.span.end, |r| grid.time(r));
    numbers.insert(
        "duration_secs".to_owned(),
        crate::metrics::ms_to_secs(end.millis_since(t)),
    );
    Finding {
        kind,
        severity,
        span: TimeSpan::new(t, end),
        title,
        explanation,
        numbers,
        node: None,
        attribution: Some(attribution),
        context: Vec::new(),
    }
}

impl Detector for LostGroup {
    fn name(&self) -> &'static str {
        "lost client group"
    }

    /// Per traffic stream, the first fall that lasts or pauses.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let (grid, streams) = streams(ctx);
        let outages = outages(ctx);
        streams
            .iter()
            .filter_map(|s| {
                let f = first_fall(s, grid)?;
                // A partial fall the servers account for with rejections (MOVED, ASK) is the
                // redirect detector's: the commands reached the cluster and were sent elsewhere.
                let rejected = f.errors_during - f.errors_before;
                let lost = f.before - f.during;
                let redirected = f.during >= f.before * 0.1 && rejected >= 0.8 * lost;
                (!redirected).then(|| finding(ctx, grid, s, &f, &outages))
            })
            .collect()
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
    fn traffic_that_stops_at_the_change_is_lost_and_tied_to_the_vanished_group() {
        let f = found(&LostGroup, &silenced_lines(&["redis-py 4.6.0"], true));
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(f.kind, FindingKind::ClientGroupLost);
        // The slots moved in the same poll: a trigger, so critical.
        assert_eq!(f.severity, Severity::Critical);
        assert!((f.numbers["commands_per_sec_before"] - 200.0).abs() < 1e-9);
        assert_eq!(f.numbers["commands_per_sec_after"], 0.0);
        // The counters stop growing at poll 10 (T0 + 10 s); the fall is placed in the poll that
        // shows it, within one interval.
        let at = f.span.start.0 - T0;
        assert!((9_000..=10_000).contains(&at), "{at}");
        assert!(
            f.title
                .starts_with("client group redis-py 4.6.0 stopped at "),
            "{}",
            f.title
        );
        assert!(
            f.explanation.contains("8192 slots began moving"),
            "{}",
            f.explanation
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
                assert_eq!(commands, &["get"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_group_seen_names_the_commands_only() {
        let f = found(&LostGroup, &silenced_lines(&[], false));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            f[0].attribution,
            Some(Attribution::Unknown {
                commands: vec!["get".into()]
            })
        );
    }

    #[test]
    fn traffic_that_moves_with_the_slots_or_is_redirected_is_not_lost() {
        assert!(found(&LostGroup, &reshard_lines(true)).is_empty());
        // Half of it rejected with MOVED: the redirect detector's, not a lost group.
        assert!(found(&LostGroup, &reshard_lines(false)).is_empty());
    }

    /// A small generator for the drawn cases (no global RNG in the core).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }

        fn between(&mut self, lo: u64, hi: u64) -> u64 {
            lo + self.next() % (hi - lo + 1)
        }
    }

    /// What a drawn run does to its client's traffic.
    #[derive(Clone, Copy, Debug)]
    enum Shape {
        /// Steady to the end (and stopping within the last two polls, as an application that
        /// ends with the recording).
        Healthy,
        /// Stops at this many milliseconds and never returns.
        Stops(u64),
        /// Loses a third of its successes at this many milliseconds (a dead node's slots).
        LosesAThird(u64),
        /// Pauses from this many milliseconds for this long.
        Pauses(u64, u64),
    }

    /// One node polled every `interval` ms for `polls` polls, serving `rate` `set`/s (±`noise`
    /// per cent per poll) shaped by `shape`; the connections of group `redis-py 5.0.0 "app"`
    /// listed while it runs.
    fn drawn_lines(r: &mut Lcg, interval: u64, polls: u64, rate: u64, shape: Shape) -> Vec<Line> {
        drawn_lines_killed(r, interval, polls, rate, shape, None)
    }

    /// As [`drawn_lines`], with 3 `CLIENT KILL` calls counted from `killed_at` ms on.
    fn drawn_lines_killed(
        r: &mut Lcg,
        interval: u64,
        polls: u64,
        rate: u64,
        shape: Shape,
        killed_at: Option<u64>,
    ) -> Vec<Line> {
        let mut lines = vec![topology(T0, 7000, A, view(A, "0-16383", ""))];
        let mut c = Counters {
            uptime: 100,
            connected: 2,
            ..Counters::default()
        };
        let end = interval * (polls - 1);
        let mut calls = 0u64;
        let mut last_t = 0u64;
        for k in 0..polls {
            let t = k * interval;
            // Successes per ms between last_t and t, by the shape.
            let ok_between = |from: u64, to: u64| -> f64 {
                let mut total = 0.0;
                let step = 10;
                let mut x = from;
                while x < to {
                    let running = match shape {
                        Shape::Healthy => x + interval < end,
                        Shape::Stops(at) => x < at,
                        Shape::LosesAThird(_) => true,
                        Shape::Pauses(at, len) => x < at || x >= at + len,
                    };
                    let level = match shape {
                        Shape::LosesAThird(at) if x >= at => 2.0 / 3.0,
                        _ => 1.0,
                    };
                    if running {
                        total += level * rate as f64 * step as f64 / 1000.0;
                    }
                    x += step;
                }
                total
            };
            let noise = 1.0 + (r.between(0, 20) as f64 - 10.0) / 100.0;
            let add = (ok_between(last_t, t) * noise).round() as u64;
            calls += add;
            last_t = t;
            c.uptime = 100 + t / 1000;
            c.commands = vec![("set", calls, 0)];
            if killed_at.is_some_and(|k| t >= k) {
                c.commands.push(("client|kill", 3, 0));
            }
            lines.push(info(T0 + t, 7000, A, &c));
            let running = match shape {
                Shape::Healthy => true,
                Shape::Stops(at) => t < at,
                _ => true,
            };
            let list = if running {
                "id=7 addr=10.2.0.1:5000 fd=9 name=app age=1 idle=0 flags=N cmd=set lib-name=redis-py lib-ver=5.0.0\n"
            } else {
                ""
            };
            lines.push(clients(T0 + t, 7000, A, list));
            lines.push(round(T0 + t, k));
        }
        lines
    }

    fn analysed(lines: &[Line], interval: u64) -> Vec<Finding> {
        let mut h = crate::analysis::fixture::header();
        h.options.interval_ms = interval;
        let mut a = crate::analysis::Analyzer::new(h);
        for l in lines {
            a.push(l);
        }
        let mut f = a.finishing();
        f.step();
        LostGroup.detect(&f.context())
    }

    /// Drawn runs (rate, poll interval, noise, when): a stop, a loss of a third and a pause are
    /// found at the poll they happen in; a healthy run (ending with the recording) gives nothing.
    #[test]
    fn drawn_falls_are_found_at_the_right_poll_and_healthy_runs_give_nothing() {
        let seed = 0x5eed_0013;
        println!("seed {seed:#x}");
        let mut r = Lcg(seed);
        for case in 0..60 {
            let interval = r.between(200, 2000);
            let polls = r.between(20, 60);
            let rate = r.between(20, 3000);
            let span = interval * (polls - 1);
            let at = r.between(4 * interval, span - 6 * interval);
            let shape = match case % 4 {
                0 => Shape::Healthy,
                1 => Shape::Stops(at),
                2 => Shape::LosesAThird(at),
                _ => Shape::Pauses(at, r.between(2 * interval + 1, 4 * interval)),
            };
            let ctx = format!("seed {seed:#x} case {case}: {shape:?}, every {interval} ms, {polls} polls, {rate}/s");
            let f = analysed(&drawn_lines(&mut r, interval, polls, rate, shape), interval);
            match shape {
                Shape::Healthy => assert!(f.is_empty(), "{ctx}: {f:#?}"),
                Shape::Stops(at) | Shape::LosesAThird(at) | Shape::Pauses(at, _) => {
                    assert_eq!(f.len(), 1, "{ctx}: {f:#?}");
                    let found = f[0].span.start.0 - T0;
                    assert!(
                        found.abs_diff(at) <= interval,
                        "{ctx}: found at {found} ms, happened at {at} ms"
                    );
                    let kind = if matches!(shape, Shape::Pauses(..)) {
                        FindingKind::ClientGroupPaused
                    } else {
                        FindingKind::ClientGroupLost
                    };
                    assert_eq!(f[0].kind, kind, "{ctx}");
                    if let Shape::LosesAThird(_) = shape {
                        let lost = f[0].numbers["lost_share"];
                        assert!((0.2..0.5).contains(&lost), "{ctx}: lost {lost}");
                    }
                    // Nothing set it off and nothing failed at the servers: not critical.
                    assert_eq!(f[0].severity, Severity::Warning, "{ctx}");
                }
            }
        }
    }

    /// A pause while the node stopped answering (no INFO reply for its length) is set off by the
    /// outage. When the group reconnected after it (as a client does after timeouts) its commands
    /// failed: critical; when it kept its connection it only waited: a warning.
    #[test]
    fn a_pause_set_off_by_a_node_outage_is_critical_when_the_group_reconnected() {
        let interval = 500;
        let pause = |reconnect: bool| {
            let mut r = Lcg(7);
            let lines = drawn_lines(&mut r, interval, 40, 400, Shape::Pauses(6_000, 2_500));
            let lines: Vec<Line> = lines
                .into_iter()
                .filter(|l| !matches!(l, Line::Info(i) if (6_000..8_500).contains(&(i.t.0 - T0))))
                .map(|l| match l {
                    // After the pause the group's connection is a new one.
                    Line::ClientList(c) if reconnect && c.t.0 - T0 >= 8_500 => clients(
                        c.t.0,
                        7000,
                        A,
                        "id=8 addr=10.2.0.1:5001 fd=9 name=app age=1 idle=0 flags=N cmd=set lib-name=redis-py lib-ver=5.0.0\n",
                    ),
                    other => other,
                })
                .collect();
            analysed(&lines, interval)
        };
        for (reconnect, severity) in [(true, Severity::Critical), (false, Severity::Warning)] {
            let f = pause(reconnect);
            assert_eq!(f.len(), 1, "{f:#?}");
            assert_eq!(f[0].kind, FindingKind::ClientGroupPaused);
            assert_eq!(f[0].severity, severity, "reconnected: {reconnect}");
            assert!(
                f[0].explanation.contains("stopped answering"),
                "{}",
                f[0].explanation
            );
        }
    }

    /// A stop right after someone killed client connections (`CLIENT KILL` in the counters) is
    /// set off by it: critical, and the story marks the kill.
    #[test]
    fn a_stop_after_connections_are_killed_is_critical() {
        let mut r = Lcg(11);
        let interval = 500;
        let lines = drawn_lines_killed(&mut r, interval, 40, 300, Shape::Stops(8_000), Some(7_800));
        let f = analysed(&lines, interval);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].kind, FindingKind::ClientGroupLost);
        assert_eq!(f[0].severity, Severity::Critical);
        assert!(
            f[0].explanation.contains("CLIENT KILL ran 3 times"),
            "{}",
            f[0].explanation
        );
    }
}
