//! redis-py's exception classes, as the application sees them, each with its common class.

use crate::replay::outcome::{ClientError, Failure};

/// An exception redis-py's cluster client raises to the application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// The variants are redis-py's class names, letter for letter.
#[allow(clippy::enum_variant_names)]
pub(super) enum Exception {
    /// `RedisClusterException` (e.g. "Redis Cluster cannot be connected…" from `initialize()`).
    RedisClusterException,
    /// `ConnectionError`.
    ConnectionError,
    /// `TimeoutError`.
    TimeoutError,
    /// `ClusterDownError`.
    ClusterDownError,
    /// `ClusterError` ("TTL exhausted": too many redirects).
    ClusterError,
    /// `MaxConnectionsError`: the node's pool is at `max_connections`, every connection in use.
    MaxConnectionsError,
    /// `AttributeError`: a reset closed the connection under a command in flight (redis-py
    /// #4028); not a Redis error, so not retried.
    AttributeError,
}

impl From<Exception> for ClientError {
    fn from(e: Exception) -> ClientError {
        let (name, class) = match e {
            Exception::RedisClusterException => ("RedisClusterException", Failure::NoTopology),
            Exception::ConnectionError => ("ConnectionError", Failure::Connection),
            Exception::TimeoutError => ("TimeoutError", Failure::Timeout),
            Exception::ClusterDownError => ("ClusterDownError", Failure::ClusterDown),
            Exception::ClusterError => ("ClusterError", Failure::TooManyRedirects),
            Exception::MaxConnectionsError => ("MaxConnectionsError", Failure::PoolExhausted),
            Exception::AttributeError => ("AttributeError", Failure::ClientBug),
        };
        ClientError { name, class }
    }
}
