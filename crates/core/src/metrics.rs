//! Metrics over time from recorded counters: for every node, what changed between two consecutive
//! `INFO` samples — calls, rejected and failed calls per command, errors per prefix, connections
//! received — with keys, memory and open connections at the end of the interval.
//!
//! Counters are cumulative on the server. A counter that goes backwards (a restart, `CONFIG
//! RESETSTAT`) restarted from zero, so its delta is its new value, never a negative number. The
//! collector's own commands (one of each per poll) are taken out, so what remains is what clients
//! sent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::bus::{BusCounters, BusMessages};
use crate::float;
use crate::info::InfoReport;
use crate::node::{NodeAddr, NodeId};
use crate::recording::{InfoSample, Line};
use crate::time::{TimeSpan, Timestamp};

/// Commands the collector sends once per poll of a node (`CLIENT LIST` at most once; the topology
/// commands, [`COLLECTOR_TOPOLOGY_COMMANDS`], as many times as the report's
/// [`InfoReport::own_topology_calls`] says when it says).
pub const COLLECTOR_COMMANDS: &[&str] = &[
    "cluster|shards",
    "cluster|slots",
    "cluster|nodes",
    "cluster|info",
    "info",
    "client|list",
];

/// The collector's topology commands: asked of a node on its first poll, when its `CLUSTER INFO`
/// or slot migrations say the topology changed, and every `--topology-every` polls otherwise.
pub const COLLECTOR_TOPOLOGY_COMMANDS: &[&str] =
    &["cluster|shards", "cluster|slots", "cluster|nodes"];

/// Commands whose rates fingerprint client topology refreshes and reconnects (a full client
/// rebuild asks for the slot map, and often `COMMAND`, `CLIENT SETINFO` and `INFO`, again).
pub const REFRESH_COMMANDS: &[&str] = &[
    "cluster|slots",
    "cluster|shards",
    "cluster|nodes",
    "command",
    "command|docs",
    "command|info",
    "client|setinfo",
    "info",
];

/// Whether `cmd` (as named in `commandstats`) is a command that serves application data, as
/// opposed to connection, topology or administration commands.
pub fn is_business_command(cmd: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "cluster|", "client|", "config|", "command", "acl|", "memory|", "latency|", "slowlog|",
        "module|", "object|", "debug", "script|",
    ];
    const PLAIN: &[&str] = &[
        "info",
        "ping",
        "hello",
        "auth",
        "select",
        "readonly",
        "readwrite",
        "asking",
        "echo",
        "quit",
        "reset",
        "role",
        "monitor",
        "time",
        "lastsave",
        "dbsize",
        "save",
        "bgsave",
        "bgrewriteaof",
        "wait",
        "waitaof",
        "shutdown",
        "replicaof",
        "slaveof",
        "sync",
        "psync",
        "replconf",
        "failover",
        "flushall",
        "flushdb",
        "swapdb",
        "lolwut",
        "migrate",
        "restore",
        "restore-asking",
    ];
    !(PLAIN.contains(&cmd) || PREFIXES.iter().any(|p| cmd.starts_with(p)))
}

/// Changes of one command's counters over an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandDelta {
    /// Calls executed.
    pub calls: u64,
    /// Calls rejected before execution (`MOVED`, `ASK`, wrong arguments, ACL, …).
    pub rejected: u64,
    /// Calls that executed and failed.
    pub failed: u64,
    /// Microseconds spent executing.
    pub usec: u64,
}

impl CommandDelta {
    /// Calls attempted: executed plus rejected.
    pub fn attempts(&self) -> u64 {
        self.calls.saturating_add(self.rejected)
    }

    /// Adds `other`'s counts. Saturating: a counter read from a damaged recording can be near the
    /// top of `u64`, and sums of such must not wrap (fuzzing found one, `fuzz/regressions/`).
    pub fn add(&mut self, other: &CommandDelta) {
        self.calls = self.calls.saturating_add(other.calls);
        self.rejected = self.rejected.saturating_add(other.rejected);
        self.failed = self.failed.saturating_add(other.failed);
        self.usec = self.usec.saturating_add(other.usec);
    }
}

/// What changed on one node between two consecutive samples.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// From the earlier sample to the later one.
    pub span: TimeSpan,
    /// Per command (collector's own polls taken out).
    pub commands: BTreeMap<String, CommandDelta>,
    /// Per error prefix (`MOVED`, `ASK`, `CLUSTERDOWN`, `ERR`, …).
    pub errors: BTreeMap<String, u64>,
    /// Connections accepted (`total_connections_received`).
    pub connections_received: u64,
    /// Open client connections at the end (`connected_clients`).
    pub connected_clients: Option<u64>,
    /// Keys in all databases at the end.
    pub keys: u64,
    /// `used_memory` at the end, in bytes.
    pub used_memory: Option<u64>,
    /// The server restarted during the interval (uptime went back or the run id changed).
    pub restarted: bool,
    /// Cluster bus messages of a failover (elections, manual failovers, `FAIL`).
    #[serde(skip_serializing_if = "BusMessages::is_empty")]
    pub bus: BusMessages,
    /// [`Interval::business`], summed from `commands` once, when the interval is made: the
    /// analysis asks it of every interval several times, and each time named every command.
    #[serde(skip)]
    pub(crate) business: CommandDelta,
}

impl Interval {
    /// Length in seconds (at least one millisecond).
    pub fn secs(&self) -> f64 {
        ms_to_secs(self.span.millis().max(1))
    }

    /// Business commands (see [`is_business_command`]) summed.
    pub fn business(&self) -> CommandDelta {
        self.business
    }

    /// The business commands of `commands` summed.
    pub(crate) fn business_of(commands: &BTreeMap<String, CommandDelta>) -> CommandDelta {
        let mut total = CommandDelta::default();
        for (_, d) in commands.iter().filter(|(c, _)| is_business_command(c)) {
            total.add(d);
        }
        total
    }

    /// Delta of one command (zero if absent).
    pub fn command(&self, cmd: &str) -> CommandDelta {
        self.commands.get(cmd).copied().unwrap_or_default()
    }

    /// Delta of one error prefix (zero if absent).
    pub fn error(&self, prefix: &str) -> u64 {
        self.errors.get(prefix).copied().unwrap_or(0)
    }
}

/// Converts milliseconds to seconds as a float: [`float::from_u64`] of `ms` (exact below 2^53 ms,
/// 285,000 years), divided by 1000.
pub fn ms_to_secs(ms: u64) -> f64 {
    float::from_u64(ms) / 1000.0
}

/// The metrics of one node.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeMetrics {
    /// The address it was polled at.
    pub addr: NodeAddr,
    /// Its cluster id.
    pub id: Option<NodeId>,
    /// Consecutive intervals, in time order (each ends after the one before).
    pub intervals: Vec<Interval>,
    /// The last sample folded, with what its next interval reads of it.
    #[serde(skip)]
    last: Option<(Timestamp, InfoReport, Facts)>,
}

/// What an interval reads of the `INFO` samples at its two ends besides their command and error
/// counters, looked up once per sample (it is the later end of one interval and the earlier end
/// of the next).
#[derive(Clone, Debug, Default, PartialEq)]
struct Facts {
    /// `uptime_in_seconds`.
    uptime: Option<u64>,
    /// `run_id`.
    run_id: Option<String>,
    /// `total_connections_received` (0 when absent).
    connections: u64,
    /// The cluster bus counters.
    bus: BusCounters,
}

impl Facts {
    fn of(r: &InfoReport) -> Facts {
        Facts {
            uptime: r.get_u64("server", "uptime_in_seconds"),
            run_id: r.get("server", "run_id").map(str::to_owned),
            connections: r
                .get_u64("stats", "total_connections_received")
                .unwrap_or(0),
            bus: BusCounters::of(r),
        }
    }
}

impl NodeMetrics {
    /// Sums of the intervals that lie within `span` (an interval counts if it ends inside).
    pub fn total_in(&self, span: TimeSpan) -> Totals {
        let mut t = Totals::default();
        for i in self.ending_in(span) {
            t.secs += i.secs();
            t.business.add(&i.business());
            // A name is copied only the first time it is met: the same few come in every
            // interval.
            for (c, d) in &i.commands {
                match t.commands.get_mut(c) {
                    Some(sum) => sum.add(d),
                    None => {
                        t.commands.insert(c.clone(), *d);
                    }
                }
            }
            for (e, n) in &i.errors {
                match t.errors.get_mut(e) {
                    Some(sum) => *sum = sum.saturating_add(*n),
                    None => {
                        t.errors.insert(e.clone(), *n);
                    }
                }
            }
            t.connections_received = t
                .connections_received
                .saturating_add(i.connections_received);
            t.intervals += 1;
        }
        t
    }

    /// The intervals that end inside `span` (after its start, at or before its end). Intervals
    /// are kept in time order (each starts where the previous one ended), so this is a binary
    /// search, not a scan: the analysis asks this for many windows of long recordings.
    pub fn ending_in(&self, span: TimeSpan) -> &[Interval] {
        let a = self.intervals.partition_point(|i| i.span.end <= span.start);
        let b = self.intervals.partition_point(|i| i.span.end <= span.end);
        self.intervals.get(a..b.max(a)).unwrap_or(&[])
    }

    /// The last interval ending at or before `t`.
    pub fn at(&self, t: Timestamp) -> Option<&Interval> {
        let n = self.intervals.partition_point(|i| i.span.end <= t);
        n.checked_sub(1).and_then(|k| self.intervals.get(k))
    }
}

/// Sums over several intervals of one node.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Seconds covered.
    pub secs: f64,
    /// Intervals summed.
    pub intervals: usize,
    /// Business commands summed.
    pub business: CommandDelta,
    /// Per command.
    pub commands: BTreeMap<String, CommandDelta>,
    /// Per error prefix.
    pub errors: BTreeMap<String, u64>,
    /// Connections accepted.
    pub connections_received: u64,
}

impl Totals {
    /// `n` per second over the covered time (0 when nothing is covered).
    pub fn rate(&self, n: u64) -> f64 {
        if self.secs > 0.0 {
            float::from_u64(n) / self.secs
        } else {
            0.0
        }
    }
}

/// Metrics of every node, folded from `info` lines.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Metrics {
    /// Per node, in order of first sample.
    pub nodes: Vec<NodeMetrics>,
}

impl Metrics {
    /// The business command rate the recording shows: per node, the median of the rates of
    /// executed business calls over the `INFO` intervals that had any (so a client that stopped
    /// sending does not dilute it), summed over nodes; `None` when no interval had business calls.
    /// The rate `slotscope replay` and the viewer's what-if replay by default.
    pub fn observed_business_rate(&self) -> Option<u32> {
        let mut total: u64 = 0;
        for node in &self.nodes {
            let mut rates: Vec<u64> = node
                .intervals
                .iter()
                .filter_map(|i| {
                    let calls = i.business().calls;
                    let ms = i.span.millis().max(1);
                    (calls > 0).then(|| calls.saturating_mul(1000) / ms)
                })
                .collect();
            if rates.is_empty() {
                continue;
            }
            rates.sort_unstable();
            total = total.saturating_add(rates[rates.len() / 2]);
        }
        u32::try_from(total).ok().filter(|&r| r > 0)
    }

    /// Folds one line (only `info` lines matter).
    pub fn push(&mut self, line: &Line) {
        if let Line::Info(s) = line {
            if let Some((i, facts)) = self.fold_info(s) {
                self.nodes[i].last = Some((s.t, s.info.clone(), facts));
            }
        }
    }

    /// Folds one line it may keep: as [`Metrics::push`], without copying an `INFO` reply.
    pub fn push_owned(&mut self, line: Line) {
        if let Line::Info(s) = line {
            if let Some((i, facts)) = self.fold_info(&s) {
                self.nodes[i].last = Some((s.t, s.info, facts));
            }
        }
    }

    /// The node polled at `addr`.
    pub fn node(&self, addr: &NodeAddr) -> Option<&NodeMetrics> {
        self.nodes.iter().find(|n| &n.addr == addr)
    }

    /// Adds the interval that ends at `s` to its node; returns the node's index and what the
    /// next interval reads of `s`, `None` when `s` is not after the node's last reply.
    fn fold_info(&mut self, s: &InfoSample) -> Option<(usize, Facts)> {
        let i = match self.nodes.iter().position(|n| n.addr == s.node.addr) {
            Some(i) => i,
            None => {
                self.nodes.push(NodeMetrics {
                    addr: s.node.addr.clone(),
                    id: None,
                    intervals: Vec::new(),
                    last: None,
                });
                self.nodes.len() - 1
            }
        };
        let node = &mut self.nodes[i];
        if s.node.id.is_some() && node.id != s.node.id {
            node.id = s.node.id.clone();
        }
        let facts = match &node.last {
            // Not after the last reply (a line out of order): ignored, so intervals stay in
            // time order.
            Some((t0, ..)) if s.t <= *t0 => return None,
            Some((t0, prev, prev_facts)) => {
                let facts = Facts::of(&s.info);
                let span = TimeSpan::new(*t0, s.t);
                node.intervals
                    .push(interval(span, (prev, prev_facts), (&s.info, &facts)));
                facts
            }
            None => Facts::of(&s.info),
        };
        Some((i, facts))
    }
}

/// A counter's change: the difference, or the new value if it went backwards (it restarted).
pub fn counter_delta(prev: u64, cur: u64) -> u64 {
    cur.checked_sub(prev).unwrap_or(cur)
}

/// The interval between two samples of a node, each with its [`Facts`].
fn interval(
    span: TimeSpan,
    (prev, prev_facts): (&InfoReport, &Facts),
    (cur, cur_facts): (&InfoReport, &Facts),
) -> Interval {
    let restarted = matches!((prev_facts.uptime, cur_facts.uptime), (Some(a), Some(b)) if b < a)
        || matches!((&prev_facts.run_id, &cur_facts.run_id), (Some(a), Some(b)) if a != b);
    let delta = |p: u64, c: u64| if restarted { c } else { counter_delta(p, c) };

    let mut commands = BTreeMap::new();
    for (name, c) in &cur.commandstats {
        let p = prev.commandstats.get(name);
        let mut d = CommandDelta {
            calls: delta(p.map_or(0, |p| p.calls), c.calls),
            rejected: delta(
                p.and_then(|p| p.rejected_calls).unwrap_or(0),
                c.rejected_calls.unwrap_or(0),
            ),
            failed: delta(
                p.and_then(|p| p.failed_calls).unwrap_or(0),
                c.failed_calls.unwrap_or(0),
            ),
            usec: delta(p.map_or(0, |p| p.usec), c.usec),
        };
        if COLLECTOR_TOPOLOGY_COMMANDS.contains(&name.as_str()) {
            d.calls = d
                .calls
                .saturating_sub(u64::from(cur.own_topology_calls.unwrap_or(1)));
        } else if name == "client|list" {
            d.calls = d
                .calls
                .saturating_sub(u64::from(cur.own_client_list_calls.unwrap_or(1)));
        } else if COLLECTOR_COMMANDS.contains(&name.as_str()) {
            d.calls = d.calls.saturating_sub(1);
        }
        if d != CommandDelta::default() {
            commands.insert(name.clone(), d);
        }
    }
    let mut errors = BTreeMap::new();
    for (name, &c) in &cur.errorstats {
        let d = delta(prev.errorstats.get(name).copied().unwrap_or(0), c);
        if d > 0 {
            errors.insert(name.clone(), d);
        }
    }
    // The collector's own connection, when it reconnects, counts once; it is not taken out.
    Interval {
        span,
        business: Interval::business_of(&commands),
        commands,
        errors,
        connections_received: delta(prev_facts.connections, cur_facts.connections),
        connected_clients: cur.get_u64("clients", "connected_clients"),
        keys: cur.keyspace.values().map(|k| k.keys).sum(),
        used_memory: cur.get_u64("memory", "used_memory"),
        restarted,
        bus: BusMessages::of_counters(&prev_facts.bus, &cur_facts.bus, delta),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::CommandStat;
    use crate::node::NodeRef;

    fn report(uptime: u64, zadd: (u64, u64), moved: u64, conns: u64) -> InfoReport {
        let mut r = InfoReport::default();
        r.sections.insert(
            "server".into(),
            [("uptime_in_seconds".to_owned(), uptime.to_string())].into(),
        );
        r.sections.insert(
            "stats".into(),
            [("total_connections_received".to_owned(), conns.to_string())].into(),
        );
        r.commandstats.insert(
            "zadd".into(),
            CommandStat {
                calls: zadd.0,
                usec: zadd.0 * 3,
                rejected_calls: Some(zadd.1),
                failed_calls: Some(0),
            },
        );
        r.commandstats.insert(
            "info".into(),
            CommandStat {
                calls: uptime,
                usec: 1,
                rejected_calls: Some(0),
                failed_calls: Some(0),
            },
        );
        if moved > 0 {
            r.errorstats.insert("MOVED".into(), moved);
        }
        r
    }

    fn line(t: u64, info: InfoReport) -> Line {
        Line::Info(InfoSample {
            t: Timestamp(t),
            node: NodeRef {
                addr: "127.0.0.1:7000".parse().unwrap(),
                id: None,
            },
            latency_us: 100,
            info,
        })
    }

    #[test]
    fn milliseconds_past_49_days_are_not_clamped() {
        assert_eq!(ms_to_secs(1500), 1.5);
        // 50 days: once clamped at u32::MAX ms (49.7 days).
        assert_eq!(ms_to_secs(4_320_000_000), 4_320_000.0);
    }

    #[test]
    fn deltas_between_samples_and_collector_polls_taken_out() {
        let mut m = Metrics::default();
        m.push(&line(1_000, report(10, (100, 5), 5, 40)));
        m.push(&line(3_000, report(12, (160, 25), 25, 50)));
        let node = &m.nodes[0];
        assert_eq!(node.intervals.len(), 1);
        let i = &node.intervals[0];
        assert_eq!(
            i.command("zadd"),
            CommandDelta {
                calls: 60,
                rejected: 20,
                failed: 0,
                usec: 180
            }
        );
        assert_eq!(i.error("MOVED"), 20);
        assert_eq!(i.connections_received, 10);
        assert_eq!(i.secs(), 2.0);
        // INFO went from 10 to 12 calls: two polls, of which one is the collector's own.
        assert_eq!(i.command("info").calls, 1);
        assert_eq!(i.business().calls, 60);
        assert!(!i.restarted);
    }

    #[test]
    fn the_collectors_own_topology_calls_are_taken_out_as_many_times_as_it_asked() {
        let with_topology = |calls: u64, own: Option<u32>| {
            let mut r = report(10, (0, 0), 0, 0);
            for cmd in ["cluster|shards", "cluster|nodes"] {
                r.commandstats.insert(
                    cmd.into(),
                    CommandStat {
                        calls,
                        usec: calls,
                        rejected_calls: Some(0),
                        failed_calls: Some(0),
                    },
                );
            }
            r.own_topology_calls = own;
            r
        };
        let mut m = Metrics::default();
        m.push(&line(1_000, with_topology(10, Some(1))));
        // Not asked since: all three calls were a client's.
        m.push(&line(2_000, with_topology(13, Some(0))));
        // Asked once: one of the two was the collector's.
        m.push(&line(3_000, with_topology(15, Some(1))));
        // An older recording (no count): once per poll.
        m.push(&line(4_000, with_topology(17, None)));
        let i = &m.nodes[0].intervals;
        let shards: Vec<u64> = i
            .iter()
            .map(|i| i.command("cluster|shards").calls)
            .collect();
        assert_eq!(shards, [3, 1, 1]);
        let nodes: Vec<u64> = i.iter().map(|i| i.command("cluster|nodes").calls).collect();
        assert_eq!(nodes, [3, 1, 1]);
    }

    #[test]
    fn the_collectors_own_client_lists_are_taken_out_as_many_times_as_it_asked() {
        let with_lists = |calls: u64, own: Option<u32>| {
            let mut r = report(10, (0, 0), 0, 0);
            r.commandstats.insert(
                "client|list".into(),
                CommandStat {
                    calls,
                    usec: calls,
                    rejected_calls: Some(0),
                    failed_calls: Some(0),
                },
            );
            r.own_client_list_calls = own;
            r
        };
        let mut m = Metrics::default();
        m.push(&line(1_000, with_lists(10, Some(1))));
        // A crowded node not asked since: the two calls were a client's.
        m.push(&line(2_000, with_lists(12, Some(0))));
        // Asked once: that was the only call.
        m.push(&line(3_000, with_lists(13, Some(1))));
        // An older recording (no count): once per poll.
        m.push(&line(4_000, with_lists(15, None)));
        let lists: Vec<u64> = m.nodes[0]
            .intervals
            .iter()
            .map(|i| i.command("client|list").calls)
            .collect();
        assert_eq!(lists, [2, 0, 1]);
    }

    #[test]
    fn a_counter_reset_never_gives_a_negative_rate() {
        let mut m = Metrics::default();
        m.push(&line(1_000, report(100, (5_000, 10), 10, 900)));
        // CONFIG RESETSTAT: counters restart from zero, uptime goes on.
        m.push(&line(2_000, report(101, (7, 1), 0, 903)));
        // A restart: uptime goes back.
        m.push(&line(3_000, report(2, (3, 0), 2, 1)));
        let i = &m.nodes[0].intervals;
        assert_eq!(i[0].command("zadd").calls, 7);
        assert_eq!(i[0].command("zadd").rejected, 1);
        assert!(!i[0].restarted);
        assert!(i[1].restarted);
        assert_eq!(i[1].command("zadd").calls, 3);
        assert_eq!(i[1].error("MOVED"), 2);
        assert_eq!(i[1].connections_received, 1);
    }

    #[test]
    fn business_commands_exclude_topology_and_admin() {
        for c in ["zadd", "get", "zrevrange", "hgetall", "evalsha", "fcall"] {
            assert!(is_business_command(c), "{c}");
        }
        for c in [
            "cluster|slots",
            "info",
            "client|setinfo",
            "command|docs",
            "ping",
            "asking",
            "restore-asking",
        ] {
            assert!(!is_business_command(c), "{c}");
        }
    }

    #[test]
    fn totals_sum_intervals_within_a_span() {
        let mut m = Metrics::default();
        for k in 0..5u64 {
            m.push(&line(1_000 + k * 1_000, report(10 + k, (k * 10, 0), 0, 0)));
        }
        let node = &m.nodes[0];
        let t = node.total_in(TimeSpan::new(Timestamp(1_000), Timestamp(3_000)));
        assert_eq!(t.intervals, 2);
        assert_eq!(t.business.calls, 20);
        assert_eq!(t.rate(t.business.calls), 10.0);
        assert_eq!(
            node.at(Timestamp(4_500)).unwrap().span.end,
            Timestamp(4_000)
        );
    }
}
