//! The viewer's parcel (`web/reader/src/parcel.rs`): what the reader's wasm module hands the
//! viewer, a JSON head and every series' values as numbers with their lengths. The input: a byte
//! whose low four bits say how many lengths follow (one byte each) and whose fifth bit adds one
//! value too many; then the head. Opening never panics; a parcel that opens packs again, and
//! that parcel opens to the same head.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slotscope_reader::parcel::Parcel;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let k = usize::from(first & 15).min(rest.len());
    let (lengths, head) = rest.split_at(k);
    let lengths: Vec<u32> = lengths.iter().map(|&b| u32::from(b)).collect();
    let total = lengths.iter().map(|&n| n as usize).sum::<usize>() + usize::from(first >> 4 & 1);
    let values: Vec<f32> = (0..total).map(|i| i as f32 * 0.5).collect();
    let Ok(head) = String::from_utf8(head.to_vec()) else {
        return;
    };
    let parcel = Parcel {
        head,
        values,
        lengths,
    };
    if let Ok(read) = parcel.open() {
        let packed = Parcel::of(read).expect("an opened parcel packs again");
        let head = packed.head.clone();
        let again = Parcel::of(packed.open().expect("a packed parcel opens"))
            .expect("and packs again");
        assert_eq!(again.head, head, "the head changed on its way round");
    }
});
