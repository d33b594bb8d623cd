//! A compressed recording decoded in one place and read in another: [`LineChunks`] decodes the
//! zstd into [`Chunk`]s of whole lines, [`FedLines`] takes them in, in order, as the source of a
//! [`RecordingReader`](super::RecordingReader).
//!
//! The viewer decodes in one worker and reads in another, so that the two run side by side. What
//! the reader makes of the chunks is what it makes of the compressed bytes read whole: the same
//! text in the same order, and a decoding that stops (a frame cut short, damaged data) stops the
//! reading at the same byte with the same error. Each chunk but the last ends with a line that is
//! not blank, so a reader that has a chunk left always has a whole line to read: it never meets
//! the end of what was fed before the recording's end ([`FedLines::starved`] says when it would).

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};

use super::{ZstdCut, ZstdFrames};

/// How the decoded text goes on after a [`Chunk`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChunkEnd {
    /// More chunks follow.
    More,
    /// The recording ends with this chunk.
    Eof,
    /// The zstd stream ends inside a frame after this chunk (the recording was cut short): the
    /// reader flags the truncated tail. The message is the decoder's.
    Cut(String),
    /// The decoding stopped after this chunk on damaged data: the reader reports it, as it
    /// reports any read error.
    Failed(String),
}

/// Decoded text: whole lines (the last chunk: whatever the recording ends with).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The text.
    pub text: Vec<u8>,
    /// What comes after it.
    pub end: ChunkEnd,
    /// Compressed bytes decoded so far (for a progress indicator).
    pub consumed: u64,
}

/// A compressed recording decoded into [`Chunk`]s of whole lines.
pub struct LineChunks {
    frames: ZstdFrames<io::Cursor<Vec<u8>>>,
    /// Decoded text after the last chunk's end.
    carry: Vec<u8>,
    over: bool,
}

impl std::fmt::Debug for LineChunks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineChunks")
            .field("consumed", &self.frames.consumed())
            .field("over", &self.over)
            .finish_non_exhaustive()
    }
}

/// What one `read` of the decoder asks for at most.
const READ_BYTES: usize = 256 * 1024;

impl LineChunks {
    /// Decodes `bytes`, a zstd-compressed recording (a sequence of frames).
    pub fn new(bytes: Vec<u8>) -> LineChunks {
        LineChunks {
            frames: ZstdFrames::new(io::Cursor::new(bytes)),
            carry: Vec::new(),
            over: false,
        }
    }

    /// The next chunk: at least `max_bytes` of text where the recording has them, cut after the
    /// last line in it that is not blank (a line longer than that is given whole). Once a chunk
    /// ended with anything but [`ChunkEnd::More`], every later one is empty and ends the same way
    /// as [`ChunkEnd::Eof`].
    pub fn next_chunk(&mut self, max_bytes: usize) -> Chunk {
        let mut text = std::mem::take(&mut self.carry);
        if self.over {
            return Chunk {
                text,
                end: ChunkEnd::Eof,
                consumed: self.frames.consumed(),
            };
        }
        // `text[..scanned]` holds no place to cut, and the line being decoded starts at or
        // after `scanned`.
        let mut scanned = 0;
        let end = loop {
            if text.len() >= max_bytes {
                if let Some(cut) = last_cut(&text[scanned..]) {
                    self.carry = text.split_off(scanned + cut);
                    break ChunkEnd::More;
                }
                scanned += text[scanned..]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
            }
            let len = text.len();
            text.resize(len + READ_BYTES, 0);
            match self.frames.read(&mut text[len..]) {
                Ok(0) => {
                    text.truncate(len);
                    break ChunkEnd::Eof;
                }
                Ok(n) => text.truncate(len + n),
                Err(e) => {
                    text.truncate(len);
                    break match e.get_ref().and_then(|i| i.downcast_ref::<ZstdCut>()) {
                        Some(cut) => ChunkEnd::Cut(cut.0.clone()),
                        None => ChunkEnd::Failed(e.to_string()),
                    };
                }
            }
        };
        self.over = end != ChunkEnd::More;
        Chunk {
            text,
            end,
            consumed: self.frames.consumed(),
        }
    }
}

/// Where to cut `text` so that the part before ends with a line that is not blank: just after
/// the last such line's newline.
fn last_cut(text: &[u8]) -> Option<usize> {
    let mut end = text.len();
    while let Some(nl) = text[..end].iter().rposition(|&b| b == b'\n') {
        let start = text[..nl]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        if !text[start..nl].iter().all(u8::is_ascii_whitespace) {
            return Some(nl + 1);
        }
        end = nl;
    }
    None
}

/// The chunks fed so far, read in order as one text: the source of a
/// [`RecordingReader`](super::RecordingReader) over a recording decoded elsewhere.
#[derive(Debug, Default)]
pub struct FedLines {
    chunks: VecDeque<Vec<u8>>,
    /// Bytes of the first chunk already read.
    at: usize,
    /// How the text ends, once the last chunk came; `None` while more may come.
    end: Option<ChunkEnd>,
    consumed: u64,
}

impl FedLines {
    /// Nothing fed yet.
    pub fn new() -> FedLines {
        FedLines::default()
    }

    /// Takes in the next chunk. Chunks fed after the last one (one that did not end with
    /// [`ChunkEnd::More`]) are ignored.
    pub fn push(&mut self, chunk: Chunk) {
        if self.end.is_some() {
            return;
        }
        self.consumed = chunk.consumed;
        if !chunk.text.is_empty() {
            self.chunks.push_back(chunk.text);
        }
        if chunk.end != ChunkEnd::More {
            self.end = Some(chunk.end);
        }
    }

    /// Whether everything fed is read and more is to come: reading now would take the end of
    /// what was fed for the recording's end.
    pub fn starved(&self) -> bool {
        self.chunks.is_empty() && self.end.is_none()
    }

    /// Chunks fed and not yet read through.
    pub fn queued(&self) -> usize {
        self.chunks.len()
    }

    /// Compressed bytes decoded up to the last chunk fed.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }
}

impl Read for FedLines {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let have = self.fill_buf()?;
            let n = have.len().min(out.len());
            out[..n].copy_from_slice(&have[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for FedLines {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.chunks.is_empty() {
            // The decoder's stop, reported once where it came (then the end).
            return match self.end.replace(ChunkEnd::Eof) {
                Some(ChunkEnd::Cut(message)) => Err(io::Error::other(ZstdCut(message))),
                Some(ChunkEnd::Failed(message)) => Err(io::Error::other(message)),
                _ => Ok(&[]),
            };
        }
        Ok(&self.chunks[0][self.at..])
    }

    fn consume(&mut self, amt: usize) {
        self.at += amt;
        if self.chunks.front().is_some_and(|c| self.at >= c.len()) {
            self.chunks.pop_front();
            self.at = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::RecordingReader;

    const FIXTURES: [(&str, &[u8]); 3] = [
        (
            "incident1",
            include_bytes!("../../../../tests/fixtures/incident1-redis-py-5.0.0-redis.jsonl.zst"),
        ),
        (
            "incident2",
            include_bytes!("../../../../tests/fixtures/incident2-redis.jsonl.zst"),
        ),
        (
            "failover",
            include_bytes!("../../../../tests/fixtures/failover-redis-py-8.1.0-redis.jsonl.zst"),
        ),
    ];

    /// Every line (or error) and the truncated tail, as text.
    fn outcome<R: BufRead>(mut r: RecordingReader<R>) -> (Vec<String>, Option<u64>) {
        let items = r
            .by_ref()
            .map(|x| match x {
                Ok((n, line)) => format!("{n} {line:?}"),
                Err(e) => format!("error {e}"),
            })
            .collect();
        (items, r.truncated_tail())
    }

    fn whole(bytes: &[u8]) -> (Vec<String>, Option<u64>) {
        outcome(RecordingReader::detect(io::Cursor::new(bytes.to_vec())).unwrap())
    }

    /// Decodes `bytes` in chunks of `max` and reads them, each fed only once the one before
    /// is read through (the reader never reads past what was fed).
    fn chunked(bytes: &[u8], max: usize) -> (Vec<String>, Option<u64>, Vec<Chunk>) {
        let mut dec = LineChunks::new(bytes.to_vec());
        let mut chunks = Vec::new();
        let mut fed = FedLines::new();
        let mut reader = None::<RecordingReader<FedLines>>;
        let mut items = Vec::new();
        loop {
            let chunk = dec.next_chunk(max);
            chunks.push(chunk.clone());
            let last = chunk.end != ChunkEnd::More;
            match &mut reader {
                None => fed.push(chunk),
                Some(r) => r.source_mut().push(chunk),
            }
            let r = reader.get_or_insert_with(|| RecordingReader::new(std::mem::take(&mut fed)));
            while !r.source_mut().starved() {
                match r.next() {
                    Some(Ok((n, line))) => items.push(format!("{n} {line:?}")),
                    Some(Err(e)) => items.push(format!("error {e}")),
                    None => break,
                }
            }
            if last {
                items.extend(r.by_ref().map(|x| match x {
                    Ok((n, line)) => format!("{n} {line:?}"),
                    Err(e) => format!("error {e}"),
                }));
                let tail = r.truncated_tail();
                return (items, tail, chunks);
            }
        }
    }

    #[test]
    fn chunks_read_as_the_whole_file() {
        for (name, bytes) in FIXTURES {
            let (lines, tail) = whole(bytes);
            for max in [1, 700, 64 * 1024] {
                let (got, got_tail, chunks) = chunked(bytes, max);
                assert_eq!((&got, got_tail), (&lines, tail), "{name}, chunks of {max}");
                for c in &chunks[..chunks.len() - 1] {
                    assert_eq!(c.end, ChunkEnd::More);
                    assert!(last_cut(&c.text) == Some(c.text.len()), "{name}: {max}");
                }
            }
        }
    }

    #[test]
    fn a_cut_or_damaged_file_stops_where_it_did() {
        let bytes = FIXTURES[0].1;
        for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len() - 7] {
            let short = &bytes[..cut];
            let (lines, tail) = whole(short);
            let (got, got_tail, chunks) = chunked(short, 1000);
            assert!(matches!(chunks.last().unwrap().end, ChunkEnd::Cut(_)));
            assert_eq!((got, got_tail), (lines, tail), "cut at {cut}");
        }
        let mut damaged = bytes.to_vec();
        let at = damaged.len() / 2;
        for b in &mut damaged[at..at + 64] {
            *b ^= 0x5a;
        }
        let (lines, tail) = whole(&damaged);
        let (got, got_tail, _) = chunked(&damaged, 1000);
        assert_eq!((got, got_tail), (lines, tail));
    }

    #[test]
    fn a_chunk_ends_after_a_line_that_is_not_blank() {
        assert_eq!(last_cut(b"a\n\n \r\n"), Some(2));
        assert_eq!(last_cut(b"a\nb"), Some(2));
        assert_eq!(last_cut(b"\n\n"), None);
        assert_eq!(last_cut(b"abc"), None);
        assert_eq!(last_cut(b"x\ny\n"), Some(4));
    }

    #[test]
    fn chunks_after_the_end_are_empty() {
        let mut dec = LineChunks::new(FIXTURES[0].1.to_vec());
        while dec.next_chunk(1 << 20).end == ChunkEnd::More {}
        let after = dec.next_chunk(10);
        assert_eq!((after.text.len(), after.end), (0, ChunkEnd::Eof));
        let mut fed = FedLines::new();
        assert!(fed.starved());
        fed.push(Chunk {
            text: b"x\n".to_vec(),
            end: ChunkEnd::Eof,
            consumed: 3,
        });
        fed.push(Chunk {
            text: b"y\n".to_vec(),
            end: ChunkEnd::More,
            consumed: 4,
        });
        assert_eq!((fed.queued(), fed.consumed(), fed.starved()), (1, 3, false));
    }
}
