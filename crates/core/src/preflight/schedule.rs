//! A [`Plan`] carried out on a starting cluster, on paper: each step checked against the cluster
//! as the steps before leave it at that moment (the nodes it names exist and are up, the slots it
//! moves are the source's, a node removed owns nothing, a failover's master has a replica), and
//! the whole written out as what the simulated cluster needs: the slot owners from each moment
//! on, the slot being migrated, and the nodes' faults. A move carries its slots one after the
//! other at its rate, as `redis-cli --cluster reshard` does; a rebalance moves the last slots of
//! the masters above an even share to those below, one pair after the other.

use std::collections::BTreeMap;

use crate::slot::{Slot, SlotRange, SLOT_COUNT};

/// A move's slots land together in ticks of this many milliseconds (one layout each).
const TICK_MS: u64 = 100;

/// Slots in the keyspace, as an index bound.
const SLOTS: usize = SLOT_COUNT as usize;

use super::plan::{promotion_ms, Action, Plan, PlanError, Slots};
use super::start::Start;

/// How a planned fault shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlannedFaultKind {
    /// No answer (a stall).
    Timeout,
    /// Refused connections (killed, removed, or an old address).
    ConnectionError,
}

/// A node failing from `from_ms` to `until_ms` (`None`: to the end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedFault {
    /// The node, an index into [`Schedule::nodes`].
    pub node: usize,
    /// From, milliseconds from the plan's start.
    pub from_ms: u64,
    /// Until.
    pub until_ms: Option<u64>,
    /// How.
    pub kind: PlannedFaultKind,
}

/// The slot owners from a moment on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedLayout {
    /// From, milliseconds from the plan's start.
    pub at_ms: u64,
    /// Owners: ranges and node indices.
    pub owners: Vec<(SlotRange, usize)>,
    /// The slot in migration, with its source and target.
    pub migrating: Option<(Slot, usize, usize)>,
}

/// A plan carried out on paper.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Every node: the start's masters and replicas (by address), then the added ones (by name).
    pub nodes: Vec<String>,
    /// How many of `nodes` are the start's.
    pub start_nodes: usize,
    /// The layouts, in time order (the first at 0 ms, the start).
    pub layouts: Vec<PlannedLayout>,
    /// The faults.
    pub faults: Vec<PlannedFault>,
    /// Address changes: when, which node, its new address.
    pub addresses: Vec<(u64, usize, String)>,
    /// The replicas from a moment on (`(replica, master)` node indices), the start's at 0 ms,
    /// then after each failover or removal, in time order.
    pub replicas: Vec<(u64, Vec<(usize, usize)>)>,
    /// Each step written out, with what it resolved to.
    pub written: Vec<String>,
    /// When the last change ends, milliseconds from the plan's start.
    pub end_ms: u64,
}

/// A slot's owner changing at a moment (`migrating` while it moves).
#[derive(Clone, Copy, Debug)]
struct Change {
    slot: u16,
    to: usize,
    /// The source while the slot migrates, until `at`.
    migrating_from: Option<(usize, u64)>,
}

/// The paper cluster while the steps are checked.
struct Paper {
    nodes: Vec<String>,
    replica_of: BTreeMap<usize, usize>,
    /// Slot owners at the start.
    start: Vec<Option<usize>>,
    /// Owner changes by time.
    changes: BTreeMap<u64, Vec<Change>>,
    /// Down from, per node (killed, removed).
    down: BTreeMap<usize, u64>,
    faults: Vec<PlannedFault>,
    addresses: Vec<(u64, usize, String)>,
    /// `replica_of` from a moment on, as [`Schedule::replicas`].
    replica_sets: Vec<(u64, Vec<(usize, usize)>)>,
    end_ms: u64,
}

impl Paper {
    /// The replicas from `at` on are `replica_of` as it is now.
    fn replicas_from(&mut self, at: u64) {
        let pairs = self.replica_of.iter().map(|(&r, &m)| (r, m)).collect();
        self.replica_sets.push((at, pairs));
    }

    fn node(&self, name: &str, step: usize) -> Result<usize, PlanError> {
        self.nodes.iter().position(|n| n == name).ok_or_else(|| {
            PlanError::at(
                step,
                format!(
                    "no node {name:?} in the recording or the plan (known: {})",
                    self.nodes.join(", ")
                ),
            )
        })
    }

    fn up(&self, node: usize, at: u64, step: usize) -> Result<usize, PlanError> {
        match self.down.get(&node) {
            Some(&t) if t <= at => Err(PlanError::at(
                step,
                format!("{} is down or removed by then", self.nodes[node]),
            )),
            _ => Ok(node),
        }
    }

    /// The owners at `at` (changes at `at` included).
    fn owners_at(&self, at: u64) -> Vec<Option<usize>> {
        let mut owners = self.start.clone();
        for changes in self.changes.range(..=at).map(|(_, c)| c) {
            for c in changes {
                owners[usize::from(c.slot)] = Some(c.to);
            }
        }
        owners
    }

    /// Moves `slots` from `from` to `to`, one after the other at `rate` a second from `at`;
    /// returns when the last one lands.
    fn carry(&mut self, slots: &[u16], from: usize, to: usize, rate: u32, at: u64) -> u64 {
        let per = 1000.0 / f64::from(rate);
        let mut end = at;
        for (k, &slot) in slots.iter().enumerate() {
            let begin = at + (crate::float::from_u64(k as u64) * per) as u64;
            // Slots land at the end of their tick, a layout a tick at most.
            let lands = at + (crate::float::from_u64(k as u64 + 1) * per).ceil() as u64;
            end = lands.div_ceil(TICK_MS) * TICK_MS;
            self.changes.entry(end).or_default().push(Change {
                slot,
                to,
                migrating_from: Some((from, begin)),
            });
        }
        self.end_ms = self.end_ms.max(end);
        end
    }
}

/// The slots `owners` gives `node`, in order.
fn slots_of(owners: &[Option<usize>], node: usize) -> Vec<u16> {
    (0..SLOT_COUNT)
        .filter(|&s| owners[usize::from(s)] == Some(node))
        .collect()
}

/// Consecutive slots as ranges (`5-9, 12`).
fn ranges_text(slots: &[u16]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(u16, u16)> = None;
    for &s in slots {
        run = match run {
            Some((a, b)) if b + 1 == s => Some((a, s)),
            Some((a, b)) => {
                out.push(if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                });
                Some((s, s))
            }
            None => Some((s, s)),
        };
    }
    if let Some((a, b)) = run {
        out.push(if a == b {
            a.to_string()
        } else {
            format!("{a}-{b}")
        });
    }
    out.join(", ")
}

fn secs(ms: u64) -> String {
    crate::time::format_millis(ms)
}

impl Schedule {
    /// `plan` carried out on `start`.
    ///
    /// # Errors
    ///
    /// The first step that cannot be carried out, with its index: a node neither the start nor
    /// an earlier step has, a node down by then, slots the source does not own at that moment, a
    /// removed node that still owns slots, a failover of a master without a replica, a name
    /// given twice.
    pub fn of(plan: &Plan, start: &Start) -> Result<Schedule, PlanError> {
        let mut nodes: Vec<String> = start.masters.iter().map(|(a, _)| a.clone()).collect();
        for (r, m) in &start.replicas {
            for n in [r, m] {
                if !nodes.contains(n) {
                    nodes.push(n.clone());
                }
            }
        }
        let mut owners = vec![None; SLOTS];
        for (i, (_, ranges)) in start.masters.iter().enumerate() {
            for r in ranges {
                for s in r.start().get()..=r.end().get() {
                    owners[usize::from(s)] = Some(i);
                }
            }
        }
        let replica_of = start
            .replicas
            .iter()
            .filter_map(|(r, m)| {
                Some((
                    nodes.iter().position(|n| n == r)?,
                    nodes.iter().position(|n| n == m)?,
                ))
            })
            .collect();
        let mut p = Paper {
            nodes,
            replica_of,
            start: owners,
            changes: BTreeMap::new(),
            down: BTreeMap::new(),
            faults: Vec::new(),
            addresses: Vec::new(),
            replica_sets: Vec::new(),
            end_ms: 0,
        };
        p.replicas_from(0);
        let start_nodes = p.nodes.len();
        let mut written = Vec::new();
        for (i, step) in plan.steps.iter().enumerate() {
            let at = step.at_ms;
            p.end_ms = p.end_ms.max(at);
            let line = match &step.action {
                Action::AddMaster { name } => {
                    if p.nodes.contains(name) {
                        return Err(PlanError::at(i, format!("{name:?} is already a node")));
                    }
                    p.nodes.push(name.clone());
                    format!("a new master {name} joins, owning no slot")
                }
                Action::Move {
                    slots: Slots::Rebalance,
                    rate,
                    ..
                } => rebalance(&mut p, at, *rate, i)?,
                Action::Move {
                    slots,
                    from,
                    to,
                    rate,
                } => {
                    let from = p.up(p.node(from, i)?, at, i)?;
                    let to = p.up(p.node(to, i)?, at, i)?;
                    let owners = p.owners_at(at);
                    let theirs = slots_of(&owners, from);
                    let chosen: Vec<u16> = match slots {
                        Slots::Range(r) => {
                            let wanted: Vec<u16> = (r.start().get()..=r.end().get()).collect();
                            let not: Vec<u16> = wanted
                                .iter()
                                .copied()
                                .filter(|s| owners[usize::from(*s)] != Some(from))
                                .collect();
                            if !not.is_empty() {
                                return Err(PlanError::at(
                                    i,
                                    format!(
                                        "slots {} are not {}'s at {}",
                                        ranges_text(&not),
                                        p.nodes[from],
                                        secs(at)
                                    ),
                                ));
                            }
                            wanted
                        }
                        Slots::Count(n) => {
                            let n = usize::from(*n);
                            if n > theirs.len() {
                                return Err(PlanError::at(
                                    i,
                                    format!(
                                        "{} owns {} slots at {}, not {n}",
                                        p.nodes[from],
                                        theirs.len(),
                                        secs(at)
                                    ),
                                ));
                            }
                            theirs[theirs.len() - n..].to_vec()
                        }
                        Slots::Rebalance => unreachable!("handled above"),
                    };
                    let end = p.carry(&chosen, from, to, *rate, at);
                    format!(
                        "{} slots ({}) move from {} to {} at {rate}/s, until {}",
                        chosen.len(),
                        ranges_text(&chosen),
                        p.nodes[from],
                        p.nodes[to],
                        secs(end)
                    )
                }
                Action::Stall { node, for_ms } => {
                    let n = p.up(p.node(node, i)?, at, i)?;
                    p.faults.push(PlannedFault {
                        node: n,
                        from_ms: at,
                        until_ms: Some(at + for_ms),
                        kind: PlannedFaultKind::Timeout,
                    });
                    p.end_ms = p.end_ms.max(at + for_ms);
                    format!("{node} answers nothing for {}", secs(*for_ms))
                }
                Action::Kill { node } => {
                    let n = p.up(p.node(node, i)?, at, i)?;
                    kill(&mut p, n, at);
                    format!("{node} is killed and does not come back")
                }
                Action::Failover {
                    replica_of,
                    after_kill,
                    node_timeout_ms,
                } => {
                    let m = p.up(p.node(replica_of, i)?, at, i)?;
                    let Some(r) = p
                        .replica_of
                        .iter()
                        .find(|(r, master)| **master == m && !p.down.contains_key(r))
                        .map(|(r, _)| *r)
                    else {
                        return Err(PlanError::at(
                            i,
                            format!("{replica_of} has no replica in the recording"),
                        ));
                    };
                    let when = if *after_kill {
                        kill(&mut p, m, at);
                        at + promotion_ms(*node_timeout_ms)
                    } else {
                        at
                    };
                    let theirs = slots_of(&p.owners_at(when), m);
                    for &slot in &theirs {
                        p.changes.entry(when).or_default().push(Change {
                            slot,
                            to: r,
                            migrating_from: None,
                        });
                    }
                    p.replica_of.remove(&r);
                    if !*after_kill {
                        p.replica_of.insert(m, r);
                    }
                    p.replicas_from(when);
                    p.end_ms = p.end_ms.max(when);
                    if *after_kill {
                        format!(
                            "{replica_of} is killed; its replica {} takes over its {} slots at {} \
                             (node timeout {}, the FAIL reports and the election)",
                            p.nodes[r],
                            theirs.len(),
                            secs(when),
                            secs(*node_timeout_ms)
                        )
                    } else {
                        format!(
                            "CLUSTER FAILOVER: {replica_of}'s replica {} takes over its {} slots; \
                             {replica_of} becomes its replica",
                            p.nodes[r],
                            theirs.len()
                        )
                    }
                }
                Action::Remove { node } => {
                    let n = p.up(p.node(node, i)?, at, i)?;
                    let left = slots_of(&p.owners_at(at), n);
                    // A move still carrying its slots away lands later than `at`.
                    let pending = p.changes.range(at + 1..).any(|(_, cs)| {
                        cs.iter()
                            .any(|c| c.migrating_from.is_some_and(|(f, _)| f == n))
                    });
                    if !left.is_empty() || pending {
                        return Err(PlanError::at(
                            i,
                            format!(
                                "{node} still owns slots at {} ({}): move them first",
                                secs(at),
                                ranges_text(&left)
                            ),
                        ));
                    }
                    kill(&mut p, n, at);
                    p.replica_of.retain(|r, m| *r != n && *m != n);
                    p.replicas_from(at);
                    format!("{node} leaves the cluster")
                }
                Action::AddressChange { node, to } => {
                    let n = p.up(p.node(node, i)?, at, i)?;
                    p.addresses.push((at, n, to.clone()));
                    format!("{node} is reached at {to} from then on")
                }
            };
            written.push(format!("at {}: {line}", secs(at)));
        }
        p.replica_sets.sort_by_key(|(t, _)| *t);
        Ok(Schedule {
            start_nodes,
            layouts: layouts(&p),
            replicas: p.replica_sets,
            nodes: p.nodes,
            faults: p.faults,
            addresses: p.addresses,
            written,
            end_ms: p.end_ms,
        })
    }
}

/// `node` down from `at` to the end.
fn kill(p: &mut Paper, node: usize, at: u64) {
    p.down.insert(node, at);
    p.faults.push(PlannedFault {
        node,
        from_ms: at,
        until_ms: None,
        kind: PlannedFaultKind::ConnectionError,
    });
}

/// Every master up at `at` to an even share: the last slots of those above it to those below,
/// pair after pair, one move after the other.
fn rebalance(p: &mut Paper, at: u64, rate: u32, step: usize) -> Result<String, PlanError> {
    let owners = p.owners_at(at);
    let masters: Vec<usize> = (0..p.nodes.len())
        .filter(|n| !p.down.contains_key(n) && !p.replica_of.contains_key(n))
        .collect();
    if masters.is_empty() {
        return Err(PlanError::at(step, "no master up to rebalance"));
    }
    let share = SLOTS / masters.len();
    let extra = SLOTS % masters.len();
    let target = |k: usize| share + usize::from(k < extra);
    let mut have: Vec<Vec<u16>> = masters.iter().map(|&m| slots_of(&owners, m)).collect();
    let mut t = at;
    let mut moved = Vec::new();
    loop {
        let donor = (0..masters.len()).find(|&k| have[k].len() > target(k));
        let taker = (0..masters.len()).find(|&k| have[k].len() < target(k));
        let (Some(d), Some(r)) = (donor, taker) else {
            break;
        };
        let n = (have[d].len() - target(d)).min(target(r) - have[r].len());
        let keep = have[d].len() - n;
        let give: Vec<u16> = have[d].split_off(keep);
        have[r].extend(&give);
        t = p.carry(&give, masters[d], masters[r], rate, t);
        moved.push(format!(
            "{} slots ({}) from {} to {}",
            give.len(),
            ranges_text(&give),
            p.nodes[masters[d]],
            p.nodes[masters[r]]
        ));
    }
    Ok(if moved.is_empty() {
        "rebalance: already even".to_owned()
    } else {
        format!(
            "rebalance at {rate}/s, until {}: {}",
            secs(t),
            moved.join("; ")
        )
    })
}

/// The owners after each moment a slot changes hands, the slot in migration included.
fn layouts(p: &Paper) -> Vec<PlannedLayout> {
    let mut owners = p.start.clone();
    let snapshot = |owners: &[Option<usize>]| {
        let mut out: Vec<(SlotRange, usize)> = Vec::new();
        for (s, o) in owners.iter().enumerate() {
            let (Some(o), Ok(s)) = (o, u16::try_from(s)) else {
                continue;
            };
            let Some(slot) = Slot::new(s) else { continue };
            match out.last_mut() {
                Some((r, n)) if *n == *o && r.end().get() + 1 == s => {
                    *r = SlotRange::new(r.start(), slot).unwrap_or(*r);
                }
                _ => out.push((SlotRange::single(slot), *o)),
            }
        }
        out
    };
    let mut out = vec![PlannedLayout {
        at_ms: 0,
        owners: snapshot(&owners),
        migrating: None,
    }];
    for (&t, changes) in &p.changes {
        for c in changes {
            owners[usize::from(c.slot)] = Some(c.to);
        }
        // The next slot of a move in progress, migrating from now.
        let next = p
            .changes
            .range(t + 1..)
            .next()
            .into_iter()
            .flat_map(|(_, cs)| cs.iter())
            .find_map(|c| {
                let (from, begin) = c.migrating_from?;
                (begin <= t).then(|| (Slot::new(c.slot), from, c.to))
            })
            .and_then(|(s, f, to)| Some((s?, f, to)));
        out.push(PlannedLayout {
            at_ms: t,
            owners: snapshot(&owners),
            migrating: next,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::plan::parse_range;

    fn start() -> Start {
        let r = |t: &str| parse_range(t).unwrap();
        Start {
            masters: vec![
                ("a:1".into(), vec![r("0-5460")]),
                ("b:1".into(), vec![r("5461-10922")]),
                ("c:1".into(), vec![r("10923-16383")]),
            ],
            replicas: vec![("ra:1".into(), "a:1".into())],
        }
    }

    fn schedule(json: &str) -> Result<Schedule, PlanError> {
        Schedule::of(&Plan::from_json(json).unwrap(), &start())
    }

    fn owner_of(s: &Schedule, slot: u16, at: u64) -> Option<String> {
        let l = s.layouts.iter().rev().find(|l| l.at_ms <= at)?;
        l.owners
            .iter()
            .find(|(r, _)| r.start().get() <= slot && slot <= r.end().get())
            .map(|(_, n)| s.nodes[*n].clone())
    }

    #[test]
    fn a_scale_out_rebalances_onto_the_new_master() {
        let s = schedule(
            r#"{"steps": [{"at": "0s", "add_master": "new1"},
                          {"at": "5s", "move": {"slots": "rebalance", "rate": "1000/s"}}]}"#,
        )
        .unwrap();
        let last = s.layouts.last().unwrap();
        let mut count: BTreeMap<usize, usize> = BTreeMap::new();
        for (r, n) in &last.owners {
            *count.entry(*n).or_default() += r.len();
        }
        assert_eq!(count.values().copied().collect::<Vec<_>>(), [4096; 4]);
        // 4096 slots at 1000/s from 5 s, in three moves (one a donor) each ending on a tick.
        assert_eq!(s.end_ms, 9_200);
        assert!(s.layouts.len() <= 43, "{}", s.layouts.len());
        assert_eq!(owner_of(&s, 0, 4_999).as_deref(), Some("a:1"));
        assert_eq!(owner_of(&s, 16383, 20_000).as_deref(), Some("new1"));
        assert!(
            s.written[1].starts_with("at 5.0s: rebalance at 1000/s"),
            "{:?}",
            s.written
        );
        // While it runs, one slot migrates.
        assert!(s.layouts[1..s.layouts.len() - 1]
            .iter()
            .all(|l| l.migrating.is_some()));
    }

    #[test]
    fn a_manual_failover_hands_the_slots_to_the_replica() {
        let s =
            schedule(r#"{"steps": [{"at": "2s", "failover": {"replica_of": "a:1"}}]}"#).unwrap();
        assert_eq!(owner_of(&s, 100, 1_999).as_deref(), Some("a:1"));
        assert_eq!(owner_of(&s, 100, 2_000).as_deref(), Some("ra:1"));
        assert!(s.faults.is_empty());
        // The replicas: ra:1 of a:1 from the start, a:1 of ra:1 once they swapped.
        let named = |pairs: &[(usize, usize)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|&(r, m)| (s.nodes[r].clone(), s.nodes[m].clone()))
                .collect()
        };
        assert_eq!(s.replicas.len(), 2);
        assert_eq!(s.replicas[0].0, 0);
        assert_eq!(named(&s.replicas[0].1), [("ra:1".into(), "a:1".into())]);
        assert_eq!(s.replicas[1].0, 2_000);
        assert_eq!(named(&s.replicas[1].1), [("a:1".into(), "ra:1".into())]);
        let k = schedule(
            r#"{"steps": [{"at": "2s", "failover": {"replica_of": "a:1", "after_kill": true, "node_timeout": "5s"}}]}"#,
        )
        .unwrap();
        // The node timeout, half of it more for the FAIL reports, and the replica's wait.
        assert_eq!(owner_of(&k, 100, 10_249).as_deref(), Some("a:1"));
        assert_eq!(owner_of(&k, 100, 10_250).as_deref(), Some("ra:1"));
        assert_eq!(k.faults[0].kind, PlannedFaultKind::ConnectionError);
        // Killed, the old master is no replica: none is left once its replica took over.
        assert_eq!(
            k.replicas.last().map(|(t, p)| (*t, p.len())),
            Some((10_250, 0))
        );
    }

    #[test]
    fn steps_that_cannot_be_carried_out_name_their_index() {
        let e = schedule(r#"{"steps": [{"at": "0s", "stall": {"node": "z:9", "for": "1s"}}]}"#)
            .unwrap_err();
        assert_eq!(e.step, Some(0));
        assert!(e.message.contains("no node \"z:9\""), "{e}");
        let e = schedule(
            r#"{"steps": [{"at": "0s", "move": {"slots": "0-6000", "from": "a:1", "to": "b:1"}}]}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("slots 5461-6000 are not a:1's"), "{e}");
        let e = schedule(r#"{"steps": [{"at": "0s", "remove": "c:1"}]}"#).unwrap_err();
        assert!(e.message.contains("still owns slots"), "{e}");
        let e = schedule(r#"{"steps": [{"at": "0s", "failover": {"replica_of": "b:1"}}]}"#)
            .unwrap_err();
        assert!(e.message.contains("no replica"), "{e}");
        let e = schedule(
            r#"{"steps": [{"at": "0s", "kill": "b:1"}, {"at": "1s", "stall": {"node": "b:1", "for": "1s"}}]}"#,
        )
        .unwrap_err();
        assert_eq!(e.step, Some(1));
        // Moved away first, then removed: carried out.
        let s = schedule(
            r#"{"steps": [{"at": "0s", "move": {"slots": {"count": 5461}, "from": "c:1", "to": "b:1", "rate": "10000/s"}},
                          {"at": "1s", "remove": "c:1"}]}"#,
        )
        .unwrap();
        assert_eq!(owner_of(&s, 16383, 2_000).as_deref(), Some("b:1"));
        let early = schedule(
            r#"{"steps": [{"at": "0s", "move": {"slots": {"count": 5461}, "from": "c:1", "to": "b:1", "rate": "1000/s"}},
                          {"at": "1s", "remove": "c:1"}]}"#,
        )
        .unwrap_err();
        assert!(early.message.contains("still owns slots"), "{early}");
    }
}
