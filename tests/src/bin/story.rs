//! `scripts/story`: the story check's long draw (issue 13).
//!
//! Draws `--cases N` cases from `--seed S` (default: the clock; printed) over `--libs` (default:
//! every library whose app is built here): each a fidelity-matrix case with, in about half of
//! them, a healthy companion application beside it. Each runs live against a real cluster on
//! 127.0.0.1 with the real instrumented application(s); then `slotscope analyze` and `slotscope
//! hypotheses` on the recording are judged on the six criteria of
//! `slotscope_tests::matrix::criteria`. Prints each case's progress, then writes the Markdown report
//! to `--out` (default `target/story.md`) and prints it. `--case-seed X` runs the one case drawn
//! from X; `--keep DIR` keeps each case's recording, application reports and analysis answers;
//! `--rescore DIR` judges the cases kept there again by the current `slotscope`, no live run.
//!
//! Exits 0 when every case ran (whatever the verdicts), 1 when a case hit a harness error, 2 on bad
//! arguments.

use std::process::ExitCode;
use std::time::Instant;

use slotscope_tests::matrix::draw::{each_case, finish, usage, DrawOptions};
use slotscope_tests::matrix::library::built_or_all;
use slotscope_tests::matrix::story::{run_story, StoryCase};
use slotscope_tests::matrix::story_rescore::rescore_story;
use slotscope_tests::matrix::story_table::{markdown, progress};

fn main() -> ExitCode {
    let over = built_or_all();
    let Some(o) = DrawOptions::parse_over(std::env::args().skip(1), 8, "story.md", &over) else {
        return usage("scripts/story");
    };
    if o.twice {
        eprintln!("scripts/story: --twice is an option of scripts/fidelity only");
        return usage("scripts/story");
    }
    let Some(seeds) = o.announced_seeds("story") else {
        return ExitCode::from(2);
    };
    let started = Instant::now();
    let results = each_case(
        &o,
        &seeds,
        started,
        &|dir, s| rescore_story(dir, s, &|line| eprintln!("   {line}")),
        (
            &|s| StoryCase::draw_over(s, &o.libraries).to_string(),
            &|s| {
                let case = StoryCase::draw_over(s, &o.libraries);
                run_story(&case, &|line| eprintln!("   {line}"), o.keep.as_deref())
            },
        ),
        &progress,
    );
    let errors = results.iter().any(|r| r.error.is_some());
    finish(
        "story",
        &o,
        markdown(&results, o.seed, &o.libraries),
        "judged again (`scripts/story --rescore`)",
        (results.len(), errors),
        started,
    )
}
