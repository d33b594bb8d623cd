//! A [`Schedule`] made into the replay's simulated cluster: the start's layout from the moment
//! the clients begin (a lead-in before the plan, so each client is initialised and settled when
//! the first step comes), then each planned layout, fault and address change at its time.
//!
//! A node added by name only (`"new1"`) has no address yet; it is given `NAME:6379`. A node whose
//! address changes is a new node for the clients: its old address refuses connections from then
//! on and the layouts name the new one.

use crate::node::NodeAddr;
use crate::replay::DOWN_PAST_END_MS;
use crate::replay::{AskPolicy, FaultKind, FaultWindow, SimCluster, SimClusterBuilder};
use crate::time::{TimeSpan, Timestamp};

use super::schedule::{PlannedFaultKind, Schedule};

/// The port a node added by name only is given.
pub const ADDED_NODE_PORT: u16 = 6379;

/// When the simulated run begins and ends, against the plan's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The plan's start (its `0s`), on the replay's clock.
    pub origin: Timestamp,
    /// How long the clients run before the first step, at least: rounded up to whole seconds
    /// ([`Frame::start`]).
    pub lead_ms: u64,
    /// How long they run after the plan's last change and the last fault that ends.
    pub tail_ms: u64,
}

impl Frame {
    /// When the clients begin: the lead rounded up to whole seconds, so that the replay's
    /// seconds (counted from the first command) begin at the plan's start and a second never
    /// holds both what came before the change and what came after it.
    pub fn start(&self) -> Timestamp {
        Timestamp(
            self.origin
                .0
                .saturating_sub(self.lead_ms.div_ceil(1000) * 1000),
        )
    }

    /// When they stop for `schedule`: its end or the end of its last fault that ends, whichever
    /// is later, plus the tail.
    pub fn end(&self, schedule: &Schedule) -> Timestamp {
        let last = schedule
            .faults
            .iter()
            .filter_map(|f| f.until_ms)
            .fold(schedule.end_ms, u64::max);
        Timestamp(self.origin.0 + last + self.tail_ms)
    }

    /// The whole run for `schedule`.
    pub fn span(&self, schedule: &Schedule) -> TimeSpan {
        TimeSpan::new(self.start(), self.end(schedule))
    }
}

/// The address of `name` (one of [`Schedule::nodes`]): itself when it is `HOST:PORT`, else
/// `NAME:6379` ([`ADDED_NODE_PORT`]).
pub fn address_of(name: &str) -> NodeAddr {
    name.parse().unwrap_or_else(|_| {
        NodeAddr::new(name, ADDED_NODE_PORT)
            .unwrap_or_else(|| NodeAddr::new("unnamed", ADDED_NODE_PORT).expect("a host"))
    })
}

/// Why a schedule could not be simulated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimulationError {
    /// An address change names no `HOST:PORT`.
    #[error("the new address {0:?} of an address change is not HOST:PORT")]
    BadAddress(String),
}

/// The simulated cluster of `schedule` over `frame`, first contacted at `seed`, its migrating
/// slots answered by the per-key coin of `coin`.
pub fn simulate(
    schedule: &Schedule,
    frame: &Frame,
    seed: &NodeAddr,
    coin: u64,
) -> Result<SimCluster, SimulationError> {
    let mut changes: Vec<(u64, usize, NodeAddr)> = Vec::new();
    for (at, n, to) in &schedule.addresses {
        let addr = to
            .parse::<NodeAddr>()
            .map_err(|_| SimulationError::BadAddress(to.clone()))?;
        changes.push((*at, *n, addr));
    }
    changes.sort_by_key(|(at, _, _)| *at);
    // A node's address at `at` (changes at `at` applied).
    let addr_at = |node: usize, at: u64| -> NodeAddr {
        changes
            .iter()
            .rfind(|(t, n, _)| *n == node && *t <= at)
            .map_or_else(|| address_of(&schedule.nodes[node]), |(_, _, a)| a.clone())
    };
    let end = frame.end(schedule);
    // A fault that does not end lasts past the run: a command the replay sends after the last
    // one was due (its retries, its wait for a permit) still meets it.
    let never = Timestamp(end.0.saturating_add(DOWN_PAST_END_MS));
    let at = |ms: u64| Timestamp(frame.origin.0 + ms);
    let mut b = SimClusterBuilder::new();
    b.ask_policy(AskPolicy::KeyCoin { seed: coin });
    // The start's nodes are members and up from the first command, owners or not (a replica,
    // an empty master answer MOVED, and `CLUSTER NODES` lists them): added before the layouts,
    // which would make a master that owns nothing yet join when its first slot comes. Added
    // ones are known once they own slots.
    for n in 0..schedule.start_nodes.min(schedule.nodes.len()) {
        b.add_node(&addr_at(n, 0));
    }
    // The start's layout from the clients' first command; each later layout at its moment; and
    // the layout in force again at each address change.
    let mut points: Vec<(Timestamp, usize, u64)> = vec![(frame.start(), 0, 0)];
    for (i, l) in schedule.layouts.iter().enumerate().skip(1) {
        points.push((at(l.at_ms), i, l.at_ms));
    }
    for (ms, _, _) in &changes {
        if let Some(i) = schedule.layouts.iter().rposition(|l| l.at_ms <= *ms) {
            points.push((at(*ms), i, *ms));
        }
    }
    points.sort_by_key(|(t, i, _)| (*t, *i));
    for (t, i, ms) in points {
        let layout = &schedule.layouts[i];
        let owners: Vec<_> = layout
            .owners
            .iter()
            .map(|(r, n)| (*r, addr_at(*n, ms)))
            .collect();
        let migrating: Vec<_> = layout
            .migrating
            .iter()
            .map(|(s, from, to)| (*s, addr_at(*from, ms), addr_at(*to, ms)))
            .collect();
        b.layout(t, &owners, &migrating);
    }
    for (ms, pairs) in &schedule.replicas {
        let pairs: Vec<_> = pairs
            .iter()
            .map(|&(r, m)| (addr_at(r, *ms), addr_at(m, *ms)))
            .collect();
        let from = if *ms == 0 { Timestamp(0) } else { at(*ms) };
        b.replicas(from, &pairs);
    }
    for f in &schedule.faults {
        let until = f.until_ms.map_or(never, at);
        b.fault(FaultWindow {
            node: addr_at(f.node, f.from_ms),
            span: TimeSpan::new(at(f.from_ms), until.max(at(f.from_ms))),
            kind: match f.kind {
                PlannedFaultKind::Timeout => FaultKind::Timeout,
                PlannedFaultKind::ConnectionError => FaultKind::ConnectionError,
            },
        });
    }
    for (ms, n, _) in &changes {
        // The old address answers nothing from the change on.
        let old = addr_at(*n, ms.saturating_sub(1));
        if *ms > 0 {
            b.fault(FaultWindow {
                node: old,
                span: TimeSpan::new(at(*ms), never),
                kind: FaultKind::ConnectionError,
            });
        }
    }
    b.frame(TimeSpan::new(frame.start(), end), seed.clone());
    Ok(b.build())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::{Plan, Schedule, Start};
    use crate::slot::Slot;

    fn start() -> Start {
        let range = crate::preflight::parse_range("0-16383").unwrap();
        Start {
            masters: vec![("127.0.0.1:7000".to_owned(), vec![range])],
            replicas: vec![("127.0.0.1:7001".to_owned(), "127.0.0.1:7000".to_owned())],
        }
    }

    fn frame() -> Frame {
        Frame {
            origin: Timestamp(100_000),
            lead_ms: 5_000,
            tail_ms: 20_000,
        }
    }

    fn addr(s: &str) -> NodeAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_scale_out_with_a_stall_becomes_owners_and_a_fault_on_the_replay_clock() {
        let plan = Plan::from_json(
            r#"{"steps": [
                {"at": "0s", "add_master": "127.0.0.1:7002"},
                {"at": "1s", "move": {"slots": "8192-16383", "from": "127.0.0.1:7000",
                                      "to": "127.0.0.1:7002", "rate": "4096/s"}},
                {"at": "2s", "stall": {"node": "127.0.0.1:7000", "for": "2.5s"}}
            ]}"#,
        )
        .unwrap();
        let s = Schedule::of(&plan, &start()).unwrap();
        let f = frame();
        let c = simulate(&s, &f, &addr("127.0.0.1:7000"), 1).unwrap();
        let slot = Slot::new(16_000).unwrap();
        // Before the plan (from the clients' first command) and after the move.
        assert_eq!(
            c.owner(Timestamp(95_000), slot),
            Some(&addr("127.0.0.1:7000"))
        );
        assert_eq!(
            c.owner(Timestamp(104_000), slot),
            Some(&addr("127.0.0.1:7002"))
        );
        // The stall, on the replay's clock, and the run's span: the stall's end plus the tail.
        let n = c.node_index(&addr("127.0.0.1:7000")).unwrap();
        assert_eq!(
            c.fault_until(Timestamp(102_500), n),
            Some((FaultKind::Timeout, Timestamp(104_500)))
        );
        assert_eq!(c.fault_until(Timestamp(104_600), n), None);
        assert_eq!(
            c.span(),
            Some(TimeSpan::new(Timestamp(95_000), Timestamp(124_500)))
        );
        assert_eq!(c.seed(), Some(&addr("127.0.0.1:7000")));
    }

    #[test]
    fn an_address_change_moves_the_owner_and_closes_the_old_address() {
        let plan = Plan::from_json(
            r#"{"steps": [{"at": "3s", "address_change": {"node": "127.0.0.1:7000",
                                                          "to": "127.0.0.1:7100"}}]}"#,
        )
        .unwrap();
        let s = Schedule::of(&plan, &start()).unwrap();
        let c = simulate(&s, &frame(), &addr("127.0.0.1:7000"), 1).unwrap();
        let slot = Slot::new(5).unwrap();
        assert_eq!(
            c.owner(Timestamp(102_000), slot),
            Some(&addr("127.0.0.1:7000"))
        );
        assert_eq!(
            c.owner(Timestamp(103_000), slot),
            Some(&addr("127.0.0.1:7100"))
        );
        let old = c.node_index(&addr("127.0.0.1:7000")).unwrap();
        assert_eq!(
            c.fault_until(Timestamp(103_500), old).map(|(k, _)| k),
            Some(FaultKind::ConnectionError)
        );
    }

    #[test]
    fn a_change_at_the_plans_start_leaves_the_lead_in_as_it_was_and_the_old_master_up() {
        let plan = Plan::from_json(
            r#"{"steps": [{"at": "0s", "failover": {"replica_of": "127.0.0.1:7000"}}]}"#,
        )
        .unwrap();
        let s = Schedule::of(&plan, &start()).unwrap();
        let c = simulate(&s, &frame(), &addr("127.0.0.1:7000"), 1).unwrap();
        let slot = Slot::new(5).unwrap();
        // The lead-in: the old master still owns its slots.
        assert_eq!(
            c.owner(Timestamp(97_000), slot),
            Some(&addr("127.0.0.1:7000"))
        );
        assert_eq!(
            c.owner(Timestamp(100_000), slot),
            Some(&addr("127.0.0.1:7001"))
        );
        // The old master, now a replica, is a node of the cluster (it answers, with MOVED).
        let old = c.node_index(&addr("127.0.0.1:7000")).unwrap();
        assert_eq!(c.fault_until(Timestamp(101_000), old), None);
    }

    #[test]
    fn a_killed_node_and_an_old_address_stay_down_past_the_runs_end() {
        let plan = Plan::from_json(
            r#"{"steps": [{"at": "1s", "kill": "127.0.0.1:7000"},
                          {"at": "2s", "address_change": {"node": "127.0.0.1:7001",
                                                          "to": "127.0.0.1:7101"}}]}"#,
        )
        .unwrap();
        let s = Schedule::of(&plan, &start()).unwrap();
        let f = frame();
        let c = simulate(&s, &f, &addr("127.0.0.1:7000"), 1).unwrap();
        // A command still sent a minute after the run's end (its retries, its wait for a
        // permit) meets the same dead node: it does not come back when the run ends.
        let late = Timestamp(f.end(&s).0 + 60_000);
        for old in ["127.0.0.1:7000", "127.0.0.1:7001"] {
            let n = c.node_index(&addr(old)).unwrap();
            assert_eq!(
                c.fault_until(late, n).map(|(k, _)| k),
                Some(FaultKind::ConnectionError),
                "{old}"
            );
        }
    }

    #[test]
    fn the_lead_is_whole_seconds_so_the_replays_seconds_begin_at_the_plan() {
        let f = Frame {
            origin: Timestamp(100_000),
            lead_ms: 7_117,
            tail_ms: 1_000,
        };
        assert_eq!(f.start(), Timestamp(92_000));
        let f = Frame {
            lead_ms: 5_000,
            ..f
        };
        assert_eq!(f.start(), Timestamp(95_000));
    }

    #[test]
    fn an_empty_master_of_the_start_is_a_member_from_the_first_command() {
        let mut st = start();
        st.masters.push(("127.0.0.1:7002".to_owned(), Vec::new()));
        let plan = Plan::from_json(
            r#"{"steps": [{"at": "1s", "move": {"slots": "16000-16383", "from": "127.0.0.1:7000",
                                                "to": "127.0.0.1:7002", "rate": "1000/s"}}]}"#,
        )
        .unwrap();
        let s = Schedule::of(&plan, &st).unwrap();
        let f = frame();
        let c = simulate(&s, &f, &addr("127.0.0.1:7000"), 1).unwrap();
        // `CLUSTER NODES` lists it before its first slot comes (Lettuce admits redirects to the
        // nodes it lists: an empty master was an unknown partition).
        let members: Vec<&NodeAddr> = c.members(f.start()).collect();
        assert!(members.contains(&&addr("127.0.0.1:7002")), "{members:?}");
    }

    #[test]
    fn a_node_added_by_name_is_given_an_address() {
        assert_eq!(address_of("new1"), addr("new1:6379"));
        assert_eq!(address_of("10.0.0.9:7005"), addr("10.0.0.9:7005"));
    }
}
