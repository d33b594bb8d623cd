//! The story check's six criteria (issue 13, "Checked by"), judged on one live case from the
//! applications' ground truth ([`AppTruth`]) and the analysis's answers ([`Analysis`],
//! [`Hypotheses`]):
//!
//! - **(a) first critical finding**: where an application was hurt, the first critical finding
//!   (in `findings[]` order, the analysis's importance order) names a hurt application's group and
//!   no healthy one's, and its `span.start` is within one poll interval of that application's first
//!   error.
//! - **(b) healthy quiet**: where every application was healthy, no finding is critical; where
//!   only some were, no critical finding names a healthy one.
//! - **(c) short-lived client found**: where the application is redis-py 5.0.0 with
//!   `address_remap` and wedged (its connections die within 0.1–2 s, often between two `CLIENT
//!   LIST` polls), a finding (any severity) names its group and not the other application's, or a
//!   story step names its group.
//! - **(d) true variant first**: the `hypotheses` group that sends the application's command
//!   ranks first a variant of the application's library whose remap target is its own (none when it has none). A calm
//!   application without a remap is judged on the remap alone (it must not be called remapped;
//!   calm, every library's model replays it alike). Whether the model covers the release too is
//!   in the figure.
//! - **(e) no defect it lacks** (issue 28, part 3): no `known_client_defect` finding names an
//!   application whose library release does not carry that defect
//!   ([`crate::matrix::defect_claim`]).
//! - **(f) failover told** (issue 28, parts 1 and 2): where the case drew a failover, the story
//!   has one promotion step, of the kind drawn (automatic; `CLUSTER FAILOVER`, `FORCE` or
//!   `TAKEOVER`), whose evidence gives the application's cost ([`crate::matrix::failover_told`]).
//!
//! A finding **names** an application when its attribution's group label (or, for an ambiguous
//! attribution, one of its groups) contains the application's client name, or when it is
//! attributed to one group (kind `group`) whose commands include the application's command and no
//! command of another application of the case (an inferred group's label, e.g. `short-lived client
//! (zadd)`, has no client name).

use std::fmt;

use crate::matrix::analysis::{Analysis, Attribution, Finding, Hypotheses, Variant};
use crate::matrix::case::Fault;
use crate::matrix::truth::AppTruth;

/// One criterion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Criterion {
    /// (a) the first critical finding names the hurt group at the right moment.
    FirstCritical,
    /// (b) a healthy client gives no critical finding.
    HealthyQuiet,
    /// (c) the short-lived remapped client is found.
    ShortLived,
    /// (d) `hypotheses` ranks the true variant first.
    TrueVariant,
    /// (e) no known defect is claimed of an application whose release lacks it.
    NoFalseDefect,
    /// (f) a drawn failover is told as the promotion it was, with the application's cost.
    FailoverTold,
}

impl Criterion {
    /// Every criterion, in table order.
    pub const ALL: [Criterion; 6] = [
        Criterion::FirstCritical,
        Criterion::HealthyQuiet,
        Criterion::ShortLived,
        Criterion::TrueVariant,
        Criterion::NoFalseDefect,
        Criterion::FailoverTold,
    ];

    /// Its name in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Criterion::FirstCritical => "(a) first critical finding",
            Criterion::HealthyQuiet => "(b) healthy: no critical",
            Criterion::ShortLived => "(c) short-lived client found",
            Criterion::TrueVariant => "(d) true variant first",
            Criterion::NoFalseDefect => "(e) no defect it lacks",
            Criterion::FailoverTold => "(f) failover told",
        }
    }
}

/// A criterion's verdict on one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// It holds.
    Pass,
    /// It does not, and why.
    Fail(String),
    /// It does not apply to the case, and why.
    NotApplicable(String),
    /// The analysis's report lacks what it needs (a field of the contract), and which.
    NotAvailable(String),
}

impl Verdict {
    /// `pass`, `FAIL`, `n/a` or `not available`.
    pub fn short(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail(_) => "FAIL",
            Verdict::NotApplicable(_) => "n/a",
            Verdict::NotAvailable(_) => "not available",
        }
    }

    /// Whether the criterion applied and did not pass (a fail, or a field not there).
    pub fn is_miss(&self) -> bool {
        matches!(self, Verdict::Fail(_) | Verdict::NotAvailable(_))
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Pass => write!(f, "pass"),
            Verdict::Fail(why) => write!(f, "FAIL: {why}"),
            Verdict::NotApplicable(why) => write!(f, "n/a ({why})"),
            Verdict::NotAvailable(why) => write!(f, "not available: {why}"),
        }
    }
}

/// A criterion judged on a case, with its figure (e.g. the first critical finding's time less the
/// application's first error).
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// The criterion.
    pub criterion: Criterion,
    /// Its verdict.
    pub verdict: Verdict,
    /// The figure behind it, if any.
    pub figure: Option<String>,
    /// The first critical finding's start less the named application's first error, ms (criterion
    /// (a) only).
    pub delta_ms: Option<i64>,
}

/// What the criteria read: the applications of the case (the drawn one first) and the analysis's
/// two answers (or why each could not be had).
#[derive(Clone, Debug)]
pub struct Subjects<'a> {
    /// The drawn application, then the companion if any.
    pub apps: &'a [AppTruth],
    /// `analyze`'s answer.
    pub analysis: &'a Result<Analysis, String>,
    /// `hypotheses`' answer.
    pub hypotheses: &'a Result<Hypotheses, String>,
    /// The recorder's poll interval, ms: "the right moment" is within it.
    pub poll_ms: u64,
    /// The case's fault.
    pub fault: Fault,
}

/// Whether `att` names `app` among `apps` (see the module doc).
pub fn names(att: &Attribution, app: &AppTruth, apps: &[AppTruth]) -> bool {
    let by_label = att
        .group
        .iter()
        .chain(&att.groups)
        .any(|l| l.contains(&app.name));
    let others: Vec<&str> = apps
        .iter()
        .filter(|o| o.name != app.name)
        .map(|o| o.command.as_str())
        .collect();
    // Commands name a group only in an attribution to one group (not `ambiguous`, not `unknown`).
    let by_commands = !matches!(att.kind.as_deref(), Some("ambiguous" | "unknown"))
        && att
            .commands
            .iter()
            .any(|c| c.eq_ignore_ascii_case(&app.command))
        && !att
            .commands
            .iter()
            .any(|c| others.iter().any(|o| c.eq_ignore_ascii_case(o)));
    by_label || by_commands
}

pub(crate) fn describe(f: &Finding) -> String {
    let who = match &f.attribution {
        None => "no attribution".to_owned(),
        Some(a) => {
            let mut w = match a.kind.as_deref() {
                Some("group") => format!("group {}", a.group.as_deref().unwrap_or("?")),
                Some("ambiguous") => format!("groups {}", a.groups.join(", ")),
                Some(k) => k.to_owned(),
                None => "attribution without kind".to_owned(),
            };
            if !a.commands.is_empty() {
                w.push_str(&format!(" [{}]", a.commands.join(", ")));
            }
            w
        }
    };
    format!("#{} {} ({who})", f.index, f.kind)
}

fn signed(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

pub(crate) fn judgement(
    criterion: Criterion,
    verdict: Verdict,
    figure: Option<String>,
) -> Judgement {
    Judgement {
        criterion,
        verdict,
        figure,
        delta_ms: None,
    }
}

/// `analyze`'s answer, or the judgement of `c` without one (`analyze` failed).
pub(crate) fn analysis_of<'a>(s: &Subjects<'a>, c: Criterion) -> Result<&'a Analysis, Judgement> {
    s.analysis
        .as_ref()
        .map_err(|e| judgement(c, Verdict::Fail(format!("analyze failed: {e}")), None))
}

/// `analyze`'s findings, or the judgement of `c` without them.
pub(crate) fn findings_of<'a>(s: &Subjects<'a>, c: Criterion) -> Result<&'a [Finding], Judgement> {
    analysis_of(s, c)?.findings.as_deref().ok_or_else(|| {
        let v = Verdict::NotAvailable("the report has no findings[]".into());
        judgement(c, v, None)
    })
}

fn first_critical(s: &Subjects) -> Judgement {
    let c = Criterion::FirstCritical;
    let hurt: Vec<&AppTruth> = s.apps.iter().filter(|a| a.is_hurt()).collect();
    if hurt.is_empty() {
        return judgement(
            c,
            Verdict::NotApplicable("no application hurt".into()),
            None,
        );
    }
    let a = match analysis_of(s, c) {
        Ok(a) => a,
        Err(j) => return j,
    };
    if let Err(j) = findings_of(s, c) {
        return j;
    }
    let Some(f) = a.first_critical() else {
        return judgement(c, Verdict::Fail("no critical finding".into()), None);
    };
    let figure = Some(describe(f));
    // The figure against the first hurt application's first error, whoever the finding names.
    let first_hurt = hurt.iter().find_map(|h| h.first_error_ms.map(|t| (h, t)));
    let delta_of = |t: u64| f.start.map(|s| signed(s) - signed(t));
    let unnamed = |why: String| {
        let delta = first_hurt.and_then(|(_, t)| delta_of(t));
        Judgement {
            criterion: c,
            verdict: Verdict::Fail(why),
            figure: Some(match (delta, first_hurt) {
                (Some(d), Some((h, _))) => {
                    format!(
                        "{} at {d:+} ms from {}'s {}",
                        describe(f),
                        h.name,
                        h.moment_name
                    )
                }
                _ => describe(f),
            }),
            delta_ms: delta,
        }
    };
    let Some(att) = &f.attribution else {
        return unnamed(format!(
            "the first critical finding, {}, is attributed to no group",
            describe(f)
        ));
    };
    let healthy_named: Vec<&str> = s
        .apps
        .iter()
        .filter(|h| h.is_healthy() && names(att, h, s.apps))
        .map(|h| h.name.as_str())
        .collect();
    let Some(named) = hurt.iter().find(|h| names(att, h, s.apps)) else {
        let want: Vec<&str> = hurt.iter().map(|h| h.name.as_str()).collect();
        return unnamed(format!(
            "{} does not name the hurt group ({})",
            describe(f),
            want.join(", ")
        ));
    };
    let (Some(start), Some(err)) = (f.start, named.first_error_ms) else {
        let v = Verdict::NotAvailable(if f.start.is_none() {
            "the finding has no span.start".into()
        } else {
            format!("{} reported no first_error_ms", named.name)
        });
        return judgement(c, v, figure);
    };
    let delta = signed(start) - signed(err);
    // The moment is right when it falls between the issue of the command that failed first (the
    // last the servers saw of it: a timeout raises one socket timeout later) and its error, give
    // or take a poll.
    let issued = named.first_error_issued_ms.unwrap_or(err).min(err);
    let from = signed(issued) - signed(err);
    let figure = Some(format!(
        "{} at {delta:+} ms from {}'s {} (its command issued at {from:+} ms)",
        describe(f),
        named.name,
        named.moment_name
    ));
    let verdict = if !healthy_named.is_empty() {
        Verdict::Fail(format!(
            "it also names the healthy {}",
            healthy_named.join(", ")
        ))
    } else if delta > signed(s.poll_ms) || delta < from - signed(s.poll_ms) {
        Verdict::Fail(format!(
            "it starts {delta:+} ms from the {}, more than one poll ({} ms) outside \
             [{from:+}, 0] ms (the failing command's issue to its error)",
            named.moment_name, s.poll_ms
        ))
    } else {
        Verdict::Pass
    };
    Judgement {
        criterion: c,
        verdict,
        figure,
        delta_ms: Some(delta),
    }
}

fn healthy_quiet(s: &Subjects) -> Judgement {
    let c = Criterion::HealthyQuiet;
    let healthy: Vec<&AppTruth> = s.apps.iter().filter(|a| a.is_healthy()).collect();
    if healthy.is_empty() {
        return judgement(
            c,
            Verdict::NotApplicable("no application healthy".into()),
            None,
        );
    }
    let findings = match findings_of(s, c) {
        Ok(f) => f,
        Err(j) => return j,
    };
    let critical: Vec<&Finding> = findings.iter().filter(|f| f.is_critical()).collect();
    let all_healthy = healthy.len() == s.apps.len();
    let offending: Vec<&Finding> = if all_healthy {
        critical.clone()
    } else {
        critical
            .iter()
            .copied()
            .filter(|f| {
                f.attribution
                    .as_ref()
                    .is_some_and(|att| healthy.iter().any(|h| names(att, h, s.apps)))
            })
            .collect()
    };
    let figure = Some(format!("{} critical finding(s)", critical.len()));
    let verdict = if offending.is_empty() {
        Verdict::Pass
    } else {
        let list: Vec<String> = offending.iter().map(|f| describe(f)).collect();
        Verdict::Fail(if all_healthy {
            format!(
                "every application healthy, yet critical: {}",
                list.join("; ")
            )
        } else {
            format!(
                "critical finding names a healthy application: {}",
                list.join("; ")
            )
        })
    };
    judgement(c, verdict, figure)
}

fn short_lived(s: &Subjects) -> Judgement {
    let c = Criterion::ShortLived;
    let app = &s.apps[0];
    if !(app.library == "redis-py"
        && app.version.starts_with("5.")
        && app.remap.is_some()
        && app.wedged)
    {
        let v = Verdict::NotApplicable("not a wedged redis-py 5.0.0 with address_remap".into());
        return judgement(c, v, None);
    }
    let a = match analysis_of(s, c) {
        Ok(a) => a,
        Err(j) => return j,
    };
    let in_census = a.census.iter().any(|g| g.contains(&app.name));
    let census = if in_census {
        "in the census"
    } else {
        "not in the census"
    };
    let Some(findings) = &a.findings else {
        let v = Verdict::NotAvailable("the report has no findings[]".into());
        return judgement(c, v, Some(census.to_owned()));
    };
    // Named alone: an attribution that also names the other application (every group at once)
    // has not found the short-lived one.
    let alone = |att: &Attribution| {
        names(att, app, s.apps) && !s.apps[1..].iter().any(|o| names(att, o, s.apps))
    };
    let found = findings
        .iter()
        .find(|f| f.attribution.as_ref().is_some_and(alone));
    let in_story = a.story.as_ref().is_some_and(|steps| {
        steps
            .iter()
            .any(|st| st.group.as_ref().is_some_and(|g| g.contains(&app.name)))
    });
    match found {
        Some(f) => judgement(c, Verdict::Pass, Some(format!("{}; {census}", describe(f)))),
        None if in_story => judgement(c, Verdict::Pass, Some(format!("a story step; {census}"))),
        None => judgement(
            c,
            Verdict::Fail(format!(
                "no finding or story step names {} ({census})",
                app.name
            )),
            Some(census.to_owned()),
        ),
    }
}

/// The release range a replay model stands for (`redis-py@5.0.0` covers 4.4.0–7.1.x,
/// `redis-py@8.0.0` 7.2.0–8.x), as `[from, to)` of (major, minor); another model its own line.
fn model_range(model: &str) -> Option<((u32, u32), (u32, u32))> {
    let release = model.strip_prefix("redis-py@")?.split_whitespace().next()?;
    let mut parts = release.split('.').map(|p| p.parse::<u32>().ok());
    let (major, minor) = (parts.next()??, parts.next()??);
    Some(match (major, minor) {
        (5, 0) => ((4, 4), (7, 2)),
        (8, 0) => ((7, 2), (9, 0)),
        _ => ((major, minor), (major, minor + 1)),
    })
}

/// Whether `model` covers `library`'s `release` (a redis-py model its range, another model its
/// own release).
pub fn model_covers(model: &str, library: &str, release: &str) -> bool {
    let release = release.strip_suffix(".RELEASE").unwrap_or(release);
    if library != "redis-py" {
        return model.split_whitespace().next() == Some(&format!("{library}@{release}"));
    }
    let mut parts = release.split('.').map(|p| p.parse::<u32>().ok());
    let (Some(Some(major)), Some(Some(minor))) = (parts.next(), parts.next()) else {
        return false;
    };
    model_range(model).is_some_and(|(from, to)| (major, minor) >= from && (major, minor) < to)
}

fn variant_text(v: &Variant) -> String {
    format!("{} remap {}", v.model, v.remap.as_deref().unwrap_or("none"))
}

fn true_variant(s: &Subjects) -> Judgement {
    let c = Criterion::TrueVariant;
    let app = &s.apps[0];
    let h = match s.hypotheses {
        Err(e) => return judgement(c, Verdict::Fail(format!("hypotheses failed: {e}")), None),
        Ok(h) => h,
    };
    let Some(groups) = &h.groups else {
        let whole = h
            .whole
            .as_ref()
            .map(|w| format!("whole-recording best: {}", variant_text(w)));
        return judgement(
            c,
            Verdict::NotAvailable("no per-group groups[]".into()),
            whole,
        );
    };
    let others: Vec<&str> = s.apps[1..].iter().map(|o| o.command.as_str()).collect();
    let sends = |g: &&crate::matrix::analysis::HypothesisGroup| {
        g.commands
            .iter()
            .any(|c| c.eq_ignore_ascii_case(&app.command))
    };
    let group = groups
        .iter()
        .filter(sends)
        .find(|g| !g.commands.iter().any(|c| others.contains(&c.as_str())))
        .or_else(|| groups.iter().find(sends));
    let Some(g) = group else {
        let v = Verdict::Fail(format!("no group sends {}", app.command));
        return judgement(c, v, None);
    };
    let Some(top) = g.ranked.first() else {
        return judgement(
            c,
            Verdict::Fail(format!("group {} has no ranking", g.group)),
            None,
        );
    };
    // The true variant: the library and the remap target. The release is told apart
    // only where the two releases behave differently; the figure says whether it is right too.
    // A calm client without a remap is judged on the remap alone (it must not be called
    // remapped): calm, every library's model replays it alike, and only its handshake names the
    // library (the figure says which is on top).
    let calm = !app.is_hurt() && app.remap.is_none();
    let library = format!("{}@", app.library);
    let is_true = |v: &Variant| (calm || v.model.starts_with(&library)) && v.remap == app.remap;
    let rank = g.ranked.iter().position(is_true);
    let figure = Some(format!(
        "group {}: top {}{}; release {}",
        g.group,
        variant_text(top),
        match rank {
            Some(0) => String::new(),
            Some(r) => format!("; true variant #{}", r + 1),
            None => "; true variant not ranked".to_owned(),
        },
        if model_covers(&top.model, &app.library, &app.version) {
            "right too"
        } else {
            "not told apart"
        }
    ));
    let verdict = if rank == Some(0) {
        Verdict::Pass
    } else {
        Verdict::Fail(format!(
            "top is {}, the application runs {} {} remap {}",
            variant_text(top),
            app.library,
            app.version,
            app.remap.as_deref().unwrap_or("none")
        ))
    };
    judgement(c, verdict, figure)
}

/// Criteria (a) to (d) judged on `s`, in [`Criterion::ALL`] order (all six:
/// [`crate::matrix::judge::judge`]).
///
/// # Panics
///
/// If `s.apps` is empty (a case always has its drawn application).
pub fn judge_first_four(s: &Subjects) -> Vec<Judgement> {
    assert!(!s.apps.is_empty(), "a case has its application");
    vec![
        first_critical(s),
        healthy_quiet(s),
        short_lived(s),
        true_variant(s),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::truth::Health;
    use serde_json::json;

    fn app(name: &str, command: &str, version: &str, health: Health) -> AppTruth {
        AppTruth {
            name: name.into(),
            command: command.into(),
            library: "redis-py".into(),
            version: version.into(),
            remap: None,
            wedged: matches!(health, Health::Hurt(_)),
            health,
            first_error_ms: Some(10_000),
            first_error_issued_ms: Some(10_000),
            moment_name: "first error",
            moved_share: Some(0.0),
        }
    }

    fn hurt() -> Health {
        Health::Hurt("wedged".into())
    }

    fn verdicts(
        apps: &[AppTruth],
        analysis: serde_json::Value,
        hyp: serde_json::Value,
    ) -> Vec<Verdict> {
        let a = Ok(Analysis::from_json(&analysis));
        let h = Ok(Hypotheses::from_json(&hyp));
        judge_first_four(&Subjects {
            apps,
            analysis: &a,
            hypotheses: &h,
            poll_ms: 500,
            fault: Fault::None,
        })
        .into_iter()
        .map(|j| j.verdict)
        .collect()
    }

    fn critical(start: u64, att: serde_json::Value) -> serde_json::Value {
        json!({"kind": "client_group_lost", "severity": "critical",
               "span": {"start": start, "end": start + 1}, "attribution": att})
    }

    #[test]
    fn first_critical_wants_the_hurt_group_within_one_poll() {
        let apps = [
            app("matrix-app", "zadd", "8.1.0", hurt()),
            app("matrix-healthy", "get", "8.1.0", Health::Healthy),
        ];
        let named = json!({"kind": "group", "group": "\"matrix-app\"", "commands": ["zadd"]});
        let v = verdicts(
            &apps,
            json!({"findings": [critical(10_400, named.clone())]}),
            json!({}),
        );
        assert_eq!(v[0], Verdict::Pass);
        assert_eq!(
            v[1],
            Verdict::Pass,
            "the critical finding names only the hurt group"
        );
        let v = verdicts(
            &apps,
            json!({"findings": [critical(10_600, named)]}),
            json!({}),
        );
        assert!(matches!(v[0], Verdict::Fail(_)), "{:?}", v[0]);
        // An inferred group named by its command alone; the companion's command would spoil it.
        let inferred =
            json!({"kind": "group", "group": "short-lived client (zadd)", "commands": ["zadd"]});
        let v = verdicts(
            &apps,
            json!({"findings": [critical(9_700, inferred)]}),
            json!({}),
        );
        assert_eq!(v[0], Verdict::Pass);
        let both = json!({"kind": "group", "group": "host 127.0.0.1", "commands": ["zadd", "get"]});
        let v = verdicts(
            &apps,
            json!({"findings": [critical(10_000, both)]}),
            json!({}),
        );
        assert!(matches!(v[0], Verdict::Fail(_)), "{:?}", v[0]);
        let healthy = json!({"kind": "group", "group": "\"matrix-healthy\"", "commands": ["get"]});
        let v = verdicts(
            &apps,
            json!({"findings": [critical(10_000, healthy)]}),
            json!({}),
        );
        assert!(
            matches!(v[0], Verdict::Fail(_)) && matches!(v[1], Verdict::Fail(_)),
            "{v:?}"
        );
        let unknown = json!({"kind": "unknown", "commands": ["zadd"]});
        let v = verdicts(
            &apps,
            json!({"findings": [critical(10_000, unknown)]}),
            json!({}),
        );
        assert!(
            matches!(v[0], Verdict::Fail(_)),
            "unknown names no group: {:?}",
            v[0]
        );
        let v = verdicts(&apps, json!({}), json!({}));
        assert!(
            matches!(v[0], Verdict::NotAvailable(_)) && matches!(v[1], Verdict::NotAvailable(_))
        );
    }

    #[test]
    fn healthy_alone_wants_no_critical_at_all() {
        let apps = [app("matrix-app", "zadd", "8.1.0", Health::Healthy)];
        let unknown = json!({"kind": "unknown", "commands": []});
        let v = verdicts(
            &apps,
            json!({"findings": [critical(1, unknown)]}),
            json!({}),
        );
        assert!(matches!(v[0], Verdict::NotApplicable(_)));
        assert!(matches!(v[1], Verdict::Fail(_)));
        let v = verdicts(&apps, json!({"findings": []}), json!({}));
        assert_eq!(v[1], Verdict::Pass);
    }

    #[test]
    fn short_lived_and_true_variant() {
        let mut a = app("matrix-app", "zadd", "5.0.0", hurt());
        a.remap = Some("127.0.0.1:7000".into());
        let apps = [a];
        let lived = json!({"kind": "short_lived_clients", "severity": "warning",
                           "attribution": {"kind": "group", "group": "short-lived client (zadd)",
                                           "commands": ["zadd"]}});
        let ranked = |remap: &str| {
            json!({"groups": [{"group": "short-lived client (zadd)",
            "commands": ["zadd"], "ranked": [{"model": "redis-py@5.0.0", "remap": remap}]}]})
        };
        let v = verdicts(
            &apps,
            json!({"findings": [lived]}),
            ranked("127.0.0.1:7000"),
        );
        assert_eq!((&v[2], &v[3]), (&Verdict::Pass, &Verdict::Pass));
        let v = verdicts(&apps, json!({"findings": []}), ranked("127.0.0.1:7001"));
        assert!(
            matches!(v[2], Verdict::Fail(_)) && matches!(v[3], Verdict::Fail(_)),
            "{v:?}"
        );
        let v = verdicts(&apps, json!({"findings": []}), json!({"variants": []}));
        assert!(matches!(v[3], Verdict::NotAvailable(_)));
        // The library and the remap target make the true variant; the release is only reported.
        let top = |model: &str| {
            json!({"groups": [{"group": "g", "commands": ["zadd"],
                "ranked": [{"model": model, "remap": "127.0.0.1:7000"}]}]})
        };
        let v = verdicts(&apps, json!({"findings": []}), top("redis-py@8.0.0"));
        assert_eq!(v[3], Verdict::Pass);
        let v = verdicts(&apps, json!({"findings": []}), top("lettuce@6.3.2"));
        assert!(matches!(v[3], Verdict::Fail(_)), "{v:?}");
        // A calm client without a remap: judged on the remap alone.
        let calm = [app("matrix-app", "zadd", "5.0.0", Health::Healthy)];
        let ranked = |model: &str, remap: Option<&str>| {
            json!({"groups": [{"group": "g", "commands": ["zadd"],
                "ranked": [{"model": model, "remap": remap}]}]})
        };
        let v = verdicts(
            &calm,
            json!({"findings": []}),
            ranked("go-redis@9.8.0", None),
        );
        assert_eq!(v[3], Verdict::Pass, "{v:?}");
        let v = verdicts(
            &calm,
            json!({"findings": []}),
            ranked("redis-py@5.0.0", Some("127.0.0.1:7000")),
        );
        assert!(matches!(v[3], Verdict::Fail(_)), "{v:?}");
        let with_companion = [
            apps[0].clone(),
            app("matrix-healthy", "get", "8.1.0", Health::Healthy),
        ];
        let everyone = json!({"kind": "connection_churn", "severity": "warning",
            "attribution": {"kind": "ambiguous", "groups": ["\"matrix-app\"", "\"matrix-healthy\""]}});
        let v = verdicts(&with_companion, json!({"findings": [everyone]}), json!({}));
        assert!(matches!(v[2], Verdict::Fail(_)), "{:?}", v[2]);
    }

    #[test]
    fn models_cover_their_release_ranges() {
        assert!(model_covers("redis-py@5.0.0", "redis-py", "5.0.0"));
        assert!(model_covers(
            "redis-py@5.0.0 (covers 4.4.0–7.1.x)",
            "redis-py",
            "7.1.1"
        ));
        assert!(!model_covers("redis-py@5.0.0", "redis-py", "7.2.0"));
        assert!(model_covers("redis-py@8.0.0", "redis-py", "8.1.0"));
        assert!(model_covers("redis-py@8.0.0", "redis-py", "7.2.0"));
        assert!(!model_covers("redis-py@8.0.0", "redis-py", "5.0.0"));
        assert!(model_covers("go-redis@9.8.0", "go-redis", "9.8.0"));
        assert!(!model_covers("go-redis@9.8.0", "jedis", "9.8.0"));
        assert!(!model_covers("ideal", "redis-py", "8.1.0"));
    }
}
