//! Whether a browser can decode a `.zst` file itself, sent as `Content-Encoding: zstd`: every
//! frame whole, none with a dictionary, and none with a window over [`BROWSER_WINDOW`] (RFC 9659
//! bounds the `zstd` content coding's window at 8 MiB, and Chromium refuses a larger one; it also
//! fails the response when the last frame is cut short, as a recording being written or left by
//! a crash is). The frames' headers and block headers are read; their contents are skipped.
//!
//! The format: RFC 8878, section 3.1 (frames, skippable frames, blocks).

use std::io::{self, Read};

/// The largest window a browser decodes: 8 MiB.
pub const BROWSER_WINDOW: u64 = 8 << 20;

/// A zstd frame's magic number.
const MAGIC: u32 = 0xFD2F_B528;

/// Skippable frames' magic numbers: `0x184D2A50` to `0x184D2A5F`.
const SKIPPABLE: std::ops::RangeInclusive<u32> = 0x184D_2A50..=0x184D_2A5F;

/// Whether the zstd stream `r` (read to its end) is whole frames that a browser decodes: at
/// least one frame, each with a window of at most [`BROWSER_WINDOW`] and no dictionary, ending
/// with its last block (and checksum). Read errors other than the stream's end are errors.
pub fn browser_decodes<R: Read>(mut r: R) -> io::Result<bool> {
    let mut frames = 0u64;
    loop {
        let mut first = [0u8; 4];
        match fill(&mut r, &mut first)? {
            0 => return Ok(frames > 0),
            4 => {}
            _ => return Ok(false),
        }
        let magic = u32::from_le_bytes(first);
        if SKIPPABLE.contains(&magic) {
            let Some(size) = read_u32(&mut r)? else {
                return Ok(false);
            };
            if !skip(&mut r, u64::from(size))? {
                return Ok(false);
            }
            continue;
        }
        if magic != MAGIC || !frame(&mut r)? {
            return Ok(false);
        }
        frames += 1;
    }
}

/// Reads one frame after its magic number: whether it is whole and a browser decodes it.
fn frame<R: Read>(r: &mut R) -> io::Result<bool> {
    let Some([descriptor]) = read_array::<1, _>(r)? else {
        return Ok(false);
    };
    let single_segment = descriptor & 0x20 != 0;
    let checksum = descriptor & 0x04 != 0;
    let reserved = descriptor & 0x08 != 0;
    let dictionary = descriptor & 0x03 != 0;
    if reserved || dictionary {
        // A reserved bit set is no frame; a dictionary the browser does not have.
        return Ok(false);
    }
    let window = if single_segment {
        None
    } else {
        let Some([w]) = read_array::<1, _>(r)? else {
            return Ok(false);
        };
        let log = 10 + u32::from(w >> 3);
        let base = 1u64 << log;
        Some(base + base / 8 * u64::from(w & 0x07))
    };
    let content_size_bytes = match descriptor >> 6 {
        0 if single_segment => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let mut size = [0u8; 8];
    if fill(r, &mut size[..content_size_bytes])? < content_size_bytes {
        return Ok(false);
    }
    let mut content_size = u64::from_le_bytes(size);
    if content_size_bytes == 2 {
        content_size += 256;
    }
    // A single-segment frame's window is its whole content.
    if window.unwrap_or(content_size) > BROWSER_WINDOW {
        return Ok(false);
    }
    loop {
        let Some(h) = read_array::<3, _>(r)? else {
            return Ok(false);
        };
        let header = u32::from(h[0]) | u32::from(h[1]) << 8 | u32::from(h[2]) << 16;
        let last = header & 1 != 0;
        let size = u64::from(header >> 3);
        let stored = match (header >> 1) & 0x03 {
            0 | 2 => size,
            1 => 1,
            _ => return Ok(false),
        };
        if !skip(r, stored)? {
            return Ok(false);
        }
        if last {
            break;
        }
    }
    Ok(!checksum || skip(r, 4)?)
}

/// Reads into all of `buf` unless the stream ends first: how many bytes it read.
fn fill<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// `N` bytes, or `None` at the stream's end before them.
fn read_array<const N: usize, R: Read>(r: &mut R) -> io::Result<Option<[u8; N]>> {
    let mut out = [0u8; N];
    Ok((fill(r, &mut out)? == N).then_some(out))
}

/// A little-endian `u32`, or `None` at the stream's end.
fn read_u32<R: Read>(r: &mut R) -> io::Result<Option<u32>> {
    Ok(read_array::<4, _>(r)?.map(u32::from_le_bytes))
}

/// Skips `n` bytes: whether they were all there.
fn skip<R: Read>(r: &mut R, n: u64) -> io::Result<bool> {
    Ok(io::copy(&mut r.take(n), &mut io::sink())? == n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zstd(data: &[u8], level: i32, window_log: u32) -> Vec<u8> {
        let mut enc = zstd::Encoder::new(Vec::new(), level).unwrap();
        enc.include_checksum(true).unwrap();
        enc.window_log(window_log).unwrap();
        std::io::Write::write_all(&mut enc, data).unwrap();
        enc.finish().unwrap()
    }

    /// Text that does not compress to nothing: lines with a counter.
    fn text(lines: u32) -> Vec<u8> {
        (0..lines)
            .flat_map(|i| {
                format!(
                    "{{\"t\":{i},\"type\":\"info\",\"x\":{}}}\n",
                    i * 7919 % 1000
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn whole_frames_with_a_small_window_are_the_browsers_and_others_are_not() {
        let data = text(20_000);
        let small = zstd(&data, 3, 20);
        assert!(browser_decodes(&small[..]).unwrap());
        // Several frames one after the other (a file appended to), and a skippable frame.
        let mut several = small.clone();
        several.extend_from_slice(&zstd(b"{\"more\":1}\n", 3, 20));
        several.extend_from_slice(&0x184D_2A53u32.to_le_bytes());
        several.extend_from_slice(&3u32.to_le_bytes());
        several.extend_from_slice(b"abc");
        assert!(browser_decodes(&several[..]).unwrap());
        // A window of 16 MiB (the collector's recordings before its 1 MiB window), 8 MiB at most.
        assert!(!browser_decodes(&zstd(&data, 3, 24)[..]).unwrap());
        assert!(browser_decodes(&zstd(&data, 3, 23)[..]).unwrap());
        // Cut short anywhere: not whole.
        for cut in [
            1,
            4,
            5,
            6,
            12,
            small.len() / 2,
            small.len() - 4,
            small.len() - 1,
        ] {
            assert!(!browser_decodes(&small[..cut]).unwrap(), "cut at {cut}");
        }
        // Not zstd, empty, trailing bytes that are no frame.
        assert!(!browser_decodes(&b"{\"type\":\"header\"}\n"[..]).unwrap());
        assert!(!browser_decodes(&b""[..]).unwrap());
        let mut trailing = small.clone();
        trailing.extend_from_slice(b"xyzw1234");
        assert!(!browser_decodes(&trailing[..]).unwrap());
    }

    #[test]
    fn a_single_segment_frame_counts_its_content_as_its_window() {
        // The zstd library writes one segment when it is told the content's size up front.
        let single = |len: usize| {
            let data = vec![b'a'; len];
            let mut enc = zstd::Encoder::new(Vec::new(), 1).unwrap();
            enc.set_pledged_src_size(Some(len as u64)).unwrap();
            std::io::Write::write_all(&mut enc, &data).unwrap();
            enc.finish().unwrap()
        };
        let small = single(1000);
        assert!(small[4] & 0x20 != 0, "a single-segment frame");
        assert!(browser_decodes(&small[..]).unwrap());
        // A single-segment frame with a 4-byte content size and one empty raw block, written
        // by hand: of 9 MiB it is refused, of 1000 bytes not.
        let frame = |content: u32| {
            let mut f = MAGIC.to_le_bytes().to_vec();
            f.push(0x80 | 0x20);
            f.extend_from_slice(&content.to_le_bytes());
            f.extend_from_slice(&[1, 0, 0]);
            f
        };
        assert!(browser_decodes(&frame(1000)[..]).unwrap());
        assert!(!browser_decodes(&frame(9 << 20)[..]).unwrap());
    }

    #[test]
    fn the_fixtures_recorded_before_the_small_window_are_not_the_browsers() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/incident2-valkey.jsonl.zst"
        );
        let bytes = std::fs::read(path).unwrap();
        assert!(
            !browser_decodes(&bytes[..]).unwrap(),
            "its window is 16 MiB"
        );
    }
}
