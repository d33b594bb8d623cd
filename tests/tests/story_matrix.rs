//! The story check, a small draw a run (issue 13, "Checked by"): two live cases drawn at random
//! over every axis of the fidelity matrix, the library among every library whose app is built
//! (issue 28), in about half of them with a healthy redis-py companion application beside the
//! drawn one (`slotscope_tests::matrix::companion`), each run against a real cluster on 127.0.0.1
//! while `slotscope record` records it, with the real instrumented application(s) (`apps/`,
//! `tests/scenarios/app.py`); then `slotscope analyze` and `slotscope hypotheses` on the
//! recording, judged against what the applications reported (`slotscope_tests::matrix::criteria`).
//!
//! The seed is `SLOTSCOPE_SEED` or the clock; it is printed, and every assertion message carries
//! it, so a failure is re-run with `SLOTSCOPE_SEED=<seed> cargo test -p slotscope-tests --test
//! story_matrix -- --nocapture` (or one case with `scripts/story --case-seed <case seed>`).
//!
//! Asserted always: the harness worked (each application reported figures that hold together,
//! `first_error_ms` among them, and `analyze` and `hypotheses` ran and answered JSON). Asserted
//! unless `SLOTSCOPE_STORY_STRICT=0`: every criterion that applies to a case holds on it (with two
//! cases the tolerance is none: a fail, or a field of the contract not there, is a failure), but
//! (d) for a workload no census group explains (a client no poll saw, whose library only the
//! handshake's fingerprint could name), (a), (b) and (d) for a library other than redis-py, (a)
//! after a failover and (d) after a node was killed (see `asserted`), which are printed and
//! measured by the long draw.

use slotscope_tests::matrix::app::AppReport;
use slotscope_tests::matrix::case::Fault;
use slotscope_tests::matrix::criteria::{Criterion, Judgement};
use slotscope_tests::matrix::draw::run_seed;
use slotscope_tests::matrix::library::{built_libraries, Library};
use slotscope_tests::matrix::rng::case_seed;
use slotscope_tests::matrix::story::{run_story, StoryCase, StoryResult};
use slotscope_tests::matrix::story_table::progress;

/// Cases a run draws.
const CASES: u64 = 2;

/// The variable that turns the analysis's assertions off (`0`, `false`, `off`, `no`).
const STRICT_ENV: &str = "SLOTSCOPE_STORY_STRICT";

fn strict() -> bool {
    std::env::var(STRICT_ENV).map_or(true, |v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "false" | "off" | "no"
        )
    })
}

/// What could only fail if the application or the harness is broken.
fn check_app(ctx: &str, who: &str, app: &AppReport) {
    assert!(app.issued > 0, "{ctx}: {who} issued nothing");
    assert_eq!(
        app.succeeded + app.failed,
        app.issued,
        "{ctx}: {who}: every issued command returned or raised"
    );
    match app.first_error_ms {
        None => assert_eq!(
            app.failed, 0,
            "{ctx}: {who}: failures without first_error_ms"
        ),
        Some(t) => {
            assert!(
                app.failed > 0,
                "{ctx}: {who}: first_error_ms without a failure"
            );
            assert!(
                t >= app.started_ms && t <= app.ended_ms,
                "{ctx}: {who}: first error at {t}, outside {}–{}",
                app.started_ms,
                app.ended_ms
            );
        }
    }
    let all = app
        .ended_between(app.started_ms, app.ended_ms + 1000)
        .unwrap_or_else(|| panic!("{ctx}: {who} reported no outcomes buckets"));
    assert_eq!(
        all,
        (app.succeeded, app.failed),
        "{ctx}: {who}: the outcomes buckets add up to the totals"
    );
}

fn check_harness(seed: u64, r: &StoryResult) {
    let ctx = format!(
        "SLOTSCOPE_SEED={seed}, case seed {} ({})",
        r.case.case.seed, r.case
    );
    assert!(
        r.error.is_none(),
        "{ctx}: {}",
        r.error.as_deref().unwrap_or("")
    );
    let app = r.app.as_ref().unwrap_or_else(|| panic!("{ctx}: no report"));
    assert!(
        r.case.case.library.is_release(&app.version),
        "{ctx}: the pinned release, not {}",
        app.version
    );
    check_app(&ctx, "the application", app);
    match (&r.case.companion, &r.companion) {
        (Some(_), Some(c)) => {
            check_app(&ctx, "the companion", c);
            assert_eq!(
                c.calls(r.case.case.command),
                0,
                "{ctx}: the companion sent zadd"
            );
        }
        (None, None) => {}
        (drawn, ran) => panic!("{ctx}: companion drawn {drawn:?}, reported {ran:?}"),
    }
    assert_eq!(
        r.truths.len(),
        1 + usize::from(r.companion.is_some()),
        "{ctx}"
    );
    for (what, answer) in [
        (
            "analyze",
            r.analysis.as_ref().map(|a| a.as_ref().map(|_| ())),
        ),
        (
            "hypotheses",
            r.hypotheses.as_ref().map(|a| a.as_ref().map(|_| ())),
        ),
    ] {
        match answer {
            Some(Ok(())) => {}
            Some(Err(e)) => panic!("{ctx}: {what} failed: {e}"),
            None => panic!("{ctx}: {what} did not run"),
        }
    }
    assert_eq!(r.judgements.len(), Criterion::ALL.len(), "{ctx}");
}

/// The workloads `hypotheses` makes of traffic no census group explains (a client no poll saw):
/// their library can only come from the handshake's fingerprint, which a server that accepts
/// `CLIENT SETINFO` does not leave.
const UNIDENTIFIED_WORKLOADS: [&str; 3] = [
    "group all business traffic",
    "group commands no census group",
    "group short-lived client",
];

/// Whether a miss fails the run: all of them, but (d) for a workload no census group explains,
/// (a), (b) and (d) for a library other than redis-py, (a) after a failover (the promotion is a story step,
/// not a finding: the first critical finding is a group's, whose fall the dead master's
/// counters cannot show), and (d) after a node was killed (`kill-node`, `failover`: the replay of a dead node
/// is where the models are furthest from their libraries, issue 24's open misses; a redis-py
/// 5.0.0 application outscored by node-redis, a remap target not ranked), which are printed (the
/// long draw, `scripts/story`, measures them; docs/FIDELITY.md).
fn asserted(j: &Judgement, fault: Fault, library: Library) -> bool {
    // For another library than redis-py, (a), (b) and (d) are printed and measured by the long
    // draw (docs/FIDELITY.md: its models have not met their libraries' magnitudes, issue 24, and
    // its hurt groups' first critical findings miss in about one case in ten); (e) and (f) hold
    // for every library and are asserted.
    if !matches!(library, Library::RedisPy(_))
        && matches!(
            j.criterion,
            Criterion::FirstCritical | Criterion::HealthyQuiet | Criterion::TrueVariant
        )
    {
        return false;
    }
    if j.criterion == Criterion::FirstCritical
        && matches!(fault, Fault::Failover | Fault::ManualFailover(_))
    {
        return false;
    }
    if j.criterion == Criterion::TrueVariant && matches!(fault, Fault::KillNode | Fault::Failover) {
        return false;
    }
    j.criterion != Criterion::TrueVariant
        || !j
            .figure
            .as_deref()
            .is_some_and(|f| UNIDENTIFIED_WORKLOADS.iter().any(|w| f.starts_with(w)))
}

#[test]
fn two_random_live_cases_tell_the_story() {
    let seed = run_seed();
    let strict = strict();
    let libraries = built_libraries();
    eprintln!(
        "story check: SLOTSCOPE_SEED={seed} ({CASES} cases; re-run with that variable set); \
         {STRICT_ENV}={}",
        if strict { "on" } else { "off" }
    );
    let results: Vec<StoryResult> = (0..CASES)
        .map(|i| {
            let case = StoryCase::draw_over(case_seed(seed, i), &libraries);
            eprintln!("case seed {}: {case}", case.case.seed);
            let r = run_story(&case, &|line| eprintln!("   {line}"), None);
            eprint!("{}", progress(&r));
            r
        })
        .collect();
    for r in &results {
        check_harness(seed, r);
    }
    let misses: Vec<String> = results
        .iter()
        .flat_map(|r| {
            r.judgements
                .iter()
                .filter(|j| j.verdict.is_miss())
                .filter(|j| {
                    let reported = !asserted(j, r.case.case.fault, r.case.case.library);
                    if reported {
                        eprintln!(
                            "reported, not asserted: {}: {}",
                            j.criterion.name(),
                            j.verdict
                        );
                    }
                    !reported
                })
                .map(move |j| {
                    format!(
                        "case seed {} ({}): {}: {}{}",
                        r.case.case.seed,
                        r.case,
                        j.criterion.name(),
                        j.verdict,
                        j.figure
                            .as_ref()
                            .map(|f| format!(" — {f}"))
                            .unwrap_or_default()
                    )
                })
        })
        .collect();
    if !strict {
        eprintln!(
            "{STRICT_ENV} off: {} miss(es) not asserted:\n{}",
            misses.len(),
            misses.join("\n")
        );
        return;
    }
    assert!(
        misses.is_empty(),
        "SLOTSCOPE_SEED={seed}: {} criterion miss(es) where they apply ({STRICT_ENV}=0 to run \
         the harness checks only):\n{}",
        misses.len(),
        misses.join("\n")
    );
}
