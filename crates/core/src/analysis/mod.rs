//! Analysis of a whole recording: metrics, client census, shard traffic before and after each
//! topology change, and the findings, each with the evidence it rests on. Folded from lines like
//! the summary, so the viewer computes the same analysis in the browser.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::census::{Census, CensusBuilder, ClientGroup};
use crate::defect::known_defects;
use crate::evidence::APP_ERROR_KIND;
use crate::finding::{Attribution, Finding, FindingKind, Severity};
use crate::metrics::{count_f64, ms_to_secs, Interval, Metrics, NodeMetrics, REFRESH_COMMANDS};
use crate::node::{NodeAddr, NodeId};
use crate::recording::{Annotation, GoneReason, Header, Line};
use crate::slot::SLOT_COUNT;
use crate::summary::{Summary, SummaryBuilder};
use crate::tap::{versus, TapSummary, Versus};
use crate::time::{format_millis, TimeSpan, Timestamp};
use crate::topology::TopologyView;

/// Share of a cluster's commands below which a shard that owns slots counts as idle.
pub const IDLE_SHARE: f64 = 0.01;
/// Share of commands answered with a redirect above which an interval counts as redirected.
pub const REDIRECT_SHARE: f64 = 0.05;
/// New connections per open connection per second above which an interval counts as churning
/// (a mean connection lifetime under two seconds).
pub const CHURN_RATIO: f64 = 0.5;

/// Traffic of one node around a topology change.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShardTraffic {
    /// The node.
    pub addr: NodeAddr,
    /// Its id.
    pub id: Option<NodeId>,
    /// Slots it owns at the end of the recording.
    pub slots: usize,
    /// Keys it holds at the end.
    pub keys: u64,
    /// Rates before the first topology change (or over the whole recording when there is none).
    pub before: Rates,
    /// Rates after the last topology change.
    pub after: Rates,
}

/// Per-second rates over a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Rates {
    /// Seconds covered.
    pub secs: f64,
    /// Business commands executed per second.
    pub calls: f64,
    /// Business commands rejected per second (MOVED, ASK, …).
    pub rejected: f64,
    /// Business commands failed per second.
    pub failed: f64,
    /// MOVED replies per second.
    pub moved: f64,
    /// ASK replies per second.
    pub ask: f64,
    /// Connections accepted per second.
    pub new_connections: f64,
}

/// The analysis of a recording.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    /// What the recording holds (nodes, slot moves, failures).
    pub summary: Summary,
    /// Per node traffic before and after the topology changes.
    pub shard_traffic: Vec<ShardTraffic>,
    /// The client census.
    pub census: Census,
    /// Findings, most important first.
    pub findings: Vec<Finding>,
    /// Outside evidence set against itself and the recording: "first client error 12 s after
    /// \"Migrating slots …\"".
    pub evidence: Vec<String>,
    /// Per-node metrics over time (not serialised: large; use the viewer or the library).
    #[serde(skip)]
    pub metrics: Metrics,
    /// What a client recorded through `slotscope tap` saw (empty without tap lines).
    #[serde(skip_serializing_if = "TapSummary::is_empty")]
    pub tap: TapSummary,
}

impl Analysis {
    /// The tapped client's per-command counts beside the servers' (empty without tap lines).
    pub fn versus(&self) -> Vec<Versus> {
        versus(&self.tap, &self.metrics, self.summary.span)
    }
}

/// Builds an [`Analysis`] one line at a time.
#[derive(Clone, Debug)]
pub struct Analyzer {
    summary: SummaryBuilder,
    metrics: Metrics,
    census: CensusBuilder,
    tap: TapSummary,
    views: BTreeMap<NodeAddr, TopologyView>,
    annotations: Vec<Annotation>,
    interval_ms: u64,
}

impl Analyzer {
    /// An analyzer for a recording with this header.
    pub fn new(header: Header) -> Analyzer {
        let interval_ms = header.options.interval_ms.max(1);
        Analyzer {
            summary: SummaryBuilder::new(header),
            metrics: Metrics::default(),
            census: CensusBuilder::default(),
            tap: TapSummary::default(),
            views: BTreeMap::new(),
            annotations: Vec::new(),
            interval_ms,
        }
    }

    /// Folds one line.
    pub fn push(&mut self, line: &Line) {
        self.fold(line);
        self.metrics.push(line);
    }

    /// Folds one line it may keep: as [`Analyzer::push`], without copying an `INFO` reply.
    pub fn push_owned(&mut self, line: Line) {
        self.fold(&line);
        self.metrics.push_owned(line);
    }

    fn fold(&mut self, line: &Line) {
        self.summary.push(line);
        self.census.push(line);
        self.tap.push(line);
        match line {
            Line::Topology(t) => {
                self.views.insert(t.node.addr.clone(), t.view.clone());
            }
            Line::NodeGone(g) if g.reason == GoneReason::LeftTopology => {
                self.views.remove(&g.node.addr);
            }
            Line::Annotation(a) => self.annotations.push(a.clone()),
            _ => {}
        }
    }

    /// Notes a partial last line (see [`crate::reader::RecordingReader::truncated_tail`]).
    pub fn set_truncated_tail(&mut self, line: Option<u64>) {
        self.summary.set_truncated_tail(line);
    }

    /// The finished analysis.
    pub fn finish(self) -> Analysis {
        let mut f = self.finishing();
        while !f.step() {}
        f.done()
    }

    /// The analysis to finish one derivation at a time, for a caller that must not be busy for
    /// long at once (the viewer, on a day-long recording): call [`Finishing::step`] until it
    /// returns `true`, then [`Finishing::done`].
    pub fn finishing(self) -> Finishing {
        Finishing {
            summary: self.summary.finish(),
            census: self.census.finish(),
            metrics: self.metrics,
            tap: self.tap.finish(),
            views: self.views,
            annotations: self.annotations,
            interval_ms: self.interval_ms,
            shard_traffic: Vec::new(),
            findings: Vec::new(),
            next: 0,
        }
    }
}

/// An analysis being finished one derivation at a time (see [`Analyzer::finishing`]).
#[derive(Debug)]
pub struct Finishing {
    summary: Summary,
    census: Census,
    metrics: Metrics,
    tap: TapSummary,
    views: BTreeMap<NodeAddr, TopologyView>,
    annotations: Vec<Annotation>,
    interval_ms: u64,
    shard_traffic: Vec<ShardTraffic>,
    findings: Vec<Finding>,
    /// The next derivation.
    next: u8,
}

impl Finishing {
    /// Steps in all, for progress.
    pub const STEPS: u8 = 5;

    /// Steps done so far.
    pub fn steps_done(&self) -> u8 {
        self.next
    }

    /// The metrics (final: every line is folded before finishing starts).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Runs the next derivation; `true` when there is none left.
    pub fn step(&mut self) -> bool {
        let ctx = Context::new(&self.summary, &self.metrics, &self.views, self.interval_ms);
        match self.next {
            0 => self.shard_traffic = ctx.shard_traffic(),
            1 => {
                let idle = ctx.idle_shards(&self.shard_traffic);
                self.findings.extend(idle);
                self.findings.extend(ctx.lost_traffic(&self.census));
            }
            2 => self.findings.extend(ctx.redirects(&self.census)),
            3 => {
                self.findings.extend(ctx.churn(&self.census));
                self.findings.extend(ctx.coverage());
                self.findings
                    .extend(defect_findings(&self.census, ctx.span));
            }
            4 => {
                for f in &mut self.findings {
                    f.context = relate(f.span, &self.annotations, &self.summary);
                }
                self.findings.sort_by_key(Finding::importance_key);
            }
            _ => return true,
        }
        self.next += 1;
        self.next >= Self::STEPS
    }

    /// The analysis (finishing whatever steps are left).
    pub fn done(mut self) -> Analysis {
        while !self.step() {}
        let evidence = relate_evidence(&self.annotations, &self.summary);
        Analysis {
            summary: self.summary,
            shard_traffic: self.shard_traffic,
            census: self.census,
            findings: self.findings,
            evidence,
            metrics: self.metrics,
            tap: self.tap,
        }
    }
}

/// What every derivation needs.
struct Context<'a> {
    summary: &'a Summary,
    metrics: &'a Metrics,
    interval_ms: u64,
    /// The recording's extent.
    span: TimeSpan,
    /// Before the first topology change (the whole recording when there is none).
    before: TimeSpan,
    /// After the last topology change, if there was one.
    after: Option<TimeSpan>,
    /// Owner of every slot at the end, by the most views.
    owners: Vec<Option<NodeId>>,
    /// Slots on which the latest views disagree.
    disagreements: usize,
    ids: BTreeMap<NodeId, NodeAddr>,
}

impl<'a> Context<'a> {
    fn new(
        summary: &'a Summary,
        metrics: &'a Metrics,
        views: &BTreeMap<NodeAddr, TopologyView>,
        interval_ms: u64,
    ) -> Context<'a> {
        let span = summary
            .span
            .unwrap_or_else(|| TimeSpan::new(summary.header.started, summary.header.started));
        let span = TimeSpan::new(span.start, Timestamp(span.end.0 + 1));
        let (before, after) = match (
            summary.slot_moves.iter().map(|m| m.span.start).min(),
            summary.slot_moves.iter().map(|m| m.span.end).max(),
        ) {
            (Some(first), Some(last)) => (
                TimeSpan::new(span.start, first),
                Some(TimeSpan::new(last, span.end)),
            ),
            _ => (span, None),
        };
        let mut votes: Vec<BTreeMap<Option<NodeId>, usize>> =
            vec![BTreeMap::new(); usize::from(SLOT_COUNT)];
        let mut ids = BTreeMap::new();
        for v in views.values() {
            for (slot, owner) in v.slot_owners().into_iter().enumerate() {
                *votes[slot].entry(owner).or_default() += 1;
            }
            for n in v.nodes() {
                if let Some(a) = &n.addr {
                    ids.entry(n.id.clone()).or_insert_with(|| a.clone());
                }
            }
        }
        for n in &metrics.nodes {
            if let Some(id) = &n.id {
                ids.insert(id.clone(), n.addr.clone());
            }
        }
        let disagreements = votes.iter().filter(|v| v.len() > 1).count();
        let owners = votes
            .into_iter()
            .map(|v| {
                v.into_iter()
                    .max_by_key(|(o, n)| (*n, o.is_some()))
                    .and_then(|(o, _)| o)
            })
            .collect();
        Context {
            summary,
            metrics,
            interval_ms,
            span,
            before,
            after,
            owners,
            disagreements,
            ids,
        }
    }

    fn slots_of(&self, id: Option<&NodeId>) -> usize {
        id.map_or(0, |id| {
            self.owners
                .iter()
                .filter(|o| o.as_ref() == Some(id))
                .count()
        })
    }

    fn rates(node: &NodeMetrics, window: TimeSpan) -> Rates {
        let t = node.total_in(window);
        Rates {
            secs: t.secs,
            calls: t.rate(t.business.calls),
            rejected: t.rate(t.business.rejected),
            failed: t.rate(t.business.failed),
            moved: t.rate(t.errors.get("MOVED").copied().unwrap_or(0)),
            ask: t.rate(t.errors.get("ASK").copied().unwrap_or(0)),
            new_connections: t.rate(t.connections_received),
        }
    }

    fn shard_traffic(&self) -> Vec<ShardTraffic> {
        self.metrics
            .nodes
            .iter()
            .map(|n| ShardTraffic {
                addr: n.addr.clone(),
                id: n.id.clone(),
                slots: self.slots_of(n.id.as_ref()),
                keys: n.intervals.last().map_or(0, |i| i.keys),
                before: Context::rates(n, self.before),
                after: self
                    .after
                    .map_or_else(Rates::default, |w| Context::rates(n, w)),
            })
            .collect()
    }

    /// A shard that owns slots but receives (almost) none of the cluster's commands after a change.
    ///
    /// The cluster's rate is the larger of the rates after and before the change, so a shard that
    /// gained slots is flagged also when the clients went silent altogether (they then show up
    /// as `client_group_lost` too).
    fn idle_shards(&self, traffic: &[ShardTraffic]) -> Vec<Finding> {
        let Some(after) = self.after else {
            return Vec::new();
        };
        let total_after: f64 = traffic
            .iter()
            .map(|t| t.after.calls + t.after.rejected)
            .sum();
        let total_before: f64 = traffic
            .iter()
            .map(|t| t.before.calls + t.before.rejected)
            .sum();
        let total = total_after.max(total_before);
        let enough_time = traffic
            .iter()
            .any(|t| t.after.secs * 1000.0 >= 2.0 * ms(self.interval_ms));
        if total < 0.5 || !enough_time {
            return Vec::new();
        }
        let gained: BTreeSet<&NodeId> = self
            .summary
            .slot_moves
            .iter()
            .filter_map(|m| m.to.as_ref())
            .collect();
        let mut out = Vec::new();
        for t in traffic {
            let attempts = t.after.calls + t.after.rejected;
            let slot_share = count_f64(t.slots as u64) / f64::from(SLOT_COUNT);
            let received = t.id.as_ref().is_some_and(|id| gained.contains(id));
            if t.slots == 0
                || slot_share < 0.01
                || attempts / total >= IDLE_SHARE
                || !(received || total_after >= 0.5)
            {
                continue;
            }
            let elsewhere_rejected: f64 = traffic
                .iter()
                .filter(|o| o.addr != t.addr)
                .map(|o| o.after.rejected)
                .sum();
            let elsewhere_moved: f64 = traffic
                .iter()
                .filter(|o| o.addr != t.addr)
                .map(|o| o.after.moved)
                .sum();
            let numbers = BTreeMap::from([
                ("slots".to_owned(), count_f64(t.slots as u64)),
                ("slot_share".to_owned(), slot_share),
                ("keys".to_owned(), count_f64(t.keys)),
                ("commands_per_sec".to_owned(), attempts),
                ("cluster_commands_per_sec_before".to_owned(), total_before),
                ("cluster_commands_per_sec_after".to_owned(), total_after),
                ("rejected_per_sec_elsewhere".to_owned(), elsewhere_rejected),
                ("moved_per_sec_elsewhere".to_owned(), elsewhere_moved),
                ("window_secs".to_owned(), t.after.secs),
            ]);
            out.push(Finding {
                kind: FindingKind::IdleShard,
                severity: Severity::Critical,
                span: after,
                title: format!(
                    "{} owns {} slots ({:.0} %) and {} keys but received {:.1} commands/s after the topology change, while the cluster served {:.1}/s {}",
                    t.addr,
                    t.slots,
                    slot_share * 100.0,
                    t.keys,
                    attempts,
                    total,
                    if total_after >= total_before { "after it" } else { "before it" }
                ),
                explanation: format!(
                    "After slots moved, this shard owns a share of the keyspace but clients do not send it commands: \
                     their routing tables still point elsewhere. Meanwhile the other shards rejected {elsewhere_rejected:.1} \
                     commands/s ({elsewhere_moved:.1} MOVED/s). Clients that never learn the new owner keep sending to the old \
                     one (a wedged or stale client); checking per-shard INFO commandstats after a topology change shows this at once."
                ),
                numbers,
                node: Some(t.addr.clone()),
                attribution: None,
                context: Vec::new(),
            });
        }
        out
    }

    /// Business traffic that vanishes or turns into errors after a topology change.
    fn lost_traffic(&self, census: &Census) -> Vec<Finding> {
        let Some(after) = self.after else {
            return Vec::new();
        };
        let sum = |w: TimeSpan| {
            self.metrics.nodes.iter().fold(Rates::default(), |acc, n| {
                let r = Context::rates(n, w);
                Rates {
                    secs: acc.secs.max(r.secs),
                    calls: acc.calls + r.calls,
                    rejected: acc.rejected + r.rejected,
                    failed: acc.failed + r.failed,
                    moved: acc.moved + r.moved,
                    ask: acc.ask + r.ask,
                    new_connections: acc.new_connections + r.new_connections,
                }
            })
        };
        let b = sum(self.before);
        let a = sum(after);
        if b.calls < 0.5 || a.secs * 1000.0 < 3.0 * ms(self.interval_ms) {
            return Vec::new();
        }
        let ok_after = a.calls - a.failed.min(a.calls);
        if ok_after >= 0.1 * b.calls {
            return Vec::new();
        }
        // Groups seen before the change whose connections are gone by the end.
        let change_start = self.before.end;
        let settle = Timestamp(after.end.0.saturating_sub(2 * self.interval_ms));
        let vanished: Vec<&ClientGroup> = census
            .groups
            .iter()
            .filter(|g| g.first_seen < change_start && g.last_seen < settle)
            .collect();
        let attribution = match vanished.as_slice() {
            [one] => Some(Attribution::Group {
                group: one.key.label(),
                commands: business_commands(one),
            }),
            [] => None,
            many => Some(Attribution::Ambiguous {
                groups: many.iter().map(|g| g.key.label()).collect(),
                commands: Vec::new(),
            }),
        };
        let numbers = BTreeMap::from([
            ("commands_per_sec_before".to_owned(), b.calls),
            ("commands_per_sec_after".to_owned(), a.calls),
            ("rejected_per_sec_after".to_owned(), a.rejected),
            ("failed_per_sec_after".to_owned(), a.failed),
            ("window_secs_after".to_owned(), a.secs),
        ]);
        vec![Finding {
            kind: FindingKind::ClientGroupLost,
            severity: Severity::Critical,
            span: after,
            title: format!(
                "Successful commands fell from {:.1}/s to {:.1}/s after the topology change and did not return",
                b.calls, ok_after
            ),
            explanation: format!(
                "Before the slots moved the cluster executed {:.1} business commands/s; after the change it executed {:.1}/s \
                 ({:.1}/s rejected, {:.1}/s failed) while the server reported the cluster as healthy. The clients stopped \
                 sending, or every command they send is redirected or fails: a client whose node list or routing table did \
                 not survive the change (for example a cluster client that dropped its startup nodes on a connection error). \
                 Check the application's error logs for the same moment.",
                b.calls, a.calls, a.rejected, a.failed
            ),
            numbers,
            node: None,
            attribution,
            context: Vec::new(),
        }]
    }

    /// Redirect storms (sustained) versus the decaying redirects after a reshard.
    fn redirects(&self, census: &Census) -> Vec<Finding> {
        let buckets = self.buckets();
        let hot: Vec<bool> = buckets
            .iter()
            .map(|b| {
                let r = b.redirects();
                let secs = ms_to_secs(self.interval_ms);
                count_f64(r) / secs >= 1.0
                    && count_f64(r) >= REDIRECT_SHARE * count_f64(b.attempts.max(1))
            })
            .collect();
        // Runs of hot buckets.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for (k, &h) in hot.iter().enumerate() {
            if !h {
                continue;
            }
            match runs.last_mut() {
                Some(r) if r.1 + 1 == k => r.1 = k,
                _ => runs.push((k, k)),
            }
        }
        // One episode: runs a few polls apart, or within the same topology change (and the
        // 10 s after it), are one.
        let gap = usize::try_from(3_000 / self.interval_ms.max(1))
            .unwrap_or(0)
            .max(3);
        let change_of = |k: usize| {
            let t = buckets[k].span.start;
            self.summary
                .slot_moves
                .iter()
                .position(|m| m.span.start <= t && t.0 <= m.span.end.0 + 10_000)
        };
        let mut episodes: Vec<(usize, usize)> = Vec::new();
        for r in runs {
            match episodes.last_mut() {
                Some(e)
                    if r.0 - e.1 <= gap
                        || (change_of(e.1).is_some() && change_of(e.1) == change_of(r.0)) =>
                {
                    e.1 = r.1;
                }
                _ => episodes.push(r),
            }
        }
        episodes
            .into_iter()
            .map(|(start, end)| self.redirect_finding(&buckets[start..=end], census))
            .collect()
    }

    fn redirect_finding(&self, run: &[Bucket], census: &Census) -> Finding {
        let first = run.first().map_or(self.span.start, |b| b.span.start);
        let last = run.last().map_or(self.span.end, |b| b.span.end);
        let span = TimeSpan::new(first, last);
        let redirects: u64 = run.iter().map(Bucket::redirects).sum();
        let attempts: u64 = run.iter().map(|b| b.attempts).sum();
        let moved: u64 = run.iter().map(|b| b.moved).sum();
        let secs = ms_to_secs(span.millis().max(1));
        let third = (run.len() / 3).max(1);
        let share = |bs: &[Bucket]| {
            let r: u64 = bs.iter().map(Bucket::redirects).sum();
            let a: u64 = bs.iter().map(|b| b.attempts).sum();
            count_f64(r) / count_f64(a.max(1))
        };
        let early = share(&run[..third]);
        let late = share(&run[run.len() - third..]);
        let reaches_end = last.0 + 2 * self.interval_ms >= self.span.end.0;
        let long = span.millis() >= 30_000 || (reaches_end && run.len() >= 5);
        let decaying = late < 0.5 * early;
        let sustained = long && !decaying;
        // Per command shares over the run.
        let mut per_cmd: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for b in run {
            for (c, d) in &b.commands {
                let e = per_cmd.entry(c.clone()).or_default();
                e.0 += d.0;
                e.1 += d.1;
            }
        }
        let total_rejected: u64 = per_cmd.values().map(|(_, r)| r).sum();
        let mut carriers: Vec<(String, f64)> = per_cmd
            .iter()
            .filter(|(c, (calls, rej))| {
                // The commands that carry the redirects: a real part of all rejections.
                crate::metrics::is_business_command(c)
                    && *rej > 0
                    && count_f64(*rej) >= 0.05 * count_f64(total_rejected.max(1))
                    && count_f64(*rej) >= 0.01 * count_f64(calls + rej)
            })
            .map(|(c, (calls, rej))| (c.clone(), count_f64(*rej) / count_f64(calls + rej)))
            .collect();
        carriers.sort_by(|a, b| b.1.total_cmp(&a.1));
        let attribution = attribute(
            census,
            &carriers.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>(),
        );
        let mut numbers = BTreeMap::from([
            ("redirects_per_sec".to_owned(), count_f64(redirects) / secs),
            ("moved_per_sec".to_owned(), count_f64(moved) / secs),
            (
                "redirect_share".to_owned(),
                count_f64(redirects) / count_f64(attempts.max(1)),
            ),
            ("redirect_share_first_third".to_owned(), early),
            ("redirect_share_last_third".to_owned(), late),
            ("duration_secs".to_owned(), secs),
        ]);
        for (c, s) in &carriers {
            numbers.insert(format!("moved_share:{c}"), *s);
        }
        let shares: Vec<String> = carriers
            .iter()
            .map(|(c, s)| format!("{c} {:.1} %", s * 100.0))
            .collect();
        let near_change = self
            .summary
            .slot_moves
            .iter()
            .any(|m| m.span.start.0 <= last.0 && first.0 <= m.span.end.0 + 10_000);
        if sustained {
            Finding {
                kind: FindingKind::RedirectStorm,
                severity: Severity::Critical,
                span,
                title: format!(
                    "Sustained redirect storm: {:.1} redirects/s, {:.1} % of commands for {}{}",
                    count_f64(redirects) / secs,
                    count_f64(redirects) * 100.0 / count_f64(attempts.max(1)),
                    format_millis(span.millis()),
                    if shares.is_empty() { String::new() } else { format!(" ({})", shares.join(", ")) }
                ),
                explanation: format!(
                    "Redirections did not decay: the share of commands answered MOVED/ASK was {:.1} % at the start and {:.1} % \
                     at the end. A stale routing table corrects itself within a few commands after a reshard; a sustained \
                     share means a client keeps sending to the wrong node — typically every node address rewritten to one \
                     endpoint (an address remap), or a client routing keyless commands to a random node. Server counters are \
                     global: the commands carrying the redirects tie them to the clients that use them.",
                    early * 100.0,
                    late * 100.0
                ),
                numbers,
                node: None,
                attribution: Some(attribution),
                context: Vec::new(),
            }
        } else {
            Finding {
                kind: FindingKind::RedirectsDecayed,
                severity: Severity::Info,
                span,
                title: format!(
                    "{} redirects over {}{}, decaying from {:.1} % to {:.1} % of commands",
                    redirects,
                    format_millis(span.millis()),
                    if near_change { " around the topology change" } else { "" },
                    early * 100.0,
                    late * 100.0
                ),
                explanation: "Redirects that fade within seconds are what clients with a stale routing table produce \
                              right after slots move: each MOVED teaches them the new owner. This is normal."
                    .to_owned(),
                numbers,
                node: None,
                attribution: Some(attribution),
                context: Vec::new(),
            }
        }
    }

    /// Cluster-wide buckets of one poll interval: redirects, attempts and per-command counts.
    fn buckets(&self) -> Vec<Bucket> {
        let step = self.interval_ms.max(1);
        let origin = self.span.start.0;
        let n = usize::try_from(self.span.millis() / step + 1).unwrap_or(0);
        let mut out: Vec<Bucket> = (0..n)
            .map(|k| {
                let s = origin + u64::try_from(k).unwrap_or(0) * step;
                Bucket {
                    span: TimeSpan::new(Timestamp(s), Timestamp(s + step)),
                    ..Bucket::default()
                }
            })
            .collect();
        for node in &self.metrics.nodes {
            for i in &node.intervals {
                let k = usize::try_from(i.span.end.0.saturating_sub(origin) / step).unwrap_or(0);
                if let Some(b) = out.get_mut(k) {
                    b.add(i);
                }
            }
        }
        out
    }

    /// New connections per second far above the connections open.
    fn churn(&self, census: &Census) -> Vec<Finding> {
        let mut runs: Vec<(TimeSpan, f64, f64, NodeAddr)> = Vec::new();
        for node in &self.metrics.nodes {
            let churning: Vec<&Interval> = node.intervals.iter().collect();
            let mut run: Vec<&Interval> = Vec::new();
            let flush = |run: &mut Vec<&Interval>,
                         runs: &mut Vec<(TimeSpan, f64, f64, NodeAddr)>| {
                if run.len() >= 3 {
                    let secs: f64 = run.iter().map(|i| i.secs()).sum();
                    let new: u64 = run.iter().map(|i| i.connections_received).sum();
                    let open: u64 = run.iter().filter_map(|i| i.connected_clients).sum();
                    let open = count_f64(open) / count_f64(run.len() as u64);
                    runs.push((
                        TimeSpan::new(run[0].span.start, run[run.len() - 1].span.end),
                        count_f64(new) / secs,
                        open,
                        node.addr.clone(),
                    ));
                }
                run.clear();
            };
            for i in churning {
                let new_per_sec = count_f64(i.connections_received) / i.secs();
                let open = count_f64(i.connected_clients.unwrap_or(0).saturating_sub(1));
                if new_per_sec >= 2.0 && new_per_sec >= CHURN_RATIO * open.max(1.0) {
                    run.push(i);
                } else {
                    flush(&mut run, &mut runs);
                }
            }
            flush(&mut run, &mut runs);
        }
        if runs.is_empty() {
            return Vec::new();
        }
        let start = runs
            .iter()
            .map(|r| r.0.start)
            .min()
            .unwrap_or(self.span.start);
        let end = runs.iter().map(|r| r.0.end).max().unwrap_or(self.span.end);
        let new_per_sec: f64 = runs.iter().map(|r| r.1).sum();
        let open: f64 = runs.iter().map(|r| r.2).sum();
        let worst = runs
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|r| r.3.clone());
        let span = TimeSpan::new(start, end);
        // Topology-refresh fingerprints over the same span.
        let mut refresh: BTreeMap<String, f64> = BTreeMap::new();
        for node in &self.metrics.nodes {
            let t = node.total_in(span);
            for c in REFRESH_COMMANDS {
                let n = t.commands.get(*c).map_or(0, |d| d.calls);
                if n > 0 {
                    *refresh.entry((*c).to_owned()).or_default() += t.rate(n);
                }
            }
        }
        // Groups seen opening connections during the churn (a lower bound: connections shorter
        // than a poll are never listed); only those opening a fair share of what the busiest
        // group opened are candidates.
        let opened: Vec<(usize, u64)> = census
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (i, g.new_in(span)))
            .filter(|&(_, n)| n >= 3)
            .collect();
        let busiest = opened.iter().map(|&(_, n)| n).max().unwrap_or(0);
        let churners: Vec<&ClientGroup> = opened
            .iter()
            .filter(|&&(_, n)| n * 4 >= busiest)
            .map(|&(i, _)| &census.groups[i])
            .collect();
        let attribution = match churners.as_slice() {
            [] => Attribution::Unknown {
                commands: Vec::new(),
            },
            [one] => Attribution::Group {
                group: one.key.label(),
                commands: business_commands(one),
            },
            many => Attribution::Ambiguous {
                groups: many.iter().map(|g| g.key.label()).collect(),
                commands: Vec::new(),
            },
        };
        let lifetime = if new_per_sec > 0.0 {
            open / new_per_sec
        } else {
            0.0
        };
        let mut numbers = BTreeMap::from([
            ("new_connections_per_sec".to_owned(), new_per_sec),
            ("open_connections".to_owned(), open),
            ("mean_lifetime_secs".to_owned(), lifetime),
            (
                "nodes_churning".to_owned(),
                count_f64(runs.iter().map(|r| &r.3).collect::<BTreeSet<_>>().len() as u64),
            ),
        ]);
        for (c, r) in &refresh {
            numbers.insert(format!("refresh_per_sec:{c}"), *r);
        }
        vec![Finding {
            kind: FindingKind::ConnectionChurn,
            severity: Severity::Warning,
            span,
            title: format!(
                "Connection churn: {new_per_sec:.1} new connections/s against {open:.0} open (connections live ~{lifetime:.1} s)"
            ),
            explanation: format!(
                "Open connections stay flat while new ones arrive far faster: connections are closed and opened again \
                 rather than leaked (a leak would show open connections climbing to the pool limit). Cluster clients do \
                 this when they rebuild themselves — redis-py closes every connection and reloads the slot map each \
                 `reinitialize_steps` (default 5) MOVED — so churn usually follows a redirect storm; the topology-refresh \
                 commands ({}) count the rebuilds. Worst node: {}.",
                if refresh.is_empty() {
                    "none seen".to_owned()
                } else {
                    refresh.iter().map(|(c, r)| format!("{c} {r:.1}/s")).collect::<Vec<_>>().join(", ")
                },
                worst.as_ref().map_or_else(|| "?".to_owned(), ToString::to_string)
            ),
            numbers,
            node: worst,
            attribution: Some(attribution),
            context: Vec::new(),
        }]
    }

    /// Slots without an owner, or nodes that disagree about owners, at the end.
    fn coverage(&self) -> Vec<Finding> {
        let unowned = self.owners.iter().filter(|o| o.is_none()).count();
        if self.owners.is_empty()
            || (unowned == 0 && self.disagreements == 0)
            || self.ids.is_empty()
        {
            return Vec::new();
        }
        let at_end = TimeSpan::new(Timestamp(self.span.end.0.saturating_sub(1)), self.span.end);
        let numbers = BTreeMap::from([
            ("unowned_slots".to_owned(), count_f64(unowned as u64)),
            (
                "disputed_slots".to_owned(),
                count_f64(self.disagreements as u64),
            ),
        ]);
        vec![Finding {
            kind: FindingKind::SlotCoverage,
            severity: if unowned > 0 { Severity::Critical } else { Severity::Warning },
            span: at_end,
            title: format!(
                "At the end of the recording {unowned} slots had no owner and nodes disagreed about {} slots",
                self.disagreements
            ),
            explanation: "Slots without an owner answer CLUSTERDOWN; slots the nodes disagree about are answered \
                          differently depending on which node a client asks. Both are visible in each node's CLUSTER \
                          SHARDS / NODES; disagreement that lasts longer than gossip takes (seconds) points at a failed \
                          or half-finished migration."
                .to_owned(),
            numbers,
            node: None,
            attribution: None,
            context: Vec::new(),
        }]
    }
}

fn ms(v: u64) -> f64 {
    count_f64(v)
}

/// One poll interval of the whole cluster.
#[derive(Clone, Debug, Default)]
struct Bucket {
    span: TimeSpan,
    moved: u64,
    ask: u64,
    attempts: u64,
    /// Per command: (calls, rejected).
    commands: BTreeMap<String, (u64, u64)>,
}

impl Bucket {
    fn add(&mut self, i: &Interval) {
        self.moved += i.error("MOVED");
        self.ask += i.error("ASK");
        self.attempts += i.business().attempts();
        for (c, d) in &i.commands {
            let e = self.commands.entry(c.clone()).or_default();
            e.0 += d.calls;
            e.1 += d.rejected;
        }
    }

    fn redirects(&self) -> u64 {
        self.moved + self.ask
    }
}

fn business_commands(g: &ClientGroup) -> Vec<String> {
    g.commands
        .keys()
        .filter(|c| crate::metrics::is_business_command(c))
        .cloned()
        .collect()
}

/// Ties commands to the client groups seen running them.
fn attribute(census: &Census, commands: &[String]) -> Attribution {
    if commands.is_empty() {
        return Attribution::Unknown {
            commands: Vec::new(),
        };
    }
    let mut owners: BTreeSet<usize> = BTreeSet::new();
    let mut exclusive: BTreeSet<usize> = BTreeSet::new();
    for c in commands {
        let users = census.groups_using(c);
        if let [one] = users.as_slice() {
            exclusive.insert(*one);
        }
        owners.extend(users);
    }
    match (exclusive.len(), owners.len()) {
        (_, 0) => Attribution::Unknown {
            commands: commands.to_vec(),
        },
        (1, _) | (_, 1) => {
            let g = exclusive
                .iter()
                .next()
                .or_else(|| owners.iter().next())
                .copied()
                .unwrap_or(0);
            Attribution::Group {
                group: census.groups[g].key.label(),
                commands: commands
                    .iter()
                    .filter(|c| census.groups[g].commands.contains_key(*c))
                    .cloned()
                    .collect(),
            }
        }
        _ => Attribution::Ambiguous {
            groups: owners
                .iter()
                .map(|&g| census.groups[g].key.label())
                .collect(),
            commands: commands.to_vec(),
        },
    }
}

/// Client groups running a library version with a known cluster-routing defect.
fn defect_findings(census: &Census, span: TimeSpan) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in &census.groups {
        let (Some(lib), Some(ver)) = (&g.key.lib_name, &g.key.lib_ver) else {
            continue;
        };
        for d in known_defects(lib, ver) {
            out.push(Finding {
                kind: FindingKind::KnownClientDefect,
                severity: Severity::Warning,
                span: TimeSpan::new(g.first_seen.max(span.start), Timestamp(g.last_seen.0 + 1)),
                title: format!("{} runs {lib} {ver}: {}", g.key.label(), d.title),
                explanation: format!("{} Upstream: {}.", d.explanation, d.upstream),
                numbers: BTreeMap::from([
                    ("connections_seen".to_owned(), count_f64(g.connections_seen)),
                    ("hosts".to_owned(), count_f64(g.hosts.len() as u64)),
                ]),
                node: None,
                attribution: Some(Attribution::Group {
                    group: g.key.label(),
                    commands: business_commands(g),
                }),
                context: Vec::new(),
            });
        }
    }
    out
}

/// The first application error after each other piece of evidence that precedes it (cloud events
/// such as a migration start), and after the first slot move the collector saw.
fn relate_evidence(annotations: &[Annotation], summary: &Summary) -> Vec<String> {
    let is_error =
        |a: &Annotation| a.fields.get("kind").map(String::as_str) == Some(APP_ERROR_KIND);
    let Some(first_error) = annotations
        .iter()
        .filter(|a| is_error(a))
        .min_by_key(|a| a.t)
    else {
        return Vec::new();
    };
    let class = first_error
        .fields
        .get("class")
        .map_or_else(String::new, |c| format!(" ({c})"));
    let mut out = Vec::new();
    let mut before: Vec<&Annotation> = annotations
        .iter()
        .filter(|a| !is_error(a) && a.t <= first_error.t)
        .collect();
    before.sort_by_key(|a| a.t);
    for a in before.iter().rev().take(3).rev() {
        out.push(format!(
            "first client error{class} {} after \"{}\" ({})",
            format_millis(first_error.t.millis_since(a.t)),
            a.text,
            a.source
        ));
    }
    if let Some(m) = summary.slot_moves.iter().min_by_key(|m| m.span.start) {
        let (gap, side) = if first_error.t >= m.span.start {
            (first_error.t.millis_since(m.span.start), "after")
        } else {
            (m.span.start.millis_since(first_error.t), "before")
        };
        out.push(format!(
            "first client error{class} {} {side} the collector saw slots begin to move",
            format_millis(gap)
        ));
    }
    out
}

/// Places a finding relative to outside evidence and to the topology changes.
fn relate(span: TimeSpan, annotations: &[Annotation], summary: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(a) = annotations
        .iter()
        .filter(|a| a.t <= span.start)
        .max_by_key(|a| a.t)
    {
        out.push(format!(
            "starts {} after \"{}\" ({})",
            format_millis(span.start.millis_since(a.t)),
            a.text,
            a.source
        ));
    }
    if let Some(a) = annotations
        .iter()
        .filter(|a| a.t > span.start && a.t < span.end)
        .min_by_key(|a| a.t)
    {
        out.push(format!(
            "\"{}\" ({}) follows {} after it starts",
            a.text,
            a.source,
            format_millis(a.t.millis_since(span.start))
        ));
    }
    if let Some(m) = summary
        .slot_moves
        .iter()
        .filter(|m| m.span.start <= span.start)
        .max_by_key(|m| m.span.start)
    {
        out.push(format!(
            "starts {} after slots began moving ({} slots)",
            format_millis(span.start.millis_since(m.span.start)),
            m.slots
        ));
    }
    out
}
