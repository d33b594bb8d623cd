//! What a draw of live cases is asked for: the seed of a run (`SLOTSCOPE_SEED` or the clock) and
//! the long draws' command line (`scripts/fidelity`, `scripts/story`: `--cases N --seed S
//! --case-seed X --out FILE --keep DIR`), one parser for both.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::kind::workspace_root;
use crate::matrix::case::{Case, Fault, REDIS_PY};
use crate::matrix::library::Library;
use crate::matrix::rescore::kept_seeds;
use crate::matrix::rng::case_seed;

/// Most cases one draw runs (each takes about half a minute).
pub const MAX_CASES: u64 = 500;

/// The clock in seconds: a seed nobody chose.
fn clock_seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_secs())
}

/// The seed of a test run: `SLOTSCOPE_SEED`, else the clock (the caller prints it).
pub fn run_seed() -> u64 {
    std::env::var("SLOTSCOPE_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(clock_seed)
}

/// A long draw's options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrawOptions {
    /// Cases to draw.
    pub cases: u64,
    /// The draw's seed (default: the clock).
    pub seed: u64,
    /// The one case to run again, by the seed its progress line printed.
    pub case_seed: Option<u64>,
    /// Where the Markdown report goes.
    pub out: PathBuf,
    /// The libraries cases are drawn over (`--libs ioredis,redis-py@8.1.0`; default: the redis-py
    /// releases, [`REDIS_PY`], for `scripts/fidelity`; every library built here for
    /// `scripts/story`).
    pub libraries: Vec<Library>,
    /// Where each case's recording and reports are kept, if anywhere.
    pub keep: Option<PathBuf>,
    /// Run each case live a second time (`--twice`, `scripts/fidelity` only): how far the real
    /// library repeats itself ([`crate::matrix::repeat`]).
    pub twice: bool,
    /// Replay (`scripts/fidelity`, [`crate::matrix::rescore`]) or judge (`scripts/story`,
    /// [`crate::matrix::story_rescore`]) the cases kept in this directory again, no live run
    /// (`--rescore DIR`).
    pub rescore: Option<PathBuf>,
    /// Only cases of these faults ([`Fault::name`]; `--faults kill-clients,kill-node`; default:
    /// every fault). The draw's other cases are passed over, so a case keeps its seed.
    pub faults: Vec<&'static str>,
}

/// How many case seeds a draw with `--faults` tries for each case it wants, at most.
const TRIES_PER_CASE: u64 = 200;

impl DrawOptions {
    /// The options in `args` (without the program name): `default_cases` cases and the report
    /// `target/<report>` unless told otherwise; `None` for an argument it does not know, a bad
    /// number, or a number of cases outside 1..=[`MAX_CASES`].
    pub fn parse(
        args: impl IntoIterator<Item = String>,
        default_cases: u64,
        report: &str,
    ) -> Option<DrawOptions> {
        DrawOptions::parse_over(args, default_cases, report, &REDIS_PY)
    }

    /// As [`DrawOptions::parse`], the cases drawn over `libraries` unless `--libs` says otherwise.
    pub fn parse_over(
        args: impl IntoIterator<Item = String>,
        default_cases: u64,
        report: &str,
        libraries: &[Library],
    ) -> Option<DrawOptions> {
        let mut o = DrawOptions {
            cases: default_cases,
            seed: clock_seed(),
            case_seed: None,
            out: std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(|| workspace_root().join("target"), PathBuf::from)
                .join(report),
            keep: None,
            libraries: libraries.to_vec(),
            twice: false,
            rescore: None,
            faults: Vec::new(),
        };
        let mut args = args.into_iter();
        while let Some(a) = args.next() {
            let mut value = || args.next();
            match a.as_str() {
                "--cases" => o.cases = value()?.parse().ok()?,
                "--seed" => o.seed = value()?.parse().ok()?,
                "--case-seed" => o.case_seed = Some(value()?.parse().ok()?),
                "--out" => o.out = PathBuf::from(value()?),
                "--keep" => o.keep = Some(PathBuf::from(value()?)),
                "--twice" => o.twice = true,
                "--rescore" => o.rescore = Some(PathBuf::from(value()?)),
                "--libs" => {
                    let mut libraries = Vec::new();
                    for name in value()?.split(',').filter(|n| !n.trim().is_empty()) {
                        match Library::parse(name) {
                            Ok(found) => libraries.extend(found),
                            Err(e) => {
                                eprintln!("{e}");
                                return None;
                            }
                        }
                    }
                    libraries.dedup();
                    if libraries.is_empty() {
                        return None;
                    }
                    o.libraries = libraries;
                }
                "--faults" => {
                    for name in value()?.split(',').filter(|n| !n.trim().is_empty()) {
                        let Some(known) = Fault::NAMES.iter().find(|k| **k == name.trim()) else {
                            eprintln!(
                                "unknown fault {name:?}; the faults are {}",
                                Fault::NAMES.join(", ")
                            );
                            return None;
                        };
                        if !o.faults.contains(known) {
                            o.faults.push(known);
                        }
                    }
                    if o.faults.is_empty() {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        (1..=MAX_CASES).contains(&o.cases).then_some(o)
    }

    /// The seeds `program` runs: the cases kept in `--rescore`'s directory, else
    /// [`case_seeds`](Self::case_seeds); announced on stderr (the draw's seed and libraries, or the
    /// directory kept).
    /// `None` (said) when `--rescore`'s directory keeps none.
    pub fn announced_seeds(&self, program: &str) -> Option<Vec<u64>> {
        let seeds = match &self.rescore {
            Some(dir) => kept_seeds(dir),
            None => self.case_seeds(),
        };
        if seeds.is_empty() {
            eprintln!(
                "{program}: no kept case (<seed>.live.json) in {:?}",
                self.rescore
            );
            return None;
        }
        match &self.rescore {
            Some(dir) => eprintln!(
                "{program}: {} kept case(s) of {}",
                seeds.len(),
                dir.display()
            ),
            None => {
                let names: Vec<String> = self.libraries.iter().map(|l| l.label()).collect();
                eprintln!(
                    "{program}: seed {}, {} case(s) over {}",
                    self.seed,
                    seeds.len(),
                    names.join(", ")
                );
            }
        }
        Some(seeds)
    }

    /// The seeds of the cases to run: the one asked for, or the draw's (with `--faults`, the
    /// first `cases` of the draw's seeds whose case has one of those faults).
    pub fn case_seeds(&self) -> Vec<u64> {
        if let Some(x) = self.case_seed {
            return vec![x];
        }
        let wanted = |x: &u64| {
            self.faults.is_empty()
                || self
                    .faults
                    .contains(&Case::draw_over(*x, &self.libraries).fault.name())
        };
        (0..self.cases * TRIES_PER_CASE)
            .map(|i| case_seed(self.seed, i))
            .filter(wanted)
            .take(usize::try_from(self.cases).unwrap_or(usize::MAX))
            .collect()
    }
}

/// Runs a long draw's cases one after the other: each kept case of `--rescore`'s directory
/// judged again by `rescore`, or each case seed `described` and run live by `live`; each
/// result's `progress` printed. `started` is when the draw began.
pub fn each_case<R>(
    o: &DrawOptions,
    seeds: &[u64],
    started: std::time::Instant,
    rescore: &dyn Fn(&std::path::Path, u64) -> R,
    (described, live): (&dyn Fn(u64) -> String, &dyn Fn(u64) -> R),
    progress: &dyn Fn(&R) -> String,
) -> Vec<R> {
    let mut results = Vec::with_capacity(seeds.len());
    for (i, &s) in seeds.iter().enumerate() {
        let r = match &o.rescore {
            Some(dir) => {
                eprintln!("== kept case {}/{} (seed {s})", i + 1, seeds.len());
                rescore(dir, s)
            }
            None => {
                eprintln!(
                    "== case {}/{} (seed {s}, {:.0} s so far): {}",
                    i + 1,
                    seeds.len(),
                    started.elapsed().as_secs_f64(),
                    described(s)
                );
                live(s)
            }
        };
        eprint!("{}", progress(&r));
        results.push(r);
    }
    results
}

/// Ends a long draw of `program`: the Markdown `doc` (said to be of the kept cases `done` again
/// without a live run, under `--rescore`) written to `--out` and printed, a closing line, and
/// the exit code (1 when a case hit a harness error).
pub fn finish(
    program: &str,
    o: &DrawOptions,
    doc: String,
    done: &str,
    (cases, errors): (usize, bool),
    started: std::time::Instant,
) -> ExitCode {
    let doc = match &o.rescore {
        Some(dir) => format!(
            "Kept cases of `{}` {done}, no live run; the draw's seed and command below are not \
             theirs.\n\n{doc}",
            dir.display()
        ),
        None => doc,
    };
    if let Some(dir) = o.out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = std::fs::write(&o.out, &doc) {
        eprintln!("{program}: cannot write {}: {e}", o.out.display());
    }
    println!("{doc}");
    eprintln!(
        "{program}: {cases} case(s) in {:.0} s; report written to {}",
        started.elapsed().as_secs_f64(),
        o.out.display()
    );
    if errors {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Prints `script`'s usage and gives the exit code of bad arguments (2).
pub fn usage(script: &str) -> ExitCode {
    eprintln!(
        "usage: {script} [--cases N] [--seed S] [--case-seed X] [--libs LIB[,LIB...]] [--out FILE] \
         [--keep DIR] [--twice] [--rescore DIR] [--faults F[,F...]]\n  LIB: a library (`redis-py`, `ioredis`, ...) or a release (`redis-py@8.1.0`); \
         default: redis-py (scripts/fidelity), every library whose app is built (scripts/story)\n  --twice (scripts/fidelity): each case live a second time, judged against the first\n  --rescore DIR: the cases kept there (--keep) replayed (scripts/fidelity) or judged (scripts/story) again, no live run\n  --faults F,...: only cases of these faults (none, stall, kill-clients, kill-node, failover, manual-failover)"
    );
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn options_read_as_given_and_bad_ones_are_refused() {
        let o = DrawOptions::parse(args("--cases 3 --seed 7 --keep /tmp/k"), 8, "x.md").unwrap();
        assert_eq!((o.cases, o.seed, o.case_seed), (3, 7, None));
        assert_eq!(o.keep, Some(PathBuf::from("/tmp/k")));
        assert!(o.out.ends_with("x.md"));
        assert_eq!(o.case_seeds().len(), 3);
        assert_eq!(o.case_seeds()[0], case_seed(7, 0));
        assert_eq!(o.libraries, REDIS_PY.to_vec());
        let libs = DrawOptions::parse(args("--libs go-redis,redis-py@8.1.0,jedis"), 8, "x.md");
        assert_eq!(
            libs.unwrap().libraries,
            vec![Library::GoRedis, REDIS_PY[1], Library::Jedis]
        );
        assert!(DrawOptions::parse(args("--libs nosuch"), 8, "x.md").is_none());
        let over = DrawOptions::parse_over(args("--cases 2"), 8, "x.md", &[Library::Jedis]);
        assert_eq!(over.unwrap().libraries, vec![Library::Jedis]);
        assert!(DrawOptions::parse(args("--libs ,"), 8, "x.md").is_none());
        assert!(!o.twice);
        assert!(
            DrawOptions::parse(args("--twice"), 8, "x.md")
                .unwrap()
                .twice
        );
        let kills =
            DrawOptions::parse(args("--cases 4 --faults kill-clients,stall"), 8, "x.md").unwrap();
        assert_eq!(kills.faults, ["kill-clients", "stall"]);
        let seeds = kills.case_seeds();
        assert_eq!(seeds.len(), 4);
        for x in seeds {
            let f = Case::draw_over(x, &kills.libraries).fault.name();
            assert!(f == "kill-clients" || f == "stall", "{f}");
        }
        assert!(DrawOptions::parse(args("--faults kill"), 8, "x.md").is_none());
        let one = DrawOptions::parse(args("--case-seed 42"), 8, "x.md").unwrap();
        assert_eq!(one.case_seeds(), [42]);
        assert_eq!(DrawOptions::parse(args("--cases 0"), 8, "x.md"), None);
        assert_eq!(DrawOptions::parse(args("--cases"), 8, "x.md"), None);
        assert_eq!(DrawOptions::parse(args("--what 1"), 8, "x.md"), None);
    }
}
