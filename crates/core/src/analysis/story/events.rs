//! What the collector saw the cluster do, as story steps: the creation, nodes that stopped
//! answering, joined or left, slots that moved and replicas that took over.

use crate::moment::at;
use crate::recording::{Discovery, GoneReason};
use crate::time::{format_millis, Timestamp};

use super::super::context::Context;
use super::super::outage::outages;
use super::step::{Step, StepKind};

/// The steps of the cluster's own events, in no particular order.
pub(super) fn cluster_steps(ctx: &Context<'_>) -> Vec<Step> {
    let start = ctx.span.start;
    let mut out = Vec::new();
    let creation: Vec<_> = ctx
        .summary
        .slot_moves
        .iter()
        .filter(|m| m.creation)
        .collect();
    if let (Some(first), Some(last)) = (
        creation.iter().map(|m| m.span.start).min(),
        creation.iter().map(|m| m.span.end).max(),
    ) {
        let slots: usize = creation.iter().map(|m| m.slots).sum();
        let owners = creation
            .iter()
            .filter_map(|m| m.to.as_ref())
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let mut s = Step::seen(
            first,
            Some(last),
            StepKind::Creation,
            format!("the cluster is created: {slots} slots assigned to {owners} nodes"),
        );
        s.evidence
            .push("slots without an owner in the first topology views, then assigned".to_owned());
        out.push(s);
    }
    let first_round = Timestamp(start.0 + 2 * ctx.interval_ms);
    for n in &ctx.summary.nodes {
        if let Discovery::Topology { from } = &n.via {
            if n.discovered > first_round {
                let mut s = Step::seen(
                    n.discovered,
                    None,
                    StepKind::NodeAdded,
                    format!("node {} joins the cluster", n.addr),
                );
                s.evidence
                    .push(format!("first listed by {from}'s topology"));
                out.push(s);
            }
        }
        for (t, why) in &n.gone {
            if *why == GoneReason::LeftTopology {
                let mut s = Step::seen(
                    *t,
                    None,
                    StepKind::NodeLeft,
                    format!("node {} leaves the cluster", n.addr),
                );
                s.evidence
                    .push("no node's topology lists it any more".to_owned());
                out.push(s);
            }
        }
    }
    let outages = outages(ctx);
    for o in &outages {
        let failed: u64 = ctx
            .summary
            .failures
            .iter()
            .filter(|f| {
                f.addr == o.node
                    && f.span.end >= o.last_answer
                    && o.answered_again.is_none_or(|b| f.span.start <= b)
            })
            .map(|f| f.count)
            .sum();
        let text = match o.answered_again {
            Some(_) if o.restarted => format!(
                "node {} restarts ({} without an answer)",
                o.node,
                format_millis(o.millis(ctx.span.end))
            ),
            Some(_) => format!(
                "node {} stops answering for {}",
                o.node,
                format_millis(o.millis(ctx.span.end))
            ),
            None => format!("node {} stops answering and does not come back", o.node),
        };
        let mut s = Step::seen(o.last_answer, o.answered_again, StepKind::NodeStopped, text);
        s.evidence.push(format!(
            "last INFO reply at {}{}",
            at(o.last_answer, start),
            o.answered_again
                .map_or_else(String::new, |b| format!(", next at {}", at(b, start)))
        ));
        if failed > 0 {
            s.evidence
                .push(format!("{failed} polls of it failed meanwhile"));
        }
        out.push(s);
    }
    for k in super::super::kills::kills(ctx) {
        let mut s = Step::seen(
            k.at,
            None,
            StepKind::ConnectionsKilled,
            format!("client connections are killed on node {}", k.node),
        );
        s.evidence.push(format!(
            "INFO commandstats: CLIENT KILL called {} times",
            k.calls
        ));
        out.push(s);
    }
    for m in ctx.summary.changes() {
        if let Some(s) = super::failover::promotion(ctx, m, &outages) {
            out.push(s);
            continue;
        }
        let mut s = Step::seen(
            m.span.start,
            Some(m.span.end),
            StepKind::SlotsMoved,
            format!(
                "{} slots move from {} to {} (over {})",
                m.slots,
                ctx.node_name(m.from.as_ref()),
                ctx.node_name(m.to.as_ref()),
                format_millis(m.span.millis())
            ),
        );
        s.evidence
            .push("the nodes' topology views (CLUSTER SHARDS / NODES)".to_owned());
        out.push(s);
    }
    out
}
