//! Inputs shared by the unit tests of the evidence readers: incident 1's cloud event log and
//! application log, and the options they are read with.

use super::format::Format;
use super::options::Options;
use crate::time::Timestamp;

/// 2025-03-14 05:05:00 UTC: the recording of incident 1 starts a few minutes before the scale-out.
pub(super) fn start() -> Timestamp {
    Timestamp::from_civil(2025, 3, 14, 5, 5, 0, 0).unwrap()
}

/// 2025-03-14 at `h:mi:s` UTC.
pub(super) fn at(h: u32, mi: u32, s: u32) -> Timestamp {
    Timestamp::from_civil(2025, 3, 14, h, mi, s, 0).unwrap()
}

/// Options of `format`, dated by the recording's [`start`].
pub(super) fn opts(format: Format) -> Options {
    Options {
        format,
        date: None,
        recording_start: Some(start()),
        source: None,
    }
}

/// Incident 1's cloud event log, times of day only.
pub(super) const INCIDENT_CLOUD: &str = "\
05:11:29  Scaling out from 1 to 2 node groups
05:15:39  node group 0002 added
05:17:18  Migrating slots from node groups 0001 to 0002 to rebalance slots
05:21:24  Completed migrating 8192 of 8192 slots
";

/// Incident 1's application log: errors, one traceback, one line that is not an error.
pub(super) const INCIDENT_APP: &str = "\
2025-03-14 05:17:29,870 INFO app.web GET /checkout 200
2025-03-14 05:17:30,123 ERROR app.cache RedisClusterException: Redis Cluster cannot be connected. Please provide at least one reachable node: None
2025-03-14 05:17:30,456 ERROR app.cache RedisClusterException: Redis Cluster cannot be connected. Please provide at least one reachable node: None
2025-03-14 05:17:30,789 ERROR app.cache request failed
Traceback (most recent call last):
  File \"/app/cache.py\", line 42, in get
    return self.client.get(key)
redis.exceptions.ConnectionError: Error 111 connecting to 10.0.1.17:6379. Connection refused.
2025-03-14 05:17:30,901 - app.cache - ERROR - Timeout reading from 10.0.1.18:6379 TimeoutError
2025-03-14 05:17:31,010 ERROR app.cache RedisClusterException: Redis Cluster cannot be connected. Please provide at least one reachable node: None
";
