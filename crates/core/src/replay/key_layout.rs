//! A slot layout for a recording that has no topology (one imported from metrics): the replay
//! needs an owner for every slot, and the keys are what such a recording says of where the slots
//! are. Each node gets one contiguous range, in address order (as `redis-cli --cluster create`
//! lays a new cluster out), its share of the slots its share of the keys (largest remainders, so
//! the ranges cover all 16384); with no key anywhere, equal shares.

use crate::node::NodeAddr;
use crate::slot::{Slot, SlotRange, SLOT_COUNT};

/// The assumed layout for nodes with `keys` each: `(range, owner)` in slot order. Nodes with no
/// keys own nothing, unless no node has any. Empty for no nodes.
pub fn key_layout(nodes: &[(NodeAddr, u64)]) -> Vec<(SlotRange, NodeAddr)> {
    let mut nodes: Vec<(NodeAddr, u64)> = nodes.to_vec();
    nodes.sort_by(|a, b| a.0.cmp(&b.0));
    let total: u64 = nodes.iter().map(|(_, k)| k).sum();
    let weights: Vec<u64> = if total == 0 {
        vec![1; nodes.len()]
    } else {
        nodes.iter().map(|(_, k)| *k).collect()
    };
    let sum: u64 = weights.iter().sum();
    if sum == 0 {
        return Vec::new();
    }
    let slots = u64::from(SLOT_COUNT);
    let mut shares: Vec<u64> = weights.iter().map(|w| w * slots / sum).collect();
    let mut left = slots - shares.iter().sum::<u64>();
    // Largest remainders first (ties to the earlier address).
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(weights[i] * slots % sum));
    for &i in order.iter().cycle().take(weights.len() * 2) {
        if left == 0 {
            break;
        }
        if weights[i] > 0 {
            shares[i] += 1;
            left -= 1;
        }
    }
    let mut out = Vec::new();
    let mut next = 0u64;
    for ((addr, _), share) in nodes.iter().zip(shares) {
        if share == 0 {
            continue;
        }
        let last = next + share - 1;
        let slot = |n: u64| Slot::new(u16::try_from(n).unwrap_or(u16::MAX));
        if let (Some(a), Some(b)) = (slot(next), slot(last)) {
            if let Some(r) = SlotRange::new(a, b) {
                out.push((r, addr.clone()));
            }
        }
        next = last + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(p: u16) -> NodeAddr {
        format!("10.0.0.1:{p}").parse().unwrap()
    }

    fn sizes(l: &[(SlotRange, NodeAddr)]) -> Vec<(u16, usize)> {
        l.iter().map(|(r, a)| (a.port(), r.len())).collect()
    }

    #[test]
    fn shares_follow_the_keys_and_cover_every_slot() {
        let l = key_layout(&[(addr(7002), 100), (addr(7000), 100), (addr(7001), 100)]);
        assert_eq!(sizes(&l), [(7000, 5462), (7001, 5461), (7002, 5461)]);
        assert_eq!(l[0].0.start().get(), 0);
        assert_eq!(l[2].0.end().get(), 16383);
        let l = key_layout(&[(addr(7000), 300), (addr(7001), 100), (addr(7002), 0)]);
        assert_eq!(
            sizes(&l),
            [(7000, 12288), (7001, 4096)],
            "no keys, no slots"
        );
        let l = key_layout(&[(addr(7000), 0), (addr(7001), 0)]);
        assert_eq!(
            sizes(&l),
            [(7000, 8192), (7001, 8192)],
            "no keys anywhere: equal"
        );
        assert!(key_layout(&[]).is_empty());
    }
}
