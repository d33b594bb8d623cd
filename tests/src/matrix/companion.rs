//! The companion axis of the story check (issue 13): in about half the cases a second, healthy
//! application runs beside the drawn one, as the issue's "a remapped client and a healthy one side
//! by side".
//!
//! The companion is the same program as the drawn application (`tests/scenarios/app.py`) with
//! redis-py [`COMPANION_VERSION`] (the newest 8.x, which keeps its startup nodes), no
//! `address_remap`, its own command ([`COMPANION_COMMANDS`], never the drawn application's
//! `zadd`) on its own keys ([`COMPANION_KEY_PREFIX`]), its own client name ([`COMPANION_NAME`]; the `kill-clients` fault closes only
//! connections named [`crate::matrix::live::APP_NAME`]), its own rate and cap, and its startup node
//! on node [`COMPANION_NODE`], which no fault strikes. A fault on node 0 (a stall, a kill) still
//! reaches the companion's commands for node 0's slots: whether it stayed healthy is read from its
//! own report, never assumed.
//!
//! The companion is drawn from its own generator (seeded from the case's seed), so that
//! [`crate::matrix::case::Case::draw`] and every fidelity draw stay as they were.

use crate::matrix::app::{AppSettings, SOCKET_TIMEOUT_S};
use crate::matrix::rng::Rng;
use crate::python::REDIS_PY_8_1_0;

/// The companion's `CLIENT SETNAME`.
pub const COMPANION_NAME: &str = "matrix-healthy";
/// The companion's redis-py release.
pub const COMPANION_VERSION: &str = REDIS_PY_8_1_0;
/// The companion's startup node: the recorder's seed, which no fault strikes.
pub const COMPANION_NODE: usize = crate::matrix::fault::RECORDER_SEED;
/// The companion's keys' prefix (`healthy:{0}` …): its `get`/`set` never meet the drawn
/// application's sorted sets (`key:{0}` …), which would answer `WRONGTYPE`.
pub const COMPANION_KEY_PREFIX: &str = "healthy";
/// The commands a companion is drawn from (the drawn application sends `zadd`).
pub const COMPANION_COMMANDS: [&str; 2] = ["get", "set"];
/// Mixed into the case's seed for the companion's own generator.
const SALT: u64 = 0xC0DE_C0DE_5EED_0013;

/// A drawn companion application.
#[derive(Clone, Debug, PartialEq)]
pub struct Companion {
    /// Commands scheduled per second (30–300, log-uniform).
    pub rate: u32,
    /// Commands in flight at most (1–16, log-uniform).
    pub in_flight: u32,
    /// Distinct keys (100–10000, log-uniform).
    pub keys: u32,
    /// Its command, one of [`COMPANION_COMMANDS`].
    pub command: &'static str,
    /// Seed of its key draw.
    pub seed: u64,
}

impl Companion {
    /// The companion of the case drawn from `case_seed`: `None` in about half the cases.
    pub fn draw(case_seed: u64) -> Option<Companion> {
        let mut r = Rng::new(case_seed ^ SALT);
        if r.between(0, 1) == 0 {
            return None;
        }
        Some(Companion {
            rate: r.log_uniform(30, 300),
            in_flight: r.log_uniform(1, 16),
            keys: r.log_uniform(100, 10_000),
            command: r.pick(&COMPANION_COMMANDS),
            seed: r.next_u64(),
        })
    }

    /// What the companion is told: start at `startup`, schedule for `duration_s`.
    pub fn settings(&self, startup: String, duration_s: u32) -> AppSettings {
        AppSettings {
            startup,
            rate: self.rate,
            in_flight: self.in_flight,
            duration_s,
            keys: self.keys,
            key_prefix: Some(COMPANION_KEY_PREFIX.to_owned()),
            command: self.command.to_owned(),
            address_remap: None,
            socket_timeout_s: SOCKET_TIMEOUT_S,
            connect_timeout_s: SOCKET_TIMEOUT_S,
            client_name: COMPANION_NAME.to_owned(),
            seed: self.seed,
        }
    }
}

impl std::fmt::Display for Companion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "companion redis-py {COMPANION_VERSION} {} {}/s, in-flight {}, {} keys",
            self.command, self.rate, self.in_flight, self.keys
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::rng::case_seed;

    #[test]
    fn about_half_the_cases_have_a_companion_within_bounds() {
        let n = 600;
        let drawn: Vec<Option<Companion>> =
            (0..n).map(|i| Companion::draw(case_seed(13, i))).collect();
        let with = drawn.iter().flatten().count();
        let share = with as f64 / n as f64;
        assert!(
            (share - 0.5).abs() < 0.07,
            "companion in {share:.3} of cases"
        );
        for c in drawn.iter().flatten() {
            assert!((30..=300).contains(&c.rate), "{c}");
            assert!((1..=16).contains(&c.in_flight), "{c}");
            assert!(COMPANION_COMMANDS.contains(&c.command), "{c}");
        }
        let seed = case_seed(13, 5);
        assert_eq!(Companion::draw(seed), Companion::draw(seed));
    }
}
