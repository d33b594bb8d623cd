//! Outside evidence brought into a recording: application and cloud event logs appended as
//! annotations, and a metric stack's series (Prometheus, redis_exporter) turned into a recording.
//!
//! - [`evidence`]: `slotscope import`.
//! - [`metrics`]: `slotscope import-metrics`.
//! - [`http_client`]: the one `GET` that fetches a Prometheus API's answer.

pub mod evidence;
pub mod http_client;
pub mod metrics;
