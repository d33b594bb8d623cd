//! The story check's report: a progress block per case, and the Markdown document of a draw (per
//! criterion the cases that pass, fail, lack a field or do not apply; every case with its ground
//! truth, verdicts and figures; every miss with its reason).

use std::fmt::Write as _;

use crate::matrix::criteria::{Criterion, Verdict};
use crate::matrix::library::Library;
use crate::matrix::story::StoryResult;
use crate::matrix::truth::{
    AppTruth, Health, HURT_MIN_FAILED, HURT_SHARE, HURT_WINDOW_MS, PAUSE_SKIP_SHARE, STORM_SHARE,
};

fn truth_text(t: &AppTruth) -> String {
    let why = match &t.health {
        Health::Hurt(w) | Health::Neither(w) => format!(" ({w})"),
        Health::Healthy => String::new(),
    };
    format!("{} {}{why}", t.name, t.health.name())
}

/// The progress block of one case: seed, settings, truths and verdicts.
pub fn progress(r: &StoryResult) -> String {
    let mut s = format!("case seed {}: {}\n", r.case.case.seed, r.case);
    if let Some(e) = &r.error {
        let _ = writeln!(
            s,
            "  ERROR: {}",
            e.lines().take(6).collect::<Vec<_>>().join(" / ")
        );
        return s;
    }
    for (t, a) in r.truths.iter().zip([&r.app, &r.companion]) {
        if let Some(a) = a {
            let _ = writeln!(
                s,
                "  {}: issued {}, failed {}, first error {:?}, errors {}",
                truth_text(t),
                a.issued,
                a.failed,
                a.first_error_ms,
                a.raw["errors"]
            );
        }
    }
    for j in &r.judgements {
        let _ = writeln!(
            s,
            "  {:<30} {}{}",
            j.criterion.name(),
            j.verdict,
            j.figure
                .as_ref()
                .map(|f| format!(" — {f}"))
                .unwrap_or_default()
        );
    }
    s
}

/// `(pass, fail, not available, n/a)` of `c` over `results` (harness errors left out).
pub fn tally(results: &[StoryResult], c: Criterion) -> (usize, usize, usize, usize) {
    let mut t = (0, 0, 0, 0);
    for j in results.iter().filter_map(|r| r.get(c)) {
        match j.verdict {
            Verdict::Pass => t.0 += 1,
            Verdict::Fail(_) => t.1 += 1,
            Verdict::NotAvailable(_) => t.2 += 1,
            Verdict::NotApplicable(_) => t.3 += 1,
        }
    }
    t
}

/// Per library, each criterion's passes out of the cases it applied to (`p/n`, misses being
/// fails and fields not there).
fn by_library(s: &mut String, results: &[StoryResult]) {
    let mut libraries: Vec<String> = results
        .iter()
        .map(|r| r.case.case.library.label())
        .collect();
    libraries.sort();
    libraries.dedup();
    let _ = write!(
        s,
        "\nPer library (passes / cases it applied to):\n\n| library | cases |"
    );
    for c in Criterion::ALL {
        let _ = write!(s, " {} |", c.name());
    }
    let _ = writeln!(s, "\n|---|---|{}", "---|".repeat(Criterion::ALL.len()));
    for l in &libraries {
        let of: Vec<&StoryResult> = results
            .iter()
            .filter(|r| r.error.is_none() && &r.case.case.library.label() == l)
            .collect();
        let _ = write!(s, "| {l} | {} |", of.len());
        for c in Criterion::ALL {
            let js: Vec<&Verdict> = of
                .iter()
                .filter_map(|r| r.get(c))
                .map(|j| &j.verdict)
                .collect();
            let pass = js.iter().filter(|v| matches!(v, Verdict::Pass)).count();
            let applied = js
                .iter()
                .filter(|v| !matches!(v, Verdict::NotApplicable(_)))
                .count();
            let _ = write!(s, " {pass}/{applied} |");
        }
        let _ = writeln!(s);
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The Markdown document of a draw of `results` seeded with `seed` over `libraries`.
pub fn markdown(results: &[StoryResult], seed: u64, libraries: &[Library]) -> String {
    let mut s = String::new();
    let ran = results.iter().filter(|r| r.error.is_none()).count();
    let _ = writeln!(
        s,
        "### Story check, seed {seed}: {} cases ({ran} judged, {} harness errors)\n",
        results.len(),
        results.len() - ran
    );
    let names: Vec<String> = libraries.iter().map(|l| l.label()).collect();
    let libs = format!(" --libs {}", names.join(","));
    let _ = writeln!(
        s,
        "Drawn and run with `scripts/story --cases {} --seed {seed}{libs}`; each case again alone \
         with `scripts/story --case-seed <case seed>{libs}`. Hurt: wedged, or ≥ {HURT_MIN_FAILED} failed and \
         ≥ {:.0} % of the commands that ended in the {} s from the first error (or from it to the \
         end; then (a) is judged from the failure onset, the first 250 ms failing at that share from \
         which the next {} s have these levels); healthy: no failure, MOVED < {:.0} % of replies \
         and < {:.0} % of the schedule skipped.\n",
        results.len(),
        100.0 * HURT_SHARE,
        HURT_WINDOW_MS / 1000,
        HURT_WINDOW_MS / 1000,
        100.0 * STORM_SHARE,
        100.0 * PAUSE_SKIP_SHARE
    );
    let _ = writeln!(s, "| criterion | pass | fail | not available | n/a |");
    let _ = writeln!(s, "|---|---|---|---|---|");
    for c in Criterion::ALL {
        let (p, f, na, x) = tally(results, c);
        let _ = writeln!(s, "| {} | {p} | {f} | {na} | {x} |", c.name());
    }

    by_library(&mut s, results);

    let _ = writeln!(s, "\nEvery case:\n");
    let _ = write!(s, "| case seed | case | truth |");
    for c in Criterion::ALL {
        let _ = write!(s, " {} |", c.name());
    }
    let _ = writeln!(s, " first critical − first error (or onset) |");
    let _ = writeln!(
        s,
        "|---|---|---|{}---|",
        "---|".repeat(Criterion::ALL.len())
    );
    for r in results {
        let truth: Vec<String> = r.truths.iter().map(truth_text).collect();
        let _ = write!(
            s,
            "| {} | {} | {} |",
            r.case.case.seed,
            cell(&r.case.to_string()),
            cell(&truth.join("; "))
        );
        if r.error.is_some() {
            let _ = writeln!(s, "{} — |", " error |".repeat(Criterion::ALL.len()));
            continue;
        }
        for c in Criterion::ALL {
            let v = r.get(c).map_or("—", |j| j.verdict.short());
            let _ = write!(s, " {v} |");
        }
        let delta = r
            .get(Criterion::FirstCritical)
            .and_then(|j| j.delta_ms)
            .map_or_else(|| "—".to_owned(), |d| format!("{d:+} ms"));
        let _ = writeln!(s, " {delta} |");
    }

    let _ = writeln!(s, "\nMisses (fail or not available) and figures:\n");
    let _ = writeln!(s, "| case seed | criterion | verdict | figure |");
    let _ = writeln!(s, "|---|---|---|---|");
    let mut any = false;
    for r in results {
        for j in r.judgements.iter().filter(|j| j.verdict.is_miss()) {
            any = true;
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                r.case.case.seed,
                j.criterion.name(),
                cell(&j.verdict.to_string()),
                cell(j.figure.as_deref().unwrap_or("—"))
            );
        }
        if let Some(e) = &r.error {
            any = true;
            let first: Vec<&str> = e.lines().take(3).collect();
            let _ = writeln!(
                s,
                "| {} | harness | {} | — |",
                r.case.case.seed,
                cell(&first.join(" / "))
            );
        }
    }
    if !any {
        let _ = writeln!(s, "| — | none | | |");
    }
    s
}
