//! A zstd recording decoded in one place and read in another, as the viewer does for a big file
//! (`LineChunks` in the decoding worker, `FedLines` under the reading one's `RecordingReader`):
//! it reads exactly as the bytes read whole (the same lines with the same numbers, the same
//! errors, the same truncated tail), whatever the chunks' size, and every chunk but the last
//! ends after a line that is not blank. An input whose text decodes to more than
//! [`MOST_TEXT`] bytes is skipped: a few kilobytes of zstd can hold megabytes of text, and the
//! fuzzer, left to them, spent nine tenths of its time reading bulk text (122 KiB an input on
//! average, 2.2 MiB at most) through paths small texts reach as well.
#![no_main]

use std::io::{Cursor, Read};

use libfuzzer_sys::fuzz_target;
use slotscope_core::reader::{ChunkEnd, FedLines, LineChunks, ReadError, RecordingReader};
use slotscope_core::recording::Line;

/// The most decoded text an input may hold: twice the larger chunk size, so that the 64 KiB
/// chunks still end and carry a line over.
const MOST_TEXT: usize = 128 * 1024;

/// Whether `data` decodes to at most [`MOST_TEXT`] bytes (up to where its decoding stops).
fn small(data: &[u8]) -> bool {
    let Ok(mut text) = slotscope_core::reader::text(Cursor::new(data.to_vec())) else {
        return true;
    };
    let mut buf = vec![0; 16 * 1024];
    let mut n = 0;
    // Bounded: each turn reads at least a byte, and stops past MOST_TEXT.
    loop {
        match text.read(&mut buf) {
            Ok(0) | Err(_) => return true,
            Ok(k) => {
                n += k;
                if n > MOST_TEXT {
                    return false;
                }
            }
        }
    }
}

/// A line read with its number, or the error's text.
type Item = Result<(u64, Line), String>;

fn item(x: Result<(u64, Line), ReadError>) -> Item {
    x.map_err(|e| e.to_string())
}

/// Every line (or error) read, and the truncated tail.
fn outcome<R: std::io::BufRead>(r: &mut RecordingReader<R>, out: &mut Vec<Item>) {
    out.extend(r.by_ref().map(item));
}

/// Reads `data` decoded in chunks of `max` bytes, each fed only once the reader has read all
/// it was fed before.
fn chunked(data: &[u8], max: usize) -> (Vec<Item>, Option<u64>) {
    let mut chunks = LineChunks::new(data.to_vec());
    let mut fed = FedLines::new();
    let first = chunks.next_chunk(max);
    let mut ended = first.end != ChunkEnd::More;
    fed.push(first);
    let mut reader = RecordingReader::new(fed);
    let mut items = Vec::new();
    // Bounded: each chunk but the last holds a line, so a starved reader has read one.
    for _ in 0..=data.len().saturating_mul(64) + 2 {
        while !reader.source_mut().starved() {
            match reader.next() {
                Some(x) => items.push(item(x)),
                None => break,
            }
        }
        if ended {
            break;
        }
        let chunk = chunks.next_chunk(max);
        if chunk.end == ChunkEnd::More {
            let text = &chunk.text;
            let last_line = text[..text.len() - 1]
                .rsplit(|&b| b == b'\n')
                .next()
                .unwrap_or_default();
            assert!(
                text.ends_with(b"\n") && !last_line.iter().all(u8::is_ascii_whitespace),
                "a chunk that is not the last ends after a line that is not blank"
            );
        }
        ended = chunk.end != ChunkEnd::More;
        reader.source_mut().push(chunk);
    }
    assert!(ended, "the decoding ended");
    outcome(&mut reader, &mut items);
    (items, reader.truncated_tail())
}

fuzz_target!(|data: &[u8]| {
    if !data.starts_with(&slotscope_core::reader::ZSTD_MAGIC) || !small(data) {
        return;
    }
    let mut whole = RecordingReader::detect(Cursor::new(data.to_vec())).expect("a slice reads");
    let mut items = Vec::new();
    outcome(&mut whole, &mut items);
    let expected = (items, whole.truncated_tail());
    for max in [1 + data.len() % 509, 64 * 1024] {
        assert_eq!(chunked(data, max), expected, "chunks of {max}");
    }
});
