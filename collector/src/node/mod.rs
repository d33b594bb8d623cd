//! Talking to one cluster node: the connection (TCP or TLS, logged in), the allowlist of the only
//! commands the collector ever sends, and the password kept out of every output.
//!
//! - [`connection`]: one connection, the single place that writes commands to a server.
//! - [`allowlist`]: the read-only commands, checked at that place.
//! - [`tls`]: the rustls client configuration.
//! - [`secret`]: the password, never printed.
//! - `scripted_server` (tests only): a node that answers from a script.

pub mod allowlist;
pub mod connection;
#[cfg(test)]
pub mod scripted_server;
pub mod secret;
pub mod tls;
