//! Faults a recorder meets on a real cluster (issue 27, part 3), each one injected on one node
//! while `slotscope record` runs, and judged: the other nodes keep their interval, the fault is
//! recorded as what it is, the recorder's memory stays bounded, and it recovers by itself when
//! the fault ends (`tests/tests/faults.rs`).
//!
//! - [`proxy`]: a TCP proxy in front of one node whose behaviour switches (silent, partitioned,
//!   half a reply then closed, slow).
//! - [`run`]: one fault's recording, from the healthy start through the fault to the recovery.
//! - [`tls`]: the same on a TLS cluster whose node changes its certificate.
//! - [`inject`]: any fault, run the way it needs.

pub mod inject;
pub mod proxy;
pub mod run;
pub mod tls;

use std::fmt;

use slotscope_core::recording::FailureKind;

/// A fault injected on one node (the third of three masters; the seed is the first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Established connections go silent and new ones are never accepted.
    Partition,
    /// The node accepts TCP and never answers.
    Silent,
    /// The node answers half of a reply, then closes.
    HalfThenClose,
    /// One piece of a reply a second.
    Slow,
    /// The password changes on the node: the recorder's is refused when it reconnects.
    PasswordRotated,
    /// 5,000 client connections on the node.
    ManyConnections,
    /// The node's TLS certificate replaced by an expired one (a TLS cluster, `--tls --cacert`).
    TlsExpired,
    /// The node's TLS certificate replaced by one for another host name.
    TlsWrongHost,
}

impl Fault {
    /// Every fault.
    pub const ALL: [Fault; 8] = [
        Fault::Partition,
        Fault::Silent,
        Fault::HalfThenClose,
        Fault::Slow,
        Fault::PasswordRotated,
        Fault::ManyConnections,
        Fault::TlsExpired,
        Fault::TlsWrongHost,
    ];

    /// Whether the fault is on a TLS cluster ([`tls`]).
    pub fn is_tls(self) -> bool {
        matches!(self, Fault::TlsExpired | Fault::TlsWrongHost)
    }

    /// How the recording must say it: the kinds of failure the node's polls may show during the
    /// fault (at least one failure of them), or none for a fault that fails no poll.
    pub fn recorded_as(self) -> &'static [FailureKind] {
        match self {
            Fault::Partition | Fault::Silent | Fault::Slow => &[FailureKind::Timeout],
            Fault::HalfThenClose => &[FailureKind::Io, FailureKind::Protocol],
            Fault::PasswordRotated => &[FailureKind::Auth],
            Fault::ManyConnections => &[],
            // The handshake's refusal is recorded as the connection's (step `tls`).
            Fault::TlsExpired | Fault::TlsWrongHost => &[FailureKind::Connect],
        }
    }
}

impl Fault {
    /// Kinds of failure the fault may show besides those it must: the connection a password
    /// rotation or a new certificate closes (to make the recorder log in again) is lost once; a half reply may be cut
    /// where the rest would have come later, read as a timeout.
    pub fn may_also_show(self) -> &'static [FailureKind] {
        match self {
            Fault::PasswordRotated | Fault::TlsExpired | Fault::TlsWrongHost => &[FailureKind::Io],
            Fault::HalfThenClose => &[FailureKind::Timeout],
            _ => &[],
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fault::Partition => "a node partitioned away",
            Fault::Silent => "a node that accepts TCP and never answers",
            Fault::HalfThenClose => "a node that answers half a reply and closes",
            Fault::Slow => "a slow node (a reply's pieces a second apart)",
            Fault::PasswordRotated => "a password rotation (the old one refused)",
            Fault::ManyConnections => "5,000 connections on a node",
            Fault::TlsExpired => "a node's TLS certificate expired",
            Fault::TlsWrongHost => "a node's TLS certificate for another host",
        })
    }
}
