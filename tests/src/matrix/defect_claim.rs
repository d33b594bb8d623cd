//! Criterion (e) of the story check (issue 28, part 3): a known client defect is claimed only of
//! an application whose library release carries it. `analyze` claims a defect of a group from its
//! `lib-name` and `lib-ver` (Valkey, Redis 7.2+) or, on Redis before 7.2, from a `CLIENT SETINFO`
//! rejection fingerprint that singles out one library; a fingerprint several libraries share must
//! claim nothing. The truth is the defect table of `slotscope_core::defect` applied to the library
//! and release the application itself reported: a claim is false when it names an application
//! whose release has no known defect, or a defect other than its release's.

use slotscope_core::defect::{known_defects, Defect};

use crate::matrix::criteria::{
    describe, findings_of, judgement, names, Criterion, Judgement, Subjects, Verdict,
};
use crate::matrix::truth::AppTruth;

/// The `analyze` finding kind of a known-defect claim.
const KIND: &str = "known_client_defect";

/// The known defects of `app`'s release (Lettuce reports `6.3.2.RELEASE`).
fn carried(app: &AppTruth) -> Vec<&'static Defect> {
    let release = app.version.strip_suffix(".RELEASE").unwrap_or(&app.version);
    known_defects(&app.library, release)
}

/// Criterion (e) on `s`: passes when every `known_client_defect` finding that names an
/// application of the case is true of that application's release (or none names one).
pub fn no_false_defect(s: &Subjects) -> Judgement {
    let c = Criterion::NoFalseDefect;
    let findings = match findings_of(s, c) {
        Ok(f) => f,
        Err(j) => return j,
    };
    // (defect, application) of every true claim.
    let mut claimed: Vec<(&str, &str)> = Vec::new();
    for f in findings.iter().filter(|f| f.kind == KIND) {
        let Some(att) = &f.attribution else { continue };
        for app in s.apps.iter().filter(|app| names(att, app, s.apps)) {
            let carried = carried(app);
            if !carried.iter().any(|d| f.title.contains(d.title)) {
                let v = Verdict::Fail(format!(
                    "{} claimed of {} ({} {}), whose release has {}",
                    describe(f),
                    app.name,
                    app.library,
                    app.version,
                    if carried.is_empty() {
                        "no known defect".to_owned()
                    } else {
                        format!("another: {}", carried[0].title)
                    }
                ));
                return judgement(c, v, Some(f.title.clone()));
            }
            claimed.push((carried[0].title, &app.name));
        }
    }
    let unclaimed: Vec<String> = s
        .apps
        .iter()
        .filter(|app| !carried(app).is_empty())
        .filter(|app| !claimed.iter().any(|(_, name)| *name == app.name))
        .map(|app| format!("{} {} {} (not claimed)", app.name, app.library, app.version))
        .collect();
    let figure = match (claimed.is_empty(), unclaimed.is_empty()) {
        (true, true) => "no claim, no application with a known defect".to_owned(),
        _ => claimed
            .iter()
            .map(|(d, name)| format!("claimed: {d} of {name}"))
            .chain(unclaimed)
            .collect::<Vec<_>>()
            .join("; "),
    };
    judgement(c, Verdict::Pass, Some(figure))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::analysis::{Analysis, Hypotheses};
    use serde_json::json;

    fn app(library: &str, version: &str) -> AppTruth {
        AppTruth::healthy_for_test(library, version)
    }

    fn verdict(apps: &[AppTruth], title: &str) -> Verdict {
        let analysis = Ok(Analysis::from_json(&json!({"findings": [{
            "kind": KIND, "severity": "warning", "title": title,
            "attribution": {"kind": "group", "group": "\"matrix-app\"", "commands": ["zadd"]}}]})));
        let hypotheses = Ok(Hypotheses::from_json(&json!({})));
        no_false_defect(&Subjects {
            apps,
            analysis: &analysis,
            hypotheses: &hypotheses,
            poll_ms: 500,
            fault: crate::matrix::case::Fault::None,
        })
        .verdict
    }

    #[test]
    fn a_defect_is_true_only_of_a_release_that_carries_it() {
        let d = known_defects("redis-py", "5.0.0")[0].title;
        let title = format!("\"matrix-app\" is likely redis-py 5.0–7.4; redis-py: {d}");
        assert_eq!(verdict(&[app("redis-py", "5.0.0")], &title), Verdict::Pass);
        assert!(verdict(&[app("jedis", "5.1.0")], &title).is_miss());
        assert!(verdict(&[app("redis-py", "8.1.0")], &title).is_miss());
        // A claim naming no application of the case is not judged here.
        let mut other = app("jedis", "5.1.0");
        other.name = "someone-else".into();
        other.command = "get".into();
        assert_eq!(verdict(&[other], &title), Verdict::Pass);
    }
}
