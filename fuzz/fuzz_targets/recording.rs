//! A recording, as `summary`, `analyze`, `serve` and the viewer's reader read one (plain JSON
//! Lines or zstd, detected): read to its end, analysed, its tracks and overview made and the
//! overview read back. Never panics and never loops: a bad line is an error naming its line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slotscope_core::overview::Overview;

fuzz_target!(|data: &[u8]| {
    let bytes = data.to_vec();
    let len = bytes.len() as u64;
    if let Ok(overview) = Overview::of_recording(std::io::Cursor::new(bytes), len) {
        let json = overview.to_json();
        Overview::from_json(&json).expect("an overview reads back");
    }
});
