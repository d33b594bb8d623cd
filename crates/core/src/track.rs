//! Tracks: what a postmortem timeline shows, folded from a recording onto one time grid.
//!
//! Every series shares one grid: buckets of the recording's poll interval from its first line.
//! A node's `INFO` interval (between two of its samples) spreads its rate over the buckets it
//! covers; shares (MOVED ÷ attempts) are counted in the bucket where the interval ends. A bucket
//! without data is `NaN` (a gap, not a zero). Marks (poll failures, node events, annotations) and
//! slot layouts keep their own times.
//!
//! Built with [`TracksBuilder`] line by line (so a caller can parse in chunks and show progress),
//! the same on native and in the browser.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::float;
use crate::metrics::{is_business_command, ms_to_secs, Metrics};
use crate::node::NodeAddr;
use crate::recording::{Discovery, FailureKind, GoneReason, Header, Line};
use crate::slot::{Slot, SlotRange};
use crate::time::{TimeSpan, Timestamp};
use crate::timeline::{ClusterState, ClusterTimeline, NodeIdx, SlotTable};

/// Values on the grid, one per bucket (`NaN`: no data, written as `null` in JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// What it is: a node address, a command, an error prefix.
    pub label: String,
    /// One value per bucket of the grid.
    #[serde(deserialize_with = "nan_from_null")]
    pub values: Vec<f32>,
}

/// Reads values written by [`Series`]'s `Serialize`: JSON has no NaN, serde_json writes `null`.
fn nan_from_null<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f32>, D::Error> {
    let values = Vec::<Option<f32>>::deserialize(d)?;
    Ok(values.into_iter().map(|v| v.unwrap_or(f32::NAN)).collect())
}

impl Series {
    fn new(label: impl Into<String>, buckets: usize) -> Series {
        Series {
            label: label.into(),
            values: vec![f32::NAN; buckets],
        }
    }

    /// The largest value (0 when there is none).
    pub fn max(&self) -> f32 {
        self.values
            .iter()
            .copied()
            .filter(|v| !v.is_nan())
            .fold(0.0, f32::max)
    }

    /// Whether any bucket has a value above zero.
    pub fn is_active(&self) -> bool {
        self.values.iter().any(|&v| v > 0.0)
    }
}

/// The buckets every series shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    /// Start of bucket 0.
    pub start: Timestamp,
    /// Bucket length in milliseconds (the recording's poll interval, at least 1).
    pub bucket_ms: u64,
    /// Number of buckets.
    pub buckets: usize,
}

impl Grid {
    /// The bucket holding `t`, if inside the grid.
    pub fn bucket(&self, t: Timestamp) -> Option<usize> {
        if t < self.start {
            return None;
        }
        let i = usize::try_from(t.millis_since(self.start) / self.bucket_ms).ok()?;
        (i < self.buckets).then_some(i)
    }

    /// Start of bucket `i`.
    pub fn time(&self, i: usize) -> Timestamp {
        let i = u64::try_from(i).unwrap_or(u64::MAX);
        Timestamp(
            self.start
                .0
                .saturating_add(i.saturating_mul(self.bucket_ms)),
        )
    }

    /// The whole grid as a span.
    pub fn span(&self) -> TimeSpan {
        TimeSpan::new(self.start, self.time(self.buckets))
    }

    /// Buckets `first..last` that overlap `span` (clamped to the grid).
    pub fn range(&self, span: TimeSpan) -> std::ops::Range<usize> {
        let first = if span.start <= self.start {
            0
        } else {
            usize::try_from(span.start.millis_since(self.start) / self.bucket_ms)
                .unwrap_or(usize::MAX)
                .min(self.buckets)
        };
        let end_ms = span.end.0.saturating_sub(self.start.0);
        let last = usize::try_from(end_ms.div_ceil(self.bucket_ms))
            .unwrap_or(usize::MAX)
            .min(self.buckets);
        first..last.max(first)
    }
}

/// Something that happened at a time (and maybe lasted).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// When.
    pub t: Timestamp,
    /// Until when, for what spans time.
    pub end: Option<Timestamp>,
    /// The node concerned (index into [`Tracks::nodes`]), if any.
    pub node: Option<usize>,
    /// A short kind: `timeout`, `connect`, `discovered`, `left`, `unreachable`, an annotation's
    /// source, …
    pub kind: String,
    /// What it says.
    pub text: String,
}

/// The slot layout from one instant on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// From when.
    pub t: Timestamp,
    /// Owner ranges, ascending (node indices into [`Tracks::nodes`]).
    pub owners: Vec<(SlotRange, usize)>,
    /// Ranges being migrated: `(slots, source, target)`.
    pub migrating: Vec<(SlotRange, usize, usize)>,
}

impl Layout {
    /// The owners as a slot table (node numbers are the indices into [`Tracks::nodes`]).
    pub fn slot_table(&self) -> SlotTable {
        let ranges: Vec<(SlotRange, NodeIdx)> = self
            .owners
            .iter()
            .filter_map(|&(r, n)| Some((r, NodeIdx::new(n)?)))
            .collect();
        SlotTable::from_ranges(&ranges)
    }

    /// The owner of `slot` (node index), if any.
    pub fn owner(&self, slot: Slot) -> Option<usize> {
        let i = self.owners.partition_point(|(r, _)| r.end() < slot);
        self.owners
            .get(i)
            .filter(|(r, _)| r.contains(slot))
            .map(|(_, n)| *n)
    }
}

/// Everything a timeline shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tracks {
    /// The shared grid.
    pub grid: Grid,
    /// Every node seen, by first appearance; indices are what the rest uses.
    pub nodes: Vec<NodeAddr>,
    /// Per node: business commands per second (label: the address).
    pub node_rate: Vec<Series>,
    /// Per business command: MOVED ÷ attempts, all nodes (label: the command).
    pub moved_share: Vec<Series>,
    /// Per `errorstats` prefix: errors per second, all nodes (label: the prefix).
    pub errors: Vec<Series>,
    /// Connections accepted per second, all nodes.
    pub new_connections: Series,
    /// New connections per second of each node (index as [`Tracks::nodes`]), labelled with its
    /// address: where the churn is.
    pub new_connections_by_node: Vec<Series>,
    /// Open client connections (`connected_clients`), all nodes.
    pub open_connections: Series,
    /// Topology refreshes by clients (`CLUSTER SLOTS` + `CLUSTER SHARDS` calls) per second.
    pub refreshes: Series,
    /// Slot layouts in time order.
    pub layouts: Vec<Layout>,
    /// Nodes discovered, gone, unreachable, recovered.
    pub node_events: Vec<Mark>,
    /// Polls that failed.
    pub poll_failures: Vec<Mark>,
    /// Outside evidence.
    pub annotations: Vec<Mark>,
}

impl Tracks {
    /// The layout at `t` (the last one starting at or before it).
    pub fn layout_at(&self, t: Timestamp) -> Option<&Layout> {
        let i = self.layouts.partition_point(|l| l.t <= t);
        self.layouts.get(i.checked_sub(1)?)
    }

    /// Every series, in one fixed order (for moving their values in bulk): the per-node rates,
    /// MOVED shares, errors, new connections, new connections per node, open connections,
    /// refreshes.
    pub fn series_mut(&mut self) -> impl Iterator<Item = &mut Series> {
        self.node_rate
            .iter_mut()
            .chain(&mut self.moved_share)
            .chain(&mut self.errors)
            .chain(std::iter::once(&mut self.new_connections))
            .chain(&mut self.new_connections_by_node)
            .chain(std::iter::once(&mut self.open_connections))
            .chain(std::iter::once(&mut self.refreshes))
    }

    /// The index of node `addr`, if seen.
    pub fn node_index(&self, addr: &NodeAddr) -> Option<usize> {
        self.nodes.iter().position(|a| a == addr)
    }
}

/// Folds a recording into [`Tracks`], together with the [`Metrics`] and the [`ClusterTimeline`]
/// of the same lines (folded by the caller, usually an [`crate::analysis::Analyzer`], so each line
/// is folded once).
#[derive(Clone)]
pub struct TracksBuilder {
    header: Header,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    /// Node events and poll failures, each with the address of its node (numbered at the end).
    node_events: Vec<(Mark, NodeAddr)>,
    poll_failures: Vec<(Mark, NodeAddr)>,
    annotations: Vec<Mark>,
}

/// Grids larger than this many buckets get longer buckets (a week at 1 s is 604,800).
pub const MAX_BUCKETS: u64 = 1_000_000;

impl TracksBuilder {
    /// A builder for the recording that starts with `header`.
    pub fn new(header: &Header) -> TracksBuilder {
        TracksBuilder {
            header: header.clone(),
            first: None,
            last: None,
            node_events: Vec::new(),
            poll_failures: Vec::new(),
            annotations: Vec::new(),
        }
    }

    /// Folds one line (after the header).
    pub fn push(&mut self, line: &Line) {
        let t = line.time();
        self.first = Some(self.first.map_or(t, |f| f.min(t)));
        self.last = Some(self.last.map_or(t, |l| l.max(t)));
        match line {
            Line::NodeDiscovered(d) => {
                let kind = match d.via {
                    Discovery::Recovered => "recovered",
                    _ => "discovered",
                };
                self.node_events.push((
                    Mark {
                        t: d.t,
                        end: None,
                        node: None,
                        kind: kind.into(),
                        text: format!("{} {kind}", d.node.addr),
                    },
                    d.node.addr.clone(),
                ));
            }
            Line::NodeGone(g) => {
                let kind = match g.reason {
                    GoneReason::LeftTopology => "left",
                    GoneReason::Unreachable => "unreachable",
                };
                self.node_events.push((
                    Mark {
                        t: g.t,
                        end: None,
                        node: None,
                        kind: kind.into(),
                        text: format!("{} {kind}", g.node.addr),
                    },
                    g.node.addr.clone(),
                ));
            }
            Line::PollFailed(f) => {
                let kind = match f.kind {
                    FailureKind::Timeout => "timeout",
                    FailureKind::Connect => "connect",
                    FailureKind::Auth => "auth",
                    FailureKind::Io => "io",
                    FailureKind::ServerError => "server_error",
                    FailureKind::Protocol => "protocol",
                };
                self.poll_failures.push((
                    Mark {
                        t: f.t,
                        end: None,
                        node: None,
                        kind: kind.into(),
                        text: format!("{} {}: {}", f.node.addr, f.step, f.error),
                    },
                    f.node.addr.clone(),
                ));
            }
            Line::Annotation(a) => self.annotations.push(Mark {
                t: a.t,
                end: a.end,
                node: None,
                kind: a.source.clone(),
                text: a.text.clone(),
            }),
            _ => {}
        }
    }

    /// The tracks, with `metrics` and `timeline` folded from the same lines. Nodes are numbered
    /// as in the timeline; a node only the metrics know (folded from other lines) comes after.
    pub fn finish(self, metrics: &Metrics, timeline: &ClusterTimeline) -> Tracks {
        let start = self.first.unwrap_or(self.header.started);
        let end = self.last.unwrap_or(start);
        let span_ms = end.millis_since(start).saturating_add(1);
        let mut bucket_ms = self.header.options.interval_ms.max(1);
        if span_ms / bucket_ms > MAX_BUCKETS {
            bucket_ms = span_ms.div_ceil(MAX_BUCKETS);
        }
        let buckets = usize::try_from(span_ms.div_ceil(bucket_ms)).unwrap_or(0);
        let grid = Grid {
            start,
            bucket_ms,
            buckets,
        };
        let mut nodes = timeline.nodes().addrs();
        let index = |addr: &NodeAddr, nodes: &mut Vec<NodeAddr>| -> usize {
            if let Some(n) = timeline.nodes().find_addr(addr) {
                return n.index();
            }
            if let Some(i) = nodes.iter().position(|a| a == addr) {
                return i;
            }
            nodes.push(addr.clone());
            nodes.len() - 1
        };
        // Per node rates, and sums over nodes.
        let mut node_rate = Vec::new();
        let mut conns_by_node: Vec<Option<Series>> = Vec::new();
        let mut new_conn = vec![0f64; buckets];
        let mut open = vec![0f64; buckets];
        let mut refresh = vec![0f64; buckets];
        let mut covered = vec![false; buckets];
        let mut open_seen = vec![false; buckets];
        let mut errors: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let mut attempts: BTreeMap<String, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
        for nm in &metrics.nodes {
            let n = index(&nm.addr, &mut nodes);
            if node_rate.len() <= n {
                node_rate.resize_with(n + 1, || None);
            }
            let mut rate = Series::new(nm.addr.to_string(), buckets);
            let mut node_conns = Series::new(nm.addr.to_string(), buckets);
            for i in &nm.intervals {
                let secs = ms_to_secs(i.span.millis().max(1));
                let range = grid.range(i.span);
                let per_sec = |x: u64| float::from_u64(x) / secs;
                let business = per_sec(i.business().calls);
                let conns = per_sec(i.connections_received);
                let slots =
                    per_sec(i.command("cluster|slots").calls + i.command("cluster|shards").calls);
                for b in range.clone() {
                    rate.values[b] = to_f32(business);
                    // Summed as the cluster's total is (two intervals may share a bucket).
                    let v = &mut node_conns.values[b];
                    *v = if v.is_nan() { 0.0 } else { *v } + to_f32(conns);
                    new_conn[b] += conns;
                    refresh[b] += slots;
                    covered[b] = true;
                    for (prefix, &count) in &i.errors {
                        errors
                            .entry(prefix.clone())
                            .or_insert_with(|| vec![0.0; buckets])[b] += per_sec(count);
                    }
                }
                if let Some(b) = grid.bucket(i.span.end).or(range.end.checked_sub(1)) {
                    if let Some(c) = i.connected_clients {
                        open[b] += float::from_u64(c);
                        open_seen[b] = true;
                    }
                    for (cmd, d) in i.commands.iter().filter(|(c, _)| is_business_command(c)) {
                        let e = attempts
                            .entry(cmd.clone())
                            .or_insert_with(|| (vec![0; buckets], vec![0; buckets]));
                        e.0[b] += d.attempts();
                        e.1[b] += d.rejected;
                    }
                }
            }
            node_rate[n] = Some(rate);
            if conns_by_node.len() <= n {
                conns_by_node.resize_with(n + 1, || None);
            }
            conns_by_node[n] = Some(node_conns);
        }
        let node_rate: Vec<Series> = node_rate
            .into_iter()
            .enumerate()
            .map(|(i, s)| s.unwrap_or_else(|| Series::new(nodes[i].to_string(), buckets)))
            .collect();
        let new_connections_by_node: Vec<Series> = (0..node_rate.len())
            .map(|i| {
                conns_by_node
                    .get_mut(i)
                    .and_then(Option::take)
                    .unwrap_or_else(|| Series::new(nodes[i].to_string(), buckets))
            })
            .collect();
        let summed = |label: &str, v: &[f64], seen: &[bool]| Series {
            label: label.to_owned(),
            values: v
                .iter()
                .zip(seen)
                .map(|(&x, &s)| if s { to_f32(x) } else { f32::NAN })
                .collect(),
        };
        let moved_share = attempts
            .into_iter()
            .map(|(cmd, (att, rej))| Series {
                label: cmd,
                values: att
                    .iter()
                    .zip(&rej)
                    .map(|(&a, &r)| {
                        if a == 0 {
                            f32::NAN
                        } else {
                            to_f32(float::from_u64(r) / float::from_u64(a))
                        }
                    })
                    .collect(),
            })
            .collect();
        let errors = errors
            .into_iter()
            .map(|(prefix, v)| summed(&prefix, &v, &covered))
            .collect();
        let layouts = timeline.states().iter().map(layout).collect();
        let marks = |list: Vec<(Mark, NodeAddr)>, nodes: &mut Vec<NodeAddr>| -> Vec<Mark> {
            list.into_iter()
                .map(|(m, addr)| Mark {
                    node: Some(index(&addr, nodes)),
                    ..m
                })
                .collect()
        };
        let node_events = marks(self.node_events, &mut nodes);
        let poll_failures = marks(self.poll_failures, &mut nodes);
        Tracks {
            grid,
            node_rate,
            moved_share,
            errors,
            new_connections: summed("new connections/s", &new_conn, &covered),
            new_connections_by_node,
            open_connections: summed("open connections", &open, &open_seen),
            refreshes: summed("CLUSTER SLOTS+SHARDS/s", &refresh, &covered),
            layouts,
            node_events,
            poll_failures,
            annotations: self.annotations,
            nodes,
        }
    }
}

/// A state of the timeline as a layout (node numbers are the timeline's), migrations grouped
/// into ranges of one (source, target) pair.
fn layout(state: &ClusterState) -> Layout {
    let mut moving: Vec<(SlotRange, usize, usize)> = Vec::new();
    for m in &state.migrating {
        let (from, to) = (m.from.index(), m.to.index());
        match moving.last_mut() {
            Some((r, f, g))
                if *f == from
                    && *g == to
                    && u32::from(r.end().get()) + 1 == u32::from(m.slot.get()) =>
            {
                if let Some(grown) = SlotRange::new(r.start(), m.slot) {
                    *r = grown;
                }
            }
            _ => moving.push((SlotRange::single(m.slot), from, to)),
        }
    }
    Layout {
        t: state.start,
        owners: state.ranges.iter().map(|&(r, n)| (r, n.index())).collect(),
        migrating: moving,
    }
}

/// `x` as `f32` (values here are rates and shares, far inside `f32`'s range).
fn to_f32(x: f64) -> f32 {
    // Narrowing is the point: a display value.
    #[allow(clippy::cast_possible_truncation)]
    let v = x as f32;
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_buckets_and_ranges() {
        let g = Grid {
            start: Timestamp(1000),
            bucket_ms: 500,
            buckets: 10,
        };
        assert_eq!(g.bucket(Timestamp(999)), None);
        assert_eq!(g.bucket(Timestamp(1000)), Some(0));
        assert_eq!(g.bucket(Timestamp(1499)), Some(0));
        assert_eq!(g.bucket(Timestamp(1500)), Some(1));
        assert_eq!(g.bucket(Timestamp(6000)), None);
        assert_eq!(g.time(3), Timestamp(2500));
        assert_eq!(
            g.range(TimeSpan::new(Timestamp(1200), Timestamp(2100))),
            0..3
        );
        assert_eq!(
            g.range(TimeSpan::new(Timestamp(0), Timestamp(99_999))),
            0..10
        );
        assert_eq!(
            g.range(TimeSpan::new(Timestamp(9000), Timestamp(9999))),
            10..10
        );
    }

    #[test]
    fn series_max_skips_gaps() {
        let s = Series {
            label: "x".into(),
            values: vec![f32::NAN, 2.0, 5.0, f32::NAN],
        };
        assert_eq!(s.max(), 5.0);
        assert!(s.is_active());
        assert!(!Series::new("y", 3).is_active());
    }
}
