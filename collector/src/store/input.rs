//! Reading a recording file (plain or zstd) through the core reader, line by line, for the
//! commands that report on recordings.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use slotscope_core::reader::{ReadError, RecordingReader};
use slotscope_core::recording::{Header, Line};

/// What reading a recording met besides its lines.
pub struct Input {
    /// Lines that could not be read (line number and message).
    pub bad_lines: Vec<ReadError>,
    /// Line number of a partial last line, if the file was cut short.
    pub truncated_tail: Option<u64>,
    /// Size of the file.
    pub file_bytes: u64,
}

/// Why a recording could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a recording.
    #[error("{path}: {source}")]
    NotARecording {
        /// The file.
        path: String,
        /// Why.
        source: ReadError,
    },
}

/// Reads `path`: calls `start` with the header, then `each` with every readable line in order,
/// collecting the bad ones.
pub fn read_recording<S>(
    path: &Path,
    start: impl FnOnce(&Header) -> S,
    mut each: impl FnMut(&mut S, &Line),
) -> Result<(S, Input), InputError> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|source| InputError::Open {
        path: shown.clone(),
        source,
    })?;
    let file_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut reader =
        RecordingReader::detect(BufReader::with_capacity(256 * 1024, file)).map_err(|source| {
            InputError::Open {
                path: shown.clone(),
                source,
            }
        })?;
    let header = reader
        .header()
        .map_err(|source| InputError::NotARecording {
            path: shown.clone(),
            source,
        })?
        .clone();
    let mut state = start(&header);
    let mut bad_lines = Vec::new();
    for item in reader.by_ref() {
        match item {
            Ok((_, line)) => each(&mut state, &line),
            Err(e) => bad_lines.push(e),
        }
    }
    Ok((
        state,
        Input {
            bad_lines,
            truncated_tail: reader.truncated_tail(),
            file_bytes,
        },
    ))
}
