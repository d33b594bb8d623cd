//! `scripts/fidelity`: the fidelity matrix's long draw.
//!
//! Draws `--cases N` cases from `--seed S` (default: the clock; printed), runs each live against a
//! real cluster on 127.0.0.1 with the real instrumented application, replays it through the model
//! and prints, per case, its seed, settings and real against model per metric; then writes the
//! Markdown report (per metric and per axis value the share of cases within target, every case,
//! every miss with its likely cause) to `--out` (default `target/fidelity.md`; rewritten after
//! every case, so a draw stopped early keeps what ran) and prints it.
//! `--case-seed X` runs the one case drawn from X (as printed); `--keep DIR` keeps each case's
//! recording and application report there; `--twice` runs each case live a second time and
//! judges it against the first by the same targets (how far the real library repeats itself);
//! `--rescore DIR` replays the cases kept in DIR again through the current model, no live run.
//!
//! Exits 0 when every case ran (whatever the figures), 1 when a case hit a harness error, 2 on bad
//! arguments.

use std::process::ExitCode;
use std::time::Instant;

use slotscope_tests::matrix::case::Case;
use slotscope_tests::matrix::draw::{usage, DrawOptions};
use slotscope_tests::matrix::replay::capabilities;
use slotscope_tests::matrix::rescore::rescore;
use slotscope_tests::matrix::runner::{run_case, run_case_twice, CaseResult};
use slotscope_tests::matrix::table::{markdown, progress};

/// Writes `doc` to `out` (its directory made first); a failure is reported, not fatal.
fn write_report(out: &std::path::Path, doc: &str) {
    if let Some(dir) = out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = std::fs::write(out, doc) {
        eprintln!("fidelity: cannot write {}: {e}", out.display());
    }
}

/// The report of `results`: a draw's, or the kept cases' replayed again (`--rescore`).
fn report(o: &DrawOptions, results: &[CaseResult]) -> String {
    let doc = markdown(results, o.seed, &o.libraries);
    match &o.rescore {
        Some(dir) => format!(
            "Kept cases of `{}` replayed again (`scripts/fidelity --rescore`), no live run; the \
             draw's seed and command below are not theirs.\n\n{doc}",
            dir.display()
        ),
        None => doc,
    }
}

fn main() -> ExitCode {
    let Some(o) = DrawOptions::parse(std::env::args().skip(1), 10, "fidelity.md") else {
        return usage("scripts/fidelity");
    };
    let Some(seeds) = o.announced_seeds("fidelity") else {
        return ExitCode::from(2);
    };
    eprintln!("fidelity: replay options: {:?}", capabilities());
    let started = Instant::now();
    let mut results = Vec::new();
    for (i, &s) in seeds.iter().enumerate() {
        if let Some(dir) = &o.rescore {
            let r = rescore(dir, s);
            eprintln!("== kept case {}/{}", i + 1, seeds.len());
            eprint!("{}", progress(&r));
            results.push(r);
            write_report(&o.out, &report(&o, &results));
            continue;
        }
        let case = Case::draw_over(s, &o.libraries);
        eprintln!(
            "== case {}/{} (seed {s}, {:.0} s so far): {case}",
            i + 1,
            seeds.len(),
            started.elapsed().as_secs_f64()
        );
        let run = if o.twice { run_case_twice } else { run_case };
        let r = run(&case, &|line| eprintln!("   {line}"), o.keep.as_deref());
        eprint!("{}", progress(&r));
        results.push(r);
        // The report so far, after every case: a long draw stopped early keeps what ran.
        write_report(&o.out, &report(&o, &results));
    }
    let doc = report(&o, &results);
    println!("{doc}");
    eprintln!(
        "fidelity: {} case(s) in {:.0} s; report written to {}",
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
