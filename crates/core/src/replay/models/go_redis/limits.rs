//! The go-redis model's settings ([`Limits`]): `ClusterOptions` as the model reads them, the
//! retry backoff they give, and Go durations as the options are written.

use super::DEFAULT_READ_TIMEOUT_MS;
use crate::replay::SimRng;

/// The client's settings the model reads.
pub(super) struct Limits {
    /// `MaxRedirects`: attempts after the first.
    pub(super) max_redirects: u32,
    /// `MaxRetries`: per-node retries.
    pub(super) max_retries: u32,
    /// `ReadTimeout` (`None`: waits not modelled).
    pub(super) timeout_ms: Option<u64>,
    /// `PoolSize`: connections a node's pool holds at most.
    pub(super) pool_size: usize,
    /// `PoolTimeout`, in µs.
    pub(super) pool_timeout_us: u64,
    /// `MinRetryBackoff`, in µs (0: no sleep).
    pub(super) min_backoff_us: u64,
    /// `MaxRetryBackoff`, in µs.
    pub(super) max_backoff_us: u64,
}

impl Limits {
    /// `internal.RetryBackoff(attempt, MinRetryBackoff, MaxRetryBackoff)`, in µs, with `rng`
    /// for Go's `rand.Int63n`.
    pub(super) fn retry_backoff_us(&self, attempt: u32, rng: &mut SimRng) -> u64 {
        let (min, max) = (self.min_backoff_us, self.max_backoff_us);
        if min == 0 {
            return 0;
        }
        let Some(d) = min.checked_shl(attempt).filter(|&d| d >= min) else {
            return max;
        };
        let d = min.saturating_add(rng.below(d));
        if d > max || d < min {
            max
        } else {
            d
        }
    }
}

/// A Go duration as `ClusterOptions` takes it (`3s`, `500ms`, `1m`, a plain number of seconds as
/// `ParseClusterURL` reads it): `Some(None)` for a disabled timeout (`-1`, `0` is the default).
pub(super) fn parse_go_duration(v: &str) -> Option<Option<u64>> {
    let v = v.trim();
    if v == "-1" || v.starts_with('-') {
        return Some(None);
    }
    let (num, unit_ms) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = v.strip_suffix('m') {
        (n, 60_000)
    } else {
        (v, 1000)
    };
    let n: u64 = num.parse().ok()?;
    let ms = n.checked_mul(unit_ms).filter(|&ms| ms <= 3_600_000)?;
    Some(Some(if ms == 0 { DEFAULT_READ_TIMEOUT_MS } else { ms }))
}
