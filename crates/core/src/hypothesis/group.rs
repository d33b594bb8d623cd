//! Per-group workloads: each census group that runs business commands, with its commands, its
//! rate, what the recording shows of its commands and where its traffic lands, node by node.
//!
//! Server counters are per command, not per client: a command only one group was seen running
//! (`CLIENT LIST` `cmd`) is all that group's; a command several groups were seen running is split
//! between them in proportion to how often each was seen running it (its calls, rejections and
//! landing alike, so a shared command carries the same MOVED share into every group that runs
//! it). Commands no group was seen running form their own workload; a recording without a census,
//! or whose business commands no group was seen running, is replayed as one workload of all of
//! them (today's single workload, labelled so).

use std::collections::BTreeMap;

use serde::Serialize;

use super::evidence::{ended, tail_ms};
use super::settled::{settled_landing, Settled, ALL_ON_ONE_REJECTED};
use crate::census::{Census, ClientGroup, InferredGroup};
use crate::float;
use crate::metrics::{is_business_command, ms_to_secs, Metrics};
use crate::node::NodeAddr;
use crate::replay::resolve;
use crate::time::{TimeSpan, Timestamp};

/// A node is a group's remap candidate when its attempts (calls + rejected) reach this share of
/// the commands the group completed (its calls, all nodes). An `address_remap` to one address
/// sends every command's first attempt there: that node sees at least one attempt per command
/// (more when a rebuilt, remapped table sends commands there again), while a client routing by
/// the slot owners sends each node only the share of the keys it owns. The margin under 1 leaves
/// room for commands sent straight to a slot's owner after a `MOVED` patched the table.
pub const REMAP_LANDING: f64 = 0.9;

/// …while no node serves this share of the group's calls: the keys' slots are spread over
/// several owners (with one owner, every client sends everything to one node).
pub const SPREAD_SERVED_SHARE: f64 = 0.9;

/// Where a workload's commands come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A census group's commands.
    Census,
    /// Commands no census group was seen running (beside groups that explain the rest).
    Unattributed,
    /// Every business command: the recording holds no census.
    NoCensus,
    /// Every business command: no census group was seen running any of them.
    NoGroupExplains,
}

/// One command of a group.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CommandEvidence {
    /// The group's share of the command's traffic (1 unless other groups run it too).
    pub share: f64,
    /// Calls executed, the group's share, over the window.
    pub calls: f64,
    /// Calls rejected (`MOVED`/`ASK`), the group's share.
    pub rejected: f64,
    /// `rejected ÷ (calls + rejected)`.
    pub moved_share: f64,
}

/// Where a group's traffic lands on one node.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Landing {
    /// The node.
    pub node: NodeAddr,
    /// The group's attempts there: calls + rejected.
    pub attempts: f64,
    /// Of which served.
    pub served: f64,
    /// Of which rejected.
    pub rejected: f64,
    /// `attempts ÷` the group's calls on all nodes (see [`REMAP_LANDING`]).
    pub per_command: f64,
    /// The same attempts in the node's settled intervals only ([`Settled`]).
    pub settled: Settled,
}

/// The share of a group's calls a node must take for [`remap_target`]'s settled rule: half, more
/// than an owner of its share of the slots takes among two or more owners (unless it owns most
/// slots, and then it does not keep rejecting).
pub const SETTLED_LANDING: f64 = 0.5;

/// What the recording shows of one group's commands over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GroupEvidence {
    /// Per command.
    pub by_command: BTreeMap<String, CommandEvidence>,
    /// Rejected ÷ attempts over all its commands.
    pub moved_share: f64,
    /// Its commands' rejections per second (MOVED and ASK).
    pub moved_per_sec: f64,
    /// Its commands' calls ended at about zero.
    pub traffic_ended: bool,
    /// Seconds of the window.
    pub secs: f64,
}

/// Cluster-wide rates no per-command counter splits between groups.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClusterRates {
    /// Connections accepted per second, all nodes.
    pub new_connections_per_sec: f64,
    /// `CLUSTER SLOTS` + `CLUSTER SHARDS` calls per second by clients, all nodes.
    pub cluster_slots_per_sec: f64,
}

impl ClusterRates {
    /// The rates over the `INFO` intervals that end inside `window`.
    pub fn over(metrics: &Metrics, window: TimeSpan) -> ClusterRates {
        let secs = ms_to_secs(window.millis().max(1));
        let (mut conns, mut slots) = (0u64, 0u64);
        for node in &metrics.nodes {
            for i in node.ending_in(window) {
                conns += i.connections_received;
                slots += i.command("cluster|slots").calls + i.command("cluster|shards").calls;
            }
        }
        ClusterRates {
            new_connections_per_sec: float::from_u64(conns) / secs,
            cluster_slots_per_sec: float::from_u64(slots) / secs,
        }
    }
}

/// One workload to replay: a group's commands at its rate, with its evidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupWorkload {
    /// The census group's label ([`GroupKey::label`](crate::census::GroupKey::label)), or what
    /// the workload stands for when it is not one group.
    pub group: String,
    /// How reports name it briefly: the connection name when the group has one, else the label.
    pub short: String,
    /// Where its commands come from.
    pub source: Source,
    /// The model covering the library and release the group reports (`CLIENT SETINFO`), if any.
    pub declared_model: Option<String>,
    /// The library it runs, from `lib-name` or, without one, from its `CLIENT SETINFO`
    /// rejection fingerprint when that names one library (`redis-py`).
    pub declared_library: Option<String>,
    /// The libraries its `CLIENT SETINFO` rejection fingerprint leaves when it names more than
    /// one (`redis-py` 8.x and `go-redis` v9 both say `HELLO` first); empty otherwise.
    pub candidate_libraries: Vec<String>,
    /// Its business commands with traffic in the window.
    pub commands: Vec<String>,
    /// Commands per second it issues: per node and command, the median rate of calls over the
    /// `INFO` intervals with any (a client that stopped does not dilute it), summed; its share.
    pub rate_per_sec: f64,
    /// Attempts (calls + rejected) per second over the window, its share.
    pub attempts_per_sec: f64,
    /// What the recording shows of its commands.
    pub evidence: GroupEvidence,
    /// Where its attempts land, per node (nodes with none left out).
    pub landing: Vec<Landing>,
    /// The node a remap would send everything to, if the traffic shows one ([`remap_target`]).
    pub remap_target: Option<NodeAddr>,
}

/// A group's remap candidate from where its traffic lands: the node whose attempts reach
/// [`REMAP_LANDING`] of the group's calls (the most, if several) and that rejected some (a
/// remapped client meets the slots the node does not own). When one node also serves
/// [`SPREAD_SERVED_SHARE`] of the calls, that alone is what a cluster with one owner shows
/// whatever the client does, so the node must also reject [`ALL_ON_ONE_REJECTED`] of its
/// attempts: a client whose remapped retries return to the node too (redis-py 5.0.0 rebuilds
/// its table, remapped, on every `MOVED`) has its rejections served nowhere else.
///
/// Either way not a node that [stopped rejecting](Settled::stopped_rejecting) once the layout
/// settled: a client with a stale table during a large migration may send it as much.
///
/// Failing those, the node that takes the most attempts, at least [`SETTLED_LANDING`] of the
/// group's calls, rejects the most once the slot layout has settled and [keeps
/// rejecting](Settled::keeps_rejecting) there: redis-py 8.x sends a slot to the owner a `MOVED`
/// names until its next rebuild, so its remap target takes fewer first attempts, but it is
/// rejected there again after every rebuild; a client with a stale table during a large
/// migration lands as much on the old owner, but only while slots move.
pub fn remap_target(landing: &[Landing]) -> Option<NodeAddr> {
    let served: f64 = landing.iter().map(|l| l.served).sum();
    let attempts: f64 = landing.iter().map(|l| l.attempts).sum();
    let rejects_enough = |l: &Landing| l.rejected >= ALL_ON_ONE_REJECTED * l.attempts;
    // Every attempt on one node and none served: nothing to compare the node's landing with.
    if served <= 0.0 {
        return landing
            .iter()
            .find(|l| attempts > 0.0 && l.attempts >= 0.99 * attempts && rejects_enough(l))
            .map(|l| l.node.clone());
    }
    let one_owner_serves = landing
        .iter()
        .any(|l| l.served >= SPREAD_SERVED_SHARE * served);
    let takes_every_command = landing
        .iter()
        .filter(|l| l.per_command >= REMAP_LANDING && l.rejected > 0.0)
        .filter(|l| !one_owner_serves || rejects_enough(l))
        .filter(|l| !l.settled.stopped_rejecting())
        .max_by(|a, b| a.per_command.total_cmp(&b.per_command));
    if let Some(l) = takes_every_command {
        return Some(l.node.clone());
    }
    // The node rejecting the most once settled, and taking the most attempts: a tie is no
    // remap to one of them.
    let most = |key: fn(&Landing) -> f64| {
        let top = landing.iter().max_by(|a, b| key(a).total_cmp(&key(b)))?;
        let alone = landing
            .iter()
            .filter(|l| l.node != top.node)
            .all(|l| key(l) < key(top));
        alone.then_some(top)
    };
    let top = most(|l| l.settled.rejected)?;
    (most(|l| l.attempts).is_some_and(|a| a.node == top.node)
        && top.per_command >= SETTLED_LANDING
        && top.settled.keeps_rejecting())
    .then(|| top.node.clone())
}

/// One command on one node over the window.
#[derive(Clone, Debug, Default)]
struct Counts {
    calls: u64,
    rejected: u64,
    tail_calls: u64,
    /// Median rate of calls over the intervals with any.
    rate: f64,
}

/// Every business command's counts per node over `window`.
fn counts(metrics: &Metrics, window: TimeSpan) -> BTreeMap<String, BTreeMap<NodeAddr, Counts>> {
    let tail_start = Timestamp(window.end.0.saturating_sub(tail_ms(window.millis())));
    let mut out: BTreeMap<String, BTreeMap<NodeAddr, Counts>> = BTreeMap::new();
    for node in &metrics.nodes {
        let mut rates: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for i in node.ending_in(window) {
            for (c, d) in &i.commands {
                if !is_business_command(c) || d.attempts() == 0 {
                    continue;
                }
                let e = out
                    .entry(c.clone())
                    .or_default()
                    .entry(node.addr.clone())
                    .or_default();
                e.calls += d.calls;
                e.rejected += d.rejected;
                if i.span.start >= tail_start {
                    e.tail_calls += d.calls;
                }
                if d.calls > 0 {
                    rates
                        .entry(c.as_str())
                        .or_default()
                        .push(float::from_u64(d.calls) / i.secs().max(1e-3));
                }
            }
        }
        for (c, mut r) in rates {
            r.sort_by(f64::total_cmp);
            if let Some(e) = out.get_mut(c).and_then(|m| m.get_mut(&node.addr)) {
                e.rate = r[r.len() / 2];
            }
        }
    }
    out
}

/// The group's key as a short name, the library its `lib-name` names
/// ([`library_of`](crate::fingerprint::lib_name::library_of): `go-redis(,go1.26.8)` is go-redis)
/// and the model its reported release resolves to (none without a `lib-ver`, or for a release
/// no model covers: the library still orders its models first).
fn naming(g: &ClientGroup) -> (String, Option<&'static str>, Option<String>) {
    let short = g.key.name.clone().unwrap_or_else(|| g.key.label());
    let library = g
        .key
        .lib_name
        .as_deref()
        .and_then(crate::fingerprint::lib_name::library_of);
    let declared = library
        .zip(g.key.lib_ver.as_ref())
        .and_then(|(l, v)| resolve(&format!("{l}@{v}")).ok().flatten())
        .map(|r| r.model.to_owned());
    (short, library, declared)
}

/// What `g`'s `CLIENT SETINFO` rejection fingerprint says of `w`'s library: the one library its
/// candidates are versions of, and the one model covering every candidate's versions (redis-py
/// 8.1+ is the `redis-py@8.0.0` model's; redis-py 5.0–7.4 spans two models, so none); or the
/// libraries it leaves when it names several.
fn declare_from_fingerprint(w: &mut GroupWorkload, metrics: &Metrics, g: &ClientGroup) {
    let candidates = crate::census::handshake::candidates(metrics, g, poll_interval_ms(metrics));
    let mut libraries: Vec<&str> = Vec::new();
    for c in &candidates {
        if !libraries.contains(&c.lib_name) {
            libraries.push(c.lib_name);
        }
    }
    match libraries.as_slice() {
        [] => {}
        [one] => {
            w.declared_library = Some((*one).to_owned());
            let model_of = |v: (u32, u32, u32)| {
                resolve(&format!("{one}@{}.{}.{}", v.0, v.1, v.2))
                    .ok()
                    .flatten()
                    .map(|r| r.model)
            };
            let models: Vec<Option<&str>> = candidates
                .iter()
                .flat_map(|c| {
                    let to = (c.to.0 != u32::MAX).then(|| model_of(c.to));
                    std::iter::once(model_of(c.from)).chain(to)
                })
                .collect();
            if let Some(Some(first)) = models.first() {
                if models.iter().all(|m| *m == Some(*first)) {
                    w.declared_model = Some((*first).to_owned());
                }
            }
        }
        many => w.candidate_libraries = many.iter().map(|l| (*l).to_owned()).collect(),
    }
}

/// The workloads of a recording over `window`: one per census group with business traffic
/// (census order), then the commands no group runs; or one of all business commands when no
/// group explains any (see the module's notes). `layout_changes` are when the slot layout
/// changed ([`layout_change_spans`](super::layout_change_spans)), which tell each node's settled
/// intervals ([`Settled`]).
pub fn group_workloads(
    census: Option<&Census>,
    metrics: &Metrics,
    window: TimeSpan,
    layout_changes: &[TimeSpan],
) -> Vec<GroupWorkload> {
    let counts = counts(metrics, window);
    let mut changes = layout_changes.to_vec();
    changes.sort_by_key(|s| (s.start, s.end));
    let poll = poll_interval_ms(metrics);
    let settled =
        |cmds: &BTreeMap<&str, f64>| settled_landing(metrics, window, cmds, &changes, poll);
    let groups: &[ClientGroup] = census.map_or(&[], |c| c.groups.as_slice());
    // Each command's split: (group index or None for nobody, share).
    let mut split: BTreeMap<Option<usize>, BTreeMap<&str, f64>> = BTreeMap::new();
    for cmd in counts.keys() {
        let users: Vec<(usize, u64)> = groups
            .iter()
            .enumerate()
            .filter_map(|(i, g)| g.commands.get(cmd).map(|n| (i, (*n).max(1))))
            .collect();
        let total: u64 = users.iter().map(|(_, n)| n).sum();
        if users.is_empty() {
            split.entry(None).or_default().insert(cmd, 1.0);
        }
        for (i, n) in users {
            let share = float::ratio(n, total);
            split.entry(Some(i)).or_default().insert(cmd, share);
        }
    }
    let explained = split.keys().any(Option::is_some);
    let mut out = Vec::new();
    if !explained {
        let all: BTreeMap<&str, f64> = counts.keys().map(|c| (c.as_str(), 1.0)).collect();
        if all.is_empty() {
            return out;
        }
        let (label, source) = if groups.is_empty() {
            ("all business traffic (no client census)", Source::NoCensus)
        } else {
            (
                "all business traffic (no census group was seen running it)",
                Source::NoGroupExplains,
            )
        };
        out.push(
            workload(
                label.into(),
                label.into(),
                source,
                None,
                &all,
                &counts,
                window,
            )
            .settled(&settled(&all)),
        );
        return out;
    }
    for (who, cmds) in &split {
        match who {
            Some(i) => {
                let (short, library, declared) = naming(&groups[*i]);
                let mut w = workload(
                    groups[*i].key.label(),
                    short,
                    Source::Census,
                    declared,
                    cmds,
                    &counts,
                    window,
                )
                .settled(&settled(cmds));
                if w.declared_library.is_none() {
                    w.declared_library = library.map(str::to_owned);
                }
                if w.declared_library.is_none() && groups[*i].key.lib_name.is_none() {
                    declare_from_fingerprint(&mut w, metrics, &groups[*i]);
                }
                out.push(w);
            }
            None => {
                // A client inferred from the counters (no poll saw it) that ran them names them.
                let inferred = census.and_then(|c| {
                    c.inferred
                        .iter()
                        .find(|g| cmds.keys().all(|cmd| g.commands.contains_key(*cmd)))
                });
                let label = inferred.map_or_else(
                    || "commands no census group was seen running".to_owned(),
                    InferredGroup::label,
                );
                let w = workload(
                    label.clone(),
                    label,
                    Source::Unattributed,
                    None,
                    cmds,
                    &counts,
                    window,
                )
                .settled(&settled(cmds));
                // Appended after the groups below.
                out.push(w);
            }
        }
    }
    // `None` sorts first in the map: the unattributed workload goes last.
    if split.contains_key(&None) {
        out.rotate_left(1);
    }
    out
}

/// The poll interval, read off the recording: the median length of the first node's intervals
/// (1 s without any).
fn poll_interval_ms(metrics: &Metrics) -> u64 {
    let mut spans: Vec<u64> = metrics
        .nodes
        .first()
        .map(|n| n.intervals.iter().map(|i| i.span.millis()).collect())
        .unwrap_or_default();
    spans.sort_unstable();
    spans.get(spans.len() / 2).copied().unwrap_or(1000).max(1)
}

/// The workload of `cmds` (each with the share taken) from `counts`.
fn workload(
    group: String,
    short: String,
    source: Source,
    declared_model: Option<String>,
    cmds: &BTreeMap<&str, f64>,
    counts: &BTreeMap<String, BTreeMap<NodeAddr, Counts>>,
    window: TimeSpan,
) -> GroupWorkload {
    let secs = ms_to_secs(window.millis().max(1));
    let tail_secs = ms_to_secs(tail_ms(window.millis()).max(1));
    let mut by_command = BTreeMap::new();
    let mut landing: BTreeMap<&NodeAddr, (f64, f64)> = BTreeMap::new();
    let (mut rate, mut tail_calls) = (0.0, 0.0);
    for (cmd, share) in cmds {
        let Some(nodes) = counts.get(*cmd) else {
            continue;
        };
        let mut e = CommandEvidence {
            share: *share,
            ..CommandEvidence::default()
        };
        for (addr, c) in nodes {
            let (calls, rejected) = (float::from_u64(c.calls), float::from_u64(c.rejected));
            e.calls += share * calls;
            e.rejected += share * rejected;
            rate += share * c.rate;
            tail_calls += share * float::from_u64(c.tail_calls);
            let l = landing.entry(addr).or_default();
            l.0 += share * calls;
            l.1 += share * rejected;
        }
        e.moved_share = share_of(e.rejected, e.calls + e.rejected);
        by_command.insert((*cmd).to_owned(), e);
    }
    let calls: f64 = by_command.values().map(|e| e.calls).sum();
    let rejected: f64 = by_command.values().map(|e| e.rejected).sum();
    let landing: Vec<Landing> = landing
        .into_iter()
        .map(|(node, (served, rejected))| Landing {
            node: node.clone(),
            attempts: served + rejected,
            served,
            rejected,
            per_command: share_of(served + rejected, calls),
            settled: Settled::default(),
        })
        .collect();
    GroupWorkload {
        group,
        short,
        source,
        declared_library: declared_model
            .as_deref()
            .and_then(|m| m.split('@').next())
            .map(str::to_owned),
        candidate_libraries: Vec::new(),
        declared_model,
        commands: by_command.keys().cloned().collect(),
        rate_per_sec: rate,
        attempts_per_sec: (calls + rejected) / secs,
        evidence: GroupEvidence {
            moved_share: share_of(rejected, calls + rejected),
            moved_per_sec: rejected / secs,
            traffic_ended: ended(calls / secs, tail_calls / tail_secs),
            secs,
            by_command,
        },
        // Judged once the settled landing is in ([`GroupWorkload::settled`]).
        remap_target: None,
        landing,
    }
}

impl GroupWorkload {
    /// The workload with its landing's settled attempts (from `settled`, by node) and its remap
    /// target judged with them.
    fn settled(mut self, settled: &BTreeMap<NodeAddr, Settled>) -> GroupWorkload {
        for l in &mut self.landing {
            l.settled = settled.get(&l.node).cloned().unwrap_or_default();
        }
        self.remap_target = remap_target(&self.landing);
        self
    }
}

/// `part ÷ whole`, 0 for an empty whole.
fn share_of(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(port: u16, served: f64, rejected: f64, calls: f64) -> Landing {
        Landing {
            node: NodeAddr::new("10.0.0.1", port).unwrap(),
            attempts: served + rejected,
            served,
            rejected,
            per_command: (served + rejected) / calls,
            settled: Settled::default(),
        }
    }

    #[test]
    fn a_remap_target_takes_a_first_attempt_of_every_command() {
        // Remapped to 7000 on a cluster of three owners: 7000 serves its third and rejects the
        // rest, whose retries the owners serve.
        let calls = 300.0;
        let remapped = [
            l(7000, 100.0, 200.0, calls),
            l(7001, 100.0, 0.0, calls),
            l(7002, 100.0, 0.0, calls),
        ];
        assert_eq!(remap_target(&remapped), Some(remapped[0].node.clone()));
        // Routed by owner: every node takes its share.
        let plain = [
            l(7000, 100.0, 0.0, calls),
            l(7001, 100.0, 0.0, calls),
            l(7002, 100.0, 0.0, calls),
        ];
        assert_eq!(remap_target(&plain), None);
        // One owner: everything lands on it whatever the client does.
        let one = [l(7000, 300.0, 5.0, calls)];
        assert_eq!(remap_target(&one), None);
        // Remapped wholly (retries too) to 7000, owner of a third: it takes every attempt and
        // rejects most.
        let wholly = [l(7000, 100.0, 400.0, 100.0)];
        assert_eq!(remap_target(&wholly), Some(wholly[0].node.clone()));
        // …and with one command served elsewhere the node serves nine tenths: still the remap
        // (the short-lived redis-py 5.0.0 of `scripts/story` case 2035374735269514020, re-run:
        // 8 served and 10 rejected on its target, 1 served elsewhere; one more served on the
        // target had hidden the remap).
        let stray = [l(7000, 9.0, 10.0, 10.0), l(7001, 1.0, 0.0, 10.0)];
        assert_eq!(remap_target(&stray), Some(stray[0].node.clone()));
        // Every attempt rejected, none served.
        let none_served = [l(7000, 0.0, 30.0, 0.0)];
        assert_eq!(
            remap_target(&none_served),
            Some(none_served[0].node.clone())
        );
        // One owner that a migration begins to empty: a few MOVED, served by the new owner.
        let migrating = [l(7000, 290.0, 10.0, 300.0), l(7001, 10.0, 0.0, 300.0)];
        assert_eq!(remap_target(&migrating), None);
        assert_eq!(remap_target(&[]), None);
    }

    fn settled(intervals: u32, rejecting: u32, attempts: f64, rejected: f64) -> Settled {
        Settled {
            intervals,
            rejecting,
            attempts,
            rejected,
        }
    }

    #[test]
    fn the_settled_intervals_tell_a_remap_from_a_stale_table() {
        // A stale table on two owners while most of the first one's slots move: it takes as
        // many attempts as the group has calls, and rejected some, as a remap target would.
        let calls = 1000.0;
        let mut stale = [l(7000, 600.0, 400.0, calls), l(7001, 400.0, 0.0, calls)];
        assert_eq!(remap_target(&stale), Some(stale[0].node.clone()));
        // Once the layout settled it rejected in 2 of 12 intervals: not a remap.
        stale[0].settled = settled(12, 2, 300.0, 3.0);
        stale[1].settled = settled(12, 0, 200.0, 0.0);
        assert_eq!(remap_target(&stale), None);
        // Too few settled intervals to judge: the landing alone decides.
        stale[0].settled = settled(3, 0, 60.0, 0.0);
        assert_eq!(remap_target(&stale), Some(stale[0].node.clone()));

        // redis-py 8.1.0 remapped to 7000 (`scripts/story` case 5177870219855393327): the
        // target takes 72 % of the calls, under `REMAP_LANDING`; it keeps rejecting after the
        // layout settled, and the owners a little too.
        let calls = 9536.0;
        let mut remapped = [
            l(7000, 3200.0, 3650.0, calls),
            l(7001, 3000.0, 340.0, calls),
            l(7002, 3336.0, 370.0, calls),
        ];
        assert_eq!(remap_target(&remapped), None);
        remapped[0].settled = settled(24, 24, 4000.0, 2100.0);
        remapped[1].settled = settled(24, 23, 1900.0, 250.0);
        remapped[2].settled = settled(24, 24, 2000.0, 260.0);
        assert_eq!(remap_target(&remapped), Some(remapped[0].node.clone()));
        // Rejecting in fewer than three quarters of its settled intervals, it is not.
        remapped[0].settled.rejecting = 17;
        assert_eq!(remap_target(&remapped), None);
        remapped[0].settled.rejecting = 24;
        // Nor when another node rejects as much once settled: no one node to remap to.
        remapped[1].settled.rejected = 2100.0;
        assert_eq!(remap_target(&remapped), None);
        remapped[1].settled.rejected = 250.0;
        // Nor with under half the calls: an owner's share among several.
        remapped[0].served = 1000.0;
        remapped[0].rejected = 3000.0;
        remapped[0].attempts = 4000.0;
        remapped[0].per_command = 4000.0 / calls;
        assert_eq!(remap_target(&remapped), None);
    }
}
