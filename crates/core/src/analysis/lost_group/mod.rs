//! Lost client groups: a group whose successful commands fall and do not return (it stopped, or
//! everything it sends fails), found per traffic stream at the poll where the fall begins, and
//! the triggers just before it (a node that stopped answering, slots that moved). A fall that
//! recovers is a pause.

use std::collections::BTreeMap;

use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::moment::at;
use crate::time::{format_millis, TimeSpan, Timestamp};

use super::attribution::business_commands;
use super::context::Context;
use super::detector::Detector;
use super::outage::{outages, Outage};
use super::stream::{streams, Grid, Stream};

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
/// The share of a pause's missed successes served right after it from which its commands waited
/// rather than failed.
const CAUGHT_UP_SHARE: f64 = 0.5;
/// How long before a fall a node's outage or a slot move still counts as its trigger.
const TRIGGER_WINDOW_MS: u64 = 5_000;

/// The median of `v` (0 for none; the mean of the middle two for an even count, so that a
/// baseline of two points is not its higher one).
fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.to_vec();
    let n = s.len();
    if n == 0 {
        return 0.0;
    }
    // The middle one in place (no full sort: the search asks this of every point); for an even
    // count, the greatest of those below it is the other middle one.
    let (below, &mut middle, _) = s.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        middle
    } else {
        let lower = below
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .unwrap_or(middle);
        (lower + middle) / 2.0
    }
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
    /// For a pause: the successes above the level before in the points right after it, as a
    /// share of the successes it missed (the commands that waited and were served when it came
    /// back); 0 for a fall that lasts.
    caught_up: f64,
    /// When it lasts only as a step (its first points lost less than the rest of the fall, see
    /// [`first_fall`]): the successful and the failed or rejected commands per second (means)
    /// of the step's points, before the deeper fall.
    step: Option<(f64, f64)>,
}

impl Fall {
    /// The share of the group's commands rejected or failed before the fall.
    fn failing_before(&self) -> f64 {
        self.errors_before / (self.before + self.errors_before).max(1e-9)
    }

    /// The share of the group's commands rejected or failed during the fall.
    fn failing_during(&self) -> f64 {
        self.errors_during / (self.during + self.errors_during).max(1e-9)
    }

    /// Whether the group still sends and its replies keep their mix: rejected or failed at a
    /// critical share before, and at least half that share during. A client in a redirect storm
    /// spends its time on redirects and rebuilds, so its throughput moves with the machine it
    /// runs on; a fall of this shape is the storm's cost (the redirect detector reports the
    /// storm), not instances that stopped. Instances that died of their errors take their errors
    /// with them.
    fn slowed_in_its_storm(&self) -> bool {
        let critical = crate::census::inferred::FAILING_SHARE;
        self.during >= self.before * 0.1
            && self.failing_before() >= critical
            && self.failing_during() >= 0.5 * self.failing_before()
    }

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
/// before it by more than half of the loss (the loss of the next few points, or of the point
/// itself: a step down that a stop follows), for at least [`MIN_AFTER_BUCKETS`] buckets; or that
/// recovers (a pause) after at least two low buckets; a fall `accept` turns down is passed over
/// and the search goes on after it.
fn first_fall(s: &Stream, grid: Grid, accept: &dyn Fn(&Fall) -> bool) -> Option<Fall> {
    let p = points(s);
    let start = p.iter().position(|&(_, ok, _)| ok > 0.0)?;
    let min_after = MIN_AFTER_BUCKETS
        .max(usize::try_from(MIN_AFTER_MS.div_ceil(grid.bucket_ms)).unwrap_or(MIN_AFTER_BUCKETS));
    // Where the level a fall is measured from begins: after a fall `accept` turned down, the
    // level after it.
    let mut base = start;
    for c in start + 2..p.len() {
        if c < base + 2 {
            continue;
        }
        let from = c.saturating_sub(BASELINE_BUCKETS).max(base);
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
        let mut run = low.iter().take_while(|&&v| v < threshold).count();
        // A step down that the group never climbs back from, and that a deeper fall or a stop
        // follows (its commands began failing, then it died): the loss began at the step. Every
        // later point stays below halfway between the level before and the step's own point.
        let step = before - (before - p[c].1) / 2.0;
        let stepped = run < low.len() && low.iter().all(|&v| v < step);
        let step = stepped.then(|| {
            let points = &p[c..=c + run];
            let of =
                |f: fn(&(usize, f64, f64)) -> f64| mean(&points.iter().map(f).collect::<Vec<_>>());
            (of(|x| x.1), of(|x| x.2))
        });
        if stepped {
            run = low.len();
        }
        let errors_before = mean(&p[from..c].iter().map(|x| x.2).collect::<Vec<_>>());
        let moment = |during: f64| moment(&p, c, grid, before, during);
        // A fall that lasts to the end, placed where `placed_by` says, its level the mean of the
        // rest of the recording.
        let lasting = |placed_by: f64, step: Option<(f64, f64)>| Fall {
            moment: moment(placed_by),
            recovered: None,
            before,
            during: mean(&low),
            errors_during: mean(&p[c + 1..].iter().map(|x| x.2).collect::<Vec<_>>()),
            errors_before,
            caught_up: 0.0,
            step,
        };
        if run == low.len() && run >= min_after {
            // A step is placed by its own level, the lower of its first two points (the first
            // may hold its beginning, part-way through the bucket), not by the stop after it.
            let placed_by = if step.is_some() {
                p[c].1.min(low[0])
            } else {
                mean(&low)
            };
            let fall = lasting(placed_by, step);
            if fall.share() >= LOST_SHARE {
                if accept(&fall) {
                    return Some(fall);
                }
                base = c + 1;
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
                caught_up: caught_up(&p, c, run, before),
                step: None,
            };
            if fall.share() >= 0.5 {
                if accept(&fall) {
                    return Some(fall);
                }
                base = c + 1;
                continue;
            }
        }
        // Neither a stop, a step nor a pause: a loss that lasts but is uneven (a node gone for
        // good with a third of the slots: the group's commands to it fail from then on, on its
        // retries' schedule, the others go on). On the mean the rest of the recording stays a
        // fall, and hardly a point climbs back to the level before (at most a quarter reach
        // halfway to the fall's threshold).
        let back = low
            .iter()
            .filter(|&&v| v >= before * (1.0 - LOST_SHARE / 2.0))
            .count();
        if run < low.len() && low.len() >= min_after && back * 4 <= low.len() {
            let fall = lasting(mean(&low), None);
            if fall.share() >= LOST_SHARE {
                if accept(&fall) {
                    return Some(fall);
                }
                base = c + 1;
            }
        }
    }
    None
}

/// The share of a pause's missed successes served above the level `before` right after it: the
/// pause shows in points `c ..= c + run`; the points after it, as many (at least two), hold what
/// it served on top of its usual rate.
fn caught_up(p: &[(usize, f64, f64)], c: usize, run: usize, before: f64) -> f64 {
    let missed: f64 = p[c..=c + run].iter().map(|x| (before - x.1).max(0.0)).sum();
    let after = &p[(c + 1 + run).min(p.len())..];
    let extra: f64 = after
        .iter()
        .take((run + 1).max(2))
        .map(|x| (x.1 - before).max(0.0))
        .sum();
    if missed > 0.0 {
        extra / missed
    } else {
        0.0
    }
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
    triggers_within(ctx, outages, t, TRIGGER_WINDOW_MS, true)
}

/// [`triggers`] in the `before_ms` before `t` (and the poll after it), slot moves only if
/// `moves`.
fn triggers_within(
    ctx: &Context<'_>,
    outages: &[Outage],
    t: Timestamp,
    before_ms: u64,
    moves: bool,
) -> Vec<String> {
    let window = TimeSpan::new(
        Timestamp(t.0.saturating_sub(before_ms)),
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
        .filter(|m| moves && window.contains(m.span.start))
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

/// Whether `g`'s connections were gone a few polls (three) after a fall at `t`.
fn gone_by(ctx: &Context<'_>, g: &crate::census::ClientGroup, t: Timestamp) -> bool {
    g.last_seen < Timestamp(t.0 + 3 * ctx.interval_ms)
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
            let gone: Vec<_> = using
                .iter()
                .filter(|g| g.first_seen <= t && gone_by(ctx, g, t))
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
    let served_later = f.caught_up >= CAUGHT_UP_SHARE;
    let who = who(&attribution, s);
    let cmds = s.commands_text();
    let lost_pct = f.share() * 100.0;
    // A client whose commands failed on the client side (timeouts) reconnects; one that only
    // waited for a stalled node does not: the group's new connections in the census during the
    // pause and the two polls after it tell the two apart.
    let pause_end = f.recovered.map_or(ctx.span.end, |r| grid.time(r));
    // The groups the fall is attributed to (each of an ambiguous attribution: the stream's
    // commands are theirs, whichever fell).
    let named: Vec<&String> = match &attribution {
        Attribution::Group { group, .. } => vec![group],
        Attribution::Ambiguous { groups, .. } => groups.iter().collect(),
        Attribution::Unknown { .. } => Vec::new(),
    };
    let reconnected = ctx
        .census
        .groups
        .iter()
        .filter(|g| named.contains(&&g.key.label()))
        .any(|g| {
            g.new_in(TimeSpan::new(
                t,
                Timestamp(pause_end.0 + 2 * ctx.interval_ms),
            )) > 0
        });
    // A group whose commands were already rejected or failing before it fell was dying of its
    // errors (a cluster client meets MOVED only on a stale slot map).
    let failing_before = f.failing_before();
    let dying = failing_before >= crate::census::inferred::FAILING_SHARE;
    // A loss that lasts is critical when something set it off, the servers failed the group's
    // commands, or it was failing before; with none of these, an application stopped on purpose
    // looks the same.
    let lasting = if trig.is_empty() && !erroring && !dying {
        Severity::Warning
    } else {
        Severity::Critical
    };
    // An application that ended: it stopped with nothing around it (nothing set it off, nothing
    // failed, it was not failing before) and its connections closed within a few polls. Worth
    // knowing, never a cause.
    let closed = !named.is_empty()
        && ctx
            .census
            .groups
            .iter()
            .filter(|g| named.contains(&&g.key.label()))
            .all(|g| gone_by(ctx, g, t));
    let ended = f.recovered.is_none() && stopped && lasting == Severity::Warning && closed;
    let (kind, severity, title) = match (f.recovered, stopped) {
        // A pause loses the group's traffic while it lasts when its commands failed: the servers
        // failed them, or something the collector saw set it off (a node that stopped answering)
        // and the group reconnected (as a client does after timeouts) without serving the
        // commands it missed when it came back (a client that retried through the stall serves
        // them then). A client that only waited, or a pause with no cause seen (a process paused
        // on the client side), is a warning.
        (Some(r), _) => (
            FindingKind::ClientGroupPaused,
            if erroring || (!trig.is_empty() && reconnected && !served_later) {
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
        (None, true) if ended => (
            FindingKind::ClientGroupLost,
            Severity::Info,
            format!(
                "{who} ended at {}: successful {cmds} fell from {:.1}/s to {:.1}/s and its connections closed",
                at(t, start),
                f.before,
                f.during
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
    let dying_text = format!(
        "Before it fell, {:.0} % of its commands were already rejected or failed: a client that \
         died of its errors (an address remap, a stale slot map it never refreshed).",
        failing_before * 100.0
    );
    let cause = if dying && trig.is_empty() {
        dying_text
    } else if dying {
        format!("Just before it: {}. {dying_text}", trig.join("; "))
    } else if ended {
        "Nothing the collector saw came around it: no node stopped answering, no slots moved, \
         nothing failed, and its connections closed: an application that finished (a batch job, \
         a load, the old instances of a deploy), not a cause of what followed."
            .to_owned()
    } else if trig.is_empty() {
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
    } else if f.recovered.is_some() && served_later {
        format!(
            " When it came back the servers executed {:.0} % of the commands it had missed on top \
             of its usual rate: they waited (or were retried) and were served, rather than failed.",
            (f.caught_up * 100.0).min(999.0)
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
    if f.recovered.is_some() {
        numbers.insert("caught_up_share".to_owned(), f.caught_up);
    }
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
        // Falls that are the redirect detector's: a partial fall the servers account for with
        // rejections (MOVED, ASK: the commands reached the cluster and were sent elsewhere), or
        // a group slowed by its own storm with nothing else that set it off. The search goes on
        // past them (a group can still stop later).
        let accept = |f: &Fall| {
            let rejected = f.errors_during - f.errors_before;
            let lost = f.before - f.during;
            let redirected = f.during >= f.before * 0.1 && rejected >= 0.8 * lost;
            let slowed = f.slowed_in_its_storm() && triggers(ctx, &outages, f.moment).is_empty();
            // A step down is the loss's beginning only when its commands began to fail: not
            // when the servers account for its missing successes with rejections (its
            // redirects' cost), nor when no node stopped answering and no connection was killed
            // right at it, within two polls (slots that move slow a client with redirects; a
            // client also dips and runs slower on its own). Either way the loss is found later,
            // at the deeper fall.
            let idle_step = f.step.is_some_and(|(ok, errors)| {
                errors - f.errors_before >= 0.8 * (f.before - ok)
                    || triggers_within(ctx, &outages, f.moment, 2 * ctx.interval_ms, false)
                        .is_empty()
            });
            !redirected && !slowed && !idle_step
        };
        streams
            .iter()
            .filter_map(|s| {
                let f = first_fall(s, grid, &accept)?;
                Some(finding(ctx, grid, s, &f, &outages))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
