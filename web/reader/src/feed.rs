//! A recording's bytes read as they arrive: pushed in chunks (a fetch's stream, the browser
//! having decoded its zstd), read as lines by the parser ([`Feed`]), which is told whether a
//! whole line is there to read ([`FeedHandle::line_ready`]) so that it never takes a line still
//! arriving for the recording's last.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

/// What the pushing side and the reading side share.
#[derive(Debug, Default)]
struct Shared {
    /// Chunks pushed and not yet taken by the reader.
    chunks: RefCell<VecDeque<Vec<u8>>>,
    /// Bytes pushed in all.
    pushed: Cell<u64>,
    /// Where the last whole line pushed ends: just past its `\n`, from the stream's start.
    whole: Cell<u64>,
    /// Bytes read.
    consumed: Cell<u64>,
    /// Whether every chunk is pushed.
    ended: Cell<bool>,
}

/// The pushing side: chunks in, and whether a whole line is there to read.
#[derive(Clone, Debug, Default)]
pub struct FeedHandle(Rc<Shared>);

/// The reading side: a [`BufRead`] over the chunks pushed so far.
#[derive(Debug)]
pub struct Feed {
    shared: Rc<Shared>,
    current: Vec<u8>,
    at: usize,
}

/// A new feed: its pushing and its reading side.
pub fn feed() -> (FeedHandle, Feed) {
    let shared = Rc::new(Shared::default());
    let reading = Feed {
        shared: shared.clone(),
        current: Vec::new(),
        at: 0,
    };
    (FeedHandle(shared), reading)
}

impl FeedHandle {
    /// Adds `chunk` after the bytes pushed before.
    pub fn push(&self, chunk: Vec<u8>) {
        let s = &self.0;
        let start = s.pushed.get();
        if let Some(last) = chunk.iter().rposition(|&b| b == b'\n') {
            s.whole.set(start + last as u64 + 1);
        }
        s.pushed.set(start + chunk.len() as u64);
        if !chunk.is_empty() {
            s.chunks.borrow_mut().push_back(chunk);
        }
    }

    /// Says every chunk is pushed: the last line may then end without a `\n`.
    pub fn end(&self) {
        self.0.ended.set(true);
    }

    /// Whether every chunk is pushed.
    pub fn ended(&self) -> bool {
        self.0.ended.get()
    }

    /// Whether a whole line is there to read (or, once ended, anything at all).
    pub fn line_ready(&self) -> bool {
        let s = &self.0;
        let read = s.consumed.get();
        read < s.whole.get() || (s.ended.get() && read < s.pushed.get())
    }

    /// Bytes read so far.
    pub fn consumed(&self) -> u64 {
        self.0.consumed.get()
    }
}

impl Read for Feed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let have = self.fill_buf()?;
            let n = have.len().min(buf.len());
            buf[..n].copy_from_slice(&have[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Feed {
    /// The rest of the current chunk, the next one when it is used up; empty when nothing more
    /// has been pushed.
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at == self.current.len() {
            if let Some(next) = self.shared.chunks.borrow_mut().pop_front() {
                self.current = next;
                self.at = 0;
            }
        }
        Ok(&self.current[self.at..])
    }

    fn consume(&mut self, amt: usize) {
        let amt = amt.min(self.current.len() - self.at);
        self.at += amt;
        let s = &self.shared;
        s.consumed.set(s.consumed.get() + amt as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_ready_only_once_whole_or_once_the_feed_ended() {
        let (handle, mut reading) = feed();
        assert!(!handle.line_ready());
        handle.push(b"{\"a\":1".to_vec());
        assert!(!handle.line_ready(), "half a line");
        handle.push(b"}\n{\"b\":".to_vec());
        assert!(handle.line_ready());
        let mut line = Vec::new();
        reading.read_until(b'\n', &mut line).unwrap();
        assert_eq!(line, b"{\"a\":1}\n", "across two chunks");
        assert!(!handle.line_ready(), "the next one is not whole yet");
        handle.push(b"2}".to_vec());
        assert!(!handle.line_ready());
        handle.end();
        assert!(handle.line_ready(), "the last line needs no newline");
        line.clear();
        reading.read_until(b'\n', &mut line).unwrap();
        assert_eq!(line, b"{\"b\":2}");
        assert!(!handle.line_ready());
        assert_eq!(handle.consumed(), 15);
        line.clear();
        assert_eq!(reading.read_until(b'\n', &mut line).unwrap(), 0, "the end");
    }
}
