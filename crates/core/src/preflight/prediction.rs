//! The plan replayed: every client through each model that may stand for it, against the
//! simulated cluster of the plan's schedule; per client the most harmful verdict, why (the
//! library behaviour, cited), and the changes that, replayed, make it less harmful. The groups
//! come out sorted by harm (the risk table).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::hypothesis::{replayed_rate, workload, HypothesisSpec};
use crate::node::NodeAddr;
use crate::replay::{
    descriptor, model, replay, resolve, ModelOptions, ReplayError, ReplayReport, Shape, SimCluster,
};
use crate::time::{format_millis, TimeSpan};

use super::clients::Client;
use super::plan::{Plan, PlanError};
use super::remedy::{candidates, RemedyKind};
use super::schedule::Schedule;
use super::simulation::{simulate, Frame, SimulationError};
use super::start::Start;
use super::verdict::{Verdict, VerdictKind};

/// How the clients are replayed.
#[derive(Clone, Debug)]
pub struct Setup {
    /// When the run begins and ends against the plan.
    pub frame: Frame,
    /// Where the clients start (the recording's seed).
    pub seed: NodeAddr,
    /// Keys, seed, the shape of a client whose commands in flight the census does not tell
    /// ([`Client::in_flight`]), exchange times and redis-py's socket timeout (its rate and window
    /// are each client's and the frame's).
    pub spec: HypothesisSpec,
}

impl Setup {
    /// The workload parameters of `client`.
    fn spec_of(&self, client: &Client) -> HypothesisSpec {
        let mut spec = self.spec.clone();
        if let Some(n) = client.in_flight {
            spec.shape = Shape::InFlight(n);
        }
        spec
    }
}

/// One model's replay of a client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The model (as asked: a release it covers).
    pub model: String,
    /// Its options.
    pub config: BTreeMap<String, String>,
    /// What the plan does to it.
    pub verdict: Verdict,
    /// What the same run shows without the change (a client already failing before it is not
    /// harmed by it).
    pub baseline: Verdict,
    /// The replay itself (what the viewer draws; not written out).
    #[serde(skip)]
    pub report: ReplayReport,
    /// The workload's command names, in the order of the report's per-command counts.
    #[serde(skip)]
    pub names: Vec<String>,
}

/// A change that, replayed, makes the plan less harmful to a client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Remedy {
    /// What kind of change.
    pub kind: RemedyKind,
    /// The change in words.
    pub change: String,
    /// The verdict with it.
    pub verdict: Verdict,
}

/// What the plan does to one client group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupPrediction {
    /// The client replayed.
    pub client: Client,
    /// One run per model that may stand for it.
    pub runs: Vec<Run>,
    /// The index in `runs` of the most harmful.
    pub worst: usize,
    /// Why, in one sentence naming the library behaviour.
    pub why: String,
    /// Changes that help, the best first (empty when nothing needs helping).
    pub remedies: Vec<Remedy>,
}

impl GroupPrediction {
    /// The most harmful run.
    pub fn worst_run(&self) -> &Run {
        &self.runs[self.worst]
    }

    /// The verdicts' range when several models stand for the client: `unaffected – errors of
    /// 3 s`; the one verdict otherwise.
    pub fn range(&self) -> String {
        let best = self
            .runs
            .iter()
            .min_by(|a, b| harm(&a.verdict).cmp(&harm(&b.verdict)));
        match best {
            Some(b) if self.runs.len() > 1 && b.verdict.kind != self.worst_run().verdict.kind => {
                format!(
                    "{} – {}",
                    b.verdict.headline(),
                    self.worst_run().verdict.headline()
                )
            }
            _ => self.worst_run().verdict.headline(),
        }
    }
}

/// The plan's prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// The plan's steps written out.
    pub steps: Vec<String>,
    /// How long the run lasted after the plan's start, milliseconds.
    pub after_ms: u64,
    /// The groups, the most harmed first.
    pub groups: Vec<GroupPrediction>,
}

/// Why a prediction could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreflightError {
    /// The plan cannot be carried out on the recording's cluster.
    #[error("{0}")]
    Plan(#[from] PlanError),
    /// The schedule cannot be simulated.
    #[error(transparent)]
    Simulation(#[from] SimulationError),
    /// A replay could not be set up.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// No client group to replay.
    #[error("the recording holds no client group with business commands to replay")]
    NoClients,
}

/// What harms more: the kind, then how long, then how many commands failed.
fn harm(v: &Verdict) -> (VerdictKind, u64, u64) {
    (v.kind, v.stretch.map_or(0, |s| s.secs), v.figures.failed)
}

/// A cluster of `plan` on `start` for `setup`.
fn cluster_of(
    plan: &Plan,
    start: &Start,
    setup: &Setup,
) -> Result<(Schedule, SimCluster), PreflightError> {
    let schedule = Schedule::of(plan, start)?;
    let cluster = simulate(&schedule, &setup.frame, &setup.seed, setup.spec.seed)?;
    Ok((schedule, cluster))
}

/// Replays `client` as `name` with `config` against `cluster` over `span`.
fn run(
    cluster: &SimCluster,
    span: TimeSpan,
    client: &Client,
    name: &str,
    config: &BTreeMap<String, String>,
    setup: &Setup,
) -> Result<(Verdict, ReplayReport, Vec<String>), ReplayError> {
    let command = client.mix.first().map_or("get", |(c, _)| c.as_str());
    let rate = replayed_rate(client.rate_per_sec);
    let w = workload(span, command, &client.mix, rate, &setup.spec_of(client))?;
    let mut opts = ModelOptions::new(setup.seed.clone());
    // The remap its traffic shows, where the model has one option naming a node for it.
    let d = resolve(name)?.and_then(|r| descriptor(r.model));
    if let (Some(to), Some(crate::replay::Hypotheses::Suspect { per_node, .. })) =
        (&client.remap, d.map(|d| d.hypotheses))
    {
        opts.set(per_node, &to.to_string())?;
    }
    if name.starts_with("redis-py@") && !config.contains_key("socket_timeout") {
        opts.socket_timeout_ms = setup.spec.redis_py_socket_timeout_ms;
    }
    for (k, v) in config {
        opts.set(k, v)?;
    }
    let mut m = model(name, opts)?;
    let report = replay(cluster, &w, m.as_mut());
    Ok((Verdict::of(&report, setup.frame.origin), report, w.names))
}

/// Replays every client of `clients` through its models against `plan` carried out on
/// `start`, then the remedies of each harmed one; `progress(group, what)` before each replay.
pub fn predict(
    plan: &Plan,
    start: &Start,
    clients: &[Client],
    setup: &Setup,
    progress: &mut dyn FnMut(&str, &str),
) -> Result<Prediction, PreflightError> {
    if clients.is_empty() {
        return Err(PreflightError::NoClients);
    }
    let (schedule, cluster) = cluster_of(plan, start, setup)?;
    let span = setup.frame.span(&schedule);
    let (_, unchanged) = cluster_of(&Plan { steps: Vec::new() }, start, setup)?;
    let masters: Vec<String> = start.masters.iter().map(|(a, _)| a.clone()).collect();
    let mut groups = Vec::with_capacity(clients.len());
    for client in clients {
        let mut runs = Vec::with_capacity(client.models.len());
        for (name, config) in &client.models {
            progress(&client.short, name);
            let (verdict, report, names) = run(&cluster, span, client, name, config, setup)?;
            let (baseline, _, _) = run(&unchanged, span, client, name, config, setup)?;
            runs.push(Run {
                model: name.clone(),
                config: config.clone(),
                verdict,
                baseline,
                report,
                names,
            });
        }
        let worst = (0..runs.len())
            .max_by_key(|&i| harm(&runs[i].verdict))
            .unwrap_or(0);
        let why = why(&runs[worst], plan, &schedule);
        let mut remedies = Vec::new();
        let w = &runs[worst];
        if w.verdict.kind > VerdictKind::MovedBurst {
            for c in candidates(&w.model, &w.config, plan, &masters) {
                progress(&client.short, &c.change);
                let (verdict, _, _) = match &c.plan {
                    None => run(&cluster, span, client, &c.model, &c.config, setup)?,
                    Some(p) => {
                        // The slower plan may not fit the same cluster (a step past a kill);
                        // such a candidate is left out.
                        let Ok((s, cl)) = cluster_of(p, start, setup) else {
                            continue;
                        };
                        run(
                            &cl,
                            setup.frame.span(&s),
                            client,
                            &c.model,
                            &c.config,
                            setup,
                        )?
                    }
                };
                if harm(&verdict) < harm(&w.verdict) {
                    remedies.push(Remedy {
                        kind: c.kind,
                        change: c.change,
                        verdict,
                    });
                }
            }
            remedies.sort_by_key(|r| harm(&r.verdict));
        }
        groups.push(GroupPrediction {
            client: client.clone(),
            runs,
            worst,
            why,
            remedies,
        });
    }
    groups.sort_by_key(|g| std::cmp::Reverse(harm(&g.worst_run().verdict)));
    Ok(Prediction {
        steps: schedule.written.clone(),
        after_ms: setup.frame.end(&schedule).0 - setup.frame.origin.0,
        groups,
    })
}

/// Why `run` ends as it does under `plan`: when, after which step, the figures, and the library
/// behaviour that makes it so with where its source does it.
fn why(run: &Run, plan: &Plan, schedule: &Schedule) -> String {
    let v = &run.verdict;
    let f = &v.figures;
    // The failures by name, the most frequent first.
    let mut names: Vec<(&String, &u64)> = f.errors.iter().collect();
    names.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
    let top_error: Vec<&str> = names.iter().take(3).map(|(e, _)| e.as_str()).collect();
    let top_error = top_error.join(", ");
    let when = v.stretch.map(|s| {
        let step = plan
            .steps
            .iter()
            .zip(&schedule.written)
            .rev()
            .find(|(st, _)| i64::try_from(st.at_ms).unwrap_or(i64::MAX) <= s.from_ms)
            .map(|(_, w)| {
                // The step's head: `at 5.0s: rebalance at 500/s, until 16.0s`.
                let head: Vec<&str> = w.splitn(3, ": ").take(2).collect();
                format!(" (after the step {})", head.join(": "))
            })
            .unwrap_or_default();
        let at = u64::try_from(s.from_ms.max(0)).unwrap_or(0);
        format!("from {}{step}", format_millis(at))
    });
    let what = match v.kind {
        VerdictKind::Unaffected => "no command fails and no MOVED is met".to_owned(),
        VerdictKind::MovedBurst => format!(
            "MOVED replies are followed ({:.1} % of attempts, {} refreshes), no command fails",
            f.moved_share * 100.0,
            f.refreshes
        ),
        VerdictKind::Storm => format!(
            "MOVED at up to {:.0} % of attempts a second, {} refreshes, {} new connections \
             (up to {}/s), no command fails",
            f.peak_moved_share * 100.0,
            f.refreshes,
            f.new_connections,
            f.peak_new_connections_per_sec
        ),
        VerdictKind::Errors => format!(
            "{} of {} commands fail ({})",
            f.failed, f.commands, top_error
        ),
        VerdictKind::Wedged => format!(
            "every command fails to the end ({}): only a restart brings it back",
            top_error
        ),
    };
    let behaviour = resolve(&run.model)
        .ok()
        .flatten()
        .and_then(|r| descriptor(r.model))
        .map(|d| {
            if d.source.is_empty() {
                format!("; {}", d.about)
            } else {
                format!("; {}: {}", d.about, d.source)
            }
        })
        .unwrap_or_default();
    let before = if run.baseline.kind >= VerdictKind::Errors {
        format!(" (already without the change: {})", run.baseline.headline())
    } else {
        String::new()
    };
    match when {
        Some(when) => format!("{}: {when}, {what}{before}{behaviour}", run.model),
        None => format!("{}: {what}{before}{behaviour}", run.model),
    }
}
