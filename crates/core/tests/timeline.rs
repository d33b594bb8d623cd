//! The cluster timeline against a plain reference on recordings drawn at random: 2–6 nodes, random
//! slot layouts (some slots unassigned), migrations, reporters in random order, departures.
//!
//! The reference is the rule each consumer followed before the timeline: per-slot owner ids of
//! every view, kept per reporting address. The seed is printed; `SLOTSCOPE_SEED=N` replays one.

use std::collections::{BTreeMap, BTreeSet};

use slotscope_core::recording::{GoneReason, Line, NodeGone, TopologySample};
use slotscope_core::replay::SimRng;
use slotscope_core::timeline::{ClusterTimeline, NodeIdx, MOVE_GAP_MS};
use slotscope_core::topology::TopologyView;
use slotscope_core::{NodeAddr, NodeId, NodeRef, Slot, Timestamp};

mod common;

use common::seed;

const RECORDINGS: usize = 40;

fn id(n: usize) -> NodeId {
    NodeId::new(format!("{n:040x}")).expect("non-empty id")
}

fn addr(n: usize) -> NodeAddr {
    NodeAddr::new("10.0.0.1", 7000 + u16::try_from(n).expect("few nodes")).expect("address")
}

/// Random owner ranges: the slot space cut in 1–8 runs, each owned by a random node or none.
fn layout(rng: &mut SimRng, nodes: usize) -> Vec<(u16, u16, Option<usize>)> {
    let cuts = 1 + rng.below(8);
    let mut bounds: BTreeSet<u16> = BTreeSet::new();
    for _ in 1..cuts {
        bounds.insert(u16::try_from(1 + rng.below(16_383)).expect("slot"));
    }
    let mut starts: Vec<u16> = std::iter::once(0).chain(bounds).collect();
    starts.push(16_384);
    starts
        .windows(2)
        .map(|w| {
            let owner = rng.below(u64::try_from(nodes).expect("few") + 1);
            let owner = usize::try_from(owner).expect("small");
            (w[0], w[1] - 1, (owner < nodes).then_some(owner))
        })
        .collect()
}

/// `CLUSTER NODES` of `nodes` nodes as reported by `me`, with `layout`, and `me` migrating
/// `migrating` slots to their targets.
fn view(
    nodes: usize,
    me: usize,
    layout: &[(u16, u16, Option<usize>)],
    migrating: &[(u16, usize)],
) -> TopologyView {
    let mut text = String::new();
    for n in 0..nodes {
        let flags = if n == me { "myself,master" } else { "master" };
        let mut slots: Vec<String> = layout
            .iter()
            .filter(|(_, _, o)| *o == Some(n))
            .map(|(a, b, _)| format!("{a}-{b}"))
            .collect();
        if n == me {
            slots.extend(
                migrating
                    .iter()
                    .map(|(s, to)| format!("[{s}->-{}]", id(*to))),
            );
        }
        let port = 7000 + n;
        text.push_str(&format!(
            "{} 10.0.0.1:{port}@{} {flags} - 0 0 {} connected {}\n",
            id(n),
            port + 10_000,
            n + 1,
            slots.join(" ")
        ));
    }
    TopologyView::from_nodes(&text).expect("valid CLUSTER NODES")
}

/// One random recording's lines.
fn recording(rng: &mut SimRng) -> Vec<Line> {
    let nodes = 2 + usize::try_from(rng.below(5)).expect("small");
    let samples = 1 + rng.below(30);
    let mut t = 1_000u64;
    let mut lines = Vec::new();
    let mut current = layout(rng, nodes);
    for _ in 0..samples {
        // Most samples repeat the layout (a poll with no change); some change it.
        if rng.below(3) == 0 {
            current = layout(rng, nodes);
        }
        let me = usize::try_from(rng.below(u64::try_from(nodes).expect("few"))).expect("small");
        let migrating: Vec<(u16, usize)> = (0..rng.below(3))
            .map(|_| {
                let s = u16::try_from(rng.below(16_384)).expect("slot");
                let to = usize::try_from(rng.below(u64::try_from(nodes).expect("few")));
                (s, to.expect("small"))
            })
            .collect();
        lines.push(Line::Topology(TopologySample {
            t: Timestamp(t),
            node: NodeRef {
                addr: addr(me),
                id: Some(id(me)),
            },
            view: view(nodes, me, &current, &migrating),
        }));
        if rng.below(15) == 0 {
            let gone = usize::try_from(rng.below(u64::try_from(nodes).expect("few")));
            let gone = gone.expect("small");
            lines.push(Line::NodeGone(NodeGone {
                t: Timestamp(t),
                node: NodeRef {
                    addr: addr(gone),
                    id: Some(id(gone)),
                },
                reason: GoneReason::LeftTopology,
            }));
        }
        // Usually one poll interval, sometimes a gap longer than the move grouping's.
        t += if rng.below(10) == 0 {
            MOVE_GAP_MS + 1 + rng.below(10_000)
        } else {
            1 + rng.below(2_000)
        };
    }
    lines
}

/// The owner ids of a view, slot by slot.
fn owners(v: &TopologyView) -> Vec<Option<NodeId>> {
    (0..16_384)
        .filter_map(Slot::new)
        .map(|s| v.owner_of(s).cloned())
        .collect()
}

/// The owners before and after a change.
type Pair = (Option<NodeId>, Option<NodeId>);

/// A move as compared: (from, to, slots, first, last + 1).
type Move = (Option<NodeId>, Option<NodeId>, usize, u64, u64);

/// The reference: per reporting address the last owner vector; each (slot, before, after) change
/// at the first time any reporter showed it, grouped per pair with the gap rule; votes of the
/// latest views of the reporters still in the topology.
fn reference(lines: &[Line]) -> (Vec<Move>, Vec<Option<NodeId>>, usize) {
    let mut last: BTreeMap<NodeAddr, Vec<Option<NodeId>>> = BTreeMap::new();
    let mut views: BTreeMap<NodeAddr, Vec<Option<NodeId>>> = BTreeMap::new();
    type Change = (u16, Option<NodeId>, Option<NodeId>);
    let mut first: BTreeMap<Change, u64> = BTreeMap::new();
    for line in lines {
        match line {
            Line::Topology(s) => {
                let now = owners(&s.view);
                if let Some(prev) = last.get(&s.node.addr) {
                    for (slot, (a, b)) in prev.iter().zip(&now).enumerate() {
                        if a != b {
                            let slot = u16::try_from(slot).expect("slot");
                            first.entry((slot, a.clone(), b.clone())).or_insert(s.t.0);
                        }
                    }
                }
                last.insert(s.node.addr.clone(), now.clone());
                views.insert(s.node.addr.clone(), now);
            }
            Line::NodeGone(g) => {
                views.remove(&g.node.addr);
            }
            _ => {}
        }
    }
    let mut by_pair: BTreeMap<Pair, Vec<(u64, u16)>> = BTreeMap::new();
    for ((slot, a, b), t) in first {
        by_pair.entry((a, b)).or_default().push((t, slot));
    }
    let mut moves = Vec::new();
    for ((a, b), mut changes) in by_pair {
        changes.sort_unstable();
        let mut group: Vec<(u64, u16)> = Vec::new();
        let mut flush = |group: &mut Vec<(u64, u16)>| {
            if let (Some(f), Some(l)) = (group.first(), group.last()) {
                moves.push((a.clone(), b.clone(), group.len(), f.0, l.0 + 1));
            }
            group.clear();
        };
        for c in changes {
            if group.last().is_some_and(|l| c.0 - l.0 > MOVE_GAP_MS) {
                flush(&mut group);
            }
            group.push(c);
        }
        flush(&mut group);
    }
    moves.sort();
    let mut consensus = Vec::new();
    let mut disputed = 0;
    for slot in 0..16_384 {
        let mut votes: BTreeMap<Option<NodeId>, usize> = BTreeMap::new();
        for v in views.values() {
            *votes.entry(v[slot].clone()).or_default() += 1;
        }
        disputed += usize::from(votes.len() > 1);
        consensus.push(
            votes
                .into_iter()
                .max_by_key(|(o, n)| (*n, o.is_some()))
                .and_then(|(o, _)| o),
        );
    }
    (moves, consensus, disputed)
}

#[test]
fn the_timeline_agrees_with_the_reference_on_random_recordings() {
    let seed = seed();
    eprintln!("timeline: {RECORDINGS} random recordings, SLOTSCOPE_SEED={seed}");
    let mut rng = SimRng::new(seed);
    let (mut moved, mut disputed_somewhere) = (0, 0);
    for k in 0..RECORDINGS {
        let lines = recording(&mut rng);
        let mut tl = ClusterTimeline::new();
        for line in &lines {
            tl.push(line);
            // The state after each sample is that sample's owners.
            if let Line::Topology(s) = line {
                let state = tl.state_at(s.t).expect("a state after a sample");
                let ids: Vec<Option<NodeId>> = state
                    .owners
                    .as_slice()
                    .iter()
                    .map(|o| o.and_then(|n: NodeIdx| tl.nodes().id(n)).cloned())
                    .collect();
                assert_eq!(
                    ids,
                    owners(&s.view),
                    "seed {seed}, recording {k}, t {}",
                    s.t.0
                );
            }
        }
        let (moves, consensus, disputed) = reference(&lines);
        let id_of = |n: Option<NodeIdx>| n.and_then(|n| tl.nodes().id(n)).cloned();
        let mut got: Vec<Move> = tl
            .moves()
            .into_iter()
            .map(|m| {
                (
                    id_of(m.from),
                    id_of(m.to),
                    m.slots,
                    m.span.start.0,
                    m.span.end.0,
                )
            })
            .collect();
        got.sort();
        assert_eq!(got, moves, "seed {seed}, recording {k}: moves");
        moved += moves.len();
        let c = tl.consensus();
        let got: Vec<Option<NodeId>> = c.owners.as_slice().iter().map(|&o| id_of(o)).collect();
        assert_eq!(
            c.disagreements, disputed,
            "seed {seed}, recording {k}: disputes"
        );
        assert_eq!(got, consensus, "seed {seed}, recording {k}: consensus");
        disputed_somewhere += usize::from(disputed > 0);
    }
    eprintln!("timeline: {moved} moves, {disputed_somewhere} recordings with disputed slots");
    // The draw exercised what it checks.
    assert!(
        moved > 0 && disputed_somewhere > 0,
        "seed {seed}: a vacuous draw"
    );
}
