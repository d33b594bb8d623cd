//! The tap's frame splitter (`FrameSplitter`), as `slotscope tap` splits what clients and servers
//! send, in both directions, the stream cut into pieces where the input says; and a whole frame
//! parsed (`RawFrame::parse`) and encoded again. Never panics; the splitter's frames are the same
//! however the stream is cut; an encoded frame parses back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slotscope_core::tap::{FrameSplitter, RawFrame};

/// The frame ends the splitter finds in `data` fed in pieces of `piece` bytes (1 = byte by byte),
/// up to the first error.
fn ends(data: &[u8], inline: bool, piece: usize) -> Vec<usize> {
    let mut splitter = if inline {
        FrameSplitter::for_requests()
    } else {
        FrameSplitter::for_replies()
    };
    let mut out = Vec::new();
    let mut offset = 0;
    for chunk in data.chunks(piece.max(1)) {
        let mut pos = 0;
        while pos < chunk.len() {
            match splitter.feed(&chunk[pos..]) {
                Ok(Some(n)) => {
                    assert!(n > 0 && pos + n <= chunk.len());
                    pos += n;
                    out.push(offset + pos);
                }
                Ok(None) => pos = chunk.len(),
                Err(_) => return out,
            }
        }
        offset += chunk.len();
    }
    out
}

fuzz_target!(|input: &[u8]| {
    let Some((&cut, data)) = input.split_first() else {
        return;
    };
    for inline in [false, true] {
        let whole = ends(data, inline, data.len());
        let cut_up = ends(data, inline, usize::from(cut % 17) + 1);
        assert_eq!(
            whole, cut_up,
            "the frames do not depend on how the stream is cut"
        );
    }
    if let Some((frame, used)) = RawFrame::parse(data) {
        assert!(used > 0 && used <= data.len());
        let mut encoded = Vec::new();
        frame.encode(&mut encoded);
        let (again, n) = RawFrame::parse(&encoded).expect("an encoded frame parses");
        assert_eq!(n, encoded.len());
        let mut twice = Vec::new();
        again.encode(&mut twice);
        assert_eq!(encoded, twice, "encode(parse(encode(f))) == encode(f)");
    }
});
