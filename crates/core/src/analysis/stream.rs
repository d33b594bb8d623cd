//! Traffic streams: the business commands of one client group (or of no group seen), summed over
//! every node on one time grid, so the moment a group's commands stop or start failing can be
//! read to within one poll.
//!
//! Server counters are global, so a group's stream is made of the commands only it was seen
//! running in `CLIENT LIST`; a command no group was seen running is a stream of its own. Each
//! node's `INFO` interval spreads its counts over the grid buckets it covers (a poll interval
//! each); a bucket no node's interval covers is missing, not zero.

use std::collections::BTreeSet;

use crate::float;
use crate::metrics::is_business_command;
use crate::time::{TimeSpan, Timestamp};

use super::attribution::business_commands;
use super::context::Context;

/// Per-second rates of one stream, one value per grid bucket.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Stream {
    /// The census group whose commands these are (index into `Census::groups`), if one.
    pub(super) group: Option<usize>,
    /// The commands summed.
    pub(super) commands: Vec<String>,
    /// Successful commands per second (executed and not failed).
    pub(super) ok: Vec<f64>,
    /// Failed or rejected commands per second (MOVED, ASK, errors).
    pub(super) errors: Vec<f64>,
    /// Whether any node's interval covers the bucket.
    pub(super) seen: Vec<bool>,
}

/// The grid every stream shares: buckets of the poll interval from the recording's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Grid {
    /// The first bucket's start.
    pub(super) start: Timestamp,
    /// Bucket length, milliseconds (the poll interval).
    pub(super) bucket_ms: u64,
    /// Buckets.
    pub(super) len: usize,
}

/// Buckets a grid holds at most: a stream costs 17 bytes a bucket, so 18 MB a stream here (six
/// days of the default 500 ms poll). Over a longer span the buckets widen to fit: a span of
/// years (a line's time corrupted, found by fuzzing: `fuzz/regressions/recording/`) once
/// allocated a bucket for every poll interval of it.
const MAX_GRID_BUCKETS: u64 = 1 << 20;

impl Grid {
    /// The grid over the recording of `ctx`: a bucket per poll interval, or wider ones when the
    /// recording spans more than [`MAX_GRID_BUCKETS`] polls.
    pub(super) fn of(ctx: &Context<'_>) -> Grid {
        let span = ctx.span.millis();
        let bucket_ms = ctx.interval_ms.max(1).max(span.div_ceil(MAX_GRID_BUCKETS));
        let len = usize::try_from(span.div_ceil(bucket_ms)).unwrap_or(0);
        Grid {
            start: ctx.span.start,
            bucket_ms,
            len,
        }
    }

    /// When bucket `i` starts.
    pub(super) fn time(&self, i: usize) -> Timestamp {
        Timestamp(self.start.0 + self.bucket_ms * i as u64)
    }

    /// Bucket `i`'s extent.
    pub(super) fn span(&self, i: usize) -> TimeSpan {
        TimeSpan::new(self.time(i), self.time(i + 1))
    }

    /// Calls `add(i, share, per_sec)` for every bucket `i` the interval `span` covers: the
    /// share of the interval's time in it, and the factor from a count to a per-second rate.
    fn spread(&self, span: TimeSpan, mut add: impl FnMut(usize, f64, f64)) {
        if span.millis() == 0 || self.len == 0 {
            return;
        }
        let first = usize::try_from(span.start.millis_since(self.start) / self.bucket_ms)
            .unwrap_or(usize::MAX);
        let total = float::from_u64(span.millis());
        for i in first..self.len {
            let b = self.span(i);
            if b.start >= span.end {
                break;
            }
            let overlap = b
                .end
                .0
                .min(span.end.0)
                .saturating_sub(b.start.0.max(span.start.0));
            if overlap == 0 {
                continue;
            }
            let share = float::from_u64(overlap) / total;
            let per_sec = 1000.0 / float::from_u64(self.bucket_ms);
            add(i, share, per_sec);
        }
    }
}

impl Stream {
    /// The commands as one phrase: `zadd`, `get, set`.
    pub(super) fn commands_text(&self) -> String {
        self.commands.join(", ")
    }
}

/// Sums each set of commands of `specs` (a group, if one, and its commands) over every node of
/// `ctx` on `grid`: a stream per set, in their order, built in one pass over the intervals.
///
/// Each interval's commands are met in name order, as the table of which sets name them is
/// kept, so both are walked side by side; and an interval's share of each bucket it covers is
/// worked out once for every set. Each set's sums come out as they would set by set: an
/// interval's counts are added to its buckets in the same order, each as `amount * share *
/// per_sec`.
fn build(ctx: &Context<'_>, grid: Grid, specs: Vec<(Option<usize>, Vec<String>)>) -> Vec<Stream> {
    // Command name → the sets that name it, in name order.
    let mut table: Vec<(&str, Vec<usize>)> = Vec::new();
    for (k, (_, commands)) in specs.iter().enumerate() {
        for c in commands {
            match table.binary_search_by(|(name, _)| (*name).cmp(c.as_str())) {
                Ok(i) => table[i].1.push(k),
                Err(i) => table.insert(i, (c.as_str(), vec![k])),
            }
        }
    }
    let mut ok = vec![vec![0.0; grid.len]; specs.len()];
    let mut errors = vec![vec![0.0; grid.len]; specs.len()];
    let mut seen = vec![false; grid.len];
    let mut sums = vec![(0u64, 0u64); specs.len()];
    for n in &ctx.metrics.nodes {
        for iv in &n.intervals {
            sums.fill((0, 0));
            let mut rows = table.iter().peekable();
            for (name, d) in &iv.commands {
                while rows.next_if(|(t, _)| *t < name.as_str()).is_some() {}
                if let Some((_, sets)) = rows.next_if(|(t, _)| *t == name.as_str()) {
                    for &k in sets {
                        sums[k].0 += d.calls.saturating_sub(d.failed);
                        sums[k].1 += d.failed + d.rejected;
                    }
                }
            }
            grid.spread(iv.span, |i, share, per_sec| {
                for (k, &(good, bad)) in sums.iter().enumerate() {
                    ok[k][i] += float::from_u64(good) * share * per_sec;
                    errors[k][i] += float::from_u64(bad) * share * per_sec;
                }
                seen[i] = true;
            });
        }
    }
    specs
        .into_iter()
        .zip(ok.into_iter().zip(errors))
        .map(|((group, commands), (ok, errors))| Stream {
            group,
            commands,
            ok,
            errors,
            seen: seen.clone(),
        })
        .collect()
}

/// The streams of a recording: one per census group with business commands only it runs, one
/// per business command no group was seen running, and one per set of commands several groups
/// share (its `group` is `None`).
pub(super) fn streams(ctx: &Context<'_>) -> (Grid, Vec<Stream>) {
    let grid = Grid::of(ctx);
    let groups = &ctx.census.groups;
    let mut claimed: BTreeSet<String> = BTreeSet::new();
    let mut specs = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let own: Vec<String> = business_commands(g)
            .into_iter()
            .filter(|c| ctx.census.groups_using(c).len() == 1)
            .collect();
        claimed.extend(business_commands(g));
        if !own.is_empty() {
            specs.push((Some(gi), own));
        }
    }
    let mut shared: Vec<String> = claimed
        .iter()
        .filter(|c| ctx.census.groups_using(c).len() > 1)
        .cloned()
        .collect();
    shared.sort();
    if !shared.is_empty() {
        specs.push((None, shared));
    }
    // The commands named at all (a few, named in every interval: each interval's names, in
    // order, checked against the names so far side by side), then which of them.
    let mut named: Vec<&str> = Vec::new();
    for n in &ctx.metrics.nodes {
        for iv in &n.intervals {
            let mut at = 0;
            for c in iv.commands.keys() {
                while named.get(at).is_some_and(|k| *k < c.as_str()) {
                    at += 1;
                }
                if named.get(at) != Some(&c.as_str()) {
                    named.insert(at, c);
                }
                at += 1;
            }
        }
    }
    for c in named {
        if is_business_command(c) && !claimed.contains(c) {
            specs.push((None, vec![c.to_owned()]));
        }
    }
    (grid, build(ctx, grid, specs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_spreads_over_the_buckets_it_covers() {
        let grid = Grid {
            start: Timestamp(1000),
            bucket_ms: 500,
            len: 4,
        };
        let mut a = vec![0.0; 4];
        let mut marked = Vec::new();
        // 100 commands from 1250 to 2250: a quarter in bucket 0, half in 1, a quarter in 2.
        grid.spread(
            TimeSpan::new(Timestamp(1250), Timestamp(2250)),
            |i, share, per_sec| {
                a[i] += 100.0 * share * per_sec;
                marked.push(i);
            },
        );
        assert_eq!(marked, [0, 1, 2]);
        assert!((a[0] - 50.0).abs() < 1e-9, "{a:?}");
        assert!((a[1] - 100.0).abs() < 1e-9, "{a:?}");
        assert!((a[2] - 50.0).abs() < 1e-9, "{a:?}");
        assert!(a[3].abs() < 1e-9, "{a:?}");
    }
}
