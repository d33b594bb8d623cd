//! Connections someone else closed: every rise of a node's `CLIENT KILL` count (`INFO
//! commandstats`, `cmdstat_client|kill`; the collector never sends it) is a moment the node
//! closed client connections. A replayed client loses there what it had open to that node: its
//! next command on such a connection writes to a closed socket and reads end-of-file at once (a
//! connection error), and a command in flight at the moment loses its reply.
//!
//! The moment lies between the two `INFO` samples the count rose between (the count is sampled
//! once per poll): its window. A replay takes the middle of each window; where that is too
//! coarse for the answer (a client whose cycle is shorter than the window), `moments.rs`
//! replays other moments of the windows too. Every connection of the client to the node is
//! taken as killed: the count tells how many calls ran, not whose connections they closed
//! (`CLIENT KILL TYPE normal` closes many in one call, `CLIENT KILL ID` one).

use super::places::place;
use crate::time::Timestamp;
use crate::timeline::NodeIdx;

/// The `commandstats` name of the command counted.
pub(super) const KILL_COMMAND: &str = "client|kill";

/// Folds the `CLIENT KILL` counts of every node's samples into kill moments.
#[derive(Clone, Debug, Default)]
pub(super) struct KillTrack {
    /// Per node (cluster number): its last sample (time, count).
    last: Vec<Option<(Timestamp, u64)>>,
    /// Every kill found: (node, its window's first and last moment).
    kills: Vec<(NodeIdx, Timestamp, Timestamp)>,
}

impl KillTrack {
    /// Node `node`'s count `count` sampled at `t`. A rise since the node's previous sample is a
    /// kill; the first sample only sets the count (kills before the recording are not replayed);
    /// a fall (the server restarted) starts over from it.
    pub(super) fn sample(&mut self, node: NodeIdx, t: Timestamp, count: u64) {
        let i = node.index();
        if self.last.len() <= i {
            self.last.resize(i + 1, None);
        }
        if let Some((was_t, was)) = self.last[i] {
            if count > was && t > was_t {
                self.kills.push((node, was_t, t));
            }
        }
        self.last[i] = Some((t, count));
    }

    /// Adds a kill of `node`'s client connections at `t` (a window of one moment).
    pub(super) fn add(&mut self, node: NodeIdx, t: Timestamp) {
        self.kills.push((node, t, t));
    }

    /// The kill windows (node, first and last moment), by node then time.
    pub(super) fn windows(&self) -> Vec<(NodeIdx, Timestamp, Timestamp)> {
        let mut k = self.kills.clone();
        k.sort_unstable();
        k.dedup();
        k
    }
}

/// The moments of `windows` (as [`KillTrack::windows`] gives them) at the `k`-th of `n` even
/// places in each window ([`place`]), by node then time.
pub(super) fn moments_at(
    windows: &[(NodeIdx, Timestamp, Timestamp)],
    k: u64,
    n: u64,
) -> Vec<(NodeIdx, Timestamp)> {
    let mut m: Vec<_> = windows
        .iter()
        .map(|&(node, from, to)| (node, place(from, to, k, n)))
        .collect();
    m.sort_unstable();
    m.dedup();
    m
}

/// The first of `kills` (sorted by node then time, as [`KillTrack::moments`] gives them) of
/// `node` after `after` and at or before `until`.
pub(super) fn first_kill(
    kills: &[(NodeIdx, Timestamp)],
    node: NodeIdx,
    after: Timestamp,
    until: Timestamp,
) -> Option<Timestamp> {
    let i = kills.partition_point(|&(n, t)| (n, t) <= (node, after));
    kills
        .get(i)
        .filter(|&&(n, t)| n == node && t <= until)
        .map(|&(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::InfoReport;
    use crate::node::{NodeAddr, NodeRef};
    use crate::recording::{InfoSample, Line};
    use crate::replay::SimClusterBuilder;
    use crate::slot::SlotRange;

    fn node(i: usize) -> NodeIdx {
        NodeIdx::new(i).expect("small index")
    }

    /// An `INFO` sample of `node` at `t` with `kills` `CLIENT KILL` calls (none: no counter).
    fn info(node: &str, t: u64, kills: Option<u64>) -> Line {
        let mut text = "# Server\r\nuptime_in_seconds:5\r\n# Commandstats\r\n".to_owned();
        if let Some(k) = kills {
            text.push_str(&format!(
                "cmdstat_client|kill:calls={k},usec=3,usec_per_call=0.5\r\n"
            ));
        }
        Line::Info(InfoSample {
            t: Timestamp(t),
            node: NodeRef {
                addr: node.parse().expect("address"),
                id: None,
            },
            latency_us: 100,
            info: InfoReport::parse(&text).expect("INFO text"),
        })
    }

    #[test]
    fn a_recording_s_client_kill_counts_become_the_cluster_s_kills() {
        let (a, b): (NodeAddr, NodeAddr) = (
            "10.0.0.1:6379".parse().unwrap(),
            "10.0.0.2:6379".parse().unwrap(),
        );
        let mut builder = SimClusterBuilder::new();
        let all = SlotRange::try_from((0, 16383)).expect("range");
        builder.layout(Timestamp(0), &[(all, a.clone())], &[]);
        builder.add_node(&b);
        for line in [
            info("10.0.0.1:6379", 1_000, None),
            info("10.0.0.2:6379", 1_000, Some(2)),
            info("10.0.0.1:6379", 1_500, None),
            // A's first kills: the counter appears.
            info("10.0.0.1:6379", 2_000, Some(7)),
            // B's count stays: kills before the recording are not replayed.
            info("10.0.0.2:6379", 2_000, Some(2)),
            info("10.0.0.1:6379", 2_500, Some(7)),
            // A node only its samples name counts as well.
            info("10.0.0.9:6379", 2_500, Some(9)),
            info("10.0.0.9:6379", 3_000, Some(10)),
        ] {
            builder.push(&line);
        }
        builder.kill(&b, Timestamp(4_000));
        let cluster = builder.build();
        assert_eq!(
            cluster.kills(),
            [
                (a.clone(), Timestamp(1_750)),
                (b.clone(), Timestamp(4_000)),
                ("10.0.0.9:6379".parse().unwrap(), Timestamp(2_750)),
            ]
        );
        let ia = cluster.node_index(&a).expect("A");
        assert_eq!(
            cluster.killed(ia, Timestamp(1_000), Timestamp(1_800)),
            Some(Timestamp(1_750))
        );
        assert_eq!(cluster.killed(ia, Timestamp(1_750), Timestamp(9_000)), None);
    }

    #[test]
    fn a_rise_of_the_count_is_a_kill_between_the_samples() {
        let mut k = KillTrack::default();
        k.sample(node(1), Timestamp(1_000), 6);
        k.sample(node(1), Timestamp(1_500), 6);
        k.sample(node(0), Timestamp(1_400), 0);
        k.sample(node(1), Timestamp(2_000), 12);
        k.sample(node(1), Timestamp(2_500), 3);
        k.sample(node(1), Timestamp(3_000), 4);
        let m = moments_at(&k.windows(), 0, 1);
        assert_eq!(
            m,
            [(node(1), Timestamp(1_750)), (node(1), Timestamp(2_750))]
        );
        // The first and last of five places: a tenth of the window in, a tenth before its end.
        assert_eq!(
            moments_at(&k.windows(), 0, 5),
            [(node(1), Timestamp(1_550)), (node(1), Timestamp(2_550))]
        );
        assert_eq!(
            moments_at(&k.windows(), 4, 5),
            [(node(1), Timestamp(1_950)), (node(1), Timestamp(2_950))]
        );
        assert_eq!(moments_at(&k.windows(), 2, 5), m);
        assert_eq!(
            first_kill(&m, node(1), Timestamp(0), Timestamp(1_750)),
            Some(Timestamp(1_750))
        );
        assert_eq!(
            first_kill(&m, node(1), Timestamp(0), Timestamp(1_749)),
            None
        );
        assert_eq!(
            first_kill(&m, node(1), Timestamp(1_750), Timestamp(9_000)),
            Some(Timestamp(2_750))
        );
        assert_eq!(
            first_kill(&m, node(0), Timestamp(0), Timestamp(9_000)),
            None
        );
        assert_eq!(
            first_kill(&m, node(2), Timestamp(0), Timestamp(9_000)),
            None
        );
    }
}
