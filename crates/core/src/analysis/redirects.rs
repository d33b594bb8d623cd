//! Redirects: sustained redirect storms versus the decaying redirects a reshard leaves, in
//! cluster-wide buckets of one poll interval.

use std::collections::BTreeMap;

use crate::finding::{Finding, FindingKind, Severity};
use crate::float;
use crate::metrics::{ms_to_secs, Interval};
use crate::time::{format_millis, TimeSpan, Timestamp};

use super::attribution;
use super::context::Context;
use super::detector::Detector;

/// Share of commands answered with a redirect above which an interval counts as redirected.
pub const REDIRECT_SHARE: f64 = 0.05;
/// A share of redirects that holds at this or more, over [`HELD_MS`], is a storm however short
/// the episode: a client with a stale table corrects it with its first `MOVED` (a slot, or the
/// whole table in one refresh), so half of all commands redirected for seconds on end is a
/// client that cannot learn (an address remap's redirect loop, a table it never refreshes).
const HELD_SHARE: f64 = 0.5;
/// How long [`HELD_SHARE`] must hold, milliseconds (four polls of the default interval).
const HELD_MS: u64 = 2_000;

/// Finds episodes of redirects, sustained or decaying.
pub(super) struct Redirects;

impl Detector for Redirects {
    fn name(&self) -> &'static str {
        "redirects"
    }

    /// Redirect storms (sustained) versus the decaying redirects after a reshard.
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let buckets = Buckets::of(ctx);
        let hot = |b: &Bucket| {
            let r = b.redirects();
            let secs = ms_to_secs(ctx.interval_ms);
            float::from_u64(r) / secs >= 1.0
                && float::from_u64(r) >= REDIRECT_SHARE * float::from_u64(b.attempts.max(1))
        };
        // Runs of hot buckets (an empty bucket is never hot).
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for (&k, _) in buckets.filled.iter().filter(|(_, b)| hot(b)) {
            match runs.last_mut() {
                Some(r) if r.1 + 1 == k => r.1 = k,
                _ => runs.push((k, k)),
            }
        }
        // One episode: runs a few polls apart, or within the same topology change (and the
        // 10 s after it), are one.
        let gap = usize::try_from(3_000 / ctx.interval_ms.max(1))
            .unwrap_or(0)
            .max(3);
        let change_of = |k: usize| {
            let t = buckets.span(k).start;
            ctx.summary
                .changes()
                .position(|m| m.span.start <= t && t.0 <= m.span.end.0 + 10_000)
        };
        let mut episodes: Vec<(usize, usize)> = Vec::new();
        for r in runs {
            match episodes.last_mut() {
                Some(e)
                    if r.0 - e.1 <= gap
                        || (change_of(e.1).is_some() && change_of(e.1) == change_of(r.0)) =>
                {
                    e.1 = r.1;
                }
                _ => episodes.push(r),
            }
        }
        episodes
            .into_iter()
            .map(|(start, end)| finding(ctx, &buckets, start, end))
            .collect()
    }
}

/// The finding on one episode of redirected buckets, `start..=end`: a storm when it lasts and
/// does not decay.
fn finding(ctx: &Context<'_>, buckets: &Buckets, start: usize, end: usize) -> Finding {
    let first = buckets.span(start).start;
    let last = buckets.span(end).end;
    let span = TimeSpan::new(first, last);
    let run = || buckets.between(start, end);
    let redirects: u64 = run().map(Bucket::redirects).sum();
    let attempts: u64 = run().map(|b| b.attempts).sum();
    let moved: u64 = run().map(|b| b.moved).sum();
    let secs = ms_to_secs(span.millis().max(1));
    let len = end - start + 1;
    let third = (len / 3).max(1);
    let share = |lo: usize, hi: usize| {
        let r: u64 = buckets.between(lo, hi).map(Bucket::redirects).sum();
        let a: u64 = buckets.between(lo, hi).map(|b| b.attempts).sum();
        float::from_u64(r) / float::from_u64(a.max(1))
    };
    let early = share(start, start + third - 1);
    let late = share(end + 1 - third, end);
    let reaches_end = last.0 + 2 * ctx.interval_ms >= ctx.span.end.0;
    let long = span.millis() >= 30_000 || (reaches_end && len >= 5);
    let decaying = late < 0.5 * early;
    let held = span.millis() >= HELD_MS && early >= HELD_SHARE && late >= HELD_SHARE;
    let sustained = (long || held) && !decaying;
    // Per command shares over the run.
    let per_cmd = buckets.commands_between(ctx, start, end);
    let total_rejected: u64 = per_cmd.values().map(|(_, r)| r).sum();
    let run_share = float::from_u64(redirects) / float::from_u64(attempts.max(1));
    let mut carriers: Vec<(String, f64)> = per_cmd
        .iter()
        .filter(|(c, (calls, rej))| {
            // The commands that carry the redirects: a real part of all rejections, and
            // redirected themselves at least half as often as the episode's commands on average
            // (a healthy client's few MOVED after a reshard, beside a storming one, do not carry
            // the storm).
            crate::metrics::is_business_command(c)
                && *rej > 0
                && float::from_u64(*rej) >= 0.05 * float::from_u64(total_rejected.max(1))
                && float::from_u64(*rej) >= 0.01 * float::from_u64(calls + rej)
                && float::from_u64(*rej) >= 0.5 * run_share * float::from_u64(calls + rej)
        })
        .map(|(c, (calls, rej))| {
            (
                c.clone(),
                float::from_u64(*rej) / float::from_u64(calls + rej),
            )
        })
        .collect();
    carriers.sort_by(|a, b| b.1.total_cmp(&a.1));
    let attribution = attribution::attribute(
        ctx.census,
        &carriers.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>(),
    );
    let mut numbers = BTreeMap::from([
        (
            "redirects_per_sec".to_owned(),
            float::from_u64(redirects) / secs,
        ),
        ("moved_per_sec".to_owned(), float::from_u64(moved) / secs),
        (
            "redirect_share".to_owned(),
            float::from_u64(redirects) / float::from_u64(attempts.max(1)),
        ),
        ("redirect_share_first_third".to_owned(), early),
        ("redirect_share_last_third".to_owned(), late),
        ("duration_secs".to_owned(), secs),
    ]);
    for (c, s) in &carriers {
        numbers.insert(format!("moved_share:{c}"), *s);
    }
    let shares: Vec<String> = carriers
        .iter()
        .map(|(c, s)| format!("{c} {:.1} %", s * 100.0))
        .collect();
    let near_change = ctx
        .summary
        .changes()
        .any(|m| m.span.start.0 <= last.0 && first.0 <= m.span.end.0 + 10_000);
    let remap = sustained
        .then(|| remap_landing(ctx, span, &carriers))
        .flatten();
    let remap_text = remap
        .as_ref()
        .map_or_else(String::new, |(node, per_command)| {
            format!(
            " The commands carrying them land first on {node}: {per_command:.2} attempts there for \
             every command the cluster completed, while the other nodes serve their slots too. A \
             client that sends every command to one address first is what an address remap (every \
             node address rewritten to {node}) does."
        )
        });
    if sustained {
        Finding {
            kind: FindingKind::RedirectStorm,
            severity: Severity::Critical,
            span,
            title: format!(
                "Sustained redirect storm: {:.1} redirects/s, {:.1} % of commands for {}{}",
                float::from_u64(redirects) / secs,
                float::from_u64(redirects) * 100.0 / float::from_u64(attempts.max(1)),
                format_millis(span.millis()),
                if shares.is_empty() { String::new() } else { format!(" ({})", shares.join(", ")) }
            ),
            explanation: format!(
                "Redirections did not decay: the share of commands answered MOVED/ASK was {:.1} % at the start and {:.1} % \
                 at the end. A stale routing table corrects itself within a few commands after a reshard; a sustained \
                 share means a client keeps sending to the wrong node — typically every node address rewritten to one \
                 endpoint (an address remap), or a client routing keyless commands to a random node. Server counters are \
                 global: the commands carrying the redirects tie them to the clients that use them.{remap_text}",
                early * 100.0,
                late * 100.0
            ),
            numbers,
            node: remap.map(|(n, _)| n),
            attribution: Some(attribution),
            context: Vec::new(),
        }
    } else {
        Finding {
            kind: FindingKind::RedirectsDecayed,
            severity: Severity::Info,
            span,
            title: format!(
                "{} redirects over {}{}, {} from {:.1} % to {:.1} % of commands",
                redirects,
                format_millis(span.millis()),
                if near_change { " around the topology change" } else { "" },
                trend(early, late),
                early * 100.0,
                late * 100.0
            ),
            explanation: "Redirects that fade within seconds are what clients with a stale routing table produce \
                          right after slots move: each MOVED teaches them the new owner. This is normal."
                .to_owned(),
            numbers,
            node: None,
            attribution: Some(attribution),
            context: Vec::new(),
        }
    }
}

/// Cluster-wide buckets of one poll interval over the recording's span (the `k`-th from
/// `origin + k · step`): redirects, attempts and per-command counts. Only the buckets some
/// node's interval ended in are kept, so what they cost follows the recording's intervals, not
/// its span: a span of years (a line's time corrupted, found by fuzzing:
/// `fuzz/regressions/recording/`) once allocated a bucket for every poll interval of it.
struct Buckets {
    /// The recording's start.
    origin: u64,
    /// The poll interval, milliseconds.
    step: u64,
    /// The buckets with an interval in them, by number.
    filled: BTreeMap<usize, Bucket>,
}

impl Buckets {
    fn of(ctx: &Context<'_>) -> Buckets {
        let step = ctx.interval_ms.max(1);
        let origin = ctx.span.start.0;
        let count = ctx.span.millis() / step + 1;
        let mut filled: BTreeMap<usize, Bucket> = BTreeMap::new();
        for node in &ctx.metrics.nodes {
            for i in &node.intervals {
                let k = bucket_of(origin, step, i);
                if let (true, Ok(k)) = (k < count, usize::try_from(k)) {
                    filled.entry(k).or_default().add(i);
                }
            }
        }
        Buckets {
            origin,
            step,
            filled,
        }
    }

    /// The poll interval of bucket `k`.
    fn span(&self, k: usize) -> TimeSpan {
        let start = u64::try_from(k)
            .unwrap_or(u64::MAX)
            .saturating_mul(self.step)
            .saturating_add(self.origin);
        TimeSpan::new(Timestamp(start), Timestamp(start.saturating_add(self.step)))
    }

    /// The buckets of `lo..=hi` that hold an interval.
    fn between(&self, lo: usize, hi: usize) -> impl Iterator<Item = &Bucket> {
        self.filled.range(lo..=hi).map(|(_, b)| b)
    }

    /// Per command, (calls, rejected) over the buckets `lo..=hi`: the intervals of every node
    /// that ended in them. Summed here for an episode rather than kept per bucket: a day of
    /// buckets held a map of command names each.
    fn commands_between(
        &self,
        ctx: &Context<'_>,
        lo: usize,
        hi: usize,
    ) -> BTreeMap<String, (u64, u64)> {
        let mut per_cmd: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for node in &ctx.metrics.nodes {
            // A node's intervals are in time order (each ends after the one before), so those
            // ending in the buckets are one run of them.
            let first = node.intervals.partition_point(|i| self.number(i) < lo);
            for i in node.intervals[first..]
                .iter()
                .take_while(|i| self.number(i) <= hi)
            {
                for (c, d) in &i.commands {
                    let e = per_cmd.entry(c.clone()).or_default();
                    e.0 += d.calls;
                    e.1 += d.rejected;
                }
            }
        }
        per_cmd
    }

    /// The bucket the interval `i` falls in: the one its end is in (the first for an end before
    /// the origin).
    fn number(&self, i: &Interval) -> usize {
        usize::try_from(bucket_of(self.origin, self.step, i)).unwrap_or(usize::MAX)
    }
}

/// The number of the bucket (of `step` ms from `origin`) the interval `i` ends in: the first for
/// an end before the origin.
fn bucket_of(origin: u64, step: u64, i: &Interval) -> u64 {
    i.span.end.0.saturating_sub(origin) / step
}

/// One poll interval of the whole cluster.
#[derive(Clone, Debug, Default)]
struct Bucket {
    /// MOVED replies.
    moved: u64,
    /// ASK replies.
    ask: u64,
    /// Business commands attempted.
    attempts: u64,
}

impl Bucket {
    /// Adds one node's interval.
    fn add(&mut self, i: &Interval) {
        self.moved += i.error("MOVED");
        self.ask += i.error("ASK");
        self.attempts += i.business().attempts();
    }

    /// MOVED and ASK replies.
    fn redirects(&self) -> u64 {
        self.moved + self.ask
    }
}

/// Where the commands carrying a storm land over `span`: the node that takes an attempt of
/// every command the cluster completed (see [`crate::hypothesis::remap_target`]), with its
/// attempts per completed command.
fn remap_landing(
    ctx: &Context<'_>,
    span: TimeSpan,
    carriers: &[(String, f64)],
) -> Option<(crate::node::NodeAddr, f64)> {
    let mut landing: Vec<crate::hypothesis::Landing> = Vec::new();
    let mut completed = 0.0;
    for n in &ctx.metrics.nodes {
        let t = n.total_in(span);
        let (mut calls, mut rejected) = (0u64, 0u64);
        for (c, _) in carriers {
            if let Some(d) = t.commands.get(c) {
                calls += d.calls;
                rejected += d.rejected;
            }
        }
        completed += float::from_u64(calls);
        landing.push(crate::hypothesis::Landing {
            node: n.addr.clone(),
            attempts: float::from_u64(calls + rejected),
            served: float::from_u64(calls),
            rejected: float::from_u64(rejected),
            per_command: 0.0,
            settled: crate::hypothesis::Settled::default(),
        });
    }
    if completed <= 0.0 {
        return None;
    }
    for l in &mut landing {
        l.per_command = l.attempts / completed;
    }
    let node = crate::hypothesis::remap_target(&landing)?;
    let per_command = landing.iter().find(|l| l.node == node)?.per_command;
    Some((node, per_command))
}

/// How a share went from `early` to `late`, in one word: `decaying`, `rising`, or `holding`
/// when the two differ by less than a tenth (at one decimal place they may even read the same).
fn trend(early: f64, late: f64) -> &'static str {
    if late < early * 0.9 {
        "decaying"
    } else if late > early * 1.1 {
        "rising"
    } else {
        "holding"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{
        found, info, reshard_lines, round, topology, view, Counters, A, B, T0,
    };
    use crate::finding::Attribution;
    use crate::recording::Line;

    /// `polls` polls of node A, which attempts 200 `get`/s and in poll `k` rejects
    /// `rejected(k)` of them with MOVED; with `change`, slots 8192–16383 move to B at that poll.
    fn lines(polls: u64, change: Option<u64>, rejected: impl Fn(u64) -> u64) -> Vec<Line> {
        let mut lines = vec![topology(T0, 7000, A, view(A, "0-16383", ""))];
        let mut c = Counters {
            uptime: 100,
            connected: 10,
            ..Counters::default()
        };
        let (mut ok, mut rej) = (0, 0);
        for k in 0..polls {
            let t = T0 + k * 1000;
            if change == Some(k) {
                lines.push(topology(t, 7000, A, view(A, "0-8191", "8192-16383")));
                lines.push(topology(t, 7001, B, view(B, "0-8191", "8192-16383")));
            }
            if k > 0 {
                rej += rejected(k);
                ok += 200 - rejected(k);
            }
            c.uptime += 1;
            c.commands = vec![("get", ok, rej)];
            c.moved = rej;
            lines.push(info(t, 7000, A, &c));
            lines.push(round(t, k));
        }
        lines
    }

    #[test]
    fn redirects_that_do_not_decay_are_a_storm() {
        let f = found(&Redirects, &lines(40, None, |_| 85));
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(f.kind, FindingKind::RedirectStorm);
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(
            f.title,
            "Sustained redirect storm: 85.0 redirects/s, 42.5 % of commands for 39.0s (get 42.5 %)"
        );
        assert!((f.numbers["redirect_share"] - 0.425).abs() < 1e-9);
        assert!((f.numbers["moved_share:get"] - 0.425).abs() < 1e-9);
        assert_eq!(f.numbers["duration_secs"], 39.0);
        // No client list: nobody is seen running `get`.
        assert_eq!(
            f.attribution,
            Some(Attribution::Unknown {
                commands: vec!["get".into()]
            })
        );
    }

    /// A second command, redirected at 2.5 % of its calls (a healthy client's few MOVED), beside
    /// one in a storm at 42.5 %: its MOVED are 6 % of all, yet it does not carry the storm.
    #[test]
    fn a_command_redirected_far_less_than_the_storm_does_not_carry_it() {
        let mut lines = lines(40, None, |_| 85);
        let mut set = (0u64, 0u64);
        for l in &mut lines {
            if let Line::Info(i) = l {
                if i.t.0 > T0 {
                    set = (set.0 + 195, set.1 + 5);
                }
                let stat = crate::info::CommandStat {
                    calls: set.0,
                    usec: 0,
                    rejected_calls: Some(set.1),
                    failed_calls: Some(0),
                };
                i.info.commandstats.insert("set".into(), stat);
            }
        }
        let f = found(&Redirects, &lines);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].numbers.contains_key("moved_share:get"),
            "{:?}",
            f[0].numbers
        );
        assert!(
            !f[0].numbers.contains_key("moved_share:set"),
            "{:?}",
            f[0].numbers
        );
    }

    #[test]
    fn half_of_all_commands_redirected_for_seconds_is_a_storm() {
        // 150 of 200 redirected for 4 s, then none: short, but held at 75 %.
        let held = lines(40, None, |k| if (5..9).contains(&k) { 150 } else { 0 });
        let f = found(&Redirects, &held);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].kind, FindingKind::RedirectStorm);
        // The same share for one second is a burst.
        let burst = lines(40, None, |k| if k == 5 { 150 } else { 0 });
        let f = found(&Redirects, &burst);
        assert_eq!(f[0].kind, FindingKind::RedirectsDecayed, "{f:#?}");
        // Under half, for 4 s: a reshard's redirects, not a storm.
        let lower = lines(40, None, |k| if (5..9).contains(&k) { 80 } else { 0 });
        let f = found(&Redirects, &lower);
        assert_eq!(f[0].kind, FindingKind::RedirectsDecayed, "{f:#?}");
    }

    #[test]
    fn redirects_that_fade_after_a_reshard_are_reported_as_decayed() {
        // 50 MOVED in the first second after the move, then 25, 12, 6, 3, 1, then none.
        let f = found(
            &Redirects,
            &lines(40, Some(10), |k| if k > 10 { 200 >> (k - 9) } else { 0 }),
        );
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(f.kind, FindingKind::RedirectsDecayed);
        assert_eq!(f.severity, Severity::Info);
        // Only the polls with at least 5 % redirected count: 50, 25 and 12 of 200.
        assert_eq!(
            f.title,
            "87 redirects over 3.0s around the topology change, decaying from 25.0 % to 6.0 % of commands"
        );
        assert!(f.numbers["redirect_share_last_third"] < f.numbers["redirect_share_first_third"]);
    }

    #[test]
    fn bursts_a_few_polls_apart_are_one_episode_and_far_apart_two() {
        let near = found(
            &Redirects,
            &lines(40, None, |k| {
                if (5..8).contains(&k) || (10..13).contains(&k) {
                    50
                } else {
                    0
                }
            }),
        );
        assert_eq!(near.len(), 1, "{near:#?}");
        assert_eq!(near[0].numbers["duration_secs"], 8.0);
        assert!(
            near[0].title.starts_with("300 redirects over 8.0s, "),
            "{}",
            near[0].title
        );
        let far = found(
            &Redirects,
            &lines(40, None, |k| {
                if (5..8).contains(&k) || (20..23).contains(&k) {
                    50
                } else {
                    0
                }
            }),
        );
        assert_eq!(far.len(), 2, "{far:#?}");
        assert!(far.iter().all(|f| f.kind == FindingKind::RedirectsDecayed));
    }

    #[test]
    fn a_trickle_of_redirects_is_no_episode() {
        // 4 MOVED/s of 200: under the 5 % share.
        assert!(found(&Redirects, &lines(40, None, |_| 4)).is_empty());
        assert!(found(&Redirects, &reshard_lines(true)).is_empty());
    }
}
