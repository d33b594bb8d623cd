//! The clients a plan is replayed with: one per client group of the recording, with its rate,
//! its command mix, where its traffic shows a remap, and the models that may stand for it — the
//! one the user assumes (`--assume GROUP=LIB@VERSION[,option=value]`), else the one covering the
//! release the group declares, else every model of the library its handshake names, else every
//! model of a library (the report then gives the range of their verdicts).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::census::Census;
use crate::hypothesis::{GroupWorkload, Source};
use crate::node::NodeAddr;
use crate::replay::{resolve, ReplayError, MODELS};

/// How a client's models were chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Chosen {
    /// The user said (`--assume`).
    Assumed,
    /// The user said, of traffic no census group was seen running (`--assume` naming a census
    /// group seen without business commands, or `*`).
    AssumedUnexplained,
    /// The release the group reports (`lib-name`/`lib-ver`).
    Declared,
    /// Its library (named or fingerprinted), every release a model covers.
    Library,
    /// Nothing tells: every library's model.
    Unknown,
}

impl Chosen {
    /// How, in a few words.
    pub fn text(self) -> &'static str {
        match self {
            Chosen::Assumed => "as assumed",
            Chosen::AssumedUnexplained => {
                "as assumed, for the commands no census group was seen running"
            }
            Chosen::Declared => "the release it reports",
            Chosen::Library => "its library's models",
            Chosen::Unknown => "library unknown: every model",
        }
    }
}

/// A model (a release it covers, as asked) and its options.
pub type ModelChoice = (String, BTreeMap<String, String>);

/// One client to replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Client {
    /// The census group's label.
    pub group: String,
    /// Its short name (the connection name when it has one).
    pub short: String,
    /// Commands per second.
    pub rate_per_sec: f64,
    /// Its commands with their weights.
    pub mix: Vec<(String, u64)>,
    /// The node a remap sends everything to, when its traffic shows one.
    pub remap: Option<NodeAddr>,
    /// The models that may stand for it, each with its options.
    pub models: Vec<ModelChoice>,
    /// How they were chosen.
    pub chosen: Chosen,
    /// Commands it keeps in flight at most, as far as the census tells: the most connections
    /// it had open at once (each command in flight holds one), at most [`MAX_IN_FLIGHT`].
    pub in_flight: Option<u32>,
}

/// The most commands in flight a client is replayed with from its connections.
pub const MAX_IN_FLIGHT: u32 = 512;

/// A `--assume GROUP=LIB@VERSION[,option=value…]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assumption {
    /// The group's label or short name.
    pub group: String,
    /// The model: a release one covers, as asked (`redis-py@5.0.1`).
    pub model: String,
    /// Its options.
    pub options: BTreeMap<String, String>,
}

impl Assumption {
    /// Reads `GROUP=LIB@VERSION[,option=value…]`; the release must be one a model covers.
    pub fn parse(text: &str) -> Result<Assumption, String> {
        let (group, rest) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}` is not GROUP=LIB@VERSION[,option=value]"))?;
        let mut parts = rest.split(',');
        let asked = parts.next().unwrap_or_default().trim();
        // Kept as asked: the model built from it knows the release (`redis-py@7.1.0`).
        let model = match resolve(asked) {
            Ok(Some(_)) => asked.to_owned(),
            Ok(None) => return Err(ReplayError::UnknownModel(asked.to_owned()).to_string()),
            Err(e) => return Err(e.to_string()),
        };
        let mut options = BTreeMap::new();
        for p in parts {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| format!("`{p}` in `{text}` is not option=value"))?;
            options.insert(k.trim().to_owned(), v.trim().to_owned());
        }
        if group.trim().is_empty() {
            return Err(format!("`{text}` names no group"));
        }
        Ok(Assumption {
            group: group.trim().to_owned(),
            model,
            options,
        })
    }
}

/// Every model that covers releases of `library`.
fn library_models(library: &str) -> Vec<String> {
    MODELS
        .iter()
        .filter(|m| m.coverage.is_some_and(|c| c.library == library))
        .map(|m| m.name.to_owned())
        .collect()
}

/// What `--assume` names for the traffic no census group explains (besides its label).
pub const UNEXPLAINED: &str = "*";

/// The clients of `workloads` (census groups with business traffic: commands no group is seen
/// running are no client's), with `assumed` applied and their connections read from `census`.
///
/// An assumption may also claim the commands no census group was seen running (the
/// [`Source::Unattributed`], [`Source::NoCensus`] or [`Source::NoGroupExplains`] workload): by
/// naming it (its label, or [`UNEXPLAINED`]), or by naming a census group seen without any
/// business command (a client that failed everything, whose short connections the polls caught
/// only during their handshake or `CLUSTER SLOTS`). The user's word makes that traffic the
/// group's. An assumption naming nothing of these is an error listing the groups.
pub fn clients(
    workloads: &[GroupWorkload],
    census: Option<&Census>,
    assumed: &[Assumption],
) -> Result<Vec<Client>, String> {
    let claimed = claim(workloads, census, assumed)?;
    Ok(claimed
        .into_iter()
        .filter(|(w, _, _)| w.source == Source::Census && w.rate_per_sec > 0.0)
        .map(|(w, assumption, unexplained)| {
            let (models, chosen): (Vec<ModelChoice>, Chosen) = if let Some(a) = assumption {
                let chosen = if unexplained {
                    Chosen::AssumedUnexplained
                } else {
                    Chosen::Assumed
                };
                (vec![(a.model.clone(), a.options.clone())], chosen)
            } else if let Some(m) = &w.declared_model {
                (vec![(m.clone(), BTreeMap::new())], Chosen::Declared)
            } else {
                let libraries: Vec<&str> = match &w.declared_library {
                    Some(l) => vec![l.as_str()],
                    None => w.candidate_libraries.iter().map(String::as_str).collect(),
                };
                let named: Vec<String> = libraries.iter().flat_map(|l| library_models(l)).collect();
                if named.is_empty() {
                    let every = MODELS
                        .iter()
                        .filter(|m| m.coverage.is_some())
                        .map(|m| (m.name.to_owned(), BTreeMap::new()))
                        .collect();
                    (every, Chosen::Unknown)
                } else {
                    let named = named.into_iter().map(|m| (m, BTreeMap::new())).collect();
                    (named, Chosen::Library)
                }
            };
            let in_flight = census
                .and_then(|c| c.groups.iter().find(|g| g.key.label() == w.group))
                .filter(|g| g.open_max > 0)
                .map(|g| {
                    u32::try_from(g.open_max)
                        .unwrap_or(MAX_IN_FLIGHT)
                        .min(MAX_IN_FLIGHT)
                });
            Client {
                in_flight,
                group: w.group.clone(),
                short: w.short.clone(),
                rate_per_sec: w.rate_per_sec,
                mix: w
                    .evidence
                    .by_command
                    .iter()
                    .map(|(c, e)| (c.clone(), weight(e.calls + e.rejected)))
                    .collect(),
                remap: w.remap_target.clone(),
                models,
                chosen,
            }
        })
        .collect())
}

/// A workload with the assumption that applies to it (the last naming it) and whether that
/// claimed traffic no census group was seen running.
type Claimed<'a> = (GroupWorkload, Option<&'a Assumption>, bool);

/// `workloads`, each with its [`Claimed`] assumption; a claimed workload becomes a census one,
/// named after the census group its assumption names (see [`clients`]).
fn claim<'a>(
    workloads: &[GroupWorkload],
    census: Option<&Census>,
    assumed: &'a [Assumption],
) -> Result<Vec<Claimed<'a>>, String> {
    let mut out: Vec<Claimed> = workloads.iter().map(|w| (w.clone(), None, false)).collect();
    for a in assumed {
        let names = |w: &GroupWorkload| w.group == a.group || w.short == a.group;
        if let Some(i) = out.iter().position(|(w, _, _)| names(w)) {
            let o = &mut out[i];
            if o.0.source != Source::Census {
                o.0.source = Source::Census;
                o.2 = true;
            }
            o.1 = Some(a);
            continue;
        }
        // Claimed workloads are census ones by now.
        let unexplained = out.iter().position(|(w, _, _)| w.source != Source::Census);
        let quiet_group = census.and_then(|c| {
            c.groups
                .iter()
                .find(|g| g.key.label() == a.group || g.key.name.as_deref() == Some(&a.group))
        });
        match (unexplained, quiet_group) {
            (Some(i), Some(g)) => {
                let o = &mut out[i];
                o.0.group = g.key.label();
                o.0.short = g.key.name.clone().unwrap_or_else(|| g.key.label());
                o.0.source = Source::Census;
                o.1 = Some(a);
                o.2 = true;
            }
            (Some(i), None) if a.group == UNEXPLAINED => {
                let o = &mut out[i];
                o.0.source = Source::Census;
                o.1 = Some(a);
                o.2 = true;
            }
            _ => {
                let names: Vec<&str> = workloads.iter().map(|w| w.short.as_str()).collect();
                let star = if workloads.iter().any(|w| w.source != Source::Census) {
                    format!("; `{UNEXPLAINED}` names the commands no census group was seen running")
                } else {
                    String::new()
                };
                return Err(format!(
                    "--assume names group `{}`, which the recording does not hold (groups: {}){star}",
                    a.group,
                    names.join(", ")
                ));
            }
        }
    }
    Ok(out)
}

fn weight(x: f64) -> u64 {
    // Clamped into u64's range first.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = x.round().clamp(1.0, 1e18) as u64;
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assumption_resolves_its_release_and_reads_its_options() {
        let a = Assumption::parse("app-a=redis-py@5.0.1,socket_timeout=1,reinitialize_steps=5")
            .unwrap();
        assert_eq!(a.group, "app-a");
        assert_eq!(a.model, "redis-py@5.0.1");
        assert_eq!(
            a.options.get("socket_timeout").map(String::as_str),
            Some("1")
        );
        assert_eq!(a.options.len(), 2);
        assert!(Assumption::parse("app-a").is_err());
        assert!(Assumption::parse("app-a=redis-py@1.0.0").is_err());
        assert!(Assumption::parse("=redis-py@8.1.0").is_err());
        assert!(Assumption::parse("app-a=redis-py@8.1.0,socket_timeout").is_err());
    }

    #[test]
    fn a_library_without_a_release_is_replayed_with_each_of_its_models() {
        assert_eq!(
            library_models("redis-py"),
            vec!["redis-py@5.0.0".to_owned(), "redis-py@8.0.0".to_owned()]
        );
        assert!(library_models("no-such").is_empty());
    }
}
