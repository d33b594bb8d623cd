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
