//! Clients the polls missed: a client that connects and dies between two `CLIENT LIST` polls is in
//! no census row, yet its commands, connections and errors are in the `INFO` counters of the
//! interval it lived in. An interval of a node is evidence of such a client when it received
//! connections the polls did not see open (more connections received than new connections seen
//! on that node within one poll of it), and either
//! - it ran a business command that no group seen in `CLIENT LIST` around that time was ever
//!   seen running, or
//! - it ran the identity handshake (`HELLO`, `CLIENT SETNAME`, `CLIENT SETINFO`) while no group
//!   seen around that time had a connection to that node.
//!
//! Only intervals between two `CLIENT LIST` samples of their node count (before the first and
//! after the last, or in a recording without them, the census saw nothing).
//!
//! Neither holds for a long-lived client (its commands and connections are seen), nor for the
//! collector (its per-poll commands are taken out of the metrics, and it sends no identity
//! handshake). Evidence less than one poll interval apart is one inferred group.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::fingerprint::{self, HandshakeCounts};
use crate::metrics::{is_business_command, CommandDelta, Interval, Metrics};
use crate::node::NodeAddr;
use crate::time::{TimeSpan, Timestamp};

use super::group::ClientGroup;
use super::Census;

/// The share of a group's business commands rejected or failed from which it is failing: its
/// short-lived finding is critical, and a group losing its traffic after it was dying of its errors
/// (a remap to one of n masters rejects about 1 − 1/n of first attempts).
pub const FAILING_SHARE: f64 = 0.25;

/// Commands a client sends when it connects or rebuilds its view of the cluster.
pub const HANDSHAKE_COUNTERS: &[&str] = &[
    "hello",
    "client|setinfo",
    "client|setname",
    "cluster|slots",
    "command",
    "cluster|nodes",
    "cluster|shards",
];

/// The identity handshake: what a client library sends on every new connection.
const IDENTITY: &[&str] = &["hello", "client|setname", "client|setinfo"];

/// A client group no `CLIENT LIST` poll saw, inferred from the counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InferredGroup {
    /// From the start of the first interval its traffic shows in to the end of the last.
    pub span: TimeSpan,
    /// The last interval its business commands show in (its handshake's, without any): where it
    /// was last seen acting, so where a client that died of its errors died.
    pub last_active: TimeSpan,
    /// The first interval in which at least [`FAILING_SHARE`] of its business commands were
    /// rejected or failed, if any: the poll that first saw it fail (a MOVED it followed to
    /// success before that is not a failure yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failing: Option<TimeSpan>,
    /// Nodes its traffic reached.
    pub nodes: BTreeSet<NodeAddr>,
    /// Business commands no group seen then ran: calls, rejected, failed.
    pub commands: BTreeMap<String, CommandDelta>,
    /// Connections received in its intervals.
    pub connections_received: u64,
    /// Of those, connections no poll saw.
    pub connections_unseen: u64,
    /// Handshake and topology commands ([`HANDSHAKE_COUNTERS`]) in its intervals: calls.
    pub handshake: BTreeMap<String, u64>,
    /// Errors in its intervals, per prefix (`MOVED`, `ERR`, …).
    pub errors: BTreeMap<String, u64>,
    /// The library its connect pattern points at, when the server rejected `CLIENT SETINFO`
    /// (see [`crate::fingerprint`]): `redis-py 5.0–7.4 (likely)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likely_library: Option<String>,
    /// What it is inferred from, in words.
    pub reason: String,
}

impl InferredGroup {
    /// A label for findings: `short-lived client (zadd)`, or `short-lived client (handshake
    /// only)`.
    pub fn label(&self) -> String {
        if self.commands.is_empty() {
            "short-lived client (handshake only)".to_owned()
        } else {
            let cmds: Vec<&str> = self.commands.keys().map(String::as_str).collect();
            format!("short-lived client ({})", cmds.join(", "))
        }
    }

    /// Its business commands summed.
    pub fn business(&self) -> CommandDelta {
        let mut t = CommandDelta::default();
        for d in self.commands.values() {
            t.add(d);
        }
        t
    }
}

/// Evidence from one interval of one node.
struct Evidence {
    node: NodeAddr,
    span: TimeSpan,
    commands: BTreeMap<String, CommandDelta>,
    received: u64,
    unseen: u64,
    handshake: BTreeMap<String, u64>,
    errors: BTreeMap<String, u64>,
    identity_only: bool,
}

/// Whether `g` was seen within `around`.
fn seen_within(g: &ClientGroup, around: TimeSpan) -> bool {
    g.first_seen <= around.end && g.last_seen >= around.start
}

/// The window around `iv` in which the census counts what it saw: one poll either side.
fn around(iv: &Interval, slack: u64) -> TimeSpan {
    TimeSpan::new(
        Timestamp(iv.span.start.0.saturating_sub(slack)),
        Timestamp(iv.span.end.0 + slack),
    )
}

/// Connections `node` received in `iv` that no `CLIENT LIST` poll within one poll of it saw open,
/// or `None` where the census could not see (no `CLIENT LIST` of this node covers the interval's
/// end within half a poll) or the server restarted.
fn unseen(census: &Census, node: &NodeAddr, iv: &Interval, slack: u64) -> Option<u64> {
    if iv.restarted {
        return None;
    }
    let listed = census.listed.get(node)?;
    if listed.start.0 > iv.span.end.0 + slack / 2 || listed.end.0 + slack / 2 < iv.span.end.0 {
        return None;
    }
    Some(
        iv.connections_received
            .saturating_sub(census.new_on(node, around(iv, slack))),
    )
}

/// The business commands a node ran in at least half of its `intervals` that received no
/// connection the polls missed (`unseen`, per interval, as [`unseen`] says: where the census could
/// see): whoever runs them outlives the connections no poll saw (a long-lived client whose
/// commands the `CLIENT LIST` samples never caught, as sparse samples of a busy client may not),
/// so they are no short-lived client's evidence. A client that lived and died between two polls
/// runs its commands only around its own connections.
fn steady_commands(intervals: &[Interval], unseen: &[Option<u64>]) -> BTreeSet<String> {
    let quiet: Vec<&Interval> = intervals
        .iter()
        .zip(unseen)
        .filter(|(_, u)| **u == Some(0))
        .map(|(iv, _)| iv)
        .collect();
    let mut ran: BTreeMap<&str, usize> = BTreeMap::new();
    for iv in &quiet {
        for (c, d) in &iv.commands {
            if is_business_command(c) && d.attempts() > 0 {
                *ran.entry(c.as_str()).or_default() += 1;
            }
        }
    }
    ran.into_iter()
        .filter(|(_, n)| 2 * n >= quiet.len())
        .map(|(c, _)| c.to_owned())
        .collect()
}

/// The evidence `iv` of `node` holds, if any, given its `unseen` connections ([`unseen`]) and
/// the node's [`steady_commands`].
fn evidence(
    census: &Census,
    node: &NodeAddr,
    iv: &Interval,
    unseen: u64,
    slack: u64,
    steady: &BTreeSet<String>,
) -> Option<Evidence> {
    if unseen == 0 {
        return None;
    }
    let around = around(iv, slack);
    let seen: Vec<&ClientGroup> = census
        .groups
        .iter()
        .filter(|g| seen_within(g, around))
        .collect();
    let commands: BTreeMap<String, CommandDelta> = iv
        .commands
        .iter()
        .filter(|(c, d)| {
            is_business_command(c)
                && d.attempts() > 0
                && !steady.contains(*c)
                && !seen.iter().any(|g| g.commands.contains_key(*c))
        })
        .map(|(c, d)| (c.clone(), *d))
        .collect();
    let identity: u64 = IDENTITY.iter().map(|c| iv.command(c).attempts()).sum();
    let nobody_here = !seen.iter().any(|g| g.nodes.contains(node));
    let identity_only = commands.is_empty() && identity > 0 && nobody_here;
    if commands.is_empty() && !identity_only {
        return None;
    }
    let handshake = HANDSHAKE_COUNTERS
        .iter()
        .map(|c| ((*c).to_owned(), iv.command(c).attempts()))
        .filter(|(_, n)| *n > 0)
        .collect();
    Some(Evidence {
        node: node.clone(),
        span: iv.span,
        commands,
        received: iv.connections_received,
        unseen,
        handshake,
        errors: iv.errors.clone(),
        identity_only,
    })
}

/// The short-lived client groups the counters show and the census does not: see the module
/// documentation. `interval_ms` is the poll interval; `rejects_setinfo` whether the servers
/// reject `CLIENT SETINFO` (for [`InferredGroup::likely_library`]).
pub fn infer_short_lived(
    census: &Census,
    metrics: &Metrics,
    interval_ms: u64,
    rejects_setinfo: Option<bool>,
) -> Vec<InferredGroup> {
    let slack = interval_ms.max(1);
    let mut found: Vec<Evidence> = metrics
        .nodes
        .iter()
        .flat_map(|n| {
            let unseen: Vec<Option<u64>> = n
                .intervals
                .iter()
                .map(|iv| unseen(census, &n.addr, iv, slack))
                .collect();
            let steady = steady_commands(&n.intervals, &unseen);
            n.intervals
                .iter()
                .zip(&unseen)
                .filter_map(|(iv, u)| evidence(census, &n.addr, iv, (*u)?, slack, &steady))
                .collect::<Vec<_>>()
        })
        .collect();
    found.sort_by_key(|e| (e.span.start, e.span.end));
    let mut groups: Vec<(InferredGroup, bool)> = Vec::new();
    for e in found {
        let joins = groups
            .last()
            .is_some_and(|(g, _)| e.span.start.0 <= g.span.end.0 + slack);
        if !joins {
            groups.push((
                InferredGroup {
                    span: e.span,
                    last_active: e.span,
                    first_failing: None,
                    nodes: BTreeSet::new(),
                    commands: BTreeMap::new(),
                    connections_received: 0,
                    connections_unseen: 0,
                    handshake: BTreeMap::new(),
                    errors: BTreeMap::new(),
                    likely_library: None,
                    reason: String::new(),
                },
                true,
            ));
        }
        let Some((g, identity_only)) = groups.last_mut() else {
            continue;
        };
        g.span = TimeSpan::new(g.span.start.min(e.span.start), g.span.end.max(e.span.end));
        if !e.commands.is_empty() || g.commands.is_empty() {
            g.last_active = e.span;
        }
        let (attempts, bad) = e.commands.values().fold((0, 0), |(a, b), d| {
            (a + d.attempts(), b + d.rejected + d.failed)
        });
        let failing = bad > 0
            && crate::float::from_u64(bad) >= FAILING_SHARE * crate::float::from_u64(attempts);
        if g.first_failing.is_none() && failing {
            g.first_failing = Some(e.span);
        }
        g.nodes.insert(e.node);
        for (c, d) in e.commands {
            g.commands.entry(c).or_default().add(&d);
        }
        g.connections_received += e.received;
        g.connections_unseen += e.unseen;
        for (c, n) in e.handshake {
            *g.handshake.entry(c).or_default() += n;
        }
        for (p, n) in e.errors {
            *g.errors.entry(p).or_default() += n;
        }
        *identity_only &= e.identity_only;
    }
    groups
        .into_iter()
        .map(|(mut g, identity_only)| {
            g.likely_library = likely_library(&g, rejects_setinfo);
            g.reason = reason(&g, identity_only);
            g
        })
        .collect()
}

/// The library the group's connect pattern points at, if the `CLIENT SETINFO` rejection
/// fingerprint shows.
fn likely_library(g: &InferredGroup, rejects: Option<bool>) -> Option<String> {
    let counts = HandshakeCounts {
        connections: g.connections_received,
        err: g.errors.get("ERR").copied().unwrap_or(0),
        hello: g.handshake.get("hello").copied().unwrap_or(0),
        setinfo: g.handshake.get("client|setinfo").copied().unwrap_or(0),
        setname: g.handshake.get("client|setname").copied().unwrap_or(0),
        // No poll saw these connections, so whether they carry a name is unknown.
        named: false,
    };
    let r = fingerprint::setinfo_rejection(&counts, rejects)?;
    let names: Vec<String> = r
        .candidates
        .iter()
        .map(fingerprint::Candidate::label)
        .collect();
    (!names.is_empty()).then(|| format!("{} ({})", names.join(" or "), r.certainty.word()))
}

/// What the group is inferred from, in words.
fn reason(g: &InferredGroup, identity_only: bool) -> String {
    let handshake: Vec<String> = g
        .handshake
        .iter()
        .map(|(c, n)| format!("{c} ×{n}"))
        .collect();
    let what = if identity_only {
        "connect handshakes on nodes no listed client was connected to".to_owned()
    } else {
        let cmds: Vec<&str> = g.commands.keys().map(String::as_str).collect();
        format!(
            "{} run while no client listed by CLIENT LIST within one poll was ever seen running it",
            cmds.join(", ")
        )
    };
    format!(
        "{what}; {} connections received that no poll saw open ({} received in all){}",
        g.connections_unseen,
        g.connections_received,
        if handshake.is_empty() {
            String::new()
        } else {
            format!("; handshake counters: {}", handshake.join(", "))
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(i: u64, received: u64, cmds: &[&str]) -> Interval {
        let commands: BTreeMap<String, CommandDelta> = cmds
            .iter()
            .map(|c| {
                let d = CommandDelta {
                    calls: 100,
                    ..CommandDelta::default()
                };
                ((*c).to_owned(), d)
            })
            .collect();
        Interval {
            span: TimeSpan::new(Timestamp(1_000 * i), Timestamp(1_000 * (i + 1))),
            business: Interval::business_of(&commands),
            commands,
            errors: BTreeMap::new(),
            connections_received: received,
            connected_clients: Some(3),
            keys: 0,
            used_memory: None,
            restarted: false,
            bus: crate::bus::BusMessages::default(),
        }
    }

    #[test]
    fn a_command_run_all_along_is_no_short_lived_clients_evidence() {
        // `set` runs in every interval (a long-lived client no sparse CLIENT LIST caught running
        // it); connections no poll saw arrive now and then; `zadd` runs only around the two
        // connections of a client that lived two seconds.
        let node = NodeAddr::new("10.0.0.1", 7000).unwrap();
        let mut census = Census::default();
        census
            .listed
            .insert(node.clone(), TimeSpan::new(Timestamp(0), Timestamp(40_000)));
        let intervals: Vec<Interval> = (0..40)
            .map(|i| match i {
                5 | 20 | 33 => interval(i, 1, &["set"]),
                10 | 11 => interval(i, 2, &["set", "zadd"]),
                _ => interval(i, 0, &["set"]),
            })
            .collect();
        let unseen: Vec<Option<u64>> = intervals
            .iter()
            .map(|iv| unseen(&census, &node, iv, 1_000))
            .collect();
        assert_eq!(unseen[10], Some(2));
        assert_eq!(unseen[0], Some(0));
        let steady = steady_commands(&intervals, &unseen);
        assert_eq!(steady, BTreeSet::from(["set".to_owned()]));
        let evidence_of = |i: usize, steady: &BTreeSet<String>| {
            evidence(&census, &node, &intervals[i], unseen[i]?, 1_000, steady)
        };
        for i in [5, 20, 33] {
            assert!(evidence_of(i, &steady).is_none());
        }
        let e = evidence_of(10, &steady).unwrap();
        assert_eq!(e.commands.keys().collect::<Vec<_>>(), ["zadd"]);
        assert_eq!(e.unseen, 2);
        // Without the steady rule, every interval with a connection would be evidence.
        assert!(evidence_of(5, &BTreeSet::new()).is_some());
    }
}
