//! The text replies the collector polls (`INFO`, `CLIENT LIST`, `CLUSTER NODES`) and the census
//! and fingerprint built on them: never panic, on any text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slotscope_core::client_list::parse_client_list;
use slotscope_core::info::InfoReport;
use slotscope_core::topology::TopologyView;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = InfoReport::parse(&text);
    let _ = parse_client_list(&text);
    let _ = TopologyView::from_nodes(&text);
});
