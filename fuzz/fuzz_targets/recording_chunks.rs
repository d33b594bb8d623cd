//! A zstd recording decoded in one place and read in another, as the viewer does for a big file
//! (`LineChunks` in the decoding worker, `FedLines` under the reading one's `RecordingReader`):
//! it reads exactly as the bytes read whole (the same lines with the same numbers, the same
//! errors, the same truncated tail), whatever the chunks' size, and every chunk but the last
//! ends after a line that is not blank.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use slotscope_core::reader::{ChunkEnd, FedLines, LineChunks, ReadError, RecordingReader};
use slotscope_core::recording::Line;

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
    if !data.starts_with(&slotscope_core::reader::ZSTD_MAGIC) {
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
