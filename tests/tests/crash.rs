//! Crash consistency, briefly (`scripts/crash` is the long run): each command that writes a file
//! killed with SIGKILL at a drawn moment (seed printed: `SLOTSCOPE_SEED`), every file left read
//! back; `record` and `cut` into a full disk; `record` into a directory it cannot write; and a
//! second recorder refused in an always-on directory the first one writes into.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slotscope_tests::crash::full_disk;
use slotscope_tests::crash::kill;
use slotscope_tests::crash::rig::Rig;
use slotscope_tests::crash::{Kill, Target};
use slotscope_tests::matrix::draw::run_seed;
use slotscope_tests::{slotscope_bin, Cluster, ClusterOptions, Recorder, ServerKind};
use tempfile::TempDir;

#[test]
fn killed_commands_leave_readable_files_and_a_full_disk_a_complete_one() {
    let seed = run_seed();
    eprintln!("crash: SLOTSCOPE_SEED={seed} (scripts/crash --seed {seed} runs the same kills)");
    let work = TempDir::new().unwrap();
    let rig = Rig::start(
        &slotscope_bin(),
        Path::new(env!("CARGO_BIN_EXE_synth")),
        work.path(),
        0.1,
    )
    .expect("the crash rig");
    let mut problems: Vec<String> = Vec::new();
    let kills = 2 * Target::ALL.len() as u64;
    for i in 0..kills {
        let k = Kill::nth(seed, i);
        let o = kill::run(&rig, &k, i);
        eprintln!(
            "kill {i} (seed {}): {k}, {} ms: {} files, {} cut short, {} temporary, lost {:?}",
            k.seed,
            o.delay.as_millis(),
            o.files,
            o.cut_short,
            o.temporary,
            o.lost
        );
        problems.extend(o.problems.iter().map(|p| format!("{k}: {p}")));
    }
    for d in full_disk::run_all(&rig) {
        eprintln!("{}: exit {:?}: {}", d.what, d.status, d.message);
        problems.extend(d.problems.iter().map(|p| format!("{}: {p}", d.what)));
    }
    assert!(problems.is_empty(), "SLOTSCOPE_SEED={seed}: {problems:#?}");
}

#[test]
fn a_second_recorder_into_the_same_directory_is_refused() {
    let cluster = Cluster::start(ServerKind::Redis, 3, ClusterOptions::default());
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("rec/");
    let seed = cluster.seed().to_string();
    let first = Recorder::start(
        &dir,
        &["--seed", &seed, "--interval", "200ms", "--quiet"],
        &[],
    );
    // The first one holds the lock once its file is there.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.join(".slotscope-record.lock").exists() {
        assert!(Instant::now() < deadline, "no lock file");
        std::thread::sleep(Duration::from_millis(50));
    }
    let second = Command::new(slotscope_bin())
        .args(["record", "--seed", &seed, "--quiet", "--out"])
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{said}");
    assert!(
        said.contains("another slotscope record is writing into this directory"),
        "{said}"
    );
    first.terminate();
    let o = first.wait(Duration::from_secs(20));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Once the first one ended, the directory is free again.
    let third = Command::new(slotscope_bin())
        .args([
            "record",
            "--seed",
            &seed,
            "--quiet",
            "--duration",
            "1s",
            "--out",
        ])
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        third.status.success(),
        "{}",
        String::from_utf8_lossy(&third.stderr)
    );
}
