//! A client group: what identifies it ([`GroupKey`]) and what the census knows of it
//! ([`ClientGroup`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::client_list::ClientEntry;
use crate::node::NodeAddr;
use crate::time::{TimeSpan, Timestamp};

/// What identifies a client group.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GroupKey {
    /// `lib-name` (`CLIENT SETINFO`), if the client set it.
    pub lib_name: Option<String>,
    /// `lib-ver`, if set.
    pub lib_ver: Option<String>,
    /// Connection name (`CLIENT SETNAME`), if set.
    pub name: Option<String>,
    /// Client host, only when none of the above is set.
    pub host: Option<String>,
}

impl GroupKey {
    /// The key of a `CLIENT LIST` entry.
    pub fn of(entry: &ClientEntry) -> GroupKey {
        let lib_name = entry.lib_name().map(str::to_owned);
        let lib_ver = entry.lib_ver().map(str::to_owned);
        let name = entry.name().map(str::to_owned);
        let anonymous = lib_name.is_none() && lib_ver.is_none() && name.is_none();
        GroupKey {
            host: anonymous
                .then(|| entry.client_host().map(str::to_owned))
                .flatten(),
            lib_name,
            lib_ver,
            name,
        }
    }

    /// A short label: `redis-py 5.0.0 "api"`, or `host 10.0.0.7`.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(l) = &self.lib_name {
            parts.push(l.clone());
        }
        if let Some(v) = &self.lib_ver {
            parts.push(v.clone());
        }
        if let Some(n) = &self.name {
            parts.push(format!("\"{n}\""));
        }
        if let Some(h) = &self.host {
            parts.push(format!("host {h}"));
        }
        if parts.is_empty() {
            "unidentified clients".to_owned()
        } else {
            parts.join(" ")
        }
    }
}

/// The columns of a census row, header → what it counts, for a legend under the census.
pub const COLUMNS: &[(&str, &str)] = &[
    (
        "seen",
        "distinct connections seen in CLIENT LIST (a connection caught mid-handshake counts once, in its application's row)",
    ),
    ("open", "connections open at the last poll of each node, summed"),
    (
        "new/s",
        "connections first seen after a node's first poll, per second of the recording: a lower bound, connections shorter than a poll interval are missed",
    ),
    (
        "lifetime",
        "median age (whole seconds, as CLIENT LIST reports it) at the last sighting of the connections that closed",
    ),
    (
        "cmds",
        "commands seen as a connection's last command (cmd) at a poll: a sample, not every command the group ran",
    ),
    (
        "merged",
        "connections seen mid-handshake (before CLIENT SETNAME / SETINFO completed) counted in this row",
    ),
];

/// A partial identity merged into a group: the key a connection was seen with mid-handshake.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedKey {
    /// The partial key (`"recommendation"` before `CLIENT SETINFO`, `host 10.0.0.7` before
    /// `CLIENT SETNAME`).
    pub key: GroupKey,
    /// Connections seen only with it.
    pub connections: u64,
}

/// One client group over the recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientGroup {
    /// What identifies it.
    pub key: GroupKey,
    /// Client hosts seen.
    pub hosts: BTreeSet<String>,
    /// Nodes it had connections to.
    pub nodes: BTreeSet<NodeAddr>,
    /// Commands seen as a connection's last command (`cmd`), with how many sightings.
    pub commands: BTreeMap<String, u64>,
    /// Distinct connections seen.
    pub connections_seen: u64,
    /// Connections open in the last sample of each node, summed.
    pub open_last: u64,
    /// Largest number of connections open at one sample round, all nodes together.
    pub open_max: u64,
    /// Connections seen for the first time after the first sample of their node, per second of
    /// the recording (a lower bound: connections shorter than a poll interval are missed).
    pub new_per_sec: f64,
    /// Age in seconds at the last sighting of every connection that disappeared.
    pub lifetimes_secs: Vec<u64>,
    /// New connections seen per second of the recording (Unix seconds → count).
    #[serde(skip)]
    pub new_by_second: BTreeMap<u64, u64>,
    /// First and last sighting.
    pub first_seen: Timestamp,
    /// Last sighting.
    pub last_seen: Timestamp,
    /// Partial keys of connections seen mid-handshake, merged into this group (their counts are
    /// in the fields above).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<MergedKey>,
}

impl ClientGroup {
    /// New connections first seen within `span` (sample times rounded down to the second).
    pub fn new_in(&self, span: TimeSpan) -> u64 {
        let from = span.start.as_millis() / 1000;
        let to = span.end.as_millis().div_ceil(1000);
        self.new_by_second.range(from..=to).map(|(_, n)| n).sum()
    }

    /// The median lifetime of connections that closed, in seconds.
    pub fn median_lifetime_secs(&self) -> Option<u64> {
        let mut l = self.lifetimes_secs.clone();
        l.sort_unstable();
        l.get(l.len() / 2).copied()
    }

    /// Connections seen mid-handshake counted in this group ("includes 5 connections seen
    /// mid-handshake").
    pub fn merged_connections(&self) -> u64 {
        self.merged.iter().map(|m| m.connections).sum()
    }
}
