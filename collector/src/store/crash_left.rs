//! The file a crash left in an always-on recording directory: a recorder killed (or a machine gone
//! down) leaves its current file without an end line, after its last complete round (its zstd
//! frame unfinished, perhaps a partial line). When `record --out DIR/` starts again, before it
//! opens a file of its own, it ends that file: every complete line is written again under a
//! temporary name with an end line (reason `crashed`), completed, put on disk and renamed over
//! the original. Every file of the directory but the one being written is then complete, so the
//! retention only ever deletes complete, closed files.
//!
//! Only the newest file can have been left so: each start ends the one before it
//! (the always-on sink hands it here when it opens the directory).

use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use slotscope_core::reader::RecordingReader;
use slotscope_core::recording::{End, EndReason, Line};

use crate::store::sink::{sync_parent, tmp_path, wants_zstd, FileSink, Sink, ZSTD_LEVEL};

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
        sync_parent(path);
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(write_err(e));
    }
    Ok(Some(ended))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use slotscope_core::recording::PollRound;
    use slotscope_core::Timestamp;

    use super::*;
    use crate::store::test_header as header;

    fn round(started: u64, k: u64) -> Line {
        Line::PollRound(PollRound {
            t: Timestamp(started + k * 1000),
            elapsed_ms: 3,
            round: k,
            nodes: 1,
            ok: 1,
            failed: 0,
        })
    }

    /// Writes a period file as a recorder killed after `rounds` rounds leaves it: each round
    /// flushed, the zstd frame never ended, then `tail` (a partial line's bytes) appended raw.
    fn crash_left(dir: &Path, started: u64, rounds: u64, zstd: bool, tail: &[u8]) -> PathBuf {
        let name = format!(
            "slotscope-{started}.jsonl{}",
            if zstd { ".zst" } else { "" }
        );
        let path = dir.join(name);
        let mut sink =
            FileSink::create_named_on_flush(&path, zstd.then_some(ZSTD_LEVEL), false).unwrap();
        sink.write_line(&header(started)).unwrap();
        for k in 0..rounds {
            sink.write_line(&round(started, k)).unwrap();
            sink.sync().unwrap();
        }
        // The process dies: nothing more reaches the file but what was flushed.
        std::mem::forget(sink);
        if !tail.is_empty() {
            let mut f = File::options().append(true).open(&path).unwrap();
            f.write_all(tail).unwrap();
        }
        path
    }

    fn read(path: &Path) -> Vec<Line> {
        let mut r = RecordingReader::detect(BufReader::new(File::open(path).unwrap())).unwrap();
        let h = r.header().unwrap().clone();
        let mut lines = vec![Line::Header(h)];
        lines.extend(r.by_ref().map(|l| l.unwrap().1));
        assert_eq!(r.truncated_tail(), None);
        lines
    }

    #[test]
    fn a_zstd_file_a_crash_left_is_ended_after_its_last_complete_round() {
        let dir = tempfile::tempdir().unwrap();
        let older = crash_left(dir.path(), 1_700_000_000_000, 2, true, b"");
        let path = crash_left(dir.path(), 1_700_000_100_000, 3, true, b"");
        let ended = end_if_cut(&path).unwrap().expect("ended");
        assert_eq!(ended.path, path);
        assert_eq!(ended.rounds, 3);
        let lines = read(&path);
        assert_eq!(lines.len(), 1 + 3 + 1);
        let Some(Line::End(end)) = lines.last() else {
            panic!("no end line: {lines:?}")
        };
        assert_eq!(end.reason, EndReason::Crashed);
        assert_eq!(end.rounds, 3);
        assert_eq!(end.t, Timestamp(1_700_000_100_000 + 2000));
        // Once ended, it is complete: a second start leaves it be.
        assert_eq!(end_if_cut(&path).unwrap(), None);
        assert!(end_if_cut(&older).unwrap().is_some());
        assert!(!tmp_path(&path).exists());
    }

    #[test]
    fn a_partial_last_line_is_left_out_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = crash_left(
            dir.path(),
            1_700_000_000_000,
            2,
            false,
            b"{\"type\":\"poll_ro",
        );
        let ended = end_if_cut(&path).unwrap().expect("ended");
        assert_eq!(ended.rounds, 2);
        assert_eq!(ended.partial_line, Some(4));
        let lines = read(&path);
        assert!(matches!(lines.last(), Some(Line::End(e)) if e.reason == EndReason::Crashed));
    }

    #[test]
    fn a_file_that_is_not_a_recording_is_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slotscope-20231114T221320Z.jsonl.zst");
        std::fs::write(&path, b"not zstd, not json\n").unwrap();
        let e = end_if_cut(&path).unwrap_err();
        assert!(e.to_string().contains("left as it is"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"not zstd, not json\n");
    }
}
