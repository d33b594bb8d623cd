//! The tap's recording file: one thread writes the lines the proxies hand it ([`Records`]: in
//! batches, without waiting, at most [`QUEUED_LINES`] waiting at a time; what does not fit is
//! counted and dropped, so a slow disk neither holds a client back nor grows memory), flushes at
//! least every [`FLUSH_EVERY`], and at the end writes how many lines it dropped (an annotation,
//! [`not_recorded`]), the end line, and completes the file. With `--poll` the poller writes into
//! the same file through [`SharedSink`]. Should a write fail (a full disk), the file is ended at
//! once at its last flush ([`Sink::salvage`]) and the proxies go on serving the clients
//! unrecorded: a tap never breaks the application for its own file.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use slotscope_core::recording::{End, EndReason, Line};
use slotscope_core::tap::summary::not_recorded;
use slotscope_core::tap::TapSummary;

use crate::record::clock::now;
use crate::store::sink::{Salvaged, Sink};

/// Longest time a written line waits in memory before it reaches the file.
pub const FLUSH_EVERY: Duration = Duration::from_millis(250);

/// Lines handed to the writer and not yet written, at most (about 40 MB of lines): a batch that
/// would go over is dropped and counted.
pub const QUEUED_LINES: usize = 256 * 1024;

/// How long the writer sleeps when it finds nothing to write, at first; each time it finds
/// nothing again, twice as long, up to [`IDLE_MOST`]. The proxies never wake it (a wake-up per
/// batch was a system call per read of every client): it looks for lines.
const IDLE_FIRST: Duration = Duration::from_millis(1);

/// The writer's longest sleep: an idle tap looks for lines 20 times a second, and at 400,000
/// commands a second the 20,000 lines of one such sleep wait far under [`QUEUED_LINES`].
const IDLE_MOST: Duration = Duration::from_millis(50);

/// Where the proxies hand their lines to the writer: never waits, never wakes the writer. Lines
/// that would make more than the limit wait are dropped and counted instead. Dropping it tells the
/// writer that no more lines come.
pub struct Records {
    lanes: Arc<Lanes>,
    limit: usize,
}

/// What the proxies and the writer share.
#[derive(Default)]
struct Lanes {
    /// Batches handed over, oldest first, not yet taken by the writer.
    batches: Mutex<Vec<Vec<Line>>>,
    /// Lines handed over and not yet written.
    queued: AtomicUsize,
    /// Commands dropped because the writer had fallen behind.
    dropped_commands: AtomicU64,
    /// Connection events dropped likewise.
    dropped_events: AtomicU64,
    /// The [`Records`] is gone: no more lines come.
    closed: AtomicBool,
}

impl Records {
    /// Hands `lines` to the writer, or drops and counts them when `limit` lines wait already.
    pub fn offer(&self, lines: Vec<Line>) {
        let n = lines.len();
        if n == 0 {
            return;
        }
        let before = self.lanes.queued.fetch_add(n, Ordering::Relaxed);
        if before + n <= self.limit {
            self.lanes
                .batches
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(lines);
            return;
        }
        self.lanes.queued.fetch_sub(n, Ordering::Relaxed);
        let commands = lines
            .iter()
            .filter(|l| matches!(l, Line::TapCommand(_)))
            .count();
        let lanes = &self.lanes;
        lanes
            .dropped_commands
            .fetch_add(commands as u64, Ordering::Relaxed);
        lanes
            .dropped_events
            .fetch_add((n - commands) as u64, Ordering::Relaxed);
    }
}

impl Drop for Records {
    fn drop(&mut self) {
        self.lanes.closed.store(true, Ordering::Release);
    }
}

/// The proxies' end of the way to the writer, holding at most `limit` lines, and the writer's.
pub fn records(limit: usize) -> (Records, Queue) {
    let lanes = Arc::new(Lanes::default());
    (
        Records {
            lanes: lanes.clone(),
            limit,
        },
        Queue(lanes),
    )
}

/// The writer's end of [`Records`].
pub struct Queue(Arc<Lanes>);

impl Queue {
    /// The batches handed over since the last call, oldest first; `None` once the proxies' end is
    /// gone and every batch has been taken.
    fn take(&self) -> Option<Vec<Vec<Line>>> {
        // Read before the batches: a batch handed over before the close is in them.
        let closed = self.0.closed.load(Ordering::Acquire);
        let batches = std::mem::take(
            &mut *self
                .0
                .batches
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        (!closed || !batches.is_empty()).then_some(batches)
    }

    /// `lines` are written (or counted, after a failed write): they no longer count against the
    /// limit.
    fn done(&self, lines: usize) {
        self.0.queued.fetch_sub(lines, Ordering::Relaxed);
    }

    /// Commands and connection events dropped so far.
    fn dropped(&self) -> (u64, u64) {
        (
            self.0.dropped_commands.load(Ordering::Relaxed),
            self.0.dropped_events.load(Ordering::Relaxed),
        )
    }
}

/// The file, shared by the tap's writer and the poller.
pub type SharedFile = Arc<Mutex<Option<Box<dyn Sink>>>>;

/// What the writer did.
pub struct Written {
    /// The tap lines, folded.
    pub summary: TapSummary,
    /// The first write error, if any (lines after it were dropped).
    pub error: Option<io::Error>,
    /// What became of the file after that error (`None`: it could not be ended).
    pub kept: Option<Salvaged>,
}

/// Starts the writer thread. It ends when the proxies' end ([`Records`]) is dropped and every
/// line handed over is written, then writes how many lines were dropped (if any), `end` (or an
/// end line of its own) and completes the file.
pub fn spawn(
    file: SharedFile,
    queue: Queue,
    end: Arc<Mutex<Option<End>>>,
) -> std::thread::JoinHandle<Written> {
    std::thread::spawn(move || {
        let mut summary = TapSummary::default();
        let mut error: Option<io::Error> = None;
        let mut kept: Option<Salvaged> = None;
        let mut flushed = Instant::now();
        let mut idle = IDLE_FIRST;
        while let Some(batches) = queue.take() {
            if batches.is_empty() {
                std::thread::sleep(idle);
                idle = (idle * 2).min(IDLE_MOST);
            } else {
                idle = IDLE_FIRST;
            }
            for batch in &batches {
                for line in batch {
                    summary.push(line);
                }
                if error.is_none() {
                    if let Err(e) = write(&file, batch) {
                        kept = salvage(&file, &e);
                        error = Some(e);
                    }
                }
                queue.done(batch.len());
            }
            if flushed.elapsed() >= FLUSH_EVERY {
                flushed = Instant::now();
                if error.is_none() {
                    if let Err(e) = with(&file, |s| s.flush()) {
                        kept = salvage(&file, &e);
                        error = Some(e);
                    }
                }
            }
        }
        let end = end
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .unwrap_or(End {
                t: now(),
                reason: EndReason::Signal,
                rounds: 0,
            });
        let mut last = Vec::new();
        let (commands, events) = queue.dropped();
        if commands + events > 0 {
            let line = not_recorded(end.t, commands, events);
            summary.push(&line);
            last.push(line);
        }
        last.push(Line::End(end));
        let finished = write(&file, &last).and_then(|()| {
            let sink = file.lock().unwrap_or_else(PoisonError::into_inner).take();
            sink.map_or(Ok(()), Sink::finish)
        });
        if error.is_none() {
            error = finished.err();
        }
        Written {
            summary: summary.finish(),
            error,
            kept,
        }
    })
}

/// Ends the file at its last flush after `error`, says so on stderr, and leaves no file to write
/// to (the lines that come after are counted, not written).
fn salvage(file: &SharedFile, error: &io::Error) -> Option<Salvaged> {
    let sink = file.lock().unwrap_or_else(PoisonError::into_inner).take()?;
    let kept = sink.salvage(now(), EndReason::Error).ok();
    eprintln!(
        "slotscope tap: writing the recording failed ({error}): it ends here{}; the clients are \
         still served",
        if kept.is_some() {
            ", at its last flush, with an end line saying so"
        } else {
            " (cut at its last flush)"
        }
    );
    kept
}

fn with(file: &SharedFile, f: impl FnOnce(&mut dyn Sink) -> io::Result<()>) -> io::Result<()> {
    let mut guard = file.lock().unwrap_or_else(PoisonError::into_inner);
    match guard.as_mut() {
        Some(s) => f(&mut **s),
        None => Err(io::Error::other("the recording is already complete")),
    }
}

fn write(file: &SharedFile, lines: &[Line]) -> io::Result<()> {
    with(file, |s| {
        for l in lines {
            s.write_line(l)?;
        }
        Ok(())
    })
}

/// The poller's view of the shared file: its header is dropped (the tap wrote one already) and its
/// end line kept for the writer to put last; finishing is left to the writer.
pub struct SharedSink {
    /// The file.
    pub file: SharedFile,
    /// Where the poller's end line is kept.
    pub end: Arc<Mutex<Option<End>>>,
}

impl Sink for SharedSink {
    fn write_line(&mut self, line: &Line) -> io::Result<()> {
        match line {
            Line::Header(_) => Ok(()),
            Line::End(e) => {
                *self.end.lock().unwrap_or_else(PoisonError::into_inner) = Some(e.clone());
                Ok(())
            }
            other => write(&self.file, std::slice::from_ref(other)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        with(&self.file, |s| s.flush())
    }

    fn finish(self: Box<Self>) -> io::Result<()> {
        Ok(())
    }

    fn bytes_written(&self) -> u64 {
        self.file
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map_or(0, |s| s.bytes_written())
    }
}
