//! Slots with the time each was first reported, kept as runs: a report of 16,384 slots is one run,
//! not 16,384 entries.

use crate::slot::{Slot, SlotRange};
use crate::time::Timestamp;

/// One run: the slots `start..=end`, each first seen at `t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Run {
    /// The first slot.
    pub(super) start: u16,
    /// The last slot (inclusive).
    pub(super) end: u16,
    /// When these slots were first reported.
    pub(super) t: Timestamp,
}

impl Run {
    /// The run's slots as a range.
    pub(super) fn range(self) -> Option<SlotRange> {
        SlotRange::new(Slot::new(self.start)?, Slot::new(self.end)?)
    }
}

/// The time of the first report of each slot (in the order of the reports, which a recording's
/// lines need not give in time order), as ascending, disjoint runs; neighbours of one time are
/// one run, so two sets of the same slots and times are equal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct FirstSeen {
    runs: Vec<Run>,
}

impl FirstSeen {
    /// Notes that the slots of `range` were reported at `t` (a slot reported before keeps its time).
    pub(super) fn see(&mut self, range: SlotRange, t: Timestamp) {
        let (a, b) = (range.start().get(), range.end().get());
        // The runs before `range` and after it stay; those it touches are rebuilt.
        let first = self.runs.partition_point(|r| r.end < a);
        let last = first + self.runs[first..].partition_point(|r| r.start <= b);
        let mut mid: Vec<Run> = Vec::with_capacity(last - first + 3);
        let mut next = a; // the first slot of `range` not placed yet
        let mut done = false; // all of `range` placed (`next` would pass `b`)
        for &r in &self.runs[first..last] {
            if r.start < a {
                push(&mut mid, Run { end: a - 1, ..r });
            } else if !done && next < r.start {
                push(
                    &mut mid,
                    Run {
                        start: next,
                        end: r.start - 1,
                        t,
                    },
                );
            }
            let (s, e) = (r.start.max(a), r.end.min(b));
            push(
                &mut mid,
                Run {
                    start: s,
                    end: e,
                    ..r
                },
            );
            if e == b {
                done = true;
            } else {
                next = e + 1;
            }
            if r.end > b {
                push(&mut mid, Run { start: b + 1, ..r });
            }
        }
        if !done {
            push(
                &mut mid,
                Run {
                    start: next,
                    end: b,
                    t,
                },
            );
        }
        // The neighbours outside may now join the rebuilt runs.
        let before = first.checked_sub(1).map(|i| self.runs[i]);
        let after = self.runs.get(last).copied();
        let lo = match (before, mid.first_mut()) {
            (Some(p), Some(m)) if p.t == m.t && p.end + 1 == m.start => {
                m.start = p.start;
                first - 1
            }
            _ => first,
        };
        let hi = match (after, mid.last_mut()) {
            (Some(n), Some(m)) if n.t == m.t && m.end + 1 == n.start => {
                m.end = n.end;
                last + 1
            }
            _ => last,
        };
        self.runs.splice(lo..hi, mid);
    }

    /// The runs, ascending by slot.
    pub(super) fn runs(&self) -> &[Run] {
        &self.runs
    }
}

/// Appends `r`, joined to the last run when it follows it at the same time.
fn push(out: &mut Vec<Run>, r: Run) {
    match out.last_mut() {
        Some(l) if l.t == r.t && l.end + 1 == r.start => l.end = r.end,
        _ => out.push(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    fn range(a: u16, b: u16) -> SlotRange {
        SlotRange::try_from((a, b)).expect("valid range")
    }

    /// The first report's time of each slot, slot by slot.
    fn naive(reports: &[(u16, u16, u64)]) -> Vec<Option<u64>> {
        let mut first = vec![None; 64];
        for &(a, b, t) in reports {
            for s in a..=b {
                let f: &mut Option<u64> = &mut first[usize::from(s)];
                f.get_or_insert(t);
            }
        }
        first
    }

    fn expand(seen: &FirstSeen) -> Vec<Option<u64>> {
        let mut first = vec![None; 64];
        for r in seen.runs() {
            for s in r.start..=r.end {
                first[usize::from(s)] = Some(r.t.0);
            }
        }
        first
    }

    #[test]
    fn a_later_report_dates_only_the_slots_not_reported_before() {
        let mut seen = FirstSeen::default();
        seen.see(range(0, 9), Timestamp(500));
        seen.see(range(5, 14), Timestamp(100));
        seen.see(range(0, 16), Timestamp(900));
        let runs: Vec<(u16, u16, u64)> = seen
            .runs()
            .iter()
            .map(|r| (r.start, r.end, r.t.0))
            .collect();
        assert_eq!(runs, vec![(0, 9, 500), (10, 14, 100), (15, 16, 900)]);
    }

    proptest! {
        /// Any reports, in any order, give each slot its first report's time, in canonical runs.
        #[test]
        fn runs_hold_each_slots_first_reported_time(
            reports in proptest::collection::vec((0u16..64, 0u16..64, 0u64..5), 0..24)
        ) {
            let reports: Vec<(u16, u16, u64)> =
                reports.into_iter().map(|(a, b, t)| (a.min(b), a.max(b), t)).collect();
            let mut seen = FirstSeen::default();
            for &(a, b, t) in &reports {
                seen.see(range(a, b), Timestamp(t));
            }
            prop_assert_eq!(expand(&seen), naive(&reports));
            for w in seen.runs().windows(2) {
                prop_assert!(w[0].end < w[1].start);
                prop_assert!(w[0].t != w[1].t || w[0].end + 1 != w[1].start);
            }
        }
    }
}
