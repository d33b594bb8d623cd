//! The viewer's reader: a recording parsed and analysed in steps, and what the viewer is handed
//! of it.
//!
//! The viewer (`slotscope-web`) links this crate for its types and to open a [`Parcel`] only; the
//! reading itself runs in a wasm module built from this crate with the `module` feature
//! (`src/module.rs`), which the viewer fetches beside the first recording it reads. The reader,
//! the zstd decoder and the analysis are about two fifths of the viewer's code, and a recording
//! served with its overview (`slotscope index`) is first shown without them. What the reader
//! finds crosses to the viewer as a [`Parcel`]; the per-node metrics stay in the module, which
//! answers the deltas over a selection ([`delta::over`]).
//!
//! - [`parser`]: lines read in bounded steps, then the tracks and the analysis finished in steps;
//! - [`parcel`]: what the viewer is handed ([`Read`]) and how it crosses;
//! - [`delta`]: per-node and per-command counter deltas over a range.

pub mod delta;
#[cfg(feature = "module")]
pub mod module;
pub mod parcel;
pub mod parser;

pub use delta::Deltas;
pub use parcel::{Parcel, Read};
pub use parser::{Finisher, LoadError, Parser, Step};

/// What the module's `read` and `finish` return when their stage is over (a share is 0 to 1).
pub const DONE: f64 = -1.0;

/// What the module's `read` returns when every line fed so far is read and more is to come (a
/// recording decoded elsewhere and fed in chunks: `open_fed`, `feed`).
pub const STARVED: f64 = -2.0;

/// A fixture recording shared with the core's tests, read whole (native tests only).
#[cfg(test)]
pub(crate) fn fixture(name: &str) -> (Read, slotscope_core::metrics::Metrics) {
    let path = format!(
        "{}/../../tests/fixtures/{name}.jsonl.zst",
        env!("CARGO_MANIFEST_DIR")
    );
    Parser::new(std::fs::read(path).unwrap())
        .unwrap()
        .run()
        .unwrap()
}
