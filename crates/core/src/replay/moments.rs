//! A replay over the moments a recording's kills and failures may have come at.
//!
//! A `CLIENT KILL` is known only between the two `INFO` samples its count rose between (half a
//! second at the collector's default poll), and a replay places it in the middle (`kills.rs`);
//! a node's failure began between its last answer and the poll that failed, and ended between
//! its last failure and its next answer (`fault_edges.rs`).
//! A client whose own cycle is shorter than that window (a reset storm resets every ~100 ms,
//! each reset opening new connections) meets the kill on a connection it uses next at some
//! moments of the window and at others finds nothing to lose: replayed at 15 even places of the
//! window, two remapped redis-py 5.0.0 storms that wedged live wedged at 10 of them each, not at
//! the middle (docs/FIDELITY.md). So where a kill's or a failure's moment is uncertain the
//! replay runs at [`MOMENTS`] even places of every window and answers with the majority's
//! `wedged`.

use super::report::{Moments, ReplayReport};
use super::{replay, ClientModel, SimCluster, Workload};

/// Places tried in each window when one is uncertain (odd: the middle is one of them). A
/// storm's cycle is about 100 ms and a window 500 ms: five places would fall at nearly the same
/// point of every cycle (two of the storms above wedged at 2 of 5, not at the middle, and at 10
/// of 15); fifteen, a third of a cycle apart, see it whole. A replay takes milliseconds to a
/// few seconds, so fifteen cost little.
pub const MOMENTS: u64 = 15;

/// Replays `workload` on `cluster` through a fresh client from `build` for each run. Without an
/// uncertain moment, one replay, as [`replay`]. Otherwise one replay at each of [`MOMENTS`]
/// even places of the windows (every kill and failure edge at the same place of its own); the
/// answer is the majority's `wedged`, and the report is the one of the majority's runs whose
/// place is nearest the middle, with `moments` saying how many ended wedged.
///
/// # Errors
///
/// What `build` returns when it cannot make the client.
pub fn replay_over_moments<E>(
    cluster: &SimCluster,
    workload: &Workload,
    build: impl FnMut() -> Result<Box<dyn ClientModel>, E>,
) -> Result<ReplayReport, E> {
    over_moments(cluster, workload, build, false)
}

/// [`replay_over_moments`], stopping once the majority is known (after 8 of the 15 places when
/// they agree): the same answer and the same report, its `moments` counting the places replayed.
/// For ranking many variants, where only the answer and its figures matter.
///
/// # Errors
///
/// What `build` returns when it cannot make the client.
pub fn replay_majority<E>(
    cluster: &SimCluster,
    workload: &Workload,
    build: impl FnMut() -> Result<Box<dyn ClientModel>, E>,
) -> Result<ReplayReport, E> {
    over_moments(cluster, workload, build, true)
}

/// The places of `n` from the middle outwards, the earlier one first at equal distance.
fn outwards(n: u64) -> impl Iterator<Item = u64> {
    let middle = (n.max(1) - 1) / 2;
    (0..n).map(move |i| {
        let d = i.div_ceil(2);
        if i % 2 == 1 {
            middle.saturating_sub(d)
        } else {
            middle + d
        }
    })
}

fn over_moments<E>(
    cluster: &SimCluster,
    workload: &Workload,
    mut build: impl FnMut() -> Result<Box<dyn ClientModel>, E>,
    stop_at_majority: bool,
) -> Result<ReplayReport, E> {
    if !cluster.has_uncertain_moments() {
        let mut client = build()?;
        return Ok(replay(cluster, workload, client.as_mut()));
    }
    let n = MOMENTS;
    let half = usize::try_from(n / 2).unwrap_or(usize::MAX);
    // Nearest the middle first: the first run of each answer is the one the report would be.
    let mut first: [Option<ReplayReport>; 2] = [None, None];
    let (mut tried, mut wedged) = (0, 0);
    for k in outwards(n) {
        let mut client = build()?;
        let placed = cluster.at_moment(k, n);
        let r = replay(&placed, workload, client.as_mut());
        tried += 1;
        wedged += usize::from(r.wedged);
        let slot = &mut first[usize::from(r.wedged)];
        if slot.is_none() {
            *slot = Some(r);
        }
        // More than half of all the places agree: the rest cannot turn the answer.
        if stop_at_majority && (wedged > half || tried - wedged > half) {
            break;
        }
    }
    let majority = 2 * wedged > tried;
    let mut chosen = first[usize::from(majority)].take().unwrap_or_default();
    chosen.moments = Some(Moments {
        tried: u32::try_from(tried).unwrap_or(u32::MAX),
        wedged: u32::try_from(wedged).unwrap_or(u32::MAX),
    });
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_go_from_the_middle_outwards() {
        let order: Vec<u64> = outwards(5).collect();
        assert_eq!(order, [2, 1, 3, 0, 4]);
        let mut all: Vec<u64> = outwards(MOMENTS).collect();
        assert_eq!(all[0], 7);
        all.sort_unstable();
        assert_eq!(all, (0..MOMENTS).collect::<Vec<_>>());
    }
}
