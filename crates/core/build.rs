//! Names the analysis code this build carries: `SLOTSCOPE_ANALYSIS_ID`, a hash of every source
//! file of the crate (path and contents). An overview records the id of the code that wrote it
//! (`overview::ANALYSIS_ID`), so a reader can tell one made by another build of slotscope, whose
//! findings may differ, from its own.

use std::fs;
use std::path::{Path, PathBuf};

/// Every file under `dir`, sorted.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=src");
    // Read when the script runs, not when it was compiled: a build script compiled in another
    // checkout (a moved or copied target directory) must still hash this one's sources.
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest_dir);
    let mut all = Vec::new();
    files(&root.join("src"), &mut all);
    all.sort();
    // FNV-1a, 64 bits: no dependency, and stable across builds and machines.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for p in &all {
        let rel = p.strip_prefix(root).unwrap_or(p);
        feed(rel.to_string_lossy().replace('\\', "/").as_bytes());
        feed(&[0]);
        feed(&fs::read(p).unwrap_or_default());
        feed(&[0]);
    }
    println!(
        "cargo:rustc-env=SLOTSCOPE_ANALYSIS_ID={}-{h:016x}",
        env!("CARGO_PKG_VERSION")
    );
}
