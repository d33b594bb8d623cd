//! `scripts/preflight`: the pre-flight check's long draw (issue 25).
//!
//! Draws `--cases N` cases from `--seed S` (default: the clock; printed) over `--libs` (default:
//! every library whose app is built here), only of the faults a plan can state (every one but
//! `kill-clients`, or `--faults`). Each runs live; its recording is cut where the change began and
//! `slotscope preflight` is given it with the plan the case carried out; the verdict for the
//! application is judged against what the change did
//! (`slotscope_tests::matrix::preflight_check`). Prints each case's progress, then writes the
//! Markdown report to `--out` (default `target/preflight.md`) and prints it. `--case-seed X` runs
//! the one case drawn from X; `--keep DIR` keeps each case's recording, report, plan and answer;
//! `--rescore DIR` asks `preflight` again of the cases kept there and judges them, no live run.
//!
//! Exits 0 when every case ran (whatever the verdicts), 1 when a case hit a harness error, 2 on bad
//! arguments.

use std::process::ExitCode;
use std::time::Instant;

use slotscope_tests::matrix::case::{Case, Fault};
use slotscope_tests::matrix::draw::{each_case, finish, usage, DrawOptions};
use slotscope_tests::matrix::library::built_or_all;
use slotscope_tests::matrix::preflight_check::{rescore_preflight, run_preflight_case};
use slotscope_tests::matrix::preflight_table::{markdown, progress};

fn main() -> ExitCode {
    let over = built_or_all();
    let Some(mut o) = DrawOptions::parse_over(std::env::args().skip(1), 8, "preflight.md", &over)
    else {
        return usage("scripts/preflight");
    };
    if o.twice {
        eprintln!("scripts/preflight: --twice is an option of scripts/fidelity only");
        return usage("scripts/preflight");
    }
    if o.faults.is_empty() {
        o.faults = Fault::NAMES
            .into_iter()
            .filter(|f| *f != "kill-clients")
            .collect();
    }
    let Some(seeds) = o.announced_seeds("preflight") else {
        return ExitCode::from(2);
    };
    let started = Instant::now();
    let results = each_case(
        &o,
        &seeds,
        started,
        &rescore_preflight,
        (&|s| Case::draw_over(s, &o.libraries).to_string(), &|s| {
            let case = Case::draw_over(s, &o.libraries);
            run_preflight_case(&case, &|line| eprintln!("   {line}"), o.keep.as_deref())
        }),
        &progress,
    );
    let errors = results.iter().any(|r| r.error.is_some());
    finish(
        "preflight",
        &o,
        markdown(&results, o.seed, &o.libraries),
        "asked of `preflight` and judged again (`scripts/preflight --rescore`)",
        (results.len(), errors),
        started,
    )
}
