//! One drawn kill: the command started, SIGKILLed at its drawn moment, and every file it left
//! judged. A problem is a broken promise (an unreadable file, a file without its header under a
//! final name, more than the round in progress lost, a one-shot output that differs from the
//! reference run's, a crash-left file not ended by the next `record`); the rest is noted.

use std::fs;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use slotscope_core::recording::EndReason;
use slotscope_core::{NodeAddr, Timestamp};

use crate::crash::left::{files_named, open_as_user, Left};
use crate::crash::rig::{with_out, Reference, Rig, INTERVAL};
use crate::crash::{Kill, Target};
use crate::load::{Load, LoadOptions};
use crate::port::free_port;
use crate::router::Router;

/// Scheduling slack allowed on top of the rounds a kill may cost (a busy two-core machine).
pub const SLACK: Duration = Duration::from_millis(400);

/// Longest wait for a child to end, for a second `record`, or for a tap to listen.
const LIMIT: Duration = Duration::from_secs(30);

/// How one kill went.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The kill's delay after the command's start.
    pub delay: Duration,
    /// Files left under a final name, each read back.
    pub files: usize,
    /// Of them, files without an end line (cut short, and read as such).
    pub cut_short: usize,
    /// Files left under a temporary name (`.tmp`), never read as recordings.
    pub temporary: usize,
    /// Time between the last sample on disk and the kill, when the command had been recording
    /// long enough to say.
    pub lost: Option<Duration>,
    /// Whether a one-shot command had finished before its kill.
    pub finished_first: bool,
    /// What is worth knowing that is not a problem.
    pub notes: Vec<String>,
    /// Broken promises.
    pub problems: Vec<String>,
}

impl Outcome {
    /// Whole poll intervals lost (the round in progress is at most one).
    pub fn rounds_lost(&self) -> Option<u64> {
        self.lost
            .map(|l| u64::try_from(l.as_millis() / INTERVAL.as_millis()).unwrap_or(u64::MAX))
    }
}

/// The wall clock as a recording's timestamp.
fn now() -> Timestamp {
    Timestamp(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    )
}

fn spawn<S: AsRef<std::ffi::OsStr>>(bin: &Path, args: &[S], log: &Path) -> Result<Child, String> {
    let log = fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    Command::new(bin)
        .args(args)
        .env_remove("SLOTSCOPE_PASSWORD")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("start slotscope: {e}"))
}

/// SIGKILL (`Child::kill`), then reaps it; whether it had exited before.
fn kill(child: &mut Child) -> bool {
    let exited = matches!(child.try_wait(), Ok(Some(_)));
    let _ = child.kill();
    let _ = child.wait();
    exited
}

/// Runs `kill` (the `index`-th of its run) in `rig` and judges what it left.
pub fn run(rig: &Rig, kill: &Kill, index: u64) -> Outcome {
    let delay = kill.delay(rig.window(kill.target));
    let mut o = Outcome {
        delay,
        ..Outcome::default()
    };
    let result = match kill.target {
        Target::Record => record(rig, index, delay, false, &mut o),
        Target::RecordZstd => record(rig, index, delay, true, &mut o),
        Target::Rotate => rotate(rig, index, delay, &mut o),
        Target::Tap => tap(rig, index, delay, &mut o),
        Target::ImportMetrics => one_shot(rig, &rig.import, index, "import", delay, &mut o),
        Target::Cut => one_shot(rig, &rig.cut, index, "cut", delay, &mut o),
        Target::Index => index_kill(rig, delay, &mut o),
    };
    if let Err(e) = result {
        o.problems.push(format!("the harness: {e}"));
    }
    o
}

/// Reads one recording left under its final name: readable by the reader, `summary` and
/// `analyze`.
fn judge_file(rig: &Rig, path: &Path, o: &mut Outcome) -> Option<Left> {
    o.files += 1;
    let left = match Left::read(path) {
        Ok(l) => l,
        Err(e) => {
            o.problems
                .push(format!("unreadable under its final name: {e}"));
            return None;
        }
    };
    if left.end.is_none() {
        o.cut_short += 1;
    }
    if let Err(e) = open_as_user(&rig.bin, path) {
        o.problems.push(e);
    }
    Some(left)
}

/// The time lost by a kill at `killed` of a recording whose samples began at `first` and end at
/// `last`; a problem when more than the round in progress (`bound`) was lost.
fn judge_loss(
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    killed: Timestamp,
    bound: Duration,
    o: &mut Outcome,
) {
    let (Some(first), Some(last)) = (first, last) else {
        return;
    };
    // Only a kill that came well after the first sample says how much was lost.
    if killed.millis_since(first) < u64::try_from(bound.as_millis()).unwrap_or(u64::MAX) {
        return;
    }
    let lost = Duration::from_millis(killed.millis_since(last));
    o.lost = Some(lost);
    if lost > bound + SLACK {
        o.problems.push(format!(
            "{} ms of samples before the kill are missing (at most {} ms allowed)",
            lost.as_millis(),
            (bound + SLACK).as_millis()
        ));
    }
}

fn record(
    rig: &Rig,
    index: u64,
    delay: Duration,
    zstd: bool,
    o: &mut Outcome,
) -> Result<(), String> {
    let prefix = format!("rec-{index}.");
    let out = rig.work.join(format!(
        "{prefix}{}",
        if zstd { "jsonl.zst" } else { "jsonl" }
    ));
    let (seed, out_at) = (rig.cluster.seed().to_string(), out.display().to_string());
    let args = [
        "record",
        "--seed",
        &seed,
        "--interval",
        "200ms",
        "--quiet",
        "--out",
        &out_at,
    ];
    let mut child = spawn(&rig.bin, &args, &rig.work.join(format!("rec-{index}.log")))?;
    sleep(delay);
    let killed = now();
    if kill(&mut child) {
        o.problems
            .push("record exited by itself before its kill".into());
    }
    let (finals, tmps) = files_named(&rig.work, &prefix);
    o.temporary = tmps.len();
    match finals.as_slice() {
        [] => {
            o.notes
                .push("killed before its header reached the disk: no file".into());
            if delay > Duration::from_secs(2) {
                o.problems
                    .push(format!("no recording after {} ms", delay.as_millis()));
            }
        }
        [path] => {
            if let Some(left) = judge_file(rig, path, o) {
                judge_loss(
                    left.first_sample(),
                    left.last_sample(),
                    killed,
                    INTERVAL * 2,
                    o,
                );
            }
        }
        more => o
            .problems
            .push(format!("{} files for one recording: {more:?}", more.len())),
    }
    Ok(())
}

fn rotate(rig: &Rig, index: u64, delay: Duration, o: &mut Outcome) -> Result<(), String> {
    let dir = rig.work.join(format!("rot-{index}/"));
    let args = |extra: &[&str]| -> Vec<String> {
        [
            "record",
            "--seed",
            &rig.cluster.seed().to_string(),
            "--interval",
            "200ms",
            "--rotate",
            "1s",
            "--retain-size",
            "40KB",
            "--quiet",
            "--out",
            &dir.display().to_string(),
        ]
        .iter()
        .chain(extra)
        .map(|s| (*s).to_owned())
        .collect()
    };
    let mut child = spawn(
        &rig.bin,
        &args(&[]),
        &rig.work.join(format!("rot-{index}.log")),
    )?;
    sleep(delay);
    let killed = now();
    if kill(&mut child) {
        o.problems
            .push("record exited by itself before its kill".into());
    }
    let (finals, tmps) = files_named(&dir, "slotscope-");
    o.temporary = tmps.len();
    let mut lefts = Vec::new();
    for (i, path) in finals.iter().enumerate() {
        if let Some(left) = judge_file(rig, path, o) {
            if left.end.is_none() && i + 1 < finals.len() {
                o.problems.push(format!(
                    "{} has no end line but is not the newest file",
                    path.display()
                ));
            }
            lefts.push(left);
        }
    }
    let first = lefts.iter().filter_map(Left::first_sample).min();
    let last = lefts.iter().filter_map(Left::last_sample).max();
    judge_loss(first, last, killed, INTERVAL * 2, o);
    let crash_left = lefts.last().filter(|l| l.end.is_none()).cloned();
    // The next recorder into the directory ends the file the crash left.
    let log = rig.work.join(format!("rot-{index}-again.log"));
    let mut again = spawn(&rig.bin, &args(&["--duration", "1s"]), &log)?;
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Ok(Some(s)) = again.try_wait() {
            break s;
        }
        if Instant::now() > deadline {
            kill(&mut again);
            return Err("the second record did not end within 30 s".into());
        }
        sleep(Duration::from_millis(50));
    };
    let said = fs::read_to_string(&log).unwrap_or_default();
    if !status.success() {
        o.problems.push(format!(
            "the second record into the directory failed: {status}: {}",
            said.trim()
        ));
    }
    if crash_left.is_some() != said.contains("left by a crash") {
        o.problems.push(format!(
            "the second record {} a crash-left file, but the newest file {}: {}",
            if said.contains("left by a crash") {
                "ended"
            } else {
                "did not end"
            },
            if crash_left.is_some() {
                "had no end line"
            } else {
                "was complete"
            },
            said.trim()
        ));
    }
    let (after, _) = files_named(&dir, "slotscope-");
    for path in &after {
        match Left::read(path) {
            Ok(l) if l.end.is_none() => o.problems.push(format!(
                "{} has no end line after the second record",
                path.display()
            )),
            Ok(l) => {
                if let Some(before) = crash_left.as_ref().filter(|b| b.path == *path) {
                    if l.end != Some(EndReason::Crashed) || l.rounds() != before.rounds() {
                        o.problems.push(format!(
                            "{} was ended as {:?} with {} rounds; it held {} before",
                            path.display(),
                            l.end,
                            l.rounds(),
                            before.rounds()
                        ));
                    }
                }
            }
            Err(e) => o.problems.push(format!("after the second record: {e}")),
        }
    }
    if crash_left.is_some() {
        o.notes
            .push("the crash-left file was ended by the next record".into());
    }
    Ok(())
}

fn tap(rig: &Rig, index: u64, delay: Duration, o: &mut Outcome) -> Result<(), String> {
    let prefix = format!("tap-{index}.");
    let out = rig.work.join(format!(
        "{prefix}{}",
        if index.is_multiple_of(2) {
            "jsonl"
        } else {
            "jsonl.zst"
        }
    ));
    let port = free_port();
    let listen = NodeAddr::new("127.0.0.1", port).ok_or("a loopback address")?;
    let (seed, listen_at) = (rig.cluster.seed().to_string(), listen.to_string());
    let out_at = out.display().to_string();
    let args = [
        "tap",
        "--upstream",
        &seed,
        "--listen",
        &listen_at,
        "--node-ports",
        "any",
        "--quiet",
        "--out",
        &out_at,
    ];
    let mut child = spawn(&rig.bin, &args, &rig.work.join(format!("tap-{index}.log")))?;
    let deadline = Instant::now() + LIMIT;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            kill(&mut child);
            return Err("the tap did not listen within 30 s".into());
        }
        sleep(Duration::from_millis(20));
    }
    let load = Router::connect(std::slice::from_ref(&listen), None)
        .map(|router| {
            Load::with_router(
                router,
                LoadOptions {
                    prefix: format!("crash:{index}:"),
                    max_ops: 200_000,
                    max_duration: Duration::from_secs(10),
                    interval: Duration::from_millis(1),
                    ..LoadOptions::default()
                },
            )
        })
        .map_err(|e| format!("a client through the tap: {e}"))?;
    sleep(delay);
    let killed = now();
    if kill(&mut child) {
        o.problems
            .push("the tap exited by itself before its kill".into());
    }
    let report = load.stop();
    o.notes
        .push(format!("{} writes answered through the tap", report.ok));
    let (finals, tmps) = files_named(&rig.work, &prefix);
    o.temporary = tmps.len();
    match finals.as_slice() {
        [] => o
            .notes
            .push("killed before its first flush: no file".into()),
        [path] => {
            if let Some(left) = judge_file(rig, path, o) {
                // The tap puts its lines on disk at least every 250 ms.
                judge_loss(
                    left.first_sample(),
                    left.last_sample(),
                    killed,
                    Duration::from_millis(250),
                    o,
                );
            }
        }
        more => o
            .problems
            .push(format!("{} files for one tap: {more:?}", more.len())),
    }
    Ok(())
}

/// A one-shot command writing a new file: its output, when it has its final name, is the
/// reference run's byte for byte.
fn one_shot(
    rig: &Rig,
    reference: &Reference,
    index: u64,
    name: &str,
    delay: Duration,
    o: &mut Outcome,
) -> Result<(), String> {
    let prefix = format!("{name}-{index}.");
    let out = rig.work.join(format!("{prefix}jsonl.zst"));
    let args = with_out(&reference.args, &out);
    let mut child = spawn(
        &rig.bin,
        &args,
        &rig.work.join(format!("{name}-{index}.log")),
    )?;
    sleep(delay);
    o.finished_first = kill(&mut child);
    let (finals, tmps) = files_named(&rig.work, &prefix);
    o.temporary = tmps.len();
    if o.finished_first && finals.is_empty() {
        o.problems
            .push(format!("{name} finished but wrote no file"));
    }
    for path in &finals {
        judge_same(rig, path, reference, o);
    }
    Ok(())
}

fn judge_same(rig: &Rig, path: &Path, reference: &Reference, o: &mut Outcome) {
    let bytes = fs::read(path).unwrap_or_default();
    if bytes != reference.bytes {
        o.files += 1;
        o.problems.push(format!(
            "{} differs from the reference run's output ({} bytes, reference {})",
            path.display(),
            bytes.len(),
            reference.bytes.len()
        ));
    } else if path.to_string_lossy().ends_with(".json") {
        o.files += 1;
    } else {
        judge_file(rig, path, o);
    }
}

fn index_kill(rig: &Rig, delay: Duration, o: &mut Outcome) -> Result<(), String> {
    let overview = rig.overview();
    let _ = fs::remove_file(&overview);
    let log = rig.work.join("index.log");
    let mut child = spawn(&rig.bin, &rig.index.args, &log)?;
    sleep(delay);
    o.finished_first = kill(&mut child);
    let tmp = PathBuf::from(format!("{}.tmp", overview.display()));
    o.temporary = usize::from(tmp.exists());
    if overview.exists() {
        judge_same(rig, &overview, &rig.index, o);
    } else if o.finished_first {
        o.problems
            .push("index finished but wrote no overview".into());
    }
    Ok(())
}
