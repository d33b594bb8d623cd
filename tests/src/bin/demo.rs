//! `scripts/demo-record`: the shape of incident 1 on a local cluster, recorded by the real collector.
//!
//! Starts one Redis master owning all 16384 slots on 127.0.0.1, records it with
//! `slotscope record`, adds a second master while a small load writes keys, migrates slots
//! 8192–16383 to it with the real per-slot protocol, stops the recording with SIGTERM and prints
//! `slotscope summary` and `slotscope analyze` of the file. Everything it starts, it stops.

use std::path::PathBuf;
use std::thread::sleep;
use std::time::{Duration, Instant};

use slotscope_core::{Slot, SlotRange};
use slotscope_tests::{
    run_slotscope, Cluster, ClusterOptions, Load, LoadOptions, Recorder, ServerKind,
};

fn main() {
    let out = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("demo-scale-out.jsonl.zst"));
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).expect("create the output directory");
    }
    let _ = std::fs::remove_file(&out);
    let started = Instant::now();
    let step = |what: &str| eprintln!("demo [{:>5.1}s] {what}", started.elapsed().as_secs_f64());

    step("starting one Redis master on 127.0.0.1 (all 16384 slots)");
    let mut cluster = Cluster::start(ServerKind::Redis, 1, ClusterOptions::default());
    let seed = cluster.seed().to_string();
    step(&format!(
        "recording {seed} to {} every 500ms",
        out.display()
    ));
    let rec = Recorder::start(&out, &["--seed", &seed, "--interval", "500ms"], &[]);
    sleep(Duration::from_millis(1500));

    step("writing keys in the background");
    let load = Load::start(
        &cluster,
        LoadOptions {
            prefix: "device_imp:".into(),
            max_ops: 100_000,
            max_duration: Duration::from_secs(30),
            interval: Duration::from_millis(2),
            ..LoadOptions::default()
        },
    );
    sleep(Duration::from_millis(1500));
    step("scale-out: adding a second master");
    let new = cluster.add_master();
    sleep(Duration::from_millis(1500));
    step("migrating slots 8192-16383 to it (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE)");
    let range = SlotRange::new(
        Slot::new(8192).expect("slot"),
        Slot::new(16383).expect("slot"),
    )
    .expect("range");
    cluster.migrate_slots_paced(range, 0, new, 1024, Duration::from_millis(300));
    cluster.wait_converged();
    sleep(Duration::from_millis(2000));
    let report = load.stop();
    step(&format!(
        "load done: {} writes ok, {} MOVED and {} ASK followed, {} errors",
        report.ok, report.moved, report.ask, report.errors
    ));
    rec.terminate();
    let o = rec.wait(Duration::from_secs(20));
    eprint!("{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "slotscope record failed");
    drop(cluster);
    step("cluster stopped; summary of the recording:\n");
    let o = run_slotscope(&["summary", out.to_str().expect("utf-8 path")]);
    print!("{}", String::from_utf8_lossy(&o.stdout));
    eprint!("{}", String::from_utf8_lossy(&o.stderr));
    step("analysis of the recording:\n");
    let o = run_slotscope(&["analyze", out.to_str().expect("utf-8 path")]);
    print!("{}", String::from_utf8_lossy(&o.stdout));
    eprint!("{}", String::from_utf8_lossy(&o.stderr));
    println!(
        "\nThe recording is {} (JSON Lines, zstd): try `zstd -dc {} | head` or `slotscope analyze --format markdown {}`.",
        out.display(),
        out.display(),
        out.display()
    );
}
