//! A recording's overview on disk (`FILE.overview.json` beside `FILE`, see
//! [`slotscope_core::overview`]): made by `slotscope index`, by `record` when it closes a file,
//! and by `serve` for the recording it serves when none is there or the one there is older.

use std::fs::{self, File};
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use slotscope_core::overview::{Overview, SUFFIX};
use slotscope_core::reader::ReadError;

/// Why an overview could not be made.
#[derive(Debug, thiserror::Error)]
pub enum OverviewFileError {
    /// The recording could not be opened or the overview written.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The recording has a bad line.
    #[error("{path}: {source}")]
    Read {
        /// The recording.
        path: PathBuf,
        /// The error, naming the line.
        source: ReadError,
    },
}

/// What writing an overview did.
#[derive(Debug)]
pub struct Written {
    /// Where it is.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Lines of the recording read.
    pub lines: u64,
    /// Findings in it.
    pub findings: usize,
    /// How long reading and writing took.
    pub took: Duration,
}

/// Where the overview of `recording` goes: beside it, its name and [`SUFFIX`].
pub fn path_for(recording: &Path) -> PathBuf {
    let mut name = recording.as_os_str().to_owned();
    name.push(SUFFIX);
    PathBuf::from(name)
}

/// Whether `recording` has an overview at least as new as itself, written by this build's
/// analysis ([`Overview::is_current_json`]: one an older slotscope wrote may tell another story).
pub fn is_fresh(recording: &Path) -> bool {
    let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let path = path_for(recording);
    match (modified(recording), modified(&path)) {
        (Some(rec), Some(ov)) => {
            ov >= rec && fs::read(&path).is_ok_and(|b| Overview::is_current_json(&b))
        }
        _ => false,
    }
}

/// Reads `recording` whole and writes its overview beside it, through a temporary file renamed
/// when complete (a reader never sees half of one).
pub fn write(recording: &Path) -> Result<Written, OverviewFileError> {
    let began = Instant::now();
    let io_err = |path: &Path| {
        let path = path.to_owned();
        move |source| OverviewFileError::Io { path, source }
    };
    let file = File::open(recording).map_err(io_err(recording))?;
    let len = file.metadata().map_err(io_err(recording))?.len();
    let overview = Overview::of_recording(BufReader::with_capacity(256 * 1024, file), len)
        .map_err(|source| OverviewFileError::Read {
            path: recording.to_owned(),
            source,
        })?;
    let json = overview.to_json();
    let path = path_for(recording);
    let tmp = crate::store::sink::tmp_path(&path);
    let written = File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(&json)?;
            f.sync_all()
        })
        .and_then(|()| fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io_err(&path)(e));
    }
    Ok(Written {
        path,
        bytes: u64::try_from(json.len()).unwrap_or(u64::MAX),
        lines: overview.lines,
        findings: overview.analysis.findings.len(),
        took: began.elapsed(),
    })
}

/// Writes the overview of a recording just completed; a failure is reported on stderr, the
/// recording stays as it is.
pub fn write_or_report(recording: &Path) {
    if let Err(e) = write(recording) {
        eprintln!("slotscope: no overview of {}: {e}", recording.display());
    }
}

/// Writes the overview of `recording` on a thread of its own (a closed period file of an
/// always-on recording: reading an hour back takes a moment the polls must not wait for); what
/// went wrong goes to stderr.
pub fn write_in_background(recording: PathBuf) {
    let spawned = std::thread::Builder::new()
        .name("overview".into())
        .spawn(move || write_or_report(&recording));
    if let Err(e) = spawned {
        eprintln!("slotscope: cannot start the overview's thread: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/fixtures/{name}.jsonl.zst"))
    }

    #[test]
    fn an_overview_is_written_beside_its_recording_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("r.jsonl.zst");
        fs::copy(fixture("incident2-valkey"), &rec).unwrap();
        assert!(!is_fresh(&rec));
        let w = write(&rec).unwrap();
        assert_eq!(w.path, dir.path().join("r.jsonl.zst.overview.json"));
        assert!(is_fresh(&rec));
        let json = fs::read(&w.path).unwrap();
        let ov = Overview::from_json(&json).unwrap();
        // One written by another build of slotscope is not fresh, however new.
        let other = String::from_utf8(json.clone())
            .unwrap()
            .replace(slotscope_core::overview::ANALYSIS_ID, "0.0.0-older");
        fs::write(&w.path, other).unwrap();
        assert!(!is_fresh(&rec));
        fs::write(&w.path, &json).unwrap();
        assert!(is_fresh(&rec));
        assert_eq!(ov.recording_bytes, fs::metadata(&rec).unwrap().len());
        assert_eq!(ov.lines, w.lines);
        assert_eq!(ov.analysis.findings.len(), w.findings);
        assert!(w.findings > 0);
        // Nothing else is left in the directory.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_bad_recording_leaves_no_overview() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("bad.jsonl");
        fs::write(&rec, "not a recording\n").unwrap();
        let e = write(&rec).unwrap_err();
        assert!(e.to_string().contains("bad.jsonl"), "{e}");
        assert!(e.to_string().contains("not a slotscope recording"), "{e}");
        assert!(!path_for(&rec).exists());
        assert!(matches!(
            write(&dir.path().join("none.jsonl")),
            Err(OverviewFileError::Io { .. })
        ));
    }
}
