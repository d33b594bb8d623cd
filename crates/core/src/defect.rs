//! Client library versions with known cluster-routing defects, keyed by the `lib-name` and
//! `lib-ver` a client reports with `CLIENT SETINFO` (and the server shows in `CLIENT LIST`). Each
//! entry cites the upstream issue.

/// A known defect of a range of library versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Defect {
    /// `lib-name` as the library reports it.
    pub lib_name: &'static str,
    /// First affected version (inclusive).
    pub from: (u32, u32, u32),
    /// Last affected version (inclusive).
    pub to: (u32, u32, u32),
    /// One line.
    pub title: &'static str,
    /// What goes wrong and when.
    pub explanation: &'static str,
    /// Upstream issue(s).
    pub upstream: &'static str,
}

/// The table. Boundaries were checked against the released wheels of every redis-py version from
/// 4.2.2 to 8.1.0 (`redis/cluster.py` and `redis/asyncio/cluster.py`, `_execute_command`).
pub const DEFECTS: &[Defect] = &[Defect {
    lib_name: "redis-py",
    from: (4, 4, 0),
    to: (7, 1, 1),
    title: "the cluster client drops nodes from its startup nodes on connection errors",
    explanation: "On a ConnectionError or TimeoutError the cluster client (async and sync) pops the failing \
                  node from its startup nodes before re-initialising. After the first initialisation the \
                  startup nodes are the discovered nodes, not the configuration endpoint, so on a cluster of one \
                  shard without replicas one error empties the list: every later initialisation fails with \
                  \"Redis Cluster cannot be connected. Please provide at least one reachable node: None\" until \
                  the process restarts (the sync client keeps routing from its stale slot map until its next \
                  refresh). redis-py 7.2.0 replaced the pop: it marks the node's connections for reconnect and \
                  moves the node to the end of its list (PR #3917); 8.x keeps that.",
    upstream: "redis/redis-py#2555, #3221, #3310, #3693 (fixed by PR #3917 in 7.2.0); see also #2472",
}];

/// Parses `5.0.0`, `5.0`, `8.1.0b1` into (major, minor, patch); pre-release suffixes are ignored.
pub fn parse_version(v: &str) -> Option<(u32, u32, u32)> {
    let mut parts = v.trim().split('.').map(|p| {
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

/// The known defects of `lib_name` at version `lib_ver`.
pub fn known_defects(lib_name: &str, lib_ver: &str) -> Vec<&'static Defect> {
    let Some(v) = parse_version(lib_ver) else {
        return Vec::new();
    };
    DEFECTS
        .iter()
        .filter(|d| d.lib_name.eq_ignore_ascii_case(lib_name) && d.from <= v && v <= d.to)
        .collect()
}

/// The known defects of `lib_name` carried by any version from `from` to `to` (inclusive), for a
/// library identified only as a range of versions (see [`crate::fingerprint`]).
pub fn defects_in_range(
    lib_name: &str,
    from: (u32, u32, u32),
    to: (u32, u32, u32),
) -> Vec<&'static Defect> {
    DEFECTS
        .iter()
        .filter(|d| d.lib_name.eq_ignore_ascii_case(lib_name) && d.from <= to && from <= d.to)
        .collect()
}

impl Defect {
    /// The affected versions, `4.4.0–7.1.1`.
    pub fn versions(&self) -> String {
        let v = |(a, b, c): (u32, u32, u32)| format!("{a}.{b}.{c}");
        format!("{}–{}", v(self.from), v(self.to))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_overlapping_a_defect_carry_it() {
        assert_eq!(
            defects_in_range("redis-py", (5, 0, 0), (7, 4, u32::MAX)).len(),
            1
        );
        assert!(defects_in_range("redis-py", (8, 0, 0), (u32::MAX, 0, 0)).is_empty());
        assert!(defects_in_range("go-redis", (9, 0, 0), (9, u32::MAX, 0)).is_empty());
        assert_eq!(DEFECTS[0].versions(), "4.4.0–7.1.1");
    }

    #[test]
    fn versions_in_the_range_match() {
        assert_eq!(known_defects("redis-py", "5.0.0").len(), 1);
        assert_eq!(known_defects("redis-py", "4.4.0").len(), 1);
        assert_eq!(known_defects("redis-py", "7.1.1").len(), 1);
        assert!(known_defects("redis-py", "7.2.0").is_empty());
        assert!(known_defects("redis-py", "8.0.0").is_empty());
        assert!(known_defects("redis-py", "4.3.6").is_empty());
        assert!(known_defects("jedis", "5.0.0").is_empty());
        assert!(known_defects("redis-py", "garbage").is_empty());
    }

    #[test]
    fn versions_parse_leniently() {
        assert_eq!(parse_version("8.1.0b1"), Some((8, 1, 0)));
        assert_eq!(parse_version("5.0"), Some((5, 0, 0)));
        assert_eq!(parse_version("x"), None);
    }
}
