//! Why a variant ranks where it does, and the best variant of every group in one line.

use std::fmt::Write as _;

use super::declared::Declared;
use super::group_ranking::{GroupHypotheses, GroupRanked};
use super::score::METRICS;

/// A metric agrees when its agreement reaches this.
const AGREES: f64 = 0.9;

/// Metrics whose agreements differ by less than this do not tell two variants apart.
const DIFFERS: f64 = 0.05;

/// How the explanations name a metric.
fn name(metric: &str) -> &'static str {
    match metric {
        "moved_share" => "MOVED share",
        "moved_per_sec" => "MOVED/s",
        "new_connections_per_sec" => "new connections/s",
        "cluster_slots_per_sec" => "CLUSTER SLOTS/s",
        "traffic_ended" => "traffic ended",
        _ => "?",
    }
}

/// Percent, rounded.
fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Why `ranked[i]` ranks where it does: the metrics on which it agrees with the recording, then
/// the metrics that set it above the next variant (its agreement against the next one's), or
/// that nothing does; and whether it is the model of the release the group reports.
pub(super) fn why(ranked: &[GroupRanked], i: usize, declared: Declared<'_>) -> String {
    let r = &ranked[i];
    let agree: Vec<String> = METRICS
        .iter()
        .filter_map(|m| r.metrics.get(*m).map(|s| (m, s)))
        .filter(|(_, s)| s.agreement >= AGREES)
        .map(|(m, s)| format!("{} {}", name(m), pct(s.agreement)))
        .collect();
    let mut s = if agree.is_empty() {
        "agrees on no metric".to_owned()
    } else {
        format!("agrees on {}", agree.join(", "))
    };
    let reported = |x: &GroupRanked| declared.agreement(&x.model);
    if let Some(next) = ranked.get(i + 1).filter(|n| reported(r) > reported(n)) {
        // Ranked above a variant of another library by what the group reports, whatever the
        // scores say.
        let because = if reported(r) == 2 {
            "the group reports its library and release".to_owned()
        } else if declared.library.is_some() {
            "the group reports its library (by lib-name or its CLIENT SETINFO fingerprint)"
                .to_owned()
        } else {
            format!(
                "the group's CLIENT SETINFO fingerprint fits only {}",
                declared.candidates.join(" or ")
            )
        };
        let _ = write!(
            s,
            "; above {} ({:.1} points {}) because {because}",
            next.label,
            ((r.score - next.score) * 100.0).abs(),
            if r.score >= next.score {
                "ahead"
            } else {
                "behind"
            },
        );
    } else if let Some(next) = ranked.get(i + 1).filter(|n| {
        declared.lands(r.remap.as_deref())
            && !declared.lands(n.remap.as_deref())
            && r.score < n.score
    }) {
        // Ranked above by where the group's traffic lands, though behind on score.
        let _ = write!(
            s,
            "; above {} ({:.1} points behind) because the group's traffic lands on {} as a remap to it sends it",
            next.label,
            (next.score - r.score) * 100.0,
            declared.remap.unwrap_or("?")
        );
    } else if let Some(next) = ranked.get(i + 1) {
        let mut diffs: Vec<(&str, f64, f64)> = METRICS
            .iter()
            .filter_map(|m| {
                let (a, b) = (r.metrics.get(*m)?, next.metrics.get(*m)?);
                Some((*m, a.agreement, b.agreement))
            })
            .filter(|(_, a, b)| a - b >= DIFFERS)
            .collect();
        diffs.sort_by(|x, y| (y.1 - y.2).total_cmp(&(x.1 - x.2)));
        let points = (r.score - next.score) * 100.0;
        if diffs.is_empty() {
            let _ = write!(
                s,
                "; ahead of {} by {points:.1} points, no metric {} better",
                next.label,
                pct(DIFFERS)
            );
        } else {
            let parts: Vec<String> = diffs
                .iter()
                .take(3)
                .map(|(m, a, b)| format!("{} {} vs {}", name(m), pct(*a), pct(*b)))
                .collect();
            let _ = write!(
                s,
                "; beats {} by {points:.1} points on {}",
                next.label,
                parts.join(", ")
            );
        }
    }
    if reported(r) == 2 {
        s.push_str("; the group reports (or its CLIENT SETINFO fingerprint names) a release this model covers");
    }
    s
}

/// The best variant of each group, `; `-separated: `recommendation: redis-py@8.0.0 (7.2.0–8.x),
/// remap to 10.0.0.1:7000; api: redis-py@8.0.0 (7.2.0–8.x), plain` (other options and faults
/// follow the remap; `plain`: no option, the recorded failures).
pub fn recommendation(groups: &[GroupHypotheses]) -> String {
    groups
        .iter()
        .filter_map(|g| {
            let best = g.ranked.first()?;
            let mut s = format!("{}: {}", g.short, best.model);
            if let Some(range) = &best.covers {
                let _ = write!(s, " ({range})");
            }
            let mut extra = Vec::new();
            if let Some(to) = &best.remap {
                extra.push(format!("remap to {to}"));
            }
            for (k, v) in best.config.iter().filter(|(k, _)| *k != "address_remap") {
                extra.push(format!("{k}={v}"));
            }
            if best.faults != "recorded" {
                extra.push(format!("faults={}", best.faults));
            }
            if extra.is_empty() {
                extra.push("plain".to_owned());
            }
            Some(format!("{s}, {}", extra.join(", ")))
        })
        .collect::<Vec<_>>()
        .join("; ")
}
