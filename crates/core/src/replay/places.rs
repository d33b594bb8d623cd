//! The places of a window an uncertain moment is replayed at (a kill's between two samples, a
//! failure's edge between a poll and an answer: `moments.rs`).

use crate::time::Timestamp;

/// The `k`-th of `n` even places of `[from, to]` (the middle of its `k`-th of `n` parts; `k =
/// (n - 1) / 2` of an odd `n` is the window's middle).
pub(super) fn place(from: Timestamp, to: Timestamp, k: u64, n: u64) -> Timestamp {
    let n = n.max(1);
    let k = k.min(n - 1);
    let span = to.0.saturating_sub(from.0);
    Timestamp(from.0 + span * (2 * k + 1) / (2 * n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_even_and_the_middle_one_is_the_middle() {
        let (from, to) = (Timestamp(1_000), Timestamp(1_500));
        assert_eq!(place(from, to, 7, 15), Timestamp(1_250));
        assert_eq!(place(from, to, 0, 1), Timestamp(1_250));
        assert_eq!(place(from, to, 0, 5), Timestamp(1_050));
        assert_eq!(place(from, to, 4, 5), Timestamp(1_450));
        assert_eq!(place(from, from, 3, 15), from);
    }
}
