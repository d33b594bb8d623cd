//! Cluster bus messages around a failover, as `CLUSTER INFO` counts them
//! (`cluster_stats_messages_<type>_sent` / `_received`, recorded in the `cluster_info` section of
//! each `INFO` sample). A replica that runs for election broadcasts `FAILOVER_AUTH_REQUEST`
//! (`auth-req`) and counts the masters' votes as `auth-ack` received; a coordinated manual
//! failover (`CLUSTER FAILOVER` without option) starts with `MFSTART` to its master; `FORCE` skips
//! the master but still holds the election; `TAKEOVER` holds none (the replica takes a new epoch
//! alone). A node that agrees a master has failed broadcasts `FAIL`. Redis `cluster_legacy.c`
//! (7.0: `clusterRequestFailoverAuth`, `clusterSendMFStart`, `clusterSendFail`; `CLUSTER FAILOVER`'s
//! options in `clusterCommand`), the same in Valkey 8.1.

use serde::Serialize;

use crate::info::InfoReport;

/// The `INFO` section the collector records `CLUSTER INFO` under.
pub const SECTION: &str = "cluster_info";

/// Bus messages of one node over an interval (counter deltas), those a failover shows in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BusMessages {
    /// Failover authorisation requests sent (a replica running for election).
    pub auth_req_sent: u64,
    /// Votes received (`auth-ack`).
    pub auth_ack_received: u64,
    /// Manual failover starts sent (a replica asking its master to pause: `CLUSTER FAILOVER`).
    pub mfstart_sent: u64,
    /// `FAIL` messages sent (this node declared a master failed).
    pub fail_sent: u64,
    /// Whether the later sample counted bus messages at all (`cluster_stats_messages_sent`):
    /// without, no message above can be told from none.
    pub counted: bool,
}

/// The bus counters of one sample, as [`BusMessages`] reads them: the fold looks each sample's up
/// once, when it is the later end of an interval, and keeps them for when it is the earlier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BusCounters {
    auth_req_sent: u64,
    auth_ack_received: u64,
    mfstart_sent: u64,
    fail_sent: u64,
    counted: bool,
}

impl BusCounters {
    /// The counters `report` holds (0 for those it does not).
    pub fn of(report: &InfoReport) -> BusCounters {
        // Whole field names: this runs for every `INFO` sample a recording holds.
        let n = |name: &str| report.get_u64(SECTION, name).unwrap_or(0);
        BusCounters {
            auth_req_sent: n("cluster_stats_messages_auth-req_sent"),
            auth_ack_received: n("cluster_stats_messages_auth-ack_received"),
            mfstart_sent: n("cluster_stats_messages_mfstart_sent"),
            fail_sent: n("cluster_stats_messages_fail_sent"),
            counted: report.get(SECTION, "cluster_stats_messages_sent").is_some(),
        }
    }
}

impl BusMessages {
    /// The messages counted between two samples' counters (`delta` takes a counter's two
    /// values).
    pub fn of_counters(
        prev: &BusCounters,
        cur: &BusCounters,
        delta: impl Fn(u64, u64) -> u64,
    ) -> Self {
        BusMessages {
            auth_req_sent: delta(prev.auth_req_sent, cur.auth_req_sent),
            auth_ack_received: delta(prev.auth_ack_received, cur.auth_ack_received),
            mfstart_sent: delta(prev.mfstart_sent, cur.mfstart_sent),
            fail_sent: delta(prev.fail_sent, cur.fail_sent),
            counted: cur.counted,
        }
    }

    /// Whether nothing was counted (not even that the messages are counted).
    pub fn is_empty(&self) -> bool {
        *self == BusMessages::default()
    }

    /// Adds `other`'s counts (counted when either was).
    pub fn add(&mut self, other: &BusMessages) {
        self.counted |= other.counted;
        self.auth_req_sent += other.auth_req_sent;
        self.auth_ack_received += other.auth_ack_received;
        self.mfstart_sent += other.mfstart_sent;
        self.fail_sent += other.fail_sent;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages counted between two samples, as the metrics' fold counts them.
    fn between(
        prev: &InfoReport,
        cur: &InfoReport,
        delta: impl Fn(u64, u64) -> u64,
    ) -> BusMessages {
        BusMessages::of_counters(&BusCounters::of(prev), &BusCounters::of(cur), delta)
    }

    fn report(fields: &[(&str, u64)]) -> InfoReport {
        let mut r = InfoReport::default();
        r.sections.insert(
            SECTION.into(),
            fields
                .iter()
                .map(|(k, v)| (format!("cluster_stats_messages_{k}"), v.to_string()))
                .collect(),
        );
        r
    }

    #[test]
    fn messages_are_counter_deltas_absent_counters_zero() {
        let prev = report(&[("auth-req_sent", 4), ("sent", 100)]);
        let cur = report(&[
            ("auth-req_sent", 5),
            ("auth-ack_received", 2),
            ("mfstart_sent", 1),
            ("sent", 108),
        ]);
        let m = between(&prev, &cur, |p, c| c.saturating_sub(p));
        assert_eq!(
            m,
            BusMessages {
                auth_req_sent: 1,
                auth_ack_received: 2,
                mfstart_sent: 1,
                fail_sent: 0,
                counted: true,
            }
        );
        let none = between(&prev, &prev, |p, c| c - p);
        assert!(none.counted && none.auth_req_sent == 0);
        let unknown = between(&InfoReport::default(), &InfoReport::default(), |p, c| c - p);
        assert!(unknown.is_empty());
    }
}
