//! What one application command came to ([`Outcome`]): success, or the error the library raised
//! ([`ClientError`]: the library's own name for it and its common class, a [`Failure`]).
//!
//! Each model names its errors as its library does (redis-py's exception classes, Jedis's and
//! Lettuce's exception types, go-redis's and redis-rs's error texts); the common class is what
//! comparisons across libraries read.

use serde::Serialize;

use super::cluster::Reply;
use crate::redirect::Redirect;

/// The common class of a failed command, whatever its library calls the error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Failure {
    /// A node did not answer in time.
    Timeout,
    /// A connection could not be made or broke.
    Connection,
    /// The cluster answered `CLUSTERDOWN`.
    ClusterDown,
    /// The command met more redirects (or retries) than the library follows.
    TooManyRedirects,
    /// The node's connection pool was full, every connection in use.
    PoolExhausted,
    /// The client had no usable topology: no node answered for the slots, or the slot (or the
    /// node a redirect named) is not in its table.
    NoTopology,
    /// The library failed on its own state (a defect, not a cluster condition).
    ClientBug,
}

impl Failure {
    /// The class of a failed exchange's reply, as most libraries raise it: a timeout, a
    /// `CLUSTERDOWN`, a redirect that was one too many, else a connection error.
    pub fn of_reply(reply: &Reply) -> Failure {
        match reply {
            Reply::Timeout => Failure::Timeout,
            Reply::ClusterDown => Failure::ClusterDown,
            Reply::Redirect(Redirect::Moved { .. }) | Reply::Redirect(Redirect::Ask { .. }) => {
                Failure::TooManyRedirects
            }
            Reply::Ok | Reply::ConnectionError => Failure::Connection,
        }
    }

    /// The class as reports write it: `timeout`, `connection`, `cluster-down`,
    /// `too-many-redirects`, `pool-exhausted`, `no-topology`, `client-bug`.
    pub fn word(self) -> &'static str {
        match self {
            Failure::Timeout => "timeout",
            Failure::Connection => "connection",
            Failure::ClusterDown => "cluster-down",
            Failure::TooManyRedirects => "too-many-redirects",
            Failure::PoolExhausted => "pool-exhausted",
            Failure::NoTopology => "no-topology",
            Failure::ClientBug => "client-bug",
        }
    }
}

/// An error a client library raised to the application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientError {
    /// The library's name for it (an exception class, an error type or text).
    pub name: &'static str,
    /// Its common class.
    pub class: Failure,
}

impl ClientError {
    /// The error `name`, of common class `class`.
    pub const fn new(name: &'static str, class: Failure) -> ClientError {
        ClientError { name, class }
    }

    /// A command whose task never completed in the instant clock (a model waiting on nothing):
    /// the replay's own error, no library's.
    pub const UNFINISHED: ClientError = ClientError::new("unfinished", Failure::ClientBug);
}

/// What one application command came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It succeeded.
    Ok,
    /// It raised this error.
    Failed(ClientError),
}

/// A library's errors for the four ways an exchange fails ([`Failure::of_reply`]), for models
/// whose library raises one error for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplyErrors {
    /// A node did not answer in time.
    pub timeout: ClientError,
    /// A connection could not be made or broke.
    pub connection: ClientError,
    /// `CLUSTERDOWN`.
    pub cluster_down: ClientError,
    /// A redirect past the library's limit.
    pub too_many_redirects: ClientError,
}

impl ReplyErrors {
    /// The errors named `[timeout, connection, cluster_down, too_many_redirects]`, each of its
    /// class.
    pub const fn named(names: [&'static str; 4]) -> ReplyErrors {
        ReplyErrors {
            timeout: ClientError::new(names[0], Failure::Timeout),
            connection: ClientError::new(names[1], Failure::Connection),
            cluster_down: ClientError::new(names[2], Failure::ClusterDown),
            too_many_redirects: ClientError::new(names[3], Failure::TooManyRedirects),
        }
    }

    /// The error the library raises for a failed exchange's `reply`.
    pub fn of_reply(&self, reply: &Reply) -> ClientError {
        match Failure::of_reply(reply) {
            Failure::Timeout => self.timeout,
            Failure::ClusterDown => self.cluster_down,
            Failure::TooManyRedirects => self.too_many_redirects,
            _ => self.connection,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slot::Slot;

    #[test]
    fn a_failed_reply_is_named_by_the_library_and_classed_in_common() {
        let e = |name| ClientError {
            name,
            class: Failure::ClientBug,
        };
        let errors = ReplyErrors {
            timeout: e("t"),
            connection: e("c"),
            cluster_down: e("d"),
            too_many_redirects: e("r"),
        };
        let moved = Reply::Redirect(Redirect::Moved {
            slot: Slot::new(1).unwrap(),
            to: "10.0.0.1:1".parse().unwrap(),
        });
        let names: Vec<&str> = [
            Reply::Timeout,
            Reply::ConnectionError,
            Reply::ClusterDown,
            moved,
        ]
        .iter()
        .map(|r| errors.of_reply(r).name)
        .collect();
        assert_eq!(names, ["t", "c", "d", "r"]);
        assert_eq!(Failure::of_reply(&Reply::Timeout).word(), "timeout");
        assert_eq!(Failure::TooManyRedirects.word(), "too-many-redirects");
        assert_eq!(ClientError::UNFINISHED.class, Failure::ClientBug);
    }
}
