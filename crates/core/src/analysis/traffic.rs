//! Traffic of each shard before the first and after the last topology change.

use super::context::Context;
use super::shard_traffic::{Rates, ShardTraffic};

/// Every polled node's traffic before the first and after the last topology change (zero after
/// when there was none), with the slots it owns and the keys it holds at the end.
pub(super) fn shard_traffic(ctx: &Context<'_>) -> Vec<ShardTraffic> {
    ctx.metrics
        .nodes
        .iter()
        .map(|n| ShardTraffic {
            addr: n.addr.clone(),
            id: n.id.clone(),
            slots: ctx.slots_of(n.id.as_ref()),
            keys: n.intervals.last().map_or(0, |i| i.keys),
            before: Rates::of(n, ctx.before),
            after: ctx.after.map_or_else(Rates::default, |w| Rates::of(n, w)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{
        addr, finishing, info, reshard_lines, round, topology, view, Counters, A, T0,
    };

    #[test]
    fn traffic_is_split_at_the_topology_change() {
        let f = finishing(&reshard_lines(true));
        let t = &f.shard_traffic;
        assert_eq!(t.len(), 2);
        let a = t.iter().find(|t| t.addr == addr(7000)).unwrap();
        let b = t.iter().find(|t| t.addr == addr(7001)).unwrap();
        assert_eq!((a.slots, b.slots), (8192, 8192));
        assert!((a.before.calls - 200.0).abs() < 1e-9, "{a:?}");
        assert!((a.after.calls - 100.0).abs() < 1e-9, "{a:?}");
        assert!((b.before.calls).abs() < 1e-9, "{b:?}");
        assert!((b.after.calls - 100.0).abs() < 1e-9, "{b:?}");
        assert_eq!(b.keys, 500);
    }

    #[test]
    fn without_a_topology_change_everything_is_before() {
        let mut lines = vec![topology(T0, 7000, A, view(A, "0-16383", ""))];
        let mut c = Counters {
            uptime: 10,
            connected: 3,
            ..Counters::default()
        };
        for k in 0..10u64 {
            c.uptime += 1;
            c.commands = vec![("get", 50 * k, 0)];
            c.moved = 2 * k;
            lines.push(info(T0 + k * 1000, 7000, A, &c));
            lines.push(round(T0 + k * 1000, k));
        }
        let f = finishing(&lines);
        let a = &f.shard_traffic[0];
        assert_eq!(a.slots, 16384);
        assert!((a.before.calls - 50.0).abs() < 1e-9, "{a:?}");
        assert!((a.before.moved - 2.0).abs() < 1e-9, "{a:?}");
        assert_eq!(a.after, Rates::default());
    }
}
