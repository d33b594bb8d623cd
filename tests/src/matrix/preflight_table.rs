//! The pre-flight check's report: a progress line per case, and the Markdown document of a draw
//! (right verdicts per library and per real kind, every case, every miss with its cause).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::matrix::library::Library;
use crate::matrix::preflight_check::{PreflightCase, DURATION_SHARE, DURATION_SLACK_MS};

/// The progress lines of one case.
pub fn progress(r: &PreflightCase) -> String {
    let mut s = format!("case seed {}: {}\n", r.case.seed, r.case);
    if let Some(e) = &r.error {
        let _ = writeln!(
            s,
            "  ERROR: {}",
            e.lines().take(6).collect::<Vec<_>>().join(" / ")
        );
        return s;
    }
    if let (Some(p), Some(real)) = (&r.predicted, &r.real) {
        let _ = writeln!(
            s,
            "  predicted {} ({} failed), real {} ({} failed): {}",
            p.headline,
            p.failed,
            real.headline(),
            real.failed,
            r.miss.as_deref().unwrap_or("right")
        );
        if let (Some(_), Some(asked)) = (&r.miss, &r.asked) {
            let _ = writeln!(s, "  asked: {asked}");
        }
    }
    if let Some(ms) = r.wedged_before_change() {
        let _ = writeln!(
            s,
            "  not judged: the application wedged {ms} ms after its start, before the change"
        );
    }
    s
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "–".to_owned()
    } else {
        format!("{n}/{d} ({:.0} %)", n as f64 * 100.0 / d as f64)
    }
}

/// The draw's Markdown report.
pub fn markdown(results: &[PreflightCase], seed: u64, libraries: &[Library]) -> String {
    let mut s = String::new();
    let names: Vec<String> = libraries.iter().map(|l| l.label()).collect();
    let _ = writeln!(
        s,
        "#### Pre-flight check, seed {seed}: {} cases over {}\n",
        results.len(),
        names.join(", ")
    );
    // A case whose application wedged before the change began is not the change's doing: it is
    // listed, not judged.
    let ran: Vec<&PreflightCase> = results.iter().filter(|r| r.error.is_none()).collect();
    let judged: Vec<&PreflightCase> = ran
        .iter()
        .copied()
        .filter(|r| r.wedged_before_change().is_none())
        .collect();
    let right = judged.iter().filter(|r| r.right()).count();
    let _ = writeln!(
        s,
        "Command: `scripts/preflight --cases {} --seed {seed}`. Verdicts right: {} (kinds \
         equal; errors and storms by their duration within {:.0} % or {} s); not judged (the \
         application wedged before the change began): {}; harness errors: {}.\n",
        results.len(),
        pct(right, judged.len()),
        DURATION_SHARE * 100.0,
        DURATION_SLACK_MS / 1000,
        ran.len() - judged.len(),
        results.len() - ran.len()
    );
    let mut by: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut by_kind: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in &judged {
        let e = by.entry(r.case.library.label()).or_default();
        e.1 += 1;
        if r.right() {
            e.0 += 1;
        }
        if let Some(real) = &r.real {
            let e = by_kind.entry(real.kind.word().to_owned()).or_default();
            e.1 += 1;
            if r.right() {
                e.0 += 1;
            }
        }
    }
    let _ = writeln!(s, "| library | right |\n|---|---|");
    for (l, (n, d)) in &by {
        let _ = writeln!(s, "| {l} | {} |", pct(*n, *d));
    }
    let _ = writeln!(s, "\n| real verdict | predicted right |\n|---|---|");
    for (k, (n, d)) in &by_kind {
        let _ = writeln!(s, "| {k} | {} |", pct(*n, *d));
    }
    let _ = writeln!(
        s,
        "\n| case seed | case | predicted | real | right |\n|---|---|---|---|---|"
    );
    for r in results {
        let (p, real) = match (&r.predicted, &r.real, &r.error) {
            (_, _, Some(e)) => ("–".to_owned(), format!("harness error: {e}")),
            (Some(p), Some(real), None) => (p.headline.clone(), real.headline()),
            _ => ("–".to_owned(), "–".to_owned()),
        };
        let right = match r.wedged_before_change() {
            Some(ms) => format!("not judged: wedged {ms} ms after its start, before the change"),
            None if r.right() => "yes".to_owned(),
            None => "no".to_owned(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {p} | {} | {right} |",
            r.case.seed,
            r.case,
            real.replace('|', "\\|").lines().next().unwrap_or_default(),
        );
    }
    let misses: Vec<&PreflightCase> = judged.iter().copied().filter(|r| !r.right()).collect();
    if !misses.is_empty() {
        let _ = writeln!(s, "\nMisses:\n");
        for r in misses {
            let why = r.predicted.as_ref().map(|p| p.why.as_str()).unwrap_or("");
            let _ = writeln!(
                s,
                "- {} ({}): {}. preflight: {why}",
                r.case.seed,
                r.case,
                r.miss.as_deref().unwrap_or("?")
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::case::Case;
    use crate::matrix::library::ALL;
    use crate::matrix::preflight_check::Predicted;
    use crate::matrix::preflight_truth::RealVerdict;
    use slotscope_core::preflight::VerdictKind;

    /// A case drawn from `seed`, predicted and really `kind`, the application wedged before the
    /// change at `early` ms if given.
    fn case(seed: u64, kind: VerdictKind, early: Option<u64>) -> PreflightCase {
        PreflightCase {
            case: Case::draw_over(seed, &ALL),
            plan: None,
            predicted: Some(Predicted {
                kind,
                headline: kind.word().to_owned(),
                errors_ms: None,
                storm_ms: None,
                failed: 0,
                why: "because".to_owned(),
            }),
            real: Some(RealVerdict {
                kind,
                errors_ms: None,
                errors_from_ms: None,
                storm_ms: None,
                failed: 0,
                moved: 0,
                app_wedged: kind == VerdictKind::Wedged,
                wedged_before_change_ms: early,
            }),
            miss: None,
            asked: None,
            error: None,
        }
    }

    #[test]
    fn a_case_wedged_before_the_change_is_listed_not_judged() {
        let mut missed = case(3, VerdictKind::Unaffected, None);
        missed.miss = Some("kinds differ".to_owned());
        let results = [
            case(1, VerdictKind::Unaffected, None),
            case(2, VerdictKind::Wedged, Some(72)),
            missed,
        ];
        let md = markdown(&results, 7, &ALL);
        assert!(md.contains("Verdicts right: 1/2 (50 %)"), "{md}");
        assert!(
            md.contains("not judged (the application wedged before the change began): 1;"),
            "{md}"
        );
        assert!(
            md.contains("| not judged: wedged 72 ms after its start, before the change |"),
            "{md}"
        );
        assert!(
            !md.contains("| wedged | 0/1"),
            "a case not judged counts in no kind's row: {md}"
        );
        assert!(progress(&results[1]).contains("not judged: the application wedged 72 ms"));
        assert!(!progress(&results[0]).contains("not judged"));
    }
}
