//! [`Redirect`]: a cluster redirection (`-MOVED` / `-ASK`), and its parsing from a server's error
//! line — the one place slotscope reads `MOVED 3999 127.0.0.1:6381`.
//!
//! The tap's recorded reply classes ([`ReplyClass`](crate::recording::ReplyClass)) embed it, and
//! so can the replay's simulated replies: the replay builds its redirections as values, the tap
//! parses them from the bytes a real server sent.
//!
//! **Invariant:** `to` is always a complete address. A server that does not know a node's endpoint
//! writes an empty (or `?`) host (`MOVED 3999 :6381`); [`Redirect::parse`] resolves it to the host
//! of the node that answered, so no caller ever sees a raw, host-less `host:port`.

use std::fmt;

use crate::node::NodeAddr;
use crate::slot::Slot;

/// A cluster redirection (`-MOVED` / `-ASK`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redirect {
    /// `MOVED slot host:port`: the slot lives elsewhere for good.
    Moved {
        /// The slot.
        slot: Slot,
        /// The node that owns it.
        to: NodeAddr,
    },
    /// `ASK slot host:port`: ask that node once, the slot is migrating.
    Ask {
        /// The slot.
        slot: Slot,
        /// The node importing it.
        to: NodeAddr,
    },
}

impl Redirect {
    /// Parses a redirection error text (`MOVED 3999 127.0.0.1:6381`, without the `-`); `None` if
    /// it is not exactly `MOVED|ASK <slot> <host>:<port>` with a slot below 16384 and a port in
    /// 1..=65535. The host may be a name, an IPv4 address, or an IPv6 address with or without
    /// brackets (servers write it without). An empty (or `?`) host, which a server sends when it
    /// does not know a node's endpoint, means the host of the node that answered: `same_host`.
    pub fn parse(error: &str, same_host: &str) -> Option<Redirect> {
        let mut words = error.split(' ');
        let kind = words.next()?;
        let slot: u16 = words.next()?.parse().ok()?;
        let slot = Slot::new(slot)?;
        let addr = words.next()?;
        if words.next().is_some() {
            return None;
        }
        let (host, port) = addr.rsplit_once(':')?;
        let port: u16 = port.parse().ok().filter(|&p| p != 0)?;
        let host = if host.is_empty() || host == "?" {
            same_host
        } else {
            host
        };
        let to = NodeAddr::new(host, port)?;
        match kind {
            "MOVED" => Some(Redirect::Moved { slot, to }),
            "ASK" => Some(Redirect::Ask { slot, to }),
            _ => None,
        }
    }

    /// The error code: `MOVED` or `ASK`.
    pub fn kind(&self) -> &'static str {
        match self {
            Redirect::Moved { .. } => "MOVED",
            Redirect::Ask { .. } => "ASK",
        }
    }

    /// The slot redirected.
    pub fn slot(&self) -> Slot {
        match self {
            Redirect::Moved { slot, .. } | Redirect::Ask { slot, .. } => *slot,
        }
    }

    /// The node redirected to.
    pub fn to(&self) -> &NodeAddr {
        match self {
            Redirect::Moved { to, .. } | Redirect::Ask { to, .. } => to,
        }
    }

    /// The same redirection (kind and slot) to another node.
    #[must_use]
    pub fn with_to(self, to: NodeAddr) -> Redirect {
        match self {
            Redirect::Moved { slot, .. } => Redirect::Moved { slot, to },
            Redirect::Ask { slot, .. } => Redirect::Ask { slot, to },
        }
    }
}

/// The error text as a server writes it (`MOVED 3999 127.0.0.1:6381`, without the `-`; an IPv6
/// host without brackets), which [`Redirect::parse`] reads back.
impl fmt::Display for Redirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let to = self.to();
        write!(
            f,
            "{} {} {}:{}",
            self.kind(),
            self.slot(),
            to.host(),
            to.port()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> NodeAddr {
        s.parse().unwrap()
    }

    fn slot(n: u16) -> Slot {
        Slot::new(n).unwrap()
    }

    #[test]
    fn good_lines_are_parsed() {
        assert_eq!(
            Redirect::parse("MOVED 3999 127.0.0.1:6381", "h"),
            Some(Redirect::Moved {
                slot: slot(3999),
                to: addr("127.0.0.1:6381")
            })
        );
        assert_eq!(
            Redirect::parse("ASK 16383 127.0.0.1:7001", "h"),
            Some(Redirect::Ask {
                slot: slot(16383),
                to: addr("127.0.0.1:7001")
            })
        );
        assert_eq!(
            Redirect::parse("MOVED 0 redis-2.cache.example.internal:6379", "h"),
            Some(Redirect::Moved {
                slot: slot(0),
                to: addr("redis-2.cache.example.internal:6379")
            })
        );
    }

    #[test]
    fn ipv6_hosts_with_or_without_brackets() {
        let want = Some(Redirect::Moved {
            slot: slot(12),
            to: NodeAddr::new("::1", 7000).unwrap(),
        });
        assert_eq!(Redirect::parse("MOVED 12 [::1]:7000", "h"), want);
        assert_eq!(Redirect::parse("MOVED 12 ::1:7000", "h"), want);
    }

    #[test]
    fn an_unknown_host_is_the_answering_nodes() {
        for line in ["ASK 1 :7001", "ASK 1 ?:7001"] {
            assert_eq!(
                Redirect::parse(line, "10.0.0.1"),
                Some(Redirect::Ask {
                    slot: slot(1),
                    to: addr("10.0.0.1:7001")
                }),
                "{line}"
            );
        }
    }

    #[test]
    fn bad_lines_are_not_redirections() {
        for line in [
            "MOVED 16384 a:1",
            "MOVED 65536 a:1",
            "MOVED -1 a:1",
            "MOVED x a:1",
            "MOVED 1 a:0",
            "MOVED 1 a:65536",
            "MOVED 1 127.0.0.1",
            "MOVED 1 127.0.0.1:",
            "MOVED 1",
            "MOVED",
            "",
            "MOVED 1 a:1 extra",
            "MOVED  1 a:1",
            "moved 1 a:1",
            "TRYAGAIN 1 a:1",
            "ERR unknown command",
        ] {
            assert_eq!(Redirect::parse(line, "h"), None, "{line:?}");
        }
    }

    #[test]
    fn parts_and_the_server_form_read_back() {
        let r = Redirect::parse("ASK 77 [::1]:7002", "h").unwrap();
        assert_eq!(
            (r.kind(), r.slot(), r.to()),
            ("ASK", slot(77), &addr("[::1]:7002"))
        );
        assert_eq!(r.to_string(), "ASK 77 ::1:7002");
        let moved = Redirect::parse("MOVED 5 10.0.0.2:6379", "h").unwrap();
        let via = moved.clone().with_to(addr("127.0.0.1:7400"));
        assert_eq!(via.to_string(), "MOVED 5 127.0.0.1:7400");
        for r in [r, moved, via] {
            assert_eq!(Redirect::parse(&r.to_string(), "h"), Some(r));
        }
    }
}
