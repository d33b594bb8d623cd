//! An always-on recording: a directory of files, one per period (`record --out DIR/ --rotate 1h`),
//! each named by its start time and complete on its own, the oldest deleted beyond the retention.
//!
//! The recorder decides when a period ends (at a round boundary, so that each file starts with a
//! whole round) and writes each file's header, end line and starting state; this sink opens,
//! completes and deletes the files. Every round is put on disk (`fdatasync`) before the next one
//! starts: a crash or a power loss loses at most the round being written.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use slotscope_core::recording::{EndReason, Line};
use slotscope_core::Timestamp;

use crate::store::crash_left;
use crate::store::overview_file;
use crate::store::retention::{Retention, Stored};
use crate::store::sink::{is_reserve, sync_dir, FileSink, Salvaged, Sink, ZSTD_LEVEL};

/// Start of every file name of an always-on recording.
pub const PREFIX: &str = "slotscope-";

/// End of every file name of an always-on recording (zstd-compressed JSON Lines).
pub const SUFFIX: &str = ".jsonl.zst";

/// The name of the file whose period starts at `t`: `slotscope-20261201T051700Z.jsonl.zst`.
pub fn file_name(t: Timestamp) -> String {
    let iso = t.to_rfc3339();
    // `2026-12-01T05:17:00.123Z` → `20261201T051700Z`.
    let compact: String = iso[..19]
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    format!("{PREFIX}{compact}Z{SUFFIX}")
}

/// Whether `name` is the name of a file of an always-on recording.
pub fn is_period_file(name: &str) -> bool {
    name.starts_with(PREFIX) && (name.ends_with(SUFFIX) || name.ends_with(".jsonl"))
}

/// What orders file names by their start: the seconds, then the milliseconds of a name that has
/// them (`slotscope-20261201T051700.298Z…`, made when one with seconds alone existed), which
/// follows the one without (its start, 000, or a clock that went back: both came before).
fn start_key(name: &str) -> (String, u32) {
    let stamp = name
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.split('Z').next())
        .unwrap_or_default();
    match stamp.split_once('.') {
        Some((secs, ms)) => (secs.to_owned(), ms.parse::<u32>().map_or(0, |m| m + 1)),
        None => (stamp.to_owned(), 0),
    }
}

/// The end of the period that holds `t`: periods are aligned on multiples of `period` since the
/// Unix epoch (with `1h`, on the hour, UTC).
pub fn period_end(t: Timestamp, period: Duration) -> Timestamp {
    let p = u64::try_from(period.as_millis()).unwrap_or(u64::MAX).max(1);
    Timestamp((t.0 / p).saturating_add(1).saturating_mul(p))
}

/// The files of an always-on recording in `dir`, oldest first (their names sort by start time).
pub fn list(dir: &Path) -> io::Result<Vec<Stored>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_period_file(name) {
            continue;
        }
        let meta = entry.metadata()?;
        if !meta.is_file() {
            continue;
        }
        let ended = meta
            .modified()
            .ok()
            .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
            .map_or(Timestamp(0), |d| {
                Timestamp(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            });
        files.push(Stored {
            path: entry.path(),
            ended,
            bytes: meta.len(),
        });
    }
    files.sort_by_cached_key(|f| {
        let name = f
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (start_key(&name), name)
    });
    Ok(files)
}

/// The lock file of an always-on recording directory: one recorder writes into a directory.
pub const LOCK_FILE: &str = ".slotscope-record.lock";

/// A directory of period files.
pub struct RotatingSink {
    /// Held (locked) while the sink lives.
    _lock: File,
    dir: PathBuf,
    period: Duration,
    retention: Retention,
    current: Option<FileSink>,
    path: PathBuf,
    ends: Timestamp,
    /// Bytes of the files completed by this sink.
    earlier: u64,
}

impl RotatingSink {
    /// Creates `dir` if needed, takes its lock (refusing a directory another recorder writes
    /// into), ends the file a crash left there (see [`crate::store::crash_left`]) and opens the
    /// file of the period that starts at `t`.
    pub fn create(
        dir: &Path,
        period: Duration,
        retention: Retention,
        t: Timestamp,
    ) -> io::Result<RotatingSink> {
        fs::create_dir_all(dir)?;
        let lock = lock(dir)?;
        clean_after_crash(dir);
        let (current, path) = open(dir, t)?;
        let sink = RotatingSink {
            _lock: lock,
            dir: dir.to_owned(),
            period,
            retention,
            current: Some(current),
            path,
            ends: period_end(t, period),
            earlier: 0,
        };
        sink.retain(t);
        Ok(sink)
    }

    /// The file being written.
    pub fn current_path(&self) -> &Path {
        &self.path
    }

    fn file(&mut self) -> io::Result<&mut FileSink> {
        self.current
            .as_mut()
            .ok_or_else(|| io::Error::other("the recording's file is closed"))
    }

    /// Deletes the files beyond the retention (never the current one); a file that cannot be
    /// deleted is reported on stderr and tried again at the next period.
    fn retain(&self, now: Timestamp) {
        if self.retention.keeps_all() {
            return;
        }
        let files = match list(&self.dir) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("slotscope: cannot list {}: {e}", self.dir.display());
                return;
            }
        };
        for path in self.retention.deletions(&files, &self.path, now) {
            if let Err(e) = fs::remove_file(&path) {
                eprintln!("slotscope: cannot delete {}: {e}", path.display());
            }
            // Its overview goes with it (there may be none).
            let _ = fs::remove_file(overview_file::path_for(&path));
        }
    }
}

/// Takes the lock of `dir` ([`LOCK_FILE`]), held while the returned file is open; refused when
/// another recorder holds it.
fn lock(dir: &Path) -> io::Result<File> {
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK_FILE))?;
    if let Err(e) = lock.try_lock() {
        return Err(match e {
            fs::TryLockError::WouldBlock => io::Error::new(
                io::ErrorKind::ResourceBusy,
                "another slotscope record is writing into this directory",
            ),
            fs::TryLockError::Error(e) => e,
        });
    }
    Ok(lock)
}

/// Under the lock: deletes the reserves a crash left and ends the file it left (see
/// [`crash_left`]), saying so on stderr.
fn clean_after_crash(dir: &Path) {
    // The reserves a crash left (see `FileSink`): the lock says no recorder owns them.
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(".slotscope-") && is_reserve(&name) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    let newest = list(dir).map(|files| files.last().map(|f| f.path.clone()));
    let ended = match newest {
        Ok(Some(path)) => crash_left::end_if_cut(&path),
        Ok(None) => Ok(None),
        Err(e) => {
            eprintln!("slotscope: cannot list {}: {e}", dir.display());
            Ok(None)
        }
    };
    match ended {
        Ok(Some(ended)) => {
            eprintln!(
                "slotscope: {} was left by a crash: ended after its last complete line ({} rounds{})",
                ended.path.display(),
                ended.rounds,
                if ended.partial_line.is_some() {
                    "; a partial last line left out"
                } else {
                    ""
                }
            );
            overview_file::write_or_report(&ended.path);
        }
        Ok(None) => {}
        Err(e) => eprintln!("slotscope: {e}"),
    }
}

/// Opens the file of the period starting at `t` in `dir` (a name with milliseconds if one with
/// seconds exists already: the clock went back, or periods shorter than a second), under its
/// temporary name until its header is on disk.
fn open(dir: &Path, t: Timestamp) -> io::Result<(FileSink, PathBuf)> {
    let mut path = dir.join(file_name(t));
    let sink = match FileSink::create_named_on_flush(&path, Some(ZSTD_LEVEL), false) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let name = file_name(t).replace(
                &format!("Z{SUFFIX}"),
                &format!(".{:03}Z{SUFFIX}", t.0 % 1000),
            );
            path = dir.join(name);
            FileSink::create_named_on_flush(&path, Some(ZSTD_LEVEL), false)?
        }
        Err(e) => return Err(e),
    };
    Ok((sink, path))
}

impl Sink for RotatingSink {
    fn write_line(&mut self, line: &Line) -> io::Result<()> {
        self.file()?.write_line(line)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file()?.sync()
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        if let Some(f) = self.current.take() {
            f.finish_synced()?;
            overview_file::write_or_report(&self.path);
        }
        sync_dir(&self.dir);
        Ok(())
    }

    fn bytes_written(&self) -> u64 {
        self.earlier + self.current.as_ref().map_or(0, FileSink::bytes_written)
    }

    fn period_over(&self, t: Timestamp) -> bool {
        t >= self.ends
    }

    fn salvage(mut self: Box<Self>, t: Timestamp, reason: EndReason) -> io::Result<Salvaged> {
        // No current file: the next one could not be opened, the one before was completed.
        let Some(file) = self.current.take() else {
            return Ok(Salvaged::Removed);
        };
        let salvaged = Box::new(file).salvage(t, reason)?;
        sync_dir(&self.dir);
        Ok(salvaged)
    }

    fn next_period(&mut self, t: Timestamp) -> io::Result<()> {
        if let Some(f) = self.current.take() {
            self.earlier += f.bytes_written();
            f.finish_synced()?;
            // Read back on a thread of its own: the next poll round does not wait for it.
            overview_file::write_in_background(self.path.clone());
        }
        let (current, path) = open(&self.dir, t)?;
        self.current = Some(current);
        self.path = path;
        self.ends = period_end(t, self.period);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(t, |d| {
            Timestamp(u64::try_from(d.as_millis()).unwrap_or(t.0))
        });
        self.retain(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_start_and_are_recognised() {
        let t = Timestamp::from_civil(2026, 12, 1, 5, 17, 0, 123).unwrap();
        assert_eq!(file_name(t), "slotscope-20261201T051700Z.jsonl.zst");
        assert!(is_period_file(&file_name(t)));
        assert!(!is_period_file("notes.txt"));
        assert!(!is_period_file("slotscope-x.tmp"));
        let later = Timestamp(t.0 + 3_600_000);
        assert!(file_name(later) > file_name(t));
        // A name with milliseconds follows the one without of the same second.
        let seconds = "slotscope-20261201T051700Z.jsonl.zst";
        let millis = "slotscope-20261201T051700.298Z.jsonl.zst";
        let next = "slotscope-20261201T051701Z.jsonl.zst";
        assert!(start_key(seconds) < start_key(millis));
        assert!(start_key(millis) < start_key(next));
    }

    #[test]
    fn periods_end_on_multiples_of_the_period() {
        let t = Timestamp::from_civil(2026, 12, 1, 5, 17, 0, 123).unwrap();
        let hour = Duration::from_secs(3600);
        assert_eq!(
            period_end(t, hour),
            Timestamp::from_civil(2026, 12, 1, 6, 0, 0, 0).unwrap()
        );
        let on = Timestamp::from_civil(2026, 12, 1, 6, 0, 0, 0).unwrap();
        assert_eq!(
            period_end(on, hour),
            Timestamp::from_civil(2026, 12, 1, 7, 0, 0, 0).unwrap()
        );
        assert_eq!(
            period_end(Timestamp(4_500), Duration::from_secs(2)),
            Timestamp(6_000)
        );
    }
}
