//! Outside evidence and metrics, as `import-metrics` and `import` read them: the Prometheus text
//! exposition (and OpenMetrics), a Prometheus API response, CloudWatch's query list and
//! `get-metric-data` pages, and application or cloud event logs. Never panic, on any text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slotscope_core::evidence::{self, Format, Options};
use slotscope_core::import::{cloudwatch, exposition, prometheus};
use slotscope_core::Timestamp;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = exposition::parse_scrape("fuzz", &text, Timestamp(1_795_992_896_812));
    let _ = prometheus::parse_response("fuzz", &text);
    let _ = cloudwatch::parse_queries("fuzz", &text);
    let _ = cloudwatch::parse_page("fuzz", &text);
    let opts = Options {
        format: Format::Auto,
        date: None,
        recording_start: Some(Timestamp(1_795_992_896_812)),
        source: None,
    };
    let _ = evidence::parse(&text, &opts);
});
