//! Key → slot throughput: `Slot::for_key` on 27-byte keys shaped like the incident's
//! (`device_imp:0000123456789012`) and on bulk data, against the `crc16` crate's table CRC as the
//! baseline in the same run; and `Slot::for_keys`, the batch, on the same keys and on hash-tagged ones.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use slotscope_core::slot::{crc16_xmodem, hash_tag};
use slotscope_core::Slot;

fn keys(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("device_imp:{:016}", 123_456_789_012u64 + i as u64 * 7919).into_bytes())
        .collect()
}

fn bench_keys(c: &mut Criterion) {
    let keys = keys(1024);
    assert!(keys.iter().all(|k| k.len() == 27));
    let mut g = c.benchmark_group("keyslot_27_byte_keys");
    g.throughput(Throughput::Elements(keys.len() as u64));
    g.bench_function("slotscope Slot::for_key", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for k in &keys {
                acc = acc.wrapping_add(u32::from(Slot::for_key(black_box(k)).get()));
            }
            acc
        })
    });
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut out = vec![Slot::new(0).expect("slot 0"); keys.len()];
    g.bench_function("slotscope Slot::for_keys (batch)", |b| {
        b.iter(|| {
            Slot::for_keys(black_box(&refs), &mut out);
            out.iter()
                .fold(0u32, |acc, s| acc.wrapping_add(u32::from(s.get())))
        })
    });
    // Hash-tagged keys as the matrix's applications send them (`key:{123}`), in a batch.
    let tagged: Vec<Vec<u8>> = (0..1024)
        .map(|i| format!("key:{{{i}}}").into_bytes())
        .collect();
    let tagged_refs: Vec<&[u8]> = tagged.iter().map(Vec::as_slice).collect();
    g.bench_function("slotscope Slot::for_keys (batch, key:{n})", |b| {
        b.iter(|| {
            Slot::for_keys(black_box(&tagged_refs), &mut out);
            out.iter()
                .fold(0u32, |acc, s| acc.wrapping_add(u32::from(s.get())))
        })
    });
    g.bench_function("slotscope Slot::for_key (key:{n})", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for k in &tagged {
                acc = acc.wrapping_add(u32::from(Slot::for_key(black_box(k)).get()));
            }
            acc
        })
    });
    // The two halves of `Slot::for_key`, to show where its time goes.
    g.bench_function("slotscope hash_tag only", |b| {
        b.iter(|| {
            let mut acc = 0usize;
            for k in &keys {
                acc = acc.wrapping_add(hash_tag(black_box(k)).len());
            }
            acc
        })
    });
    g.bench_function("slotscope crc16_xmodem only", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for k in &keys {
                acc = acc.wrapping_add(u32::from(crc16_xmodem(black_box(k)) & 0x3fff));
            }
            acc
        })
    });
    g.bench_function("crc16 crate (XMODEM) & 0x3fff", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for k in &keys {
                let crc = crc16::State::<crc16::XMODEM>::calculate(black_box(k));
                acc = acc.wrapping_add(u32::from(crc & 0x3fff));
            }
            acc
        })
    });
    g.finish();
}

fn bench_bulk(c: &mut Criterion) {
    let mut g = c.benchmark_group("crc16_bulk");
    for size in [4 * 1024usize, 1024 * 1024] {
        let data: Vec<u8> = (0..size).map(|i| (i * 31 + 7) as u8).collect();
        g.throughput(Throughput::Bytes(size as u64));
        g.bench_with_input(BenchmarkId::new("slotscope", size), &data, |b, d| {
            b.iter(|| crc16_xmodem(black_box(d)))
        });
        g.bench_with_input(BenchmarkId::new("crc16 crate", size), &data, |b, d| {
            b.iter(|| crc16::State::<crc16::XMODEM>::calculate(black_box(d)))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = bench_keys, bench_bulk
}
criterion_main!(benches);
