//! The file a crash left in an always-on recording directory: a recorder killed (or a machine gone
//! down) leaves its current file without an end line, after its last complete round (its zstd
//! frame unfinished, perhaps a partial line). When `record --out DIR/` starts again, before it
//! opens a file of its own, it ends that file: every complete line is written again under a
//! temporary name with an end line (reason `crashed`), completed, put on disk and renamed over
//! the original. Every file of the directory but the one being written is then complete, so the
//! retention only ever deletes complete, closed files.
//!
//! Only the newest file can have been left so: each start ends the one before it.

use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use slotscope_core::reader::RecordingReader;
use slotscope_core::recording::{End, EndReason, Line};

use crate::store::rotation;
use crate::store::sink::{tmp_path, wants_zstd, FileSink, Sink, ZSTD_LEVEL};

/// A file ended after a crash.
#[derive(Debug, PartialEq, Eq)]
pub struct Ended {
    /// The file.
    pub path: PathBuf,
    /// Its complete lines, the end line not counted.
    pub lines: u64,
    /// Poll rounds it holds.
    pub rounds: u64,
    /// The line number of a partial last line left out, if there was one.
    pub partial_line: Option<u64>,
}

/// Why a file a crash left could not be ended.
#[derive(Debug, thiserror::Error)]
pub enum CrashLeftError {
    /// Reading it failed, or it holds a line that is not a recording line (not a crash's cut).
    #[error("{}: {reason}; left as it is", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Writing its ended copy failed (the original is untouched).
    #[error("ending {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// Ends the newest file of `dir` if a crash left it without an end line; `Ok(None)` when there is
/// none or it is complete.
pub fn end_newest(dir: &Path) -> Result<Option<Ended>, CrashLeftError> {
    let files = rotation::list(dir).map_err(|e| CrashLeftError::Unreadable {
        path: dir.to_owned(),
        reason: e.to_string(),
    })?;
    match files.last() {
        Some(newest) => end_if_cut(&newest.path),
        None => Ok(None),
    }
}

/// Ends `path` if it has no end line (see the module's documentation).
pub fn end_if_cut(path: &Path) -> Result<Option<Ended>, CrashLeftError> {
    let unreadable = |reason: String| CrashLeftError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    let file = File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let mut reader =
        RecordingReader::detect(BufReader::new(file)).map_err(|e| unreadable(e.to_string()))?;
    let header = reader
        .header()
        .map_err(|e| unreadable(e.to_string()))?
        .clone();
    let mut lines = vec![Line::Header(header)];
    for item in reader.by_ref() {
        let (_, line) = item.map_err(|e| unreadable(e.to_string()))?;
        lines.push(line);
    }
    if matches!(lines.last(), Some(Line::End(_))) {
        return Ok(None);
    }
    let rounds = lines
        .iter()
        .filter(|l| matches!(l, Line::PollRound(_)))
        .count() as u64;
    let last = lines.iter().map(Line::time).max().unwrap_or_default();
    let ended = Ended {
        path: path.to_owned(),
        lines: lines.len() as u64,
        rounds,
        partial_line: reader.truncated_tail(),
    };
    lines.push(Line::End(End {
        t: last,
        reason: EndReason::Crashed,
        rounds,
    }));
    let write_err = |source| CrashLeftError::Write {
        path: path.to_owned(),
        source,
    };
    let tmp = tmp_path(path);
    let written = (|| {
        let zstd = wants_zstd(path).then_some(ZSTD_LEVEL);
        let mut sink = FileSink::create(&tmp, zstd, true)?;
        for line in &lines {
            sink.write_line(line)?;
        }
        sink.finish_synced()?;
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(write_err(e));
    }
    Ok(Some(ended))
}
