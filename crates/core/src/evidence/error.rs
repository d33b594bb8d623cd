//! Why outside evidence could not be read.

/// Why outside evidence could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvidenceError {
    /// A line carries a time of day only, and neither a date nor the recording's start was given.
    #[error("line {line}: `{time}` is a time of day without a date, and no date was given")]
    DateNeeded {
        /// 1-based line number.
        line: u64,
        /// The time as written.
        time: String,
    },
    /// A timestamp has the right shape but impossible values (month 13, 25:00, 30 February, …).
    #[error("line {line}: `{text}` is not a valid date and time")]
    BadTimestamp {
        /// 1-based line number (for a JSON document of events: the event's number).
        line: u64,
        /// The timestamp as written.
        text: String,
    },
    /// A timestamp lies before 1970 or too far in the future.
    #[error("line {line}: `{text}` lies outside the range of timestamps")]
    OutOfRange {
        /// 1-based line number.
        line: u64,
        /// The timestamp as written.
        text: String,
    },
    /// Not a single line had a timestamp.
    #[error(
        "no timestamps found in {lines} lines (expected lines like `05:17:18 Migrating slots …`, \
         `2025-03-14 05:17:30,123 ERROR …` or JSON with a `timestamp` key)"
    )]
    NoTimestamps {
        /// Non-blank lines read.
        lines: u64,
    },
    /// A date given by the caller is not `YYYY-MM-DD`, or does not exist.
    #[error("`{0}` is not a date (expected YYYY-MM-DD, e.g. 2025-03-14)")]
    BadDate(String),
}
