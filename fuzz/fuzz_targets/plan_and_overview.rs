//! What `preflight` and the viewer read besides recordings: a pre-flight plan (JSON) and an
//! overview file (`slotscope index`). Never panic, on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slotscope_core::overview::Overview;
use slotscope_core::preflight::Plan;

fuzz_target!(|data: &[u8]| {
    let _ = Overview::from_json(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Plan::from_json(text);
    }
});
