//! The collector's HTTP servers, loopback only: the browser viewer behind `slotscope serve`, and
//! `record --metrics-listen`'s `/metrics`.
//!
//! - [`server`]: the viewer's static file server (hyper, HTTP/1.1).
//! - [`request`], [`served_file`]: what a request asks, what a file's versions are.
//! - [`bundle`], [`bundle_files`], [`dist`]: the viewer embedded in the binary, or found on disk.
//! - [`metrics`]: the OpenMetrics endpoint.
//! - [`http1`]: the HTTP/1.1 connection both speak.
//! - [`admission`]: how many connections each holds at once, and for how long.

pub mod admission;
pub mod bundle;
pub mod bundle_files;
pub mod dist;
pub mod http1;
pub mod metrics;
pub mod request;
pub mod served_file;
pub mod server;
