//! When redis-py routes a keyed command as if it had no key: from 7.1.0, `execute_command`
//! looks for the command's request policy (`_policy_resolver`, whose static records name only
//! `COMMAND` and search-module commands), and without one falls back to the slot, but only
//! while the client has a default node (8.1.0 `redis/asyncio/cluster.py` l. 1130-1146, 8.0.0
//! l. 981-996, 7.2.0 l. 849-865):
//!
//! ```text
//! if not self.get_default_node():
//!     slot = None
//! else:
//!     slot = await self._determine_slot(*args)
//! if slot is None:                      # 7.1.x: `if not slot:`, slot 0 too
//!     command_policies = CommandPolicies()   # DEFAULT_KEYLESS
//! ```
//!
//! The policy is taken once, before the retry loop, so every attempt of such a command goes to
//! `get_random_primary_or_all_nodes` (l. 855-868): a random primary of `nodes_cache`, which
//! answers `MOVED` unless it owns the slot; the retry after that `MOVED` goes to the slot's
//! owner. The default node is `None` from `NodesManager.aclose()` (l. 2426-2427: every
//! `RedisCluster.aclose()`, the one after each `reinitialize_steps`-th MOVED included, and a
//! failed initialisation) until an initialisation sets it (l. 2409). Under many commands in
//! flight this feeds itself: the commands that start while a reset is pending meet `MOVED` at
//! random primaries, and every fifth of those `MOVED`s resets the client again (measured live:
//! redis-py 8.1.0, 191 in flight, a migration and no fault: 592 MOVED, 545 of them for slots
//! that never moved, sent to a node the slot cache did not name).

use crate::slot::Slot;

/// Which commands a release routes to a random primary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Keyless {
    /// 4.4.0–7.0.x: every keyed command goes to its slot's owner.
    Never,
    /// 7.1.x: without a default node, and a key of slot 0 always (`if not slot`).
    NoDefaultOrSlotZero,
    /// 7.2.0+: without a default node.
    NoDefault,
}

impl Keyless {
    /// Whether a command for `slot` that starts while the client has (`default_known`) or has
    /// not a default node goes to a random primary.
    pub(super) fn applies(self, default_known: bool, slot: Slot) -> bool {
        match self {
            Keyless::Never => false,
            Keyless::NoDefault => !default_known,
            Keyless::NoDefaultOrSlotZero => !default_known || slot.get() == 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_routes_by_key_unless_it_lost_its_default_node() {
        let (zero, other) = (Slot::new(0).unwrap(), Slot::new(866).unwrap());
        assert!(!Keyless::Never.applies(false, other));
        assert!(Keyless::NoDefault.applies(false, other));
        assert!(!Keyless::NoDefault.applies(true, other));
        assert!(!Keyless::NoDefault.applies(true, zero));
        assert!(Keyless::NoDefaultOrSlotZero.applies(true, zero));
        assert!(!Keyless::NoDefaultOrSlotZero.applies(true, other));
        assert!(Keyless::NoDefaultOrSlotZero.applies(false, other));
    }
}
