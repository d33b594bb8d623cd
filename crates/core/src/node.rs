//! Node identity: the cluster node id and the address a node is reached at.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A cluster node id as the server reports it (40 hex characters on Redis and Valkey).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(String);

impl NodeId {
    /// A node id from the server's text; `None` if empty.
    pub fn new(id: impl Into<String>) -> Option<NodeId> {
        let id = id.into();
        (!id.is_empty()).then_some(NodeId(id))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 8 characters, as redis-cli shows ids in tables.
    pub fn short(&self) -> &str {
        self.0.get(..8).unwrap_or(&self.0)
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A `host:port` address (host is a name, an IPv4 or an IPv6 address without brackets).
#[derive(Clone, Debug, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct NodeAddr {
    /// Shared, not copied: an address is cloned into every line and table that names its node
    /// (the tap clones one per command), and a clone is a count, not an allocation.
    host: Arc<str>,
    port: u16,
}

impl NodeAddr {
    /// An address from its parts; `None` if the host is empty.
    pub fn new(host: impl Into<String>, port: u16) -> Option<NodeAddr> {
        let host = host.into();
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .map(str::to_owned)
            .unwrap_or(host);
        (!host.is_empty()).then(|| NodeAddr {
            host: Arc::from(host),
            port,
        })
    }

    /// The host part (without IPv6 brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The TCP port.
    pub fn port(&self) -> u16 {
        self.port
    }
}

/// Two addresses are equal when their hosts and ports are; the clones of one address share
/// their host, so a comparison of those compares a pointer, not the text (the replay compares
/// addresses on every exchange).
impl PartialEq for NodeAddr {
    #[inline]
    fn eq(&self, other: &NodeAddr) -> bool {
        self.port == other.port && (Arc::ptr_eq(&self.host, &other.host) || self.host == other.host)
    }
}

/// Hashes what [`PartialEq`] compares: the host's text and the port.
impl Hash for NodeAddr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.host.hash(state);
        self.port.hash(state);
    }
}

impl fmt::Display for NodeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// Why a `host:port` text is not an address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddrError {
    /// No `:` separates host and port.
    #[error("`{0}` is not HOST:PORT (no port)")]
    MissingPort(String),
    /// The port is not a number in 1..=65535.
    #[error("`{0}` has an invalid port (expected 1-65535)")]
    BadPort(String),
    /// The host part is empty.
    #[error("`{0}` has an empty host")]
    EmptyHost(String),
}

impl FromStr for NodeAddr {
    type Err = AddrError;
    fn from_str(s: &str) -> Result<NodeAddr, AddrError> {
        let (host, port) = s
            .rsplit_once(':')
            .ok_or_else(|| AddrError::MissingPort(s.to_owned()))?;
        let port: u16 = port
            .parse()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| AddrError::BadPort(s.to_owned()))?;
        NodeAddr::new(host, port).ok_or_else(|| AddrError::EmptyHost(s.to_owned()))
    }
}

impl TryFrom<String> for NodeAddr {
    type Error = AddrError;
    fn try_from(s: String) -> Result<NodeAddr, AddrError> {
        s.parse()
    }
}

impl From<NodeAddr> for String {
    fn from(a: NodeAddr) -> String {
        a.to_string()
    }
}

/// How a recording names a node: the address that reached it, and its cluster id once known.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeRef {
    /// The address the collector polls the node at.
    pub addr: NodeAddr,
    /// The node's cluster id (`CLUSTER MYID`), absent until the node has answered once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<NodeId>,
}

impl fmt::Display for NodeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.id {
            Some(id) => write!(f, "{} ({})", self.addr, id.short()),
            None => write!(f, "{}", self.addr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_addresses() {
        let a: NodeAddr = "127.0.0.1:7000".parse().unwrap();
        assert_eq!((a.host(), a.port()), ("127.0.0.1", 7000));
        let b: NodeAddr = "[::1]:6379".parse().unwrap();
        assert_eq!(b.host(), "::1");
        assert_eq!(b.to_string(), "[::1]:6379");
        assert_eq!(
            "clustercfg.x.cache.amazonaws.com:6379"
                .parse::<NodeAddr>()
                .unwrap()
                .port(),
            6379
        );
    }

    #[test]
    fn addresses_are_equal_by_text_whether_or_not_they_share_their_host() {
        use std::collections::hash_map::DefaultHasher;
        let hash = |a: &NodeAddr| {
            let mut h = DefaultHasher::new();
            a.hash(&mut h);
            h.finish()
        };
        let a: NodeAddr = "10.0.0.1:6379".parse().unwrap();
        let apart: NodeAddr = "10.0.0.1:6379".parse().unwrap();
        let clone = a.clone();
        assert!(!Arc::ptr_eq(&a.host, &apart.host) && Arc::ptr_eq(&a.host, &clone.host));
        assert_eq!(a, apart);
        assert_eq!(a, clone);
        assert_eq!(hash(&a), hash(&apart));
        assert_ne!(a, "10.0.0.1:6380".parse::<NodeAddr>().unwrap());
        assert_ne!(a, "10.0.0.2:6379".parse::<NodeAddr>().unwrap());
    }

    #[test]
    fn rejects_bad_addresses() {
        assert!(matches!(
            "localhost".parse::<NodeAddr>(),
            Err(AddrError::MissingPort(_))
        ));
        assert!(matches!(
            "h:0".parse::<NodeAddr>(),
            Err(AddrError::BadPort(_))
        ));
        assert!(matches!(
            "h:99999".parse::<NodeAddr>(),
            Err(AddrError::BadPort(_))
        ));
        assert!(matches!(
            ":6379".parse::<NodeAddr>(),
            Err(AddrError::EmptyHost(_))
        ));
    }
}
