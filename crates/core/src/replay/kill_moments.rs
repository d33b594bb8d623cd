//! A replay over the moments a recording's kills may have come at.
//!
//! A `CLIENT KILL` is known only between the two `INFO` samples its count rose between (half a
//! second at the collector's default poll), and a replay places it in the middle (`kills.rs`).
//! A client whose own cycle is shorter than that window (a reset storm resets every ~100 ms,
//! each reset opening new connections) meets the kill on a connection it uses next at some
//! moments of the window and at others finds nothing to lose: replayed at 15 even places of the
//! window, two remapped redis-py 5.0.0 storms that wedged live wedged at 10 of them each, not at
//! the middle (docs/FIDELITY.md). So where a kill's moment is uncertain the replay runs at
//! [`KILL_MOMENTS`] even places of every window and answers with the majority's `wedged`.

use super::report::{KillMoments, ReplayReport};
use super::{replay, ClientModel, SimCluster, Workload};

/// Places tried in each kill window when one is uncertain (odd: the middle is one of them). A
/// storm's cycle is about 100 ms and a window 500 ms: five places would fall at nearly the same
/// point of every cycle (two of the storms above wedged at 2 of 5, not at the middle, and at 10
/// of 15); fifteen, a third of a cycle apart, see it whole. A replay takes milliseconds to a
/// few seconds, so fifteen cost little.
pub const KILL_MOMENTS: u64 = 15;

/// Replays `workload` on `cluster` through a fresh client from `build` for each run. Without an
/// uncertain kill, one replay, as [`replay`]. Otherwise one replay at each of [`KILL_MOMENTS`]
/// even places of the kill windows (every kill at the same place of its own window); the
/// answer is the majority's `wedged`, and the report is the one of the majority's runs whose
/// place is nearest the middle, with `kill_moments` saying how many ended wedged.
///
/// # Errors
///
/// What `build` returns when it cannot make the client.
pub fn replay_over_kill_moments<E>(
    cluster: &SimCluster,
    workload: &Workload,
    mut build: impl FnMut() -> Result<Box<dyn ClientModel>, E>,
) -> Result<ReplayReport, E> {
    if !cluster.has_uncertain_kills() {
        let mut client = build()?;
        return Ok(replay(cluster, workload, client.as_mut()));
    }
    let n = KILL_MOMENTS;
    let mut runs = Vec::new();
    for k in 0..n {
        let mut client = build()?;
        let placed = cluster.with_kills_at(k, n);
        runs.push((k, replay(&placed, workload, client.as_mut())));
    }
    let wedged = runs.iter().filter(|(_, r)| r.wedged).count();
    let majority = 2 * wedged > runs.len();
    let middle = (n - 1) / 2;
    let mut chosen = runs
        .into_iter()
        .filter(|(_, r)| r.wedged == majority)
        .min_by_key(|&(k, _)| k.abs_diff(middle))
        .map(|(_, r)| r)
        .unwrap_or_default();
    chosen.kill_moments = Some(KillMoments {
        tried: u32::try_from(n).unwrap_or(u32::MAX),
        wedged: u32::try_from(wedged).unwrap_or(u32::MAX),
    });
    Ok(chosen)
}
