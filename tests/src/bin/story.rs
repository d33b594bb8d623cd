//! `scripts/story`: the story check's long draw (issue 13).
//!
//! Draws `--cases N` cases from `--seed S` (default: the clock; printed): each a fidelity-matrix
//! case with, in about half of them, a healthy companion application beside it. Each runs live
//! against a real cluster on 127.0.0.1 with the real instrumented application(s); then `slotscope
//! analyze` and `slotscope hypotheses` on the recording are judged on the four criteria of
//! `slotscope_tests::matrix::criteria`. Prints each case's progress, then writes the Markdown report
//! to `--out` (default `target/story.md`) and prints it. `--case-seed X` runs the one case drawn
//! from X; `--keep DIR` keeps each case's recording, application reports and analysis answers.
//!
//! Exits 0 when every case ran (whatever the verdicts), 1 when a case hit a harness error, 2 on bad
//! arguments.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use slotscope_tests::kind::workspace_root;
use slotscope_tests::matrix::rng::case_seed;
use slotscope_tests::matrix::story::{run_story, StoryCase};
use slotscope_tests::matrix::story_table::{markdown, progress};

/// Most cases one draw runs (each takes about half a minute).
const MAX_CASES: u64 = 500;

struct Options {
    cases: u64,
    seed: u64,
    case_seed: Option<u64>,
    out: PathBuf,
    keep: Option<PathBuf>,
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: scripts/story [--cases N] [--seed S] [--case-seed X] [--out FILE] [--keep DIR]"
    );
    ExitCode::from(2)
}

fn parse() -> Option<Options> {
    let clock = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_secs());
    let mut o = Options {
        cases: 8,
        seed: clock,
        case_seed: None,
        out: std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| workspace_root().join("target"), PathBuf::from)
            .join("story.md"),
        keep: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next();
        match a.as_str() {
            "--cases" => o.cases = value()?.parse().ok()?,
            "--seed" => o.seed = value()?.parse().ok()?,
            "--case-seed" => o.case_seed = Some(value()?.parse().ok()?),
            "--out" => o.out = PathBuf::from(value()?),
            "--keep" => o.keep = Some(PathBuf::from(value()?)),
            _ => return None,
        }
    }
    (1..=MAX_CASES).contains(&o.cases).then_some(o)
}

fn main() -> ExitCode {
    let Some(o) = parse() else {
        return usage();
    };
    let seeds: Vec<u64> = match o.case_seed {
        Some(x) => vec![x],
        None => (0..o.cases).map(|i| case_seed(o.seed, i)).collect(),
    };
    eprintln!("story: seed {}, {} case(s)", o.seed, seeds.len());
    let started = Instant::now();
    let mut results = Vec::new();
    for (i, &s) in seeds.iter().enumerate() {
        let case = StoryCase::draw(s);
        eprintln!(
            "== case {}/{} (seed {s}, {:.0} s so far): {case}",
            i + 1,
            seeds.len(),
            started.elapsed().as_secs_f64()
        );
        let r = run_story(&case, &|line| eprintln!("   {line}"), o.keep.as_deref());
        eprint!("{}", progress(&r));
        results.push(r);
    }
    let doc = markdown(&results, o.seed);
    if let Some(dir) = o.out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = std::fs::write(&o.out, &doc) {
        eprintln!("story: cannot write {}: {e}", o.out.display());
    }
    println!("{doc}");
    eprintln!(
        "story: {} case(s) in {:.0} s; report written to {}",
        results.len(),
        started.elapsed().as_secs_f64(),
        o.out.display()
    );
    if results.iter().any(|r| r.error.is_some()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
