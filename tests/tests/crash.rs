//! Crash consistency, briefly (`scripts/crash` is the long run): each command that writes a file
//! killed with SIGKILL at a drawn moment (seed printed: `SLOTSCOPE_SEED`), every file left read
//! back; `record` and `cut` into a full disk; `record` into a directory it cannot write; a
//! second recorder refused in an always-on directory the first one writes into; and a SIGTERM
//! that comes while `record` is starting.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slotscope_tests::crash::full_disk;
use slotscope_tests::crash::kill;
use slotscope_tests::crash::rig::Rig;
use slotscope_tests::crash::{Kill, Target};
use slotscope_tests::fault::proxy::{FaultProxy, Mode};
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

/// A SIGTERM that comes while `record` is still starting (its file made, its first look at the
/// cluster not yet answered: the seed is behind a proxy that holds each reply a second) ends the
/// recording cleanly at its first chance: exit status 0, the file under its final name with an end
/// line of reason `signal`. Before the signals were listened for from the start, the default
/// action of SIGTERM killed the process there, leaving only `FILE.tmp`.
#[test]
fn a_sigterm_while_record_starts_ends_its_file_cleanly() {
    let cluster = Cluster::start(ServerKind::Redis, 1, ClusterOptions::default());
    let mut proxy = FaultProxy::start(cluster.addr(0).port()).unwrap();
    proxy.set(Mode::Slow);
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("starting.jsonl");
    let seed = format!("127.0.0.1:{}", proxy.port());
    let rec = Recorder::start(
        &out,
        &["--seed", &seed, "--interval", "200ms", "--quiet"],
        &[],
    );
    let tmp_name = tmp.path().join("starting.jsonl.tmp");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !tmp_name.exists() {
        assert!(Instant::now() < deadline, "no {}", tmp_name.display());
        std::thread::sleep(Duration::from_millis(10));
    }
    // The first look at the cluster is waiting on the slow seed.
    rec.terminate();
    proxy.set(Mode::Pass);
    let o = rec.wait(Duration::from_secs(30));
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{:?}: {said}", o.status);
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "end", "{text}");
    assert_eq!(last["reason"], "signal", "{text}");
    assert!(!tmp_name.exists());
}
