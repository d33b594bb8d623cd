//! Where recorded lines go: a JSON Lines file, optionally zstd-compressed, flushed after every poll
//! round so that a crash loses at most the line being written.
//!
//! A recording is written under a temporary name (`FILE.tmp`) until its first flush, which holds
//! its header: a crash before that leaves no file without a header under the final name.
//!
//! Should a write fail (a full disk), [`Sink::salvage`] cuts the file back to what its last
//! successful flush put on disk (whole rounds) and ends it there with an end line; a zstd file's
//! frame is ended by hand, with the end line as a last raw block and the checksum of everything
//! before it (the sink keeps the content's XXH64 as of each flush). The room for that end is kept
//! from the start: a recording has a hidden reserve file beside it (`.FILE.reserve`, 16 KiB),
//! deleted when the file is complete, or to make room for the end when the disk is full (a cut
//! back to the last flush frees nothing when that flush ended in the same disk block).

use std::fs::File;
use std::hash::Hasher;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use slotscope_core::recording::{End, EndReason, Line};
use slotscope_core::Timestamp;
use twox_hash::XxHash64;

/// A destination for recording lines.
pub trait Sink: Send {
    /// Writes one line.
    fn write_line(&mut self, line: &Line) -> io::Result<()>;
    /// Pushes everything written so far to the file.
    fn flush(&mut self) -> io::Result<()>;
    /// Completes the file (ends the zstd frame) and flushes it.
    fn finish(self: Box<Self>) -> io::Result<()>;
    /// Bytes on disk so far.
    fn bytes_written(&self) -> u64;
    /// Whether the current period of a rotating sink has ended at `t` (a single file never does).
    fn period_over(&self, _t: Timestamp) -> bool {
        false
    }
    /// Completes the current file and starts the next one, whose period begins at `t` (only a
    /// rotating sink has periods). The caller then writes the new file's header.
    fn next_period(&mut self, _t: Timestamp) -> io::Result<()> {
        Err(io::Error::other(
            "this recording is one file: it has no periods",
        ))
    }
    /// After a failed write: cuts the file back to its last successful flush and ends it there
    /// with an end line at `t` saying `reason`. An error when it cannot (the file is then left
    /// cut at that flush, read as cut short).
    fn salvage(self: Box<Self>, _t: Timestamp, _reason: EndReason) -> io::Result<Salvaged> {
        Err(io::Error::other("this sink keeps nothing to salvage"))
    }
}

/// What [`Sink::salvage`] left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Salvaged {
    /// The file, cut back to its last flush, ends there with an end line; it keeps this many
    /// poll rounds.
    Ended(u64),
    /// Nothing of the file had reached the disk, and it still had its temporary name: it was
    /// removed (the files an always-on recording completed before it are complete).
    Removed,
}

/// Counts the bytes that reach the file.
struct Counting<W> {
    inner: W,
    count: Arc<AtomicU64>,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

enum Target {
    Plain(Counting<BufWriter<File>>),
    Zstd(zstd::Encoder<'static, Counting<BufWriter<File>>>),
}

/// A recording file.
pub struct FileSink {
    target: Target,
    count: Arc<AtomicU64>,
    line: Vec<u8>,
    /// The final name, while the file still has its temporary one.
    pending: Option<Pending>,
    /// Room kept on the disk for the file's end.
    reserve: Option<Reserve>,
    /// The content's hash so far (zstd files only: the frame's checksum).
    hash: Option<XxHash64>,
    /// Poll rounds written so far.
    rounds: u64,
    /// What the last successful flush put on disk.
    durable: Durable,
}

/// The state of a file as of its last successful flush.
#[derive(Clone, Default)]
struct Durable {
    /// Its length.
    bytes: u64,
    /// Its content's hash (zstd files only).
    hash: Option<XxHash64>,
    /// Its poll rounds.
    rounds: u64,
}

/// A file under its temporary name, given its final name at its first flush (or deleted, should
/// the sink be dropped before).
struct Pending {
    tmp: PathBuf,
    path: PathBuf,
    replace: bool,
}

impl Pending {
    /// Gives the file its final name (refusing to replace a file unless `replace`) and puts the
    /// directory's entry on disk (best effort).
    fn name(mut self) -> io::Result<()> {
        if !self.replace && self.path.exists() {
            return Err(already_exists(&self.path));
        }
        std::fs::rename(&self.tmp, &self.path)?;
        self.tmp = PathBuf::new();
        sync_parent(&self.path);
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Puts a directory's entries (a file created, renamed or deleted) on disk; best effort.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// [`sync_dir`] of the directory holding `path`.
pub fn sync_parent(path: &Path) {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => sync_dir(dir),
        _ => sync_dir(Path::new(".")),
    }
}

/// What a failed write means to the one who reads the message: a full disk, or a write that
/// failed for another reason.
pub fn what_failed(error: &io::Error) -> &'static str {
    if error.kind() == io::ErrorKind::StorageFull {
        "the disk is full"
    } else {
        "writing the recording failed"
    }
}

/// Bytes kept free for a file's end (four pages of tmpfs, four blocks of ext4).
pub const RESERVE_BYTES: usize = 16 * 1024;

/// A hidden file beside a recording that holds [`RESERVE_BYTES`] of the disk until the recording
/// is complete (then, or when it is dropped, it is deleted).
struct Reserve(PathBuf);

impl Reserve {
    /// `.NAME.reserve` beside `path`, if the disk has room for it (else there is no reserve).
    fn beside(path: &Path) -> Option<Reserve> {
        let name = path.file_name()?.to_string_lossy();
        let reserve = path.with_file_name(format!(".{name}.reserve"));
        match std::fs::write(&reserve, vec![0u8; RESERVE_BYTES]) {
            Ok(()) => Some(Reserve(reserve)),
            Err(_) => {
                let _ = std::fs::remove_file(&reserve);
                None
            }
        }
    }
}

impl Drop for Reserve {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Whether `name` is a reserve file's (see [`FileSink`]): a crash leaves them behind.
pub fn is_reserve(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".reserve")
}

fn already_exists(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{} already exists", path.display()),
    )
}

/// `PATH.tmp`: where a file is written before it gets its final name.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

/// zstd level used for recordings: high enough for the repetitive JSON, cheap at a few KB/s.
pub const ZSTD_LEVEL: i32 = 9;

/// zstd level of `slotscope tap`, which writes a line per command of a busy client: level 9 took
/// about 8 % of the tap's CPU at 180k commands/s (see BENCHMARKS.md, Tap).
pub const TAP_ZSTD_LEVEL: i32 = 3;

/// zstd window: 2^20 bytes.
pub const ZSTD_WINDOW_LOG: u32 = 20;

impl FileSink {
    /// Creates `path` (refusing to overwrite an existing file unless `overwrite`), compressed at
    /// zstd level `zstd` if given.
    pub fn create(path: &Path, zstd: Option<i32>, overwrite: bool) -> io::Result<FileSink> {
        let file = if overwrite {
            File::create(path)?
        } else {
            File::options().write(true).create_new(true).open(path)?
        };
        FileSink::on(file, zstd)
    }

    /// Like [`FileSink::create`], but the file is written as `PATH.tmp` (replacing one a crash
    /// left) and renamed to `path` at its first flush: a recording whose header is not on disk
    /// never carries its final name. Without `overwrite`, an existing `path` is refused here and
    /// again at the rename.
    pub fn create_named_on_flush(
        path: &Path,
        zstd: Option<i32>,
        overwrite: bool,
    ) -> io::Result<FileSink> {
        if !overwrite && path.exists() {
            return Err(already_exists(path));
        }
        let tmp = tmp_path(path);
        let mut sink = FileSink::on(File::create(&tmp)?, zstd)?;
        sink.reserve = Reserve::beside(path);
        sink.pending = Some(Pending {
            tmp,
            path: path.to_owned(),
            replace: overwrite,
        });
        Ok(sink)
    }

    fn on(file: File, zstd: Option<i32>) -> io::Result<FileSink> {
        let count = Arc::new(AtomicU64::new(0));
        let counting = Counting {
            inner: BufWriter::with_capacity(64 * 1024, file),
            count: count.clone(),
        };
        let target = if let Some(level) = zstd {
            let mut enc = zstd::Encoder::new(counting, level)?;
            // A content checksum at the end of the frame lets readers detect damage.
            enc.include_checksum(true)?;
            // A 1 MiB window: a poll round repeats the previous one, so a longer window or
            // long-distance matching buys nothing and costs memory (see BENCHMARKS.md).
            enc.window_log(ZSTD_WINDOW_LOG)?;
            Target::Zstd(enc)
        } else {
            Target::Plain(counting)
        };
        let hash = zstd.map(|_| XxHash64::with_seed(0));
        Ok(FileSink {
            target,
            count,
            line: Vec::with_capacity(8 * 1024),
            pending: None,
            reserve: None,
            durable: Durable {
                hash: hash.clone(),
                ..Durable::default()
            },
            hash,
            rounds: 0,
        })
    }
}

impl FileSink {
    /// Flushes everything written so far (for zstd, ending the current block so that a reader
    /// decodes it without the frame's end) and asks the kernel to put it on disk (`fdatasync`),
    /// so that a crash or a power loss loses nothing written before.
    pub fn sync(&mut self) -> io::Result<()> {
        self.flush_target()?;
        let file = match &mut self.target {
            Target::Plain(w) => w.inner.get_ref(),
            Target::Zstd(w) => w.get_ref().inner.get_ref(),
        };
        file.sync_data()?;
        self.pending.take().map_or(Ok(()), Pending::name)
    }

    fn flush_target(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Plain(w) => w.flush()?,
            Target::Zstd(w) => w.flush()?,
        }
        self.durable = Durable {
            bytes: self.count.load(Ordering::Relaxed),
            hash: self.hash.clone(),
            rounds: self.rounds,
        };
        Ok(())
    }

    /// Completes the file like [`Sink::finish`] and puts it on disk.
    pub fn finish_synced(self) -> io::Result<()> {
        // The reserve's room is the frame's end's.
        drop(self.reserve);
        let counting = match self.target {
            Target::Plain(w) => w,
            Target::Zstd(w) => w.finish()?,
        };
        let file = counting.inner.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        self.pending.map_or(Ok(()), Pending::name)
    }
}

impl Sink for FileSink {
    fn write_line(&mut self, line: &Line) -> io::Result<()> {
        self.line.clear();
        match line {
            // The tap's line, hundreds of thousands a second: written by hand, the same bytes.
            Line::TapCommand(c) => c.write_line(&mut self.line),
            _ => serde_json::to_writer(&mut self.line, line).map_err(io::Error::other)?,
        }
        self.line.push(b'\n');
        if let Some(h) = &mut self.hash {
            h.write(&self.line);
        }
        if matches!(line, Line::PollRound(_)) {
            self.rounds += 1;
        }
        match &mut self.target {
            Target::Plain(w) => w.write_all(&self.line),
            Target::Zstd(w) => w.write_all(&self.line),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_target()?;
        self.pending.take().map_or(Ok(()), Pending::name)
    }

    fn finish(self: Box<Self>) -> io::Result<()> {
        let this = *self;
        drop(this.reserve);
        match this.target {
            Target::Plain(mut w) => w.flush()?,
            Target::Zstd(w) => w.finish()?.flush()?,
        }
        this.pending.map_or(Ok(()), Pending::name)
    }

    fn bytes_written(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    fn salvage(self: Box<Self>, t: Timestamp, reason: EndReason) -> io::Result<Salvaged> {
        let durable = self.durable.clone();
        if durable.bytes == 0 {
            return if self.pending.is_some() {
                // Dropping it removes the temporary file.
                Ok(Salvaged::Removed)
            } else {
                Err(io::Error::other("nothing of the file reached the disk"))
            };
        }
        // The buffers are dropped first (they may write what they hold), then the file is cut
        // back through a second handle of it, after the reserve made room for its end.
        let mut file = match &self.target {
            Target::Plain(w) => w.inner.get_ref().try_clone()?,
            Target::Zstd(w) => w.get_ref().inner.get_ref().try_clone()?,
        };
        drop(self.target);
        drop(self.reserve);
        let mut end = serde_json::to_vec(&Line::End(End {
            t,
            reason,
            rounds: durable.rounds,
        }))
        .map_err(io::Error::other)?;
        end.push(b'\n');
        let tail = match durable.hash {
            Some(hash) => zstd_frame_end(hash, &end),
            None => end,
        };
        let ended = (|| {
            file.set_len(durable.bytes)?;
            file.seek(SeekFrom::Start(durable.bytes))?;
            file.write_all(&tail)?;
            file.sync_all()
        })();
        if let Err(e) = ended {
            // Back to the last flush: whole rounds, read as cut short.
            let _ = file.set_len(durable.bytes);
            let _ = file.sync_all();
            return Err(e);
        }
        Ok(Salvaged::Ended(durable.rounds))
    }
}

/// The bytes that end a zstd frame whose content so far hashes to `hash` (XXH64, seed 0) with
/// `last` as its content's end: a last raw block holding `last` (block header: bit 0 last block,
/// bits 1-2 the type, 0 for raw, bits 3-23 the size; RFC 8878 3.1.1.2), then the frame's checksum,
/// the low 4 bytes of the content's XXH64, little-endian (3.1.1).
fn zstd_frame_end(mut hash: XxHash64, last: &[u8]) -> Vec<u8> {
    // A raw block holds at most 128 KiB; an end line is about a hundred bytes.
    let size = u32::try_from(last.len().min(128 * 1024 - 1)).unwrap_or(0);
    let header = 1 | (size << 3);
    let mut out = Vec::with_capacity(3 + last.len() + 4);
    out.extend_from_slice(&header.to_le_bytes()[..3]);
    out.extend_from_slice(&last[..size as usize]);
    hash.write(&last[..size as usize]);
    let checksum = (hash.finish() & 0xFFFF_FFFF) as u32;
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

/// Whether a path asks for compression by its name (`.zst`).
pub fn wants_zstd(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read};

    use slotscope_core::recording::{Annotation, PollRound};

    use super::*;

    fn round(k: u64) -> Line {
        Line::PollRound(PollRound {
            t: Timestamp(1_700_000_000_000 + k * 1000),
            elapsed_ms: 3,
            round: k,
            nodes: 1,
            ok: 1,
            failed: 0,
        })
    }

    fn note(k: u64) -> Line {
        Line::Annotation(Annotation {
            t: Timestamp(1_700_000_000_000 + k),
            source: "test".into(),
            text: "x".repeat(200),
            end: None,
            fields: std::collections::BTreeMap::new(),
        })
    }

    /// Three rounds flushed, then lines that only reached the buffers when a write failed: the
    /// salvaged file holds the three rounds and an end line, and a zstd file is a complete frame
    /// whose checksum the decoder verifies.
    fn salvaged(zstd: bool) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir
            .path()
            .join(if zstd { "r.jsonl.zst" } else { "r.jsonl" });
        let mut sink =
            FileSink::create_named_on_flush(&path, zstd.then_some(ZSTD_LEVEL), false).unwrap();
        for k in 0..3 {
            sink.write_line(&note(k)).unwrap();
            sink.write_line(&round(k)).unwrap();
            sink.flush().unwrap();
        }
        for k in 3..6 {
            sink.write_line(&round(k)).unwrap();
        }
        let kept = Box::new(sink)
            .salvage(Timestamp(1_700_000_009_000), EndReason::Error)
            .unwrap();
        assert_eq!(kept, Salvaged::Ended(3));
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "the reserve is gone"
        );
        let file = File::open(&path).unwrap();
        let text = if zstd {
            let mut d = zstd::stream::read::Decoder::new(file).unwrap();
            let mut out = String::new();
            d.read_to_string(&mut out)
                .expect("a complete frame, its checksum right");
            out
        } else {
            let mut out = String::new();
            BufReader::new(file).read_to_string(&mut out).unwrap();
            out
        };
        text.lines().map(str::to_owned).collect()
    }

    fn check(lines: &[String]) {
        assert_eq!(lines.len(), 7, "{lines:?}");
        let last: Line = serde_json::from_str(&lines[6]).unwrap();
        let Line::End(end) = last else {
            panic!("{last:?}")
        };
        assert_eq!(end.reason, EndReason::Error);
        assert_eq!(end.rounds, 3);
        assert_eq!(end.t, Timestamp(1_700_000_009_000));
    }

    #[test]
    fn a_failed_write_leaves_a_plain_file_ended_at_its_last_flush() {
        check(&salvaged(false));
    }

    #[test]
    fn a_failed_write_leaves_a_zstd_file_a_complete_frame_ended_at_its_last_flush() {
        check(&salvaged(true));
    }

    #[test]
    fn a_file_is_named_at_its_first_flush_and_a_dropped_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let reserve = dir.path().join(".r.jsonl.reserve");
        let mut sink = FileSink::create_named_on_flush(&path, None, false).unwrap();
        sink.write_line(&round(0)).unwrap();
        assert!(!path.exists() && tmp_path(&path).exists());
        assert_eq!(
            std::fs::metadata(&reserve).unwrap().len(),
            RESERVE_BYTES as u64
        );
        sink.flush().unwrap();
        assert!(path.exists() && !tmp_path(&path).exists());
        Box::new(sink).finish().unwrap();
        assert!(!reserve.exists(), "a complete file keeps no reserve");
        let first = BufReader::new(File::open(&path).unwrap()).lines().count();
        assert_eq!(first, 1);
        // An existing file is refused without overwrite; a sink dropped before its first flush
        // leaves nothing behind, and the existing file untouched.
        assert_eq!(
            FileSink::create_named_on_flush(&path, None, false)
                .err()
                .map(|e| e.kind()),
            Some(io::ErrorKind::AlreadyExists)
        );
        let mut again = FileSink::create_named_on_flush(&path, None, true).unwrap();
        again.write_line(&round(1)).unwrap();
        drop(again);
        assert!(!tmp_path(&path).exists());
        assert_eq!(
            BufReader::new(File::open(&path).unwrap()).lines().count(),
            1
        );
    }
}
