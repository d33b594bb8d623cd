//! The queue of tasks to resume, in the order of their time (and, at one time, of their wake).
//!
//! A replay pushes a wake for every reply on its way and every stretch of the client's own work,
//! and pops the earliest: a priority queue whose keys `(time, order)` are all distinct. Most wakes
//! come in a few streams whose times only grow (replies that take the same round trip, the
//! client's work queued on its loop), so the queue keeps up to [`RUNS`] runs, each a FIFO whose
//! times do not fall, and a binary heap for the wakes that fit none. A push goes to the run whose
//! last time is the latest not after its own (a constant-time append); a pop takes the least of
//! the runs' fronts and the heap's top. The order popped is exactly that of one binary heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A task of the replay: one application command in flight (the network names tasks by it).
pub type TaskId = usize;

/// Runs kept beside the heap.
const RUNS: usize = 4;

/// A wake: its time (µs), its order of push, the task.
type Wake = (u64, u64, TaskId);

/// A FIFO of wakes: a vector and the index of its front (cheaper than a ring's wrapping index);
/// the part before the front is dropped when it is most of the vector.
#[derive(Debug, Default)]
struct Run {
    wakes: Vec<Wake>,
    head: usize,
}

impl Run {
    fn back(&self) -> Option<&Wake> {
        if self.head < self.wakes.len() {
            self.wakes.last()
        } else {
            None
        }
    }

    fn front(&self) -> Option<&Wake> {
        self.wakes.get(self.head)
    }

    fn push_back(&mut self, wake: Wake) {
        if self.head == self.wakes.len() {
            self.wakes.clear();
            self.head = 0;
        } else if self.head >= 1024 && self.head * 2 >= self.wakes.len() {
            self.wakes.drain(..self.head);
            self.head = 0;
        }
        self.wakes.push(wake);
    }

    fn pop_front(&mut self) {
        self.head += 1;
    }
}

/// Tasks to resume, earliest first (see the module doc).
#[derive(Debug, Default)]
pub(super) struct Wakes {
    runs: [Run; RUNS],
    rest: BinaryHeap<Reverse<Wake>>,
    order: u64,
    /// Where the earliest wake is (see [`Self::earliest`]), kept current.
    first: Option<(usize, Wake)>,
}

impl Wakes {
    /// Resumes `task` at `at_us`, after the wakes of the same time pushed before.
    pub(super) fn push(&mut self, at_us: u64, task: TaskId) {
        let wake = (at_us, self.order, task);
        self.order += 1;
        // The run whose last time is the latest not after `at_us`; else an empty one; else the
        // heap.
        let mut at = RUNS;
        let mut at_back = 0;
        let mut empty = RUNS;
        for (i, run) in self.runs.iter().enumerate() {
            match run.back() {
                Some(&(t, _, _)) => {
                    if t <= at_us && (at == RUNS || t > at_back) {
                        at = i;
                        at_back = t;
                    }
                }
                None => empty = empty.min(i),
            }
        }
        if at == RUNS {
            at = empty;
        }
        match self.runs.get_mut(at) {
            Some(run) => run.push_back(wake),
            None => self.rest.push(Reverse(wake)),
        }
        // The earliest now only when before the earliest (at one time, the earlier push first).
        if self.first.is_none_or(|(_, f)| at_us < f.0) {
            self.first = Some((at, wake));
        }
    }

    /// Where the earliest wake is: a run's index, or `RUNS` for the heap.
    fn earliest(&self) -> Option<(usize, Wake)> {
        let mut min = self.rest.peek().map(|&Reverse(w)| (RUNS, w));
        for (i, run) in self.runs.iter().enumerate() {
            if let Some(&w) = run.front() {
                // Orders are unique: the tuples compare as `(time, order)`.
                if min.is_none_or(|(_, m)| w < m) {
                    min = Some((i, w));
                }
            }
        }
        min
    }

    /// The earliest wake's time and task, removed.
    pub(super) fn pop(&mut self) -> Option<(u64, TaskId)> {
        let (i, (t, _, task)) = self.first?;
        if i == RUNS {
            self.rest.pop();
        } else {
            self.runs[i].pop_front();
        }
        self.first = self.earliest();
        Some((t, task))
    }

    /// The earliest wake's time.
    pub(super) fn peek(&self) -> Option<u64> {
        self.first.map(|(_, (t, _, _))| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no global RNG in the core).
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn pops_in_the_order_of_one_binary_heap() {
        for seed in 1..40_u64 {
            let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut wakes = Wakes::default();
            let mut heap = BinaryHeap::new();
            let mut order = 0_u64;
            let mut now = 0_u64;
            for step in 0..3000 {
                let r = next(&mut rng);
                if r.is_multiple_of(3) {
                    let got = wakes.pop();
                    let want = heap.pop().map(|Reverse((t, _, id))| (t, id));
                    assert_eq!(got, want, "seed {seed} step {step}");
                    if let Some((t, _)) = got {
                        now = now.max(t);
                    }
                } else {
                    // Streams of growing times (round trips, the loop's work), a few out of
                    // order, some at the same time.
                    let at = match r % 7 {
                        0 => now + 250,
                        1 => now + 3,
                        2 => now.saturating_sub(r % 5),
                        3 => now,
                        _ => now + (r >> 8) % 600,
                    };
                    let task = usize::try_from(r % 97).expect("small");
                    wakes.push(at, task);
                    heap.push(Reverse((at, order, task)));
                    order += 1;
                }
                assert_eq!(wakes.peek(), heap.peek().map(|Reverse((t, _, _))| *t));
            }
            while let Some(Reverse((t, _, id))) = heap.pop() {
                assert_eq!(wakes.pop(), Some((t, id)));
            }
            assert_eq!(wakes.pop(), None);
        }
    }
}
