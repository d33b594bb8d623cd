//! Streaming reader of recordings: plain JSON Lines or zstd-compressed, from any [`BufRead`] the
//! caller supplies (a file natively, a byte slice in the browser).
//!
//! A recording cut short by a crash ends in a partial line (and, compressed, in a partial zstd
//! frame). Both are tolerated: the reader yields every complete line and then reports the truncation
//! through [`RecordingReader::truncated_tail`], not as an error. Any other bad line is an error that
//! names its line number and what was wrong; iteration continues after it so the caller decides
//! whether to stop.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read};

use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

use crate::client_delta::ClientBase;
use crate::node::NodeAddr;
use crate::recording::{ClientListSample, Header, Line, SUPPORTED_SCHEMAS};

mod chunks;

pub use chunks::{Chunk, ChunkEnd, FedLines, LineChunks};

/// The four bytes a zstd frame starts with.
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// Why a line of a recording could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The underlying reader failed.
    #[error("line {line}: read error: {source}")]
    Io {
        /// 1-based number of the line being read.
        line: u64,
        /// The I/O error.
        source: io::Error,
    },
    /// A complete line is not a valid record.
    #[error("line {line}: {message}")]
    BadLine {
        /// 1-based line number.
        line: u64,
        /// What was wrong.
        message: String,
    },
    /// The first line is not a header.
    #[error("line 1: not a slotscope recording (the first line must be a header): {message}")]
    NotARecording {
        /// What the first line was instead.
        message: String,
    },
    /// The header names a schema version this reader does not know.
    #[error("line 1: schema version {found} is not supported (this build reads {supported:?})")]
    UnsupportedSchema {
        /// Version in the file.
        found: u32,
        /// Versions this build reads.
        supported: &'static [u32],
    },
}

impl ReadError {
    /// The line number the error refers to.
    pub fn line(&self) -> u64 {
        match self {
            ReadError::Io { line, .. } | ReadError::BadLine { line, .. } => *line,
            ReadError::NotARecording { .. } | ReadError::UnsupportedSchema { .. } => 1,
        }
    }
}

/// The longest poll interval (and timeout) a header is read with: a day. The collector polls
/// every second by default; a header beyond a day is damaged, and the analysis works on
/// multiples of the interval.
pub const MAX_INTERVAL_MS: u64 = 86_400_000;

/// Reads the lines of a recording one at a time.
pub struct RecordingReader<R> {
    src: R,
    buf: Vec<u8>,
    line: u64,
    header: Option<Header>,
    truncated: Option<u64>,
    done: bool,
    /// Each node's last client list, to rebuild the ones written as changes.
    client_lists: BTreeMap<NodeAddr, ClientBase>,
}

impl RecordingReader<Box<dyn BufRead>> {
    /// A reader over `src`, decompressing it if it starts with the zstd magic number.
    pub fn detect<S: BufRead + 'static>(src: S) -> io::Result<Self> {
        Ok(RecordingReader::new(text(src)?))
    }
}

/// The text of `src`: decompressed if it starts with the zstd magic number, else as it is.
pub fn text<S: BufRead + 'static>(mut src: S) -> io::Result<Box<dyn BufRead>> {
    let compressed = src.fill_buf()?.starts_with(&ZSTD_MAGIC);
    Ok(if compressed {
        Box::new(BufReader::with_capacity(64 * 1024, ZstdFrames::new(src)))
    } else {
        Box::new(src)
    })
}

impl<R: BufRead> RecordingReader<R> {
    /// A reader over uncompressed JSON Lines.
    pub fn new(src: R) -> Self {
        RecordingReader {
            src,
            buf: Vec::with_capacity(4096),
            line: 0,
            header: None,
            truncated: None,
            done: false,
            client_lists: BTreeMap::new(),
        }
    }

    /// Reads the header (the first line). Call before iterating, or let the iterator do it. Its
    /// poll interval is read as at least 1 ms and at most [`MAX_INTERVAL_MS`], its timeout as at
    /// most that.
    pub fn header(&mut self) -> Result<&Header, ReadError> {
        if self.header.is_none() {
            match self.next_raw() {
                Some(Ok(Line::Header(mut h))) => {
                    // A damaged header's interval must not overflow the analysis' arithmetic
                    // on multiples of it (fuzzing found one near the top of `u64`).
                    h.options.interval_ms = h.options.interval_ms.clamp(1, MAX_INTERVAL_MS);
                    h.options.timeout_ms = h.options.timeout_ms.min(MAX_INTERVAL_MS);
                    if !SUPPORTED_SCHEMAS.contains(&h.schema) {
                        self.done = true;
                        return Err(ReadError::UnsupportedSchema {
                            found: h.schema,
                            supported: SUPPORTED_SCHEMAS,
                        });
                    }
                    self.header = Some(h);
                }
                Some(Ok(other)) => {
                    self.done = true;
                    return Err(ReadError::NotARecording {
                        message: format!("found a `{}` line", other.kind()),
                    });
                }
                Some(Err(ReadError::BadLine { message, .. })) => {
                    self.done = true;
                    return Err(ReadError::NotARecording { message });
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                None => {
                    self.done = true;
                    return Err(ReadError::NotARecording {
                        message: "the file is empty".into(),
                    });
                }
            }
        }
        Ok(self.header.as_ref().expect("header was just read"))
    }

    /// The line number of a partial last line that was skipped, if the input ended in one.
    pub fn truncated_tail(&self) -> Option<u64> {
        self.truncated
    }

    /// Number of lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.line
    }

    /// The source the lines are read from.
    pub fn source(&self) -> &R {
        &self.src
    }

    /// The source the lines are read from (to feed a [`FedLines`] more).
    pub fn source_mut(&mut self) -> &mut R {
        &mut self.src
    }

    fn next_raw(&mut self) -> Option<Result<Line, ReadError>> {
        loop {
            if self.done {
                return None;
            }
            self.buf.clear();
            let n = match self.src.read_until(b'\n', &mut self.buf) {
                Ok(n) => n,
                Err(e) => {
                    self.done = true;
                    // A compressed recording cut short ends inside a zstd frame: what came before
                    // was yielded, the partial rest is the truncated tail.
                    if is_frame_cut(&e) {
                        self.truncated = Some(self.line + 1);
                        return None;
                    }
                    return Some(Err(ReadError::Io {
                        line: self.line + 1,
                        source: e,
                    }));
                }
            };
            if n == 0 {
                self.done = true;
                return None;
            }
            self.line += 1;
            let complete = self.buf.last() == Some(&b'\n');
            let text = trim_line(&self.buf);
            if text.iter().all(u8::is_ascii_whitespace) {
                if complete {
                    continue;
                }
                self.done = true;
                return None;
            }
            return match parse_line(text) {
                Ok(line) => Some(Ok(line)),
                Err(_) if !complete => {
                    self.done = true;
                    self.truncated = Some(self.line);
                    None
                }
                Err(e) => Some(Err(ReadError::BadLine {
                    line: self.line,
                    message: describe(text, &e),
                })),
            };
        }
    }
}

impl<R: BufRead> Iterator for RecordingReader<R> {
    type Item = Result<(u64, Line), ReadError>;

    /// The next event line with its line number; the header is read first if it was not yet. A
    /// client list written as changes is given whole (a [`Line::ClientList`]); one that does not
    /// fit the node's previous list is an error, and the node's lists read again from its next
    /// whole one.
    fn next(&mut self) -> Option<Self::Item> {
        if self.header.is_none() && !self.done {
            if let Err(e) = self.header() {
                return Some(Err(e));
            }
        }
        match self.next_raw()? {
            Ok(Line::Header(_)) => Some(Err(ReadError::BadLine {
                line: self.line,
                message: "a second header line inside the recording".into(),
            })),
            Ok(Line::ClientList(s)) => {
                self.client_lists
                    .entry(s.node.addr.clone())
                    .or_default()
                    .reset(s.t, &s.clients);
                Some(Ok((self.line, Line::ClientList(s))))
            }
            Ok(Line::ClientListDelta(d)) => {
                let base = self.client_lists.entry(d.node.addr.clone()).or_default();
                match base.apply(&d) {
                    Ok(clients) => Some(Ok((
                        self.line,
                        Line::ClientList(ClientListSample {
                            t: d.t,
                            node: d.node,
                            clients,
                        }),
                    ))),
                    Err(e) => {
                        // The node's lists read again from its next whole one.
                        base.clear();
                        Some(Err(ReadError::BadLine {
                            line: self.line,
                            message: e.to_string(),
                        }))
                    }
                }
            }
            Ok(line) => Some(Ok((self.line, line))),
            Err(e) => Some(Err(e)),
        }
    }
}

/// A line's `"type"` alone (the rest is skipped).
#[derive(serde::Deserialize)]
struct Tag {
    #[serde(rename = "type")]
    kind: String,
}

/// Parses one line: its `"type"` first, then the line straight into that record type.
///
/// `Line`'s derived `Deserialize` (an internally tagged enum) buffers the whole object before it
/// looks at the tag, which made reading several times slower and put that buffering code into the
/// viewer's wasm. The writer puts `"type"` first, so the tag is usually read off the line's start;
/// otherwise it is parsed on its own, skipping the rest.
///
/// The line is checked as UTF-8 once, whole, and serde_json reads it as text: reading it as bytes,
/// serde_json checked each of its many short strings on its own, a tenth of the reading's
/// instructions.
fn parse_line(bytes: &[u8]) -> Result<Line, serde_json::Error> {
    const PREFIX: &str = r#"{"type":""#;
    let text = std::str::from_utf8(bytes).map_err(|e| {
        serde::de::Error::custom(format!(
            "a byte that is not UTF-8 at column {}",
            e.valid_up_to() + 1
        ))
    })?;
    let first = text
        .strip_prefix(PREFIX)
        .and_then(|rest| Some(&rest[..rest.find('"')?]));
    let parsed;
    let tag = match first {
        Some(t) => t,
        None => {
            parsed = serde_json::from_str::<Tag>(text)?.kind;
            parsed.as_str()
        }
    };
    let line = match tag {
        "header" => Line::Header(serde_json::from_str(text)?),
        "node_discovered" => Line::NodeDiscovered(serde_json::from_str(text)?),
        "node_gone" => Line::NodeGone(serde_json::from_str(text)?),
        "topology" => Line::Topology(serde_json::from_str(text)?),
        "info" => Line::Info(serde_json::from_str(text)?),
        "client_list" => Line::ClientList(serde_json::from_str(text)?),
        "client_list_delta" => Line::ClientListDelta(serde_json::from_str(text)?),
        "poll_failed" => Line::PollFailed(serde_json::from_str(text)?),
        "poll_round" => Line::PollRound(serde_json::from_str(text)?),
        "annotation" => Line::Annotation(serde_json::from_str(text)?),
        "tap_conn" => Line::TapConn(serde_json::from_str(text)?),
        "tap_command" => Line::TapCommand(serde_json::from_str(text)?),
        "end" => Line::End(serde_json::from_str(text)?),
        other => return Err(serde::de::Error::unknown_variant(other, &Line::KINDS)),
    };
    Ok(line)
}

fn trim_line(b: &[u8]) -> &[u8] {
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    b.strip_suffix(b"\r").unwrap_or(b)
}

fn describe(text: &[u8], e: &serde_json::Error) -> String {
    let preview: String = String::from_utf8_lossy(text).chars().take(60).collect();
    let kind = match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "not valid JSON",
        serde_json::error::Category::Data => "not a valid record",
        serde_json::error::Category::Io => "unreadable",
    };
    format!("{kind} ({e}) in `{preview}`")
}

fn is_frame_cut(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<ZstdCut>())
}

/// Marks a zstd stream that ended inside a frame.
#[derive(Debug, thiserror::Error)]
#[error("the zstd stream ends inside a frame (the recording was cut short): {0}")]
struct ZstdCut(String);

/// Marks zstd data that cannot be decoded although more of it follows.
#[derive(Debug, thiserror::Error)]
#[error("damaged zstd data at compressed byte {at}: {message}")]
struct ZstdDamaged {
    at: u64,
    message: String,
}

/// Records the compressed bytes of the current frame as the decoder consumes them, so that a
/// frame cut short or damaged can be salvaged up to its last complete block.
struct Tee<R> {
    inner: R,
    frame: Vec<u8>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(out)?;
        self.frame.extend_from_slice(&out[..n]);
        Ok(n)
    }
}

/// Decodes a sequence of zstd frames (a file appended to later holds several).
///
/// While a frame is unfinished the decoder holds back its last window of output (it may be
/// referred to by later blocks). A recording whose writer crashed ends inside a frame, so on a
/// cut (or on damage) the frame's complete blocks are decoded once more as a frame closed by an
/// empty last block, and everything not yet yielded is yielded before the cut or damage is
/// reported. Content checksums, where the writer included them, are verified at the end of each
/// frame.
struct ZstdFrames<R> {
    src: Tee<R>,
    dec: FrameDecoder,
    in_frame: bool,
    /// Compressed bytes of the current frame at the end of its last complete block.
    good: usize,
    /// Decoded bytes of the current frame already yielded.
    yielded: usize,
    /// Compressed bytes of earlier frames.
    offset: u64,
    salvage: Vec<u8>,
    failed: Option<io::Error>,
}

impl<R: BufRead> ZstdFrames<R> {
    fn new(src: R) -> Self {
        ZstdFrames {
            src: Tee {
                inner: src,
                frame: Vec::new(),
            },
            dec: FrameDecoder::new(),
            in_frame: false,
            good: 0,
            yielded: 0,
            offset: 0,
            salvage: Vec::new(),
            failed: None,
        }
    }

    /// Compressed bytes decoded so far (read into the current frame).
    fn consumed(&self) -> u64 {
        self.offset + self.src.frame.len() as u64
    }

    fn at_eof(&mut self) -> bool {
        self.src.inner.fill_buf().map_or(true, <[u8]>::is_empty)
    }

    /// Stops decoding: keeps what the complete blocks hold, then reports `message`.
    fn fail(&mut self, message: String) {
        let cut = self.at_eof();
        let mut rest = salvage(&self.src.frame[..self.good]);
        self.salvage = if rest.len() > self.yielded {
            rest.split_off(self.yielded)
        } else {
            Vec::new()
        };
        self.salvage.reverse();
        self.failed = Some(if cut {
            io::Error::other(ZstdCut(message))
        } else {
            io::Error::other(ZstdDamaged {
                at: self.offset + self.good as u64,
                message,
            })
        });
    }
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if !self.salvage.is_empty() {
                let n = out.len().min(self.salvage.len());
                for b in out.iter_mut().take(n) {
                    *b = self.salvage.pop().unwrap_or_default();
                }
                return Ok(n);
            }
            if let Some(e) = self.failed.take() {
                // Reported once; the reader stops at the first error.
                self.failed = Some(io::Error::new(e.kind(), "zstd decoding stopped"));
                return Err(e);
            }
            if self.dec.can_collect() > 0 {
                let n = self.dec.read(out)?;
                self.yielded += n;
                return Ok(n);
            }
            if self.in_frame && self.dec.is_finished() {
                self.in_frame = false;
                if let (Some(stored), Some(computed)) = (
                    self.dec.get_checksum_from_data(),
                    self.dec.get_calculated_checksum(),
                ) {
                    if stored != computed {
                        self.failed = Some(io::Error::other(ZstdDamaged {
                            at: self.offset + self.src.frame.len() as u64,
                            message: "the frame's content checksum does not match".into(),
                        }));
                        continue;
                    }
                }
                self.offset += self.src.frame.len() as u64;
            }
            if !self.in_frame {
                if self.at_eof() {
                    return Ok(0);
                }
                self.src.frame.clear();
                self.yielded = 0;
                self.good = 0;
                match self.dec.init(&mut self.src) {
                    Ok(()) => {
                        self.in_frame = true;
                        self.good = self.src.frame.len();
                    }
                    Err(e) => self.fail(e.to_string()),
                }
                continue;
            }
            match self
                .dec
                .decode_blocks(&mut self.src, BlockDecodingStrategy::UptoBlocks(1))
            {
                Ok(_) => self.good = self.src.frame.len(),
                Err(e) => self.fail(e.to_string()),
            }
        }
    }
}

/// Decodes the complete blocks of an unfinished frame: the frame's bytes up to the end of a block,
/// closed by an empty raw last block (and with the checksum flag cleared, as no checksum follows).
/// Returns nothing if even that fails.
fn salvage(frame: &[u8]) -> Vec<u8> {
    const FRAME_HEADER_DESCRIPTOR: usize = 4;
    const CHECKSUM_FLAG: u8 = 0b100;
    if frame.len() <= FRAME_HEADER_DESCRIPTOR || !frame.starts_with(&ZSTD_MAGIC) {
        return Vec::new();
    }
    let mut closed = frame.to_vec();
    closed[FRAME_HEADER_DESCRIPTOR] &= !CHECKSUM_FLAG;
    // Block header: last-block bit set, type raw, size 0.
    closed.extend_from_slice(&[0x01, 0x00, 0x00]);
    let mut dec = FrameDecoder::new();
    let mut input = closed.as_slice();
    if dec.init(&mut input).is_err()
        || dec
            .decode_blocks(&mut input, BlockDecodingStrategy::All)
            .is_err()
    {
        return Vec::new();
    }
    dec.collect().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"header","schema":1,"collector":"slotscope test","seed":"127.0.0.1:7000","started":1000,"options":{"interval_ms":1000,"timeout_ms":800,"tls":false}}"#;
    const ROUND: &str = r#"{"type":"poll_round","t":2000,"round":0,"nodes":3,"ok":3,"failed":0}"#;

    type Items = Vec<Result<(u64, Line), String>>;

    fn read_all(text: &str) -> (Items, Option<u64>) {
        let mut r = RecordingReader::new(text.as_bytes());
        let items: Vec<_> = r.by_ref().map(|x| x.map_err(|e| e.to_string())).collect();
        (items, r.truncated_tail())
    }

    #[test]
    fn lines_read_as_the_derived_deserializer_reads_them() {
        let moved = r#"{"t":2000,"type":"poll_round","round":0,"nodes":3,"ok":3,"failed":0}"#;
        let general = |t: &str| serde_json::from_slice::<Line>(t.as_bytes());
        for good in [HEADER, ROUND, moved] {
            assert_eq!(parse_line(good.as_bytes()).unwrap(), general(good).unwrap());
        }
        for bad in [
            r#"{"type":"poll_round","t":"soon","round":0,"nodes":3,"ok":3,"failed":0}"#,
            r#"{"type":"info","t":1}"#,
            r#"{"type":"topology","t":1,"node":{"addr":"x"}}"#,
            r#"{"type":"nonsense","t":1}"#,
            r#"{"t":1}"#,
            r#"{"type":"info""#,
            "[1, 2]",
        ] {
            let direct = parse_line(bad.as_bytes()).unwrap_err();
            let general = general(bad).unwrap_err();
            assert_eq!(
                direct.classify(),
                general.classify(),
                "{bad}: {direct} / {general}"
            );
        }
        let e = parse_line(br#"{"type":"nonsense","t":1}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("unknown variant `nonsense`, expected one of `header`"),
            "{e}"
        );
        // Every kind the schema writes is read.
        for kind in Line::KINDS {
            let e = parse_line(format!(r#"{{"type":"{kind}"}}"#).as_bytes()).unwrap_err();
            assert!(e.to_string().starts_with("missing field"), "{kind}: {e}");
        }
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error_naming_the_byte() {
        let mut line = ROUND.as_bytes().to_vec();
        line[10] = 0xff;
        let e = parse_line(&line).unwrap_err().to_string();
        assert!(e.contains("not UTF-8 at column 11"), "{e}");
    }

    #[test]
    fn reads_header_and_events() {
        let (items, cut) = read_all(&format!("{HEADER}\n{ROUND}\n{ROUND}\n"));
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].as_ref().unwrap().0, 2);
        assert_eq!(cut, None);
    }

    #[test]
    fn tolerates_a_truncated_last_line() {
        let text = format!("{HEADER}\n{ROUND}\n{}", &ROUND[..30]);
        let (items, cut) = read_all(&text);
        assert_eq!(items.len(), 1);
        assert!(items[0].is_ok());
        assert_eq!(cut, Some(3));
    }

    #[test]
    fn a_bad_complete_line_is_an_error_with_its_number() {
        let text = format!("{HEADER}\n{ROUND}\n{{\"type\":\"poll_round\",\"t\":\"x\"}}\n{ROUND}\n");
        let (items, _) = read_all(&text);
        assert_eq!(items.len(), 3);
        let err = items[1].as_ref().unwrap_err();
        assert!(err.starts_with("line 3: not a valid record"), "{err}");
        assert!(items[2].is_ok(), "reading goes on after a bad line");
        let (items, _) = read_all(&format!("{HEADER}\nnot json\n"));
        assert!(items[0]
            .as_ref()
            .unwrap_err()
            .starts_with("line 2: not valid JSON"));
        let (items, _) = read_all(&format!("{HEADER}\n{{\"type\":\"bogus\",\"t\":1}}\n"));
        assert!(items[0]
            .as_ref()
            .unwrap_err()
            .contains("unknown variant `bogus`"));
    }

    #[test]
    fn a_file_without_header_is_rejected() {
        let (items, _) = read_all(&format!("{ROUND}\n"));
        assert_eq!(items.len(), 1);
        assert!(items[0]
            .as_ref()
            .unwrap_err()
            .contains("first line must be a header"));
        let (items, _) = read_all("");
        assert!(items[0].as_ref().unwrap_err().contains("empty"));
        let newer = HEADER.replace("\"schema\":1", "\"schema\":99");
        let (items, _) = read_all(&format!("{newer}\n"));
        assert!(items[0].as_ref().unwrap_err().contains("schema version 99"));
    }

    #[test]
    fn a_second_header_is_an_error() {
        let (items, _) = read_all(&format!("{HEADER}\n{HEADER}\n"));
        assert!(items[0].as_ref().unwrap_err().contains("second header"));
    }

    #[test]
    fn blank_lines_and_crlf_are_accepted() {
        let (items, _) = read_all(&format!("{HEADER}\r\n\r\n{ROUND}\r\n"));
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].as_ref().unwrap().0, 3);
    }
}
