//! How to read outside evidence.

use crate::time::Timestamp;

use super::date::Date;
use super::format::Format;

/// How to read outside evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The format, or [`Format::Auto`] to detect it.
    pub format: Format,
    /// Date of lines that carry a time of day only.
    pub date: Option<Date>,
    /// Start of the recording the evidence goes with: dates time-of-day lines when `date` is absent.
    pub recording_start: Option<Timestamp>,
    /// `source` of every annotation; by default [`CLOUD_SOURCE`](super::CLOUD_SOURCE) or
    /// [`APP_SOURCE`](super::APP_SOURCE).
    pub source: Option<String>,
}
