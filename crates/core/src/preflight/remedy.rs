//! What could make a planned change safe for one client, to be replayed: a later release of its
//! library, a setting the library has (the ones the hypotheses try, every master as a startup
//! node, a socket timeout longer than the plan's longest stall), or the plan itself at half
//! speed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::replay::{descriptor, resolve, Hypotheses, MODELS};

use super::plan::{Action, Plan};

/// What kind of change a remedy is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemedyKind {
    /// Another release of the library.
    Release,
    /// A setting of the client.
    Setting,
    /// The plan changed.
    Plan,
}

/// One change to replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// What kind.
    pub kind: RemedyKind,
    /// The change in words.
    pub change: String,
    /// The model to replay.
    pub model: String,
    /// Its options.
    pub config: BTreeMap<String, String>,
    /// The plan to replay (`None`: the same).
    pub plan: Option<Plan>,
}

/// The candidates for a client replayed as `model` with `config` under `plan`; `masters` are
/// the start's master addresses.
pub fn candidates(
    model: &str,
    config: &BTreeMap<String, String>,
    plan: &Plan,
    masters: &[String],
) -> Vec<Candidate> {
    let mut out = Vec::new();
    let Some(d) = resolve(model)
        .ok()
        .flatten()
        .and_then(|r| descriptor(r.model))
    else {
        return out;
    };
    let with = |pairs: &[(&str, String)]| -> BTreeMap<String, String> {
        let mut c = config.clone();
        for (k, v) in pairs {
            c.insert((*k).to_owned(), v.clone());
        }
        c
    };
    let setting = |change: String, config: BTreeMap<String, String>| Candidate {
        kind: RemedyKind::Setting,
        change,
        model: model.to_owned(),
        config,
        plan: None,
    };
    // A later release of the same library.
    if let Some(c) = d.coverage {
        for later in MODELS.iter().filter_map(|m| {
            let mc = m.coverage?;
            (mc.library == c.library && mc.from > c.from).then_some((m, mc))
        }) {
            out.push(Candidate {
                kind: RemedyKind::Release,
                change: format!("{} {} (model {})", c.library, later.1.range, later.0.name),
                model: later.0.name.to_owned(),
                config: config.clone(),
                plan: None,
            });
        }
    }
    // The settings the hypotheses try.
    let sets: Vec<Vec<(&str, &str)>> = match d.hypotheses {
        Hypotheses::Suspect { each, .. } => each.iter().map(|p| vec![*p]).collect(),
        Hypotheses::Library { extra } => extra.iter().map(|s| s.to_vec()).collect(),
        Hypotheses::Contrast => Vec::new(),
    };
    for set in sets {
        if set
            .iter()
            .all(|(k, v)| config.get(*k).map(String::as_str) == Some(*v))
        {
            continue;
        }
        let pairs: Vec<(&str, String)> = set.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
        let text: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push(setting(
            format!("setting {}", text.join(", ")),
            with(&pairs),
        ));
    }
    // Every master as a startup node.
    if masters.len() > 1 && !config.contains_key("startup_nodes") {
        let all = masters.join(",");
        out.push(setting(
            format!("startup_nodes listing every master ({all})"),
            with(&[("startup_nodes", all)]),
        ));
    }
    // A socket timeout that waits out the longest stall (redis-py's option).
    let stall = plan
        .steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::Stall { for_ms, .. } => Some(*for_ms),
            _ => None,
        })
        .max();
    if let (Some(ms), true) = (stall, d.name.starts_with("redis-py@")) {
        let secs = (ms + 1_000).div_ceil(1_000);
        out.push(setting(
            format!(
                "socket_timeout={secs} (longer than the {} stall)",
                crate::time::format_millis(ms)
            ),
            with(&[("socket_timeout", secs.to_string())]),
        ));
    }
    // The plan at half speed.
    out.push(Candidate {
        kind: RemedyKind::Plan,
        change: "the plan at half speed (steps twice as far apart, moves at half rate)".into(),
        model: model.to_owned(),
        config: config.clone(),
        plan: Some(half_speed(plan)),
    });
    out
}

/// `plan` with every step twice as late and every move at half its rate.
pub fn half_speed(plan: &Plan) -> Plan {
    let mut p = plan.clone();
    for s in &mut p.steps {
        s.at_ms *= 2;
        if let Action::Move { rate, .. } = &mut s.action {
            *rate = (*rate / 2).max(1);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan::from_json(
            r#"{"steps": [
                {"at": "0s", "add_master": "new1"},
                {"at": "2s", "move": {"slots": "0-99", "from": "127.0.0.1:7000", "to": "new1", "rate": "100/s"}},
                {"at": "3s", "stall": {"node": "127.0.0.1:7000", "for": "2.5s"}}
            ]}"#,
        )
        .unwrap()
    }

    #[test]
    fn redis_py_5_gets_a_later_release_its_settings_a_timeout_and_a_slower_plan() {
        let masters = vec!["127.0.0.1:7000".to_owned(), "127.0.0.1:7001".to_owned()];
        let c = candidates("redis-py@5.0.1", &BTreeMap::new(), &plan(), &masters);
        let changes: Vec<&str> = c.iter().map(|c| c.change.as_str()).collect();
        assert!(c
            .iter()
            .any(|c| c.kind == RemedyKind::Release && c.model == "redis-py@8.0.0"));
        let timeout = c
            .iter()
            .find(|c| c.config.contains_key("socket_timeout"))
            .unwrap();
        assert_eq!(timeout.config["socket_timeout"], "4", "{changes:?}");
        assert!(c
            .iter()
            .any(|c| c.config.get("startup_nodes")
                == Some(&"127.0.0.1:7000,127.0.0.1:7001".to_owned())));
        let slow = c.iter().find(|c| c.kind == RemedyKind::Plan).unwrap();
        let p = slow.plan.as_ref().unwrap();
        assert_eq!(p.steps[1].at_ms, 4_000);
        assert!(matches!(p.steps[1].action, Action::Move { rate: 50, .. }));
        // The newest release has no later one, and only redis-py gets the timeout.
        let c = candidates("jedis@5.1.0", &BTreeMap::new(), &plan(), &masters);
        assert!(c.iter().all(|c| c.kind != RemedyKind::Release));
        assert!(c.iter().all(|c| !c.config.contains_key("socket_timeout")));
    }
}
