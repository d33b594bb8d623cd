//! Frame boundaries in a RESP byte stream, found without copying or allocating per frame.
//!
//! The tap forwards bytes unchanged, so it needs only to know where each frame ends (to pair a
//! request with its reply) and, for the few replies it rewrites, a lossless tree of one frame.
//! [`FrameSplitter`] is a push parser: hand it bytes as they arrive, in pieces of any size; it
//! remembers where it stopped, so each byte is looked at once however the stream is split. It
//! accepts the union of RESP2 and RESP3 (a connection switches with `HELLO 3`), with `$-1` / `*-1`
//! as nulls, and (for requests) inline commands. It allocates nothing proportional to a declared
//! length: a hostile `$999999999` or `*999999999` costs a counter, never a buffer.

/// Longest header line accepted (a simple string, error, number or length line), in bytes.
pub const MAX_LINE: usize = 64 * 1024;
/// Largest bulk string accepted: 512 MiB, the server's own `proto-max-bulk-len` default.
pub const MAX_BULK: u64 = 512 * 1024 * 1024;
/// Largest aggregate element count accepted.
pub const MAX_ELEMENTS: u64 = 1 << 32;
/// Deepest aggregate nesting accepted.
pub const MAX_DEPTH: usize = 64;

/// Why bytes are not a RESP stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The first byte of a value is not a RESP type prefix.
    #[error("unknown RESP type byte 0x{0:02x}")]
    UnknownType(u8),
    /// A length or integer line is not a number in range.
    #[error("bad length line in RESP header")]
    BadLength,
    /// A header line has no CRLF within [`MAX_LINE`] bytes, or ends in a bare LF.
    #[error("RESP header line not terminated by CRLF within {MAX_LINE} bytes")]
    BadLine,
    /// A bulk payload is not followed by CRLF.
    #[error("bulk payload not terminated by CRLF")]
    MissingCrlf,
    /// A declared length is over the limit.
    #[error("declared length over the limit")]
    TooLarge,
    /// Aggregates nest deeper than [`MAX_DEPTH`].
    #[error("aggregates nested deeper than {MAX_DEPTH}")]
    TooDeep,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At the start of a header line (type byte next).
    Header,
    /// Inside a bulk payload: this many payload bytes still to come.
    Payload(u64),
    /// After a bulk payload: expecting `\r`.
    PayloadCr,
    /// After a bulk payload and `\r`: expecting `\n`.
    PayloadLf,
}

/// Finds where frames end in a RESP stream fed in pieces of any size.
#[derive(Debug, Clone)]
pub struct FrameSplitter {
    state: State,
    /// Elements still to come in each open aggregate, innermost last.
    stack: Vec<u64>,
    /// The part of a header line seen so far, when the line spans pieces.
    line: Vec<u8>,
    /// Whether a frame may be an inline command (`PING\r\n`): the request direction.
    inline: bool,
    /// Bytes of the current frame seen so far.
    frame_len: u64,
}

impl FrameSplitter {
    /// A splitter for server replies.
    pub fn for_replies() -> FrameSplitter {
        FrameSplitter::new(false)
    }

    /// A splitter for client requests (inline commands allowed).
    pub fn for_requests() -> FrameSplitter {
        FrameSplitter::new(true)
    }

    fn new(inline: bool) -> FrameSplitter {
        FrameSplitter {
            state: State::Header,
            stack: Vec::with_capacity(MAX_DEPTH),
            line: Vec::new(),
            inline,
            frame_len: 0,
        }
    }

    /// Whether the splitter is between frames (no partial frame seen).
    pub fn is_between_frames(&self) -> bool {
        self.frame_len == 0
    }

    /// Bytes of the current, unfinished frame seen so far.
    pub fn partial_len(&self) -> u64 {
        self.frame_len
    }

    /// Consumes bytes from the front of `buf`. Returns `Some(n)` when a frame ends after the first
    /// `n` bytes of `buf` (call again with the rest), or `None` when all of `buf` was consumed and
    /// the frame goes on. After an error the stream cannot be split any further.
    pub fn feed(&mut self, buf: &[u8]) -> Result<Option<usize>, FrameError> {
        let mut pos = 0;
        while pos < buf.len() {
            match self.state {
                State::Payload(left) => {
                    let avail = buf.len() - pos;
                    let take = usize::try_from(left).map_or(avail, |l| l.min(avail));
                    pos += take;
                    let take = take as u64;
                    self.frame_len += take;
                    let left = left - take;
                    self.state = if left == 0 {
                        State::PayloadCr
                    } else {
                        State::Payload(left)
                    };
                }
                State::PayloadCr | State::PayloadLf => {
                    let want = if self.state == State::PayloadCr {
                        b'\r'
                    } else {
                        b'\n'
                    };
                    if buf[pos] != want {
                        return Err(FrameError::MissingCrlf);
                    }
                    pos += 1;
                    self.frame_len += 1;
                    if self.state == State::PayloadCr {
                        self.state = State::PayloadLf;
                    } else {
                        self.state = State::Header;
                        if self.element_done() {
                            return Ok(Some(self.finish(pos)));
                        }
                    }
                }
                State::Header => {
                    let rest = &buf[pos..];
                    let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
                        if self.line.len() + rest.len() > MAX_LINE {
                            return Err(FrameError::BadLine);
                        }
                        self.line.extend_from_slice(rest);
                        self.frame_len += rest.len() as u64;
                        return Ok(None);
                    };
                    let end = pos + nl + 1;
                    let done = if self.line.is_empty() {
                        self.header(&buf[pos..end])?
                    } else {
                        if self.line.len() + nl + 1 > MAX_LINE {
                            return Err(FrameError::BadLine);
                        }
                        let mut line = std::mem::take(&mut self.line);
                        line.extend_from_slice(&buf[pos..end]);
                        let done = self.header(&line);
                        line.clear();
                        self.line = line;
                        done?
                    };
                    self.frame_len += (end - pos) as u64;
                    pos = end;
                    if done {
                        return Ok(Some(self.finish(pos)));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Ends the current frame at `pos` of the piece being fed.
    fn finish(&mut self, pos: usize) -> usize {
        self.frame_len = 0;
        pos
    }

    /// One whole header line, `\n` included. Returns whether the frame is complete.
    fn header(&mut self, line: &[u8]) -> Result<bool, FrameError> {
        let Some((&kind, rest)) = line.split_first() else {
            return Err(FrameError::BadLine);
        };
        let body = rest.strip_suffix(b"\n").and_then(|l| l.strip_suffix(b"\r"));
        let inline_start = self.inline && self.stack.is_empty();
        let Some(body) = body else {
            // A bare LF ends an inline command (the server accepts it); nothing else.
            return if inline_start && !is_prefix(kind) {
                Ok(true)
            } else {
                Err(FrameError::BadLine)
            };
        };
        match kind {
            b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => Ok(self.element_done()),
            b'$' | b'!' | b'=' => match length(body)? {
                None => Ok(self.element_done()),
                Some(n) if n > MAX_BULK => Err(FrameError::TooLarge),
                Some(n) => {
                    self.state = State::Payload(n);
                    if n == 0 {
                        self.state = State::PayloadCr;
                    }
                    Ok(false)
                }
            },
            b'*' | b'~' | b'>' | b'%' | b'|' => match length(body)? {
                None => Ok(self.element_done()),
                Some(n) if n > MAX_ELEMENTS => Err(FrameError::TooLarge),
                Some(n) => {
                    // A map holds 2n values; an attribute's 2n values are followed by the value
                    // they annotate.
                    let count = match kind {
                        b'%' => 2 * n,
                        b'|' => 2 * n + 1,
                        _ => n,
                    };
                    if count == 0 {
                        return Ok(self.element_done());
                    }
                    if self.stack.len() >= MAX_DEPTH {
                        return Err(FrameError::TooDeep);
                    }
                    self.stack.push(count);
                    Ok(false)
                }
            },
            _ if inline_start => Ok(true),
            other => Err(FrameError::UnknownType(other)),
        }
    }

    /// One value ended; returns whether that completes the outermost frame.
    fn element_done(&mut self) -> bool {
        while let Some(top) = self.stack.last_mut() {
            *top -= 1;
            if *top > 0 {
                return false;
            }
            self.stack.pop();
        }
        true
    }
}

fn is_prefix(b: u8) -> bool {
    b"+-:$*_,#!=(%~>|".contains(&b)
}

/// A length line: `None` for `-1` (null), the length otherwise.
fn length(body: &[u8]) -> Result<Option<u64>, FrameError> {
    if body == b"-1" {
        return Ok(None);
    }
    if body.is_empty() || body.len() > 20 || !body.iter().all(u8::is_ascii_digit) {
        return Err(FrameError::BadLength);
    }
    std::str::from_utf8(body)
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(Some)
        .ok_or(FrameError::BadLength)
}

/// One frame as a lossless tree: re-encoding it gives back the exact bytes it was parsed from
/// (type bytes, RESP3 verbatim prefixes and number spellings kept). Used for the few replies the
/// tap rewrites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawFrame {
    /// A line value: the type byte and the line without CRLF (`+OK`, `:42`, `-ERR …`, `_`, `$-1`,
    /// `*-1`).
    Line(u8, Vec<u8>),
    /// A blob (`$`, `!`, `=`): the type byte and the payload.
    Blob(u8, Vec<u8>),
    /// An aggregate (`*`, `~`, `>`, `%`, `|`): the type byte and its values (a map's keys and values
    /// alternate).
    Aggregate(u8, Vec<RawFrame>),
}

impl RawFrame {
    /// Parses one complete frame from the front of `buf` (which must come from a
    /// [`FrameSplitter`], so it is complete and well formed); `None` if it is not. Returns the frame
    /// and the bytes it took.
    pub fn parse(buf: &[u8]) -> Option<(RawFrame, usize)> {
        let mut pos = 0;
        let f = parse_raw(buf, &mut pos, 0)?;
        Some((f, pos))
    }

    /// Appends the frame's wire form to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            RawFrame::Line(k, body) => {
                out.push(*k);
                out.extend_from_slice(body);
                out.extend_from_slice(b"\r\n");
            }
            RawFrame::Blob(k, payload) => {
                out.push(*k);
                out.extend_from_slice(payload.len().to_string().as_bytes());
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(payload);
                out.extend_from_slice(b"\r\n");
            }
            RawFrame::Aggregate(k, items) => {
                out.push(*k);
                let n = match k {
                    b'%' => items.len() / 2,
                    b'|' => items.len().saturating_sub(1) / 2,
                    _ => items.len(),
                };
                out.extend_from_slice(n.to_string().as_bytes());
                out.extend_from_slice(b"\r\n");
                for i in items {
                    i.encode(out);
                }
            }
        }
    }

    /// The text of a string value (`+`, `$`, or `=` without its `txt:` prefix).
    pub fn text(&self) -> Option<&[u8]> {
        match self {
            RawFrame::Line(b'+', s) => Some(s),
            RawFrame::Blob(b'$', s) => Some(s),
            RawFrame::Blob(b'=', s) => s.get(4..),
            _ => None,
        }
    }

    /// Replaces the text of a string value, keeping its type (and a verbatim string's format).
    /// Returns whether the value was a string.
    pub fn set_text(&mut self, text: &[u8]) -> bool {
        match self {
            RawFrame::Line(b'+', s) | RawFrame::Blob(b'$', s) => {
                *s = text.to_vec();
                true
            }
            RawFrame::Blob(b'=', s) if s.len() >= 4 => {
                s.truncate(4);
                s.extend_from_slice(text);
                true
            }
            _ => false,
        }
    }

    /// The value of an integer (`:`), or of a string holding one.
    pub fn int(&self) -> Option<i64> {
        let bytes = match self {
            RawFrame::Line(b':', s) => s.as_slice(),
            other => other.text()?,
        };
        std::str::from_utf8(bytes).ok()?.parse().ok()
    }

    /// The values of an aggregate.
    pub fn items(&self) -> Option<&[RawFrame]> {
        match self {
            RawFrame::Aggregate(_, items) => Some(items),
            _ => None,
        }
    }

    /// The values of an aggregate, to change.
    pub fn items_mut(&mut self) -> Option<&mut Vec<RawFrame>> {
        match self {
            RawFrame::Aggregate(_, items) => Some(items),
            _ => None,
        }
    }
}

fn parse_raw(buf: &[u8], pos: &mut usize, depth: usize) -> Option<RawFrame> {
    if depth > MAX_DEPTH {
        return None;
    }
    let kind = *buf.get(*pos)?;
    let start = *pos + 1;
    let nl = buf.get(start..)?.windows(2).position(|w| w == b"\r\n")? + start;
    let body = &buf[start..nl];
    *pos = nl + 2;
    match kind {
        b'$' | b'!' | b'=' => match length(body).ok()? {
            None => Some(RawFrame::Line(kind, body.to_vec())),
            Some(n) => {
                let n = usize::try_from(n).ok()?;
                let end = pos.checked_add(n)?;
                if buf.get(end..end + 2)? != b"\r\n" {
                    return None;
                }
                let payload = buf[*pos..end].to_vec();
                *pos = end + 2;
                Some(RawFrame::Blob(kind, payload))
            }
        },
        b'*' | b'~' | b'>' | b'%' | b'|' => match length(body).ok()? {
            None => Some(RawFrame::Line(kind, body.to_vec())),
            Some(n) => {
                let n = usize::try_from(n).ok()?;
                let count = match kind {
                    b'%' => n.checked_mul(2)?,
                    b'|' => n.checked_mul(2)?.checked_add(1)?,
                    _ => n,
                };
                // Each value takes at least 3 bytes: a count beyond what the buffer can hold is
                // not trusted for the allocation.
                let mut items = Vec::with_capacity(count.min(buf.len() / 3));
                for _ in 0..count {
                    items.push(parse_raw(buf, pos, depth + 1)?);
                }
                Some(RawFrame::Aggregate(kind, items))
            }
        },
        _ => Some(RawFrame::Line(kind, body.to_vec())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Splits `stream` into frames, feeding it in pieces cut at `cuts`.
    fn split(stream: &[u8], cuts: &[usize], inline: bool) -> Result<Vec<Vec<u8>>, FrameError> {
        let mut s = FrameSplitter::new(inline);
        let mut frames = Vec::new();
        let mut current = Vec::new();
        let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(stream.len())).collect();
        bounds.push(stream.len());
        bounds.sort_unstable();
        let mut from = 0;
        for to in bounds {
            let mut piece = &stream[from..to];
            from = to;
            while !piece.is_empty() {
                match s.feed(piece)? {
                    Some(n) => {
                        current.extend_from_slice(&piece[..n]);
                        frames.push(std::mem::take(&mut current));
                        piece = &piece[n..];
                    }
                    None => {
                        current.extend_from_slice(piece);
                        piece = &[];
                    }
                }
            }
        }
        Ok(frames)
    }

    const FRAMES: &[&[u8]] = &[
        b"+OK\r\n",
        b"-MOVED 3999 127.0.0.1:6381\r\n",
        b":42\r\n",
        b"$5\r\nhello\r\n",
        b"$0\r\n\r\n",
        b"$-1\r\n",
        b"*-1\r\n",
        b"*0\r\n",
        b"*2\r\n$3\r\nGET\r\n$3\r\nfoo\r\n",
        b"%1\r\n+a\r\n*2\r\n:1\r\n_\r\n",
        b"=8\r\ntxt:abcd\r\n",
        b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n",
        b"|1\r\n+key\r\n+val\r\n:7\r\n",
        b"~2\r\n,1.5\r\n#t\r\n",
        b"!3\r\nERR\r\n",
        b"(123456789012345678901234567890\r\n",
    ];

    #[test]
    fn every_frame_is_found_whole() {
        let stream: Vec<u8> = FRAMES.concat();
        let frames = split(&stream, &[], false).unwrap();
        assert_eq!(
            frames,
            FRAMES.iter().map(|f| f.to_vec()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn inline_commands_are_frames_for_requests_only() {
        let frames = split(b"PING\r\nGET foo\n*1\r\n$4\r\nPING\r\n", &[], true).unwrap();
        assert_eq!(frames.len(), 3);
        assert_eq!(frames[1], b"GET foo\n");
        assert_eq!(
            split(b"PING\r\n", &[], false),
            Err(FrameError::UnknownType(b'P'))
        );
    }

    #[test]
    fn hostile_lengths_are_refused_without_allocating() {
        for bad in [
            &b"$99999999999999\r\n"[..],
            b"*99999999999999\r\n",
            b"$-2\r\n",
            b"*x\r\n",
        ] {
            assert!(split(bad, &[], false).is_err(), "{bad:?}");
        }
        // A large but legal declared count costs nothing until its values arrive.
        let mut s = FrameSplitter::for_replies();
        assert_eq!(s.feed(b"*4000000000\r\n"), Ok(None));
        assert!(s.stack.capacity() <= MAX_DEPTH);
        let deep = "*1\r\n".repeat(MAX_DEPTH + 1);
        assert_eq!(split(deep.as_bytes(), &[], false), Err(FrameError::TooDeep));
        let long = vec![b'+'; MAX_LINE + 10];
        assert_eq!(split(&long, &[100, 5000], false), Err(FrameError::BadLine));
        assert_eq!(
            split(b"$3\r\nfooXY", &[], false),
            Err(FrameError::MissingCrlf)
        );
    }

    #[test]
    fn raw_frames_encode_back_to_the_same_bytes() {
        for f in FRAMES {
            let (raw, used) = RawFrame::parse(f).unwrap();
            assert_eq!(used, f.len());
            let mut out = Vec::new();
            raw.encode(&mut out);
            assert_eq!(&out, f);
        }
    }

    #[test]
    fn raw_frame_text_keeps_the_verbatim_format() {
        let (mut raw, _) = RawFrame::parse(b"=8\r\ntxt:abcd\r\n").unwrap();
        assert_eq!(raw.text(), Some(&b"abcd"[..]));
        assert!(raw.set_text(b"xy"));
        let mut out = Vec::new();
        raw.encode(&mut out);
        assert_eq!(out, b"=6\r\ntxt:xy\r\n");
    }

    fn stream() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(proptest::sample::select(FRAMES.to_vec()), 0..12)
            .prop_map(|fs| fs.concat())
    }

    proptest! {
        /// Valid streams give the same frames however they are cut into pieces.
        #[test]
        fn frames_do_not_depend_on_how_bytes_arrive(
            s in stream(),
            cuts in proptest::collection::vec(0usize..400, 0..16),
        ) {
            let whole = split(&s, &[], false).unwrap();
            let pieces = split(&s, &cuts, false).unwrap();
            prop_assert_eq!(&whole, &pieces);
            prop_assert_eq!(whole.concat(), s);
        }

        /// Arbitrary bytes, cut anywhere: an error or frames, never a panic, and every frame the
        /// splitter finds the lossless parser reads back exactly.
        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..256),
            cuts in proptest::collection::vec(0usize..256, 0..8),
            inline in any::<bool>(),
        ) {
            if let Ok(frames) = split(&bytes, &cuts, inline) {
                for f in frames {
                    if is_prefix(f[0]) {
                        let (raw, used) = RawFrame::parse(&f).unwrap();
                        prop_assert_eq!(used, f.len());
                        let mut out = Vec::new();
                        raw.encode(&mut out);
                        // Number spellings such as `$01` normalise; the length is the same value.
                        let (again, _) = RawFrame::parse(&out).unwrap();
                        prop_assert_eq!(again, raw);
                    }
                }
            }
        }

        /// Valid frames with bytes mutated: never a panic, and the raw parser never allocates more
        /// than the input can hold.
        #[test]
        fn mutated_streams_never_panic(
            s in stream(),
            flips in proptest::collection::vec((0usize..400, any::<u8>()), 1..6),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let mut s = s;
            for (i, b) in flips {
                if !s.is_empty() {
                    let i = i % s.len();
                    s[i] = b;
                }
            }
            let _ = split(&s, &cuts, false);
            let _ = RawFrame::parse(&s);
        }
    }
}
