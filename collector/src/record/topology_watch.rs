//! When a poll asks a node for its whole topology (`CLUSTER NODES` with `CLUSTER SHARDS` or
//! `CLUSTER SLOTS`): the two replies grow with the cluster and cost most of a poll's server time,
//! while `CLUSTER INFO` (a few dozen microseconds) says when they may have changed.
//!
//! A node's topology is asked on its first poll (and the first after a failure or a reconnect),
//! when what its `CLUSTER INFO` says about the topology differs from what it said at the last
//! fetch (epochs, state, slot counts, known nodes, size), when the calls of its slot and membership
//! commands (`CLUSTER SETSLOT`, `ADDSLOTS`, `FORGET`, …, from its `commandstats`) changed since the
//! last fetch, when its `ASK` replies grew since the previous poll (a slot is mid-migration:
//! `SETSLOT … MIGRATING/IMPORTING` changes no epoch), and on every `every`-th poll of its own phase
//! (a digest of its address): the safety net of 100 nodes is spread over the `every` rounds
//! instead of falling on one round for all (a burst of the largest replies on every node at
//! once, which the scale bench saw as the slowest round and the slowest calls).
//! `MOVED` is not a reason: it rises all through a redirection storm, with nothing changed.

use slotscope_core::info::{InfoReport, CLUSTER_INFO_SECTION};

/// `record --topology-every` by default: the whole topology at the latest every 10 polls.
pub const DEFAULT_TOPOLOGY_EVERY: u32 = 10;

/// `CLUSTER INFO` fields that change when the node's view of the topology does.
const TOPOLOGY_FIELDS: &[&str] = &[
    "cluster_state",
    "cluster_slots_assigned",
    "cluster_slots_ok",
    "cluster_slots_pfail",
    "cluster_slots_fail",
    "cluster_known_nodes",
    "cluster_size",
    "cluster_current_epoch",
    "cluster_my_epoch",
];

/// Commands (as `commandstats` names them) that change slot ownership or membership on the node
/// that runs them, some without changing an epoch (`SETSLOT … MIGRATING`, a `SETSLOT … NODE` to a
/// node that already has the greatest epoch).
const TOPOLOGY_COMMANDS: &[&str] = &[
    "cluster|setslot",
    "cluster|addslots",
    "cluster|addslotsrange",
    "cluster|delslots",
    "cluster|delslotsrange",
    "cluster|flushslots",
    "cluster|forget",
    "cluster|meet",
    "cluster|replicate",
    "cluster|failover",
    "cluster|reset",
    "cluster|bumpepoch",
    "cluster|set-config-epoch",
];

/// What a node's `INFO` and `CLUSTER INFO` say about its topology, compared between polls.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Marks {
    fields: Vec<Option<String>>,
    topology_calls: u64,
}

impl Marks {
    fn of(info: &InfoReport) -> Marks {
        Marks {
            fields: TOPOLOGY_FIELDS
                .iter()
                .map(|f| info.get(CLUSTER_INFO_SECTION, f).map(str::to_owned))
                .collect(),
            topology_calls: TOPOLOGY_COMMANDS
                .iter()
                .filter_map(|c| info.commandstats.get(*c))
                .map(|c| c.calls)
                .sum(),
        }
    }
}

/// One node's record of when its topology was last asked, and what it said then.
#[derive(Clone, Debug)]
pub struct TopologyWatch {
    every: u64,
    /// The marks at the last fetch; `None` until one succeeded (or after a failure).
    at_fetch: Option<Marks>,
    /// Polls so far.
    polls: u64,
    /// The node's phase in `0..every`: its periodic fetches are the polls `p` with
    /// `(p + phase) % every == 0`.
    phase: u64,
    /// `errorstat_ASK` at the previous poll.
    last_ask: Option<u64>,
}

impl TopologyWatch {
    /// A watch that asks at the latest every `every` polls (`1`: every poll).
    pub fn new(every: u32) -> TopologyWatch {
        TopologyWatch {
            every: u64::from(every.max(1)),
            at_fetch: None,
            polls: 0,
            phase: 0,
            last_ask: None,
        }
    }

    /// The same watch with its periodic fetches at the phase `name` (the node's address) gives:
    /// a digest of it modulo `every`.
    pub fn phased(mut self, name: &str) -> TopologyWatch {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.phase = h % self.every;
        self
    }

    /// The poll phase of the periodic fetches (see [`TopologyWatch::phased`]).
    #[cfg(test)]
    pub fn phase(&self) -> u64 {
        self.phase
    }

    /// Whether this poll asks the topology whatever `INFO` says: the first poll, the first after
    /// [`TopologyWatch::forget`], or a poll of the node's periodic phase (so at the latest every
    /// `every` polls). Decided before the poll, so the topology goes in the same pipeline as
    /// `INFO`.
    pub fn due(&self) -> bool {
        self.at_fetch.is_none() || (self.polls + self.phase).is_multiple_of(self.every)
    }

    /// Whether this poll's `INFO` (with `CLUSTER INFO` in it; `None` when it failed) says the
    /// topology may have changed since the last fetch. Remembers the `ASK` count for the next poll.
    pub fn changed(&mut self, info: Option<&InfoReport>) -> bool {
        let Some(info) = info else {
            return true;
        };
        let ask = info.errorstats.get("ASK").copied().unwrap_or(0);
        let ask_grew = self.last_ask.is_some_and(|last| ask > last);
        self.last_ask = Some(ask);
        ask_grew || self.at_fetch.as_ref() != Some(&Marks::of(info))
    }

    /// The topology was asked and read this poll, with `info` from the same poll.
    pub fn fetched(&mut self, info: &InfoReport) {
        self.at_fetch = Some(Marks::of(info));
        self.polls += 1;
    }

    /// This poll did not ask the topology.
    pub fn skipped(&mut self) {
        self.polls += 1;
    }

    /// The next poll asks the topology (a failure, a reconnect, a new file).
    pub fn forget(&mut self) {
        self.at_fetch = None;
        self.last_ask = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(epoch: u64, ask: u64, setslot: u64) -> InfoReport {
        info_moved(epoch, ask, 0, setslot)
    }

    fn info_moved(epoch: u64, ask: u64, moved: u64, setslot: u64) -> InfoReport {
        let text = format!(
            "# Errorstats\r\nerrorstat_ASK:count={ask}\r\nerrorstat_MOVED:count={moved}\r\n\
             # Commandstats\r\ncmdstat_cluster|setslot:calls={setslot},usec=1,usec_per_call=1.00\r\n"
        );
        let mut r = InfoReport::parse(&text).unwrap();
        r.sections.insert(
            CLUSTER_INFO_SECTION.to_owned(),
            [
                ("cluster_state".to_owned(), "ok".to_owned()),
                ("cluster_current_epoch".to_owned(), epoch.to_string()),
                ("cluster_my_epoch".to_owned(), "1".to_owned()),
            ]
            .into(),
        );
        r
    }

    /// Runs one poll: whether the topology was asked.
    fn poll(w: &mut TopologyWatch, i: &InfoReport) -> bool {
        let due = w.due();
        let changed = w.changed(Some(i));
        if due || changed {
            w.fetched(i);
            true
        } else {
            w.skipped();
            false
        }
    }

    #[test]
    fn asked_first_then_every_n_polls() {
        let mut w = TopologyWatch::new(4);
        let quiet = info(5, 0, 0);
        let asked: Vec<bool> = (0..10).map(|_| poll(&mut w, &quiet)).collect();
        assert_eq!(
            asked,
            [true, false, false, false, true, false, false, false, true, false]
        );
    }

    #[test]
    fn the_periodic_fetches_of_many_nodes_are_spread_over_the_rounds() {
        let quiet = info(5, 0, 0);
        let mut per_round = [0u32; 10];
        for n in 0..100 {
            let mut w = TopologyWatch::new(10).phased(&format!("10.0.0.1:{}", 7000 + n));
            for round in 0..40usize {
                let asked = poll(&mut w, &quiet);
                if round >= 10 && asked {
                    per_round[round % 10] += 1;
                }
            }
        }
        // Rounds 10–39, three of each phase: every round has some, none has most.
        let most = per_round.iter().max().unwrap();
        assert!(per_round.iter().all(|&c| c > 0), "{per_round:?}");
        assert!(*most <= 3 * 25, "{per_round:?}");
        // Still at the latest every 10 polls.
        let mut w = TopologyWatch::new(10).phased("10.0.0.1:7003");
        let asked: Vec<bool> = (0..30).map(|_| poll(&mut w, &quiet)).collect();
        let mut last = 0;
        for (i, a) in asked.iter().enumerate().skip(1) {
            if *a {
                assert!(i - last <= 10, "{asked:?}");
                last = i;
            }
        }
        assert!(asked.len() - last <= 10);
    }

    #[test]
    fn asked_when_info_says_the_topology_changed() {
        let mut w = TopologyWatch::new(100);
        assert!(poll(&mut w, &info(5, 0, 0)), "first poll");
        assert!(!poll(&mut w, &info(5, 0, 0)));
        // An epoch changes: asked once, then quiet again.
        assert!(poll(&mut w, &info(6, 0, 0)));
        assert!(!poll(&mut w, &info(6, 0, 0)));
        // MOVED grows with ASK unchanged: nothing; ASK grows: asked.
        assert!(
            !poll(&mut w, &info_moved(6, 0, 500, 0)),
            "MOVED is no reason"
        );
        assert!(poll(&mut w, &info(6, 3, 0)), "ASK grew");
        assert!(!poll(&mut w, &info(6, 3, 0)), "ASK stayed");
        // A SETSLOT ran on the node (no epoch changed).
        assert!(poll(&mut w, &info(6, 3, 1)));
        assert!(!poll(&mut w, &info(6, 3, 1)));
        // A failure: the next poll asks.
        w.forget();
        assert!(poll(&mut w, &info(6, 3, 1)));
        assert!(!poll(&mut w, &info(6, 3, 1)));
        // No INFO: ask.
        assert!(w.changed(None));
    }

    #[test]
    fn every_one_asks_every_poll() {
        let mut w = TopologyWatch::new(1);
        let quiet = info(5, 0, 0);
        assert!((0..5).all(|_| poll(&mut w, &quiet)));
    }
}
