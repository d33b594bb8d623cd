//! The kinds of outside evidence, and the `source` and `kind` of the annotations read from them.

use std::fmt;

/// `source` of annotations from a cloud provider's event log.
pub const CLOUD_SOURCE: &str = "cloud_event_log";
/// `source` of annotations from an application log.
pub const APP_SOURCE: &str = "app_log";
/// `fields.kind` of the per-second error counts of an application log.
pub const APP_ERROR_KIND: &str = "app_error";

/// The kind of outside evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Decide from the text (see [`detect`](super::detect)).
    Auto,
    /// A cloud provider's event log: one event per line.
    Cloud,
    /// An application's log: errors are counted per second.
    AppLog,
}

impl Format {
    /// The default `source` of annotations of this format.
    pub fn default_source(self) -> &'static str {
        match self {
            Format::AppLog => APP_SOURCE,
            Format::Cloud | Format::Auto => CLOUD_SOURCE,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Auto => "auto",
            Format::Cloud => "cloud event log",
            Format::AppLog => "application log",
        })
    }
}
