//! Recordings on disk: where lines are written, the always-on directory's rotation and retention,
//! a window cut out of it, the overview beside each file, and reading a recording back.
//!
//! - [`sink`]: a JSON Lines file, optionally zstd, flushed each round.
//! - [`rotation`] and [`retention`]: an always-on recording directory, one file per period.
//! - [`crash_left`]: the file a crash left in that directory, ended when recording starts again.
//! - [`cut`]: the files that cover a window joined into one recording.
//! - [`overview_file`]: the overview beside each file (`FILE.overview.json`).
//! - [`input`]: a recording read back through the core reader.

pub mod crash_left;
pub mod cut;
pub mod input;
pub mod overview_file;
pub mod retention;
pub mod rotation;
pub mod sink;

/// A recording's header as the recorder writes one (a poll a second from `127.0.0.1:7000`), for
/// the tests of the files this module writes.
#[cfg(test)]
pub(crate) fn test_header(started: u64) -> slotscope_core::recording::Line {
    use slotscope_core::recording::{Header, Line, RecordOptions, SCHEMA_VERSION};
    Line::Header(Header {
        schema: SCHEMA_VERSION,
        collector: "slotscope test".into(),
        seed: "127.0.0.1:7000".parse().expect("an address"),
        started: slotscope_core::Timestamp(started),
        options: RecordOptions {
            interval_ms: 1000,
            timeout_ms: 800,
            duration_ms: None,
            tls: false,
            user: None,
            auth: false,
            client_list_every: 1,
            topology_every: None,
        },
        source: None,
    })
}
