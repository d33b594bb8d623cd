//! Crash consistency of every file slotscope writes (`scripts/crash`, `tests/tests/crash.rs`):
//! `record` (one file, plain and zstd, and an always-on directory), `tap`, `import-metrics`, `cut`
//! and `index` killed with SIGKILL at drawn moments (seed printed), then every file left read back
//! as a user would (`summary`, `analyze`) and held to what the README promises: readable, at most
//! the round in progress lost, a file cut short said to be so, no half-written file under a final
//! name, and an always-on directory's crash-left file ended by the next `record`. A full disk is
//! a small tmpfs ([`full_disk`]).
//!
//! - [`left`]: a file a killed command left, read back without trusting it.
//! - [`rig`]: what the kills share: a real cluster, the inputs and the reference outputs.
//! - [`kill`]: one drawn kill, run and judged.
//! - [`full_disk`]: `record` into a filesystem that fills up.

pub mod full_disk;
pub mod kill;
pub mod left;
pub mod rig;

use std::fmt;
use std::time::Duration;

use crate::matrix::rng::{case_seed, Rng};

/// A command whose files are checked after a SIGKILL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `record --out FILE.jsonl`.
    Record,
    /// `record --out FILE.jsonl.zst`.
    RecordZstd,
    /// `record --out DIR/ --rotate 1s --retain-size …`, then a second `record` into DIR.
    Rotate,
    /// `tap` with a client's writes going through it.
    Tap,
    /// `import-metrics --prometheus-json …`.
    ImportMetrics,
    /// `cut` of an always-on directory.
    Cut,
    /// `index` of a recording.
    Index,
}

impl Target {
    /// Every target, in the order a draw cycles through them.
    pub const ALL: [Target; 7] = [
        Target::Record,
        Target::RecordZstd,
        Target::Rotate,
        Target::Tap,
        Target::ImportMetrics,
        Target::Cut,
        Target::Index,
    ];

    /// The target's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Target::Record => "record FILE.jsonl",
            Target::RecordZstd => "record FILE.jsonl.zst",
            Target::Rotate => "record DIR/ --rotate",
            Target::Tap => "tap",
            Target::ImportMetrics => "import-metrics",
            Target::Cut => "cut",
            Target::Index => "index",
        }
    }
}

/// One kill: which command, and how long after its start the SIGKILL comes, as a fraction of
/// the target's window (its whole run for the one-shot commands, a few seconds of recording for
/// the others; [`rig::Rig::window`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kill {
    /// The kill's own seed (`--kill-seed` runs it again alone).
    pub seed: u64,
    /// The command.
    pub target: Target,
    /// Where in the target's window the kill lands, in `[0, 1)`.
    pub at: f64,
}

impl Kill {
    /// The kill drawn from `seed` for `target`.
    pub fn draw(seed: u64, target: Target) -> Kill {
        let mut rng = Rng::new(seed);
        Kill {
            seed,
            target,
            at: rng.unit(),
        }
    }

    /// Kill `index` of a run seeded with `seed`: the targets in turn, each moment drawn.
    pub fn nth(seed: u64, index: u64) -> Kill {
        let target = Target::ALL[usize::try_from(index % Target::ALL.len() as u64).unwrap_or(0)];
        Kill::draw(case_seed(seed, index), target)
    }

    /// The delay after the start, in a window of `window`.
    pub fn delay(&self, window: Duration) -> Duration {
        window.mul_f64(self.at)
    }
}

impl fmt::Display for Kill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {:.0} % of its window",
            self.target.name(),
            self.at * 100.0
        )
    }
}
