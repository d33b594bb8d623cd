//! The analysis's answers as the story check reads them: `slotscope analyze --format json` and
//! `slotscope hypotheses --format json`, run on a case's recording and read tolerantly.
//!
//! The shapes read are issue 13's contract (docs/FIDELITY.md, "The analysis check"): `findings[]`
//! with `kind`, `severity`, `span {start, end}` and `attribution {kind, group, groups, commands}`;
//! `story {steps[], limits[]}`; `census.groups[]`; and from `hypotheses`, `groups[] {group,
//! commands, remap_target, ranked[] {model, covers, remap, score}}`. Every field is optional here:
//! a field the binary does not give yet reads as `None` (or empty), so the check can say "not
//! available" instead of failing to read. A binary that still answers `hypotheses` with one ranking
//! for the whole recording (`variants[]`) is read into [`Hypotheses::whole`].

use std::io::Read;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::collector::slotscope_bin;

/// How long one `analyze` or `hypotheses` may run before it is killed (by its PID).
pub const RUN_LIMIT: Duration = Duration::from_secs(180);

/// Who a finding is attributed to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attribution {
    /// `group`, `ambiguous` or `unknown` (`None` when absent).
    pub kind: Option<String>,
    /// The group's label (kind `group`).
    pub group: Option<String>,
    /// The groups' labels (kind `ambiguous`).
    pub groups: Vec<String>,
    /// The commands that carry the finding.
    pub commands: Vec<String>,
}

/// One finding of `analyze`.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Its place in `findings[]` (the analysis orders them by importance).
    pub index: usize,
    /// `kind` (snake_case).
    pub kind: String,
    /// `severity`: `info`, `warning` or `critical`.
    pub severity: Option<String>,
    /// `title`.
    pub title: String,
    /// `span.start`, epoch ms.
    pub start: Option<u64>,
    /// `span.end`, epoch ms.
    pub end: Option<u64>,
    /// `attribution`, if given.
    pub attribution: Option<Attribution>,
}

impl Finding {
    /// Whether its severity is `critical`.
    pub fn is_critical(&self) -> bool {
        self.severity.as_deref() == Some("critical")
    }
}

/// One step of the story (the causal timeline).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// `at`, epoch ms.
    pub at: Option<u64>,
    /// `kind`.
    pub kind: String,
    /// `text`.
    pub text: String,
    /// `evidence`, each line.
    pub evidence: Vec<String>,
    /// `group`, a label.
    pub group: Option<String>,
    /// `root_cause`.
    pub root_cause: bool,
    /// `finding`: an index into the findings.
    pub finding: Option<usize>,
}

/// What `analyze --format json` said.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The findings (`None` when the report has no `findings` array).
    pub findings: Option<Vec<Finding>>,
    /// The story's steps (`None` when the report has no `story.steps`).
    pub story: Option<Vec<Step>>,
    /// The census's groups, as their labels or names.
    pub census: Vec<String>,
}

/// A text field, or the JSON text of an object that stands for a label.
fn label(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o
            .get("label")
            .or_else(|| o.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| Some(v.to_string())),
        other => Some(other.to_string()),
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(label).collect())
        .unwrap_or_default()
}

fn attribution(v: &Value) -> Option<Attribution> {
    v.as_object()?;
    Some(Attribution {
        kind: v["kind"].as_str().map(str::to_owned),
        group: label(&v["group"]),
        groups: strings(&v["groups"]),
        commands: strings(&v["commands"]),
    })
}

impl Analysis {
    /// Reads `analyze --format json`'s report.
    pub fn from_json(v: &Value) -> Analysis {
        let findings = v["findings"].as_array().map(|a| {
            a.iter()
                .enumerate()
                .map(|(index, f)| Finding {
                    index,
                    kind: f["kind"].as_str().unwrap_or("?").to_owned(),
                    severity: f["severity"].as_str().map(str::to_owned),
                    title: f["title"].as_str().unwrap_or("").to_owned(),
                    start: f["span"]["start"].as_u64(),
                    end: f["span"]["end"].as_u64(),
                    attribution: attribution(&f["attribution"]),
                })
                .collect()
        });
        let story = v["story"]["steps"].as_array().map(|a| {
            a.iter()
                .map(|s| Step {
                    at: s["at"].as_u64(),
                    kind: s["kind"].as_str().unwrap_or("?").to_owned(),
                    text: s["text"].as_str().unwrap_or("").to_owned(),
                    evidence: strings(&s["evidence"]),
                    group: label(&s["group"]),
                    root_cause: s["root_cause"].as_bool().unwrap_or(false),
                    finding: s["finding"].as_u64().and_then(|i| usize::try_from(i).ok()),
                })
                .collect()
        });
        let census = v["census"]["groups"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|g| {
                        g["label"]
                            .as_str()
                            .map(str::to_owned)
                            .or_else(|| label(&g["key"]))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Analysis {
            findings,
            story,
            census,
        }
    }

    /// The first critical finding in the report's order (`None` without findings or without a
    /// critical one).
    pub fn first_critical(&self) -> Option<&Finding> {
        self.findings.as_ref()?.iter().find(|f| f.is_critical())
    }
}

/// One ranked variant of `hypotheses`.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// `model`, e.g. `redis-py@5.0.0`.
    pub model: String,
    /// `covers`, the releases the model stands for, when given.
    pub covers: Option<String>,
    /// `remap`: the `address_remap` target, `None` for none.
    pub remap: Option<String>,
    /// `score`.
    pub score: Option<f64>,
}

/// One client group's ranking.
#[derive(Clone, Debug, PartialEq)]
pub struct HypothesisGroup {
    /// `group`, a label.
    pub group: String,
    /// `commands` the group sends.
    pub commands: Vec<String>,
    /// `remap_target` found for the group.
    pub remap_target: Option<String>,
    /// `ranked[]`, best first.
    pub ranked: Vec<Variant>,
}

/// What `hypotheses --format json` said.
#[derive(Clone, Debug)]
pub struct Hypotheses {
    /// Per-group rankings (`None` when the report has no `groups` array).
    pub groups: Option<Vec<HypothesisGroup>>,
    /// The best variant of a ranking of the whole recording (`variants[]`, the shape before issue
    /// 13), if the report has one.
    pub whole: Option<Variant>,
}

fn variant(v: &Value) -> Variant {
    let remap = match &v["remap"] {
        Value::Null => v["config"]["address_remap"].as_str().map(str::to_owned),
        r => label(r),
    };
    Variant {
        model: v["model"].as_str().unwrap_or("?").to_owned(),
        covers: v["covers"].as_str().map(str::to_owned),
        remap,
        score: v["score"].as_f64(),
    }
}

impl Hypotheses {
    /// Reads `hypotheses --format json`'s report.
    pub fn from_json(v: &Value) -> Hypotheses {
        let groups = v["groups"].as_array().map(|a| {
            a.iter()
                .map(|g| HypothesisGroup {
                    group: label(&g["group"]).unwrap_or_default(),
                    commands: strings(&g["commands"]),
                    remap_target: label(&g["remap_target"]),
                    ranked: g["ranked"]
                        .as_array()
                        .map(|r| r.iter().map(variant).collect())
                        .unwrap_or_default(),
                })
                .collect()
        });
        let whole = v["variants"]
            .as_array()
            .and_then(|a| a.first())
            .map(variant);
        Hypotheses { groups, whole }
    }
}

/// Runs `slotscope ARGS… --format json`, for at most [`RUN_LIMIT`], and reads its stdout as JSON.
///
/// # Errors
///
/// If it exits with a failure, runs out of time (it is then killed) or prints something other
/// than JSON (the error carries stderr).
pub fn run_json(args: &[&str]) -> Result<Value, String> {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--format", "json"]);
    let what = format!("slotscope {}", all.join(" "));
    let mut child = Command::new(slotscope_bin())
        .args(&all)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    let drain = |mut r: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < RUN_LIMIT => thread::sleep(Duration::from_millis(50)),
            _ => {
                // Our own child, by its PID.
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default())
        .trim()
        .to_owned();
    match status {
        None => Err(format!(
            "{what}: still running after {} s, killed",
            RUN_LIMIT.as_secs()
        )),
        Some(st) if !st.success() => Err(format!("{what} exited with {st}: {stderr}")),
        Some(_) => serde_json::from_slice(&stdout).map_err(|e| format!("{what}: not JSON ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_contract_and_tolerates_what_is_missing() {
        let v = json!({
            "findings": [
                {"kind": "redirect_storm", "severity": "warning",
                 "span": {"start": 10, "end": 20},
                 "attribution": {"kind": "group", "group": "\"matrix-app\"", "commands": ["zadd"]}},
                {"kind": "client_group_lost", "severity": "critical",
                 "span": {"start": 30, "end": 40},
                 "attribution": {"kind": "ambiguous", "groups": ["a", {"label": "b"}]}},
                {"kind": "idle_shard"}
            ],
            "story": {"steps": [{"at": 5, "kind": "stall", "group": null, "root_cause": true,
                                  "finding": 1}]},
            "census": {"groups": [{"key": {"name": "matrix-app"}}, {"label": "short-lived"}]}
        });
        let a = Analysis::from_json(&v);
        let f = a.first_critical().expect("one critical");
        assert_eq!((f.index, f.start), (1, Some(30)));
        assert_eq!(f.attribution.as_ref().unwrap().groups, ["a", "b"]);
        assert_eq!(a.findings.as_ref().unwrap()[2].attribution, None);
        let story = a.story.as_ref().unwrap();
        assert!(story[0].root_cause && story[0].finding == Some(1));
        assert_eq!(a.census, ["matrix-app", "short-lived"]);

        let empty = Analysis::from_json(&json!({}));
        assert!(
            empty.findings.is_none() && empty.story.is_none() && empty.first_critical().is_none()
        );

        let h = Hypotheses::from_json(&json!({
            "groups": [{"group": "g", "commands": ["zadd"], "remap_target": "127.0.0.1:7000",
                        "ranked": [{"model": "redis-py@5.0.0", "remap": "127.0.0.1:7000",
                                    "score": 0.9}]}],
            "variants": [{"model": "redis-py@8.0.0", "config": {"address_remap": "h:1"}}]
        }));
        let g = &h.groups.as_ref().unwrap()[0];
        assert_eq!(g.ranked[0].remap.as_deref(), Some("127.0.0.1:7000"));
        assert_eq!(h.whole.as_ref().unwrap().remap.as_deref(), Some("h:1"));
        assert!(Hypotheses::from_json(&json!({})).groups.is_none());
    }
}
