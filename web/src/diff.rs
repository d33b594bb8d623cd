//! The topology diff between two instants: which slot ranges changed owner (coalesced), and which
//! nodes joined or left the cluster. Pure data, tested natively.

use std::collections::BTreeSet;

use slotscope_core::timeline::NodeIdx;
use slotscope_core::track::{Layout, Tracks};
use slotscope_core::{SlotRange, Timestamp};

use crate::state::ViewState;

/// A run of consecutive slots that changed owner the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moved {
    /// The slots.
    pub range: SlotRange,
    /// The owner at A (node index), `None` when unassigned.
    pub from: Option<usize>,
    /// The owner at B (node index), `None` when unassigned.
    pub to: Option<usize>,
}

/// What changed between two instants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyDiff {
    /// Ranges whose owner changed, ascending.
    pub moved: Vec<Moved>,
    /// Nodes in the cluster at B but not at A (node indices).
    pub added: Vec<usize>,
    /// Nodes in the cluster at A but not at B (node indices).
    pub removed: Vec<usize>,
}

impl TopologyDiff {
    /// How many slots changed owner.
    pub fn slots_moved(&self) -> usize {
        self.moved.iter().map(|m| m.range.len()).sum()
    }

    /// One line: "8192 slots moved, 1 node added" (or "no change").
    pub fn summary(&self) -> String {
        let plural = |n: usize, one: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {one}s")
            }
        };
        let mut parts = Vec::new();
        let slots = self.slots_moved();
        if slots > 0 {
            parts.push(format!("{} moved", plural(slots, "slot")));
        }
        if !self.added.is_empty() {
            parts.push(format!("{} added", plural(self.added.len(), "node")));
        }
        if !self.removed.is_empty() {
            parts.push(format!("{} removed", plural(self.removed.len(), "node")));
        }
        if parts.is_empty() {
            "no change".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

/// The instants compared by default: the selection's ends if there is a selection, else the
/// start of the visible window and the cursor (the window's end without a cursor).
pub fn default_instants(state: &ViewState) -> (u64, u64) {
    match state.selection {
        Some(s) => s,
        None => (state.window.0, state.cursor.unwrap_or(state.window.1)),
    }
}

/// Ranges whose owner differs between layouts `a` and `b` (a missing layout owns nothing),
/// consecutive slots with the same change coalesced.
pub fn moved(a: Option<&Layout>, b: Option<&Layout>) -> Vec<Moved> {
    let table = |l: Option<&Layout>| l.map(Layout::slot_table).unwrap_or_default();
    table(a)
        .diff(&table(b))
        .into_iter()
        .map(|c| Moved {
            range: c.range,
            from: c.from.map(NodeIdx::index),
            to: c.to.map(NodeIdx::index),
        })
        .collect()
}

/// The instant the topology is known from: `t`, or the first layout's time when `t` precedes it
/// (a recording starts before its first topology poll completes).
fn known(tracks: &Tracks, t: u64) -> u64 {
    tracks.layouts.first().map_or(t, |l| t.max(l.t.as_millis()))
}

/// The nodes in the cluster at `t` (or when the topology is first known, if later): those owning
/// slots or taking part in a migration, and those whose last node event by then is not "left".
pub fn members(tracks: &Tracks, t: u64) -> BTreeSet<usize> {
    let t = known(tracks, t);
    let mut out = BTreeSet::new();
    if let Some(l) = tracks.layout_at(Timestamp(t)) {
        out.extend(l.owners.iter().map(|(_, n)| *n));
        out.extend(l.migrating.iter().flat_map(|(_, a, b)| [*a, *b]));
    }
    let mut last: Vec<Option<bool>> = vec![None; tracks.nodes.len()];
    for e in tracks.node_events.iter().filter(|e| e.t.as_millis() <= t) {
        if let Some(slot) = e.node.and_then(|n| last.get_mut(n)) {
            *slot = Some(e.kind != "left");
        }
    }
    out.extend(
        last.iter()
            .enumerate()
            .filter(|(_, p)| **p == Some(true))
            .map(|(n, _)| n),
    );
    out
}

/// The topology diff of `tracks` from `a` to `b` (epoch milliseconds; an instant before the first
/// layout compares that first layout).
pub fn diff(tracks: &Tracks, a: u64, b: u64) -> TopologyDiff {
    let (ma, mb) = (members(tracks, a), members(tracks, b));
    let layout = |t: u64| tracks.layout_at(Timestamp(known(tracks, t)));
    TopologyDiff {
        moved: moved(layout(a), layout(b)),
        added: mb.difference(&ma).copied().collect(),
        removed: ma.difference(&mb).copied().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::fixture;
    use crate::state::Action;
    use slotscope_core::track::{Grid, Mark, Series};
    use slotscope_core::NodeAddr;

    fn range(a: u16, b: u16) -> SlotRange {
        SlotRange::try_from((a, b)).unwrap()
    }

    fn layout(t: u64, owners: &[(u16, u16, usize)]) -> Layout {
        Layout {
            t: Timestamp(t),
            owners: owners.iter().map(|&(a, b, n)| (range(a, b), n)).collect(),
            migrating: Vec::new(),
        }
    }

    fn tracks(layouts: Vec<Layout>, events: Vec<(u64, usize, &str)>) -> Tracks {
        let empty = || Series {
            label: String::new(),
            values: Vec::new(),
        };
        Tracks {
            grid: Grid {
                start: Timestamp(0),
                bucket_ms: 1000,
                buckets: 100,
            },
            nodes: (0..4)
                .map(|i| NodeAddr::new("10.0.0.1", 7000 + i).unwrap())
                .collect(),
            node_rate: Vec::new(),
            moved_share: Vec::new(),
            errors: Vec::new(),
            new_connections: empty(),
            new_connections_by_node: Vec::new(),
            open_connections: empty(),
            refreshes: empty(),
            layouts,
            node_events: events
                .into_iter()
                .map(|(t, n, kind)| Mark {
                    t: Timestamp(t),
                    end: None,
                    node: Some(n),
                    kind: kind.into(),
                    text: String::new(),
                })
                .collect(),
            poll_failures: Vec::new(),
            annotations: Vec::new(),
        }
    }

    #[test]
    fn moved_ranges_are_coalesced_per_change() {
        let a = layout(0, &[(0, 8191, 0), (8192, 16383, 1)]);
        // Node 2 takes 100..=199 from node 0 and 8192..=8291 from node 1; 16000.. becomes unowned.
        let b = layout(
            10,
            &[
                (0, 99, 0),
                (100, 199, 2),
                (200, 8191, 0),
                (8192, 8291, 2),
                (8292, 15999, 1),
            ],
        );
        let m = moved(Some(&a), Some(&b));
        assert_eq!(
            m,
            vec![
                Moved {
                    range: range(100, 199),
                    from: Some(0),
                    to: Some(2)
                },
                Moved {
                    range: range(8192, 8291),
                    from: Some(1),
                    to: Some(2)
                },
                Moved {
                    range: range(16000, 16383),
                    from: Some(1),
                    to: None
                },
            ]
        );
        let d = TopologyDiff {
            moved: m,
            ..TopologyDiff::default()
        };
        assert_eq!(d.slots_moved(), 584);
        assert_eq!(d.summary(), "584 slots moved");
    }

    #[test]
    fn the_same_layout_is_no_change() {
        let a = layout(0, &[(0, 16383, 0)]);
        let t = tracks(vec![a.clone()], vec![(0, 0, "discovered")]);
        let d = diff(&t, 0, 50_000);
        assert_eq!(d, TopologyDiff::default());
        assert_eq!(d.summary(), "no change");
        assert_eq!(moved(Some(&a), Some(&a)), vec![]);
        assert_eq!(moved(None, None), vec![]);
    }

    #[test]
    fn nodes_added_and_removed_follow_layouts_and_events() {
        let t = tracks(
            vec![
                layout(0, &[(0, 8191, 0), (8192, 16383, 1)]),
                layout(20_000, &[(0, 8191, 0), (8192, 16383, 2)]),
            ],
            vec![
                (0, 0, "discovered"),
                (0, 1, "discovered"),
                (0, 3, "discovered"),
                (10_000, 2, "discovered"),
                (15_000, 3, "left"),
                (30_000, 1, "left"),
            ],
        );
        // Node 2 joins empty at 10 s: a member before it owns anything.
        assert_eq!(members(&t, 12_000), [0, 1, 2, 3].into_iter().collect());
        let d = diff(&t, 1_000, 40_000);
        assert_eq!(d.added, vec![2]);
        assert_eq!(d.removed, vec![1, 3]);
        assert_eq!(
            d.moved,
            vec![Moved {
                range: range(8192, 16383),
                from: Some(1),
                to: Some(2)
            }]
        );
        assert_eq!(
            d.summary(),
            "8192 slots moved, 1 node added, 2 nodes removed"
        );
        // Backwards, the other way round.
        let back = diff(&t, 40_000, 1_000);
        assert_eq!((back.added, back.removed), (vec![1, 3], vec![2]));
    }

    #[test]
    fn the_default_instants_are_the_selection_or_window_start_to_cursor() {
        let s = ViewState::default().reduce(Action::loaded("r", (10_000, 20_000)));
        assert_eq!(default_instants(&s), (10_000, 10_000));
        let s = s.reduce(Action::SetCursor(15_000));
        assert_eq!(default_instants(&s), (10_000, 15_000));
        let s = s.reduce(Action::Select(12_000, 18_000));
        assert_eq!(default_instants(&s), (12_000, 18_000));
    }

    #[test]
    fn incident_1_moves_the_upper_half_to_the_new_node() {
        let data = fixture("incident1-redis-py-5.0.0-valkey");
        let (a, b) = data.span();
        let d = diff(&data.tracks, a, b);
        assert_eq!(d.moved.len(), 1, "{d:?}");
        let m = d.moved[0];
        assert_eq!(m.range, range(8192, 16383));
        let to = m.to.expect("a new owner");
        assert_ne!(m.from, Some(to));
        assert_eq!(d.added, vec![to], "{:?}", data.tracks.nodes);
        assert!(d.removed.is_empty());
        assert_eq!(d.summary(), "8192 slots moved, 1 node added");
        // The recording starts a few milliseconds before its first layout: that one is compared.
        assert!(data.tracks.layout_at(Timestamp(a)).is_none());
    }
}
