//! The tap's recording file: one thread writes the lines the proxies send (in batches, over a
//! bounded channel, so a slow disk slows the clients rather than growing memory), flushes at least
//! every [`FLUSH_EVERY`], and at the end writes the end line and completes the file. With `--poll`
//! the poller writes into the same file through [`SharedSink`]. Should a write fail (a full disk),
//! the file is ended at once at its last flush ([`Sink::salvage`]) and the proxies go on serving
//! the clients unrecorded: a tap never breaks the application for its own file.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use slotscope_core::recording::{End, EndReason, Line};
use slotscope_core::tap::TapSummary;
use tokio::sync::mpsc;

use crate::record::clock::now;
use crate::store::sink::{Salvaged, Sink};

/// Longest time a written line waits in memory before it reaches the file.
pub const FLUSH_EVERY: Duration = Duration::from_millis(250);

/// Batches of lines in flight to the writer, at most.
pub const BATCHES_IN_FLIGHT: usize = 1024;

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

/// Starts the writer thread. It ends when every sender is dropped, then writes `end` (or an end
/// line of its own) and completes the file.
pub fn spawn(
    file: SharedFile,
    mut rx: mpsc::Receiver<Vec<Line>>,
    end: Arc<Mutex<Option<End>>>,
) -> std::thread::JoinHandle<Written> {
    std::thread::spawn(move || {
        let mut summary = TapSummary::default();
        let mut error: Option<io::Error> = None;
        let mut kept: Option<Salvaged> = None;
        let rt = match tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => {
                return Written {
                    summary,
                    error: Some(e),
                    kept: None,
                }
            }
        };
        rt.block_on(async {
            let mut ticker = tokio::time::interval(FLUSH_EVERY);
            loop {
                tokio::select! {
                    batch = rx.recv() => {
                        let Some(batch) = batch else { break };
                        for line in &batch {
                            summary.push(line);
                        }
                        if error.is_none() {
                            if let Err(e) = write(&file, &batch) {
                                kept = salvage(&file, &e);
                                error = Some(e);
                            }
                        }
                    }
                    _ = ticker.tick() => {
                        if error.is_none() {
                            if let Err(e) = with(&file, |s| s.flush()) {
                                kept = salvage(&file, &e);
                                error = Some(e);
                            }
                        }
                    }
                }
            }
        });
        let end = end
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .unwrap_or(End {
                t: now(),
                reason: EndReason::Signal,
                rounds: 0,
            });
        let finished = write(&file, &[Line::End(end)]).and_then(|()| {
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
