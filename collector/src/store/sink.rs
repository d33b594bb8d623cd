//! Where recorded lines go: a JSON Lines file, optionally zstd-compressed, flushed after every poll
//! round so that a crash loses at most the line being written.
//!
//! A recording is written under a temporary name (`FILE.tmp`) until its first flush, which holds
//! its header: a crash before that leaves no file without a header under the final name.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use slotscope_core::recording::Line;
use slotscope_core::Timestamp;

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
        if let Some(dir) = self.path.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
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
        Ok(FileSink {
            target,
            count,
            line: Vec::with_capacity(8 * 1024),
            pending: None,
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
            Target::Plain(w) => w.flush(),
            Target::Zstd(w) => w.flush(),
        }
    }

    /// Completes the file like [`Sink::finish`] and puts it on disk.
    pub fn finish_synced(self) -> io::Result<()> {
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
        serde_json::to_writer(&mut self.line, line).map_err(io::Error::other)?;
        self.line.push(b'\n');
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
        match self.target {
            Target::Plain(mut w) => w.flush()?,
            Target::Zstd(w) => w.finish()?.flush()?,
        }
        self.pending.map_or(Ok(()), Pending::name)
    }

    fn bytes_written(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

/// Whether a path asks for compression by its name (`.zst`).
pub fn wants_zstd(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}
