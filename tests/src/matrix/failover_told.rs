//! Criterion (f) of the story check (issue 28, parts 1 and 2): a drawn failover is told as the
//! promotion it was. Where the case killed node 0 with a replica (`failover`) or sent `CLUSTER
//! FAILOVER` to its replica (`manual-failover`, with its mode), the story must have one
//! `promotion` step, told as the kind drawn ("(a failover", or "(a manual failover: CLUSTER
//! FAILOVER[ FORCE| TAKEOVER])"), whose evidence has a cost line for the drawn application's
//! group (its commands reached the new master, or never did). An application that ended wedged
//! may have stopped using the old master before the failover: without a cost line it still
//! passes, said in the figure.

use crate::matrix::case::{FailoverMode, Fault};
use crate::matrix::criteria::{analysis_of, judgement, Criterion, Judgement, Subjects, Verdict};

/// How the story tells the kind of failover drawn (`None`: no failover drawn).
fn told_as(fault: Fault) -> Option<&'static str> {
    match fault {
        Fault::Failover => Some("(a failover"),
        Fault::ManualFailover(FailoverMode::Default) => {
            Some("(a manual failover: CLUSTER FAILOVER)")
        }
        Fault::ManualFailover(FailoverMode::Force) => {
            Some("(a manual failover: CLUSTER FAILOVER FORCE)")
        }
        Fault::ManualFailover(FailoverMode::Takeover) => {
            Some("(a manual failover: CLUSTER FAILOVER TAKEOVER)")
        }
        _ => None,
    }
}

/// Criterion (f) on `s`.
pub fn failover_told(s: &Subjects) -> Judgement {
    let c = Criterion::FailoverTold;
    let Some(expected) = told_as(s.fault) else {
        return judgement(c, Verdict::NotApplicable("no failover drawn".into()), None);
    };
    let a = match analysis_of(s, c) {
        Ok(a) => a,
        Err(j) => return j,
    };
    let Some(steps) = &a.story else {
        let v = Verdict::NotAvailable("the report has no story.steps".into());
        return judgement(c, v, None);
    };
    let promotions: Vec<_> = steps.iter().filter(|st| st.kind == "promotion").collect();
    let [p] = promotions.as_slice() else {
        let v = Verdict::Fail(format!("{} promotion steps, not one", promotions.len()));
        return judgement(c, v, None);
    };
    if !p.text.contains(expected) {
        let v = Verdict::Fail(format!("told \"{}\", drawn {expected}", p.text));
        return judgement(c, v, None);
    }
    let app = &s.apps[0];
    let cost = p
        .evidence
        .iter()
        .find(|e| e.contains(&app.name) && e.contains("reached"));
    match cost {
        Some(line) => judgement(c, Verdict::Pass, Some(line.clone())),
        None if app.wedged => judgement(
            c,
            Verdict::Pass,
            Some(format!(
                "no cost line for {} (it ended wedged: it may have left the old master before)",
                app.name
            )),
        ),
        None => judgement(
            c,
            Verdict::Fail(format!("no cost line names {}", app.name)),
            Some(p.evidence.join(" / ")),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::analysis::{Analysis, Hypotheses};
    use crate::matrix::truth::AppTruth;
    use serde_json::json;

    fn verdict(fault: Fault, text: &str, evidence: &[&str]) -> Verdict {
        let apps = [AppTruth::healthy_for_test("go-redis", "9.8.0")];
        let analysis = Ok(Analysis::from_json(
            &json!({"findings": [], "story": {"steps": [
            {"kind": "promotion", "text": text, "evidence": evidence}]}}),
        ));
        let hypotheses = Ok(Hypotheses::from_json(&json!({})));
        failover_told(&Subjects {
            apps: &apps,
            analysis: &analysis,
            hypotheses: &hypotheses,
            poll_ms: 500,
            fault,
        })
        .verdict
    }

    #[test]
    fn the_kind_drawn_and_the_applications_cost_are_told() {
        let cost = ["go-redis 9.8.0 \"matrix-app\": its zadd reached B by 10:00:01"];
        let takeover = "master A hands its 5461 slots to its replica B, still answering (a manual \
                        failover: CLUSTER FAILOVER TAKEOVER)";
        let drawn = Fault::ManualFailover(FailoverMode::Takeover);
        assert_eq!(verdict(drawn, takeover, &cost), Verdict::Pass);
        let force = Fault::ManualFailover(FailoverMode::Force);
        assert!(verdict(force, takeover, &cost).is_miss());
        assert!(verdict(drawn, takeover, &["meanwhile …"]).is_miss());
        assert!(verdict(Fault::Failover, takeover, &cost).is_miss());
        assert!(matches!(
            verdict(Fault::None, takeover, &cost),
            Verdict::NotApplicable(_)
        ));
    }
}
