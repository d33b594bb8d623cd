//! RESP values (`slotscope_core::resp::parse`), as the collector reads every reply of a node, and
//! the topology replies built from one (`CLUSTER SHARDS`, `CLUSTER SLOTS`): a parse never panics,
//! consumes no more than it was given, and what it consumed parses to the same value again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slotscope_core::resp;
use slotscope_core::topology::TopologyView;

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    // Every value the buffer holds, one after the other, as a connection's stream is read.
    while let Ok(Some((value, used))) = resp::parse(rest) {
        assert!(
            used > 0 && used <= rest.len(),
            "consumed {used} of {}",
            rest.len()
        );
        let again = resp::parse(&rest[..used]).expect("the same bytes parse again");
        assert_eq!(again.map(|(_, n)| n), Some(used), "the same length");
        let _ = TopologyView::from_shards(&value);
        let _ = TopologyView::from_slots(&value);
        rest = &rest[used..];
    }
});
