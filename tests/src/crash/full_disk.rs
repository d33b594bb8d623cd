//! A full disk and an output directory that cannot be written: `record` into a small tmpfs (it
//! must stop with status 1 and a clear message, its file complete up to the last round that
//! fitted), `tap` into one (its client served to the end, the file ended where it filled), `cut`
//! into one (status 1, nothing under the final name), and `record` into a
//! read-only or missing directory (status 2 before the first poll). Mounting a tmpfs needs root
//! (or `sudo -n`), as the project's machines have.

use std::fs;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slotscope_core::recording::EndReason;
use slotscope_core::NodeAddr;

use crate::client::Client;
use crate::crash::left::{files_named, open_as_user, Left};
use crate::crash::rig::{with_out, Rig};
use crate::load::{Load, LoadOptions};
use crate::port::free_port;
use crate::router::Router;
use crate::topology::info_field;

/// How one full-disk or bad-directory case went.
#[derive(Clone, Debug, Default)]
pub struct DiskOutcome {
    /// What was tried.
    pub what: String,
    /// The command's exit status.
    pub status: Option<i32>,
    /// Its last line on stderr.
    pub message: String,
    /// Rounds in the file it left, if any.
    pub rounds: Option<usize>,
    /// How long it ran.
    pub took: Duration,
    /// Broken promises.
    pub problems: Vec<String>,
}

/// A tmpfs mounted by this process, unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path, options: &str) -> Result<Mount, String> {
        fs::create_dir_all(at).map_err(|e| format!("{}: {e}", at.display()))?;
        let o = privileged("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(at)
            .output()
            .map_err(|e| format!("run mount: {e}"))?;
        if !o.status.success() {
            return Err(format!(
                "cannot mount a tmpfs ({options}) at {} (root, or sudo without a password, is needed): {}",
                at.display(),
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        Ok(Mount(at.to_owned()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = privileged("umount").arg(&self.0).status();
    }
}

/// `program` as root: itself when this process is root, else through `sudo -n` (as
/// `scripts/setup` runs `apt-get`).
fn privileged(program: &str) -> Command {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root {
        Command::new(program)
    } else {
        let mut c = Command::new("sudo");
        c.args(["-n", program]);
        c
    }
}

/// Runs `slotscope ARGS…` to its end (at most `limit`, then it is killed and that is a problem).
fn run(rig: &Rig, args: &[String], limit: Duration, o: &mut DiskOutcome) {
    let start = Instant::now();
    let mut child = match Command::new(&rig.bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            o.problems.push(format!("start slotscope: {e}"));
            return;
        }
    };
    while matches!(child.try_wait(), Ok(None)) {
        if start.elapsed() > limit {
            let _ = child.kill();
            o.problems
                .push(format!("still running after {} s", limit.as_secs()));
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    o.took = start.elapsed();
    if let Ok(out) = child.wait_with_output() {
        o.status = out.status.code();
        // Its error line, else its last line (a background thread may write after it).
        let text = String::from_utf8_lossy(&out.stderr);
        o.message = text
            .lines()
            .find(|l| l.starts_with("error:"))
            .or_else(|| text.lines().last())
            .unwrap_or_default()
            .to_owned();
    }
}

fn record_args(rig: &Rig, out: &Path, extra: &[&str]) -> Vec<String> {
    let seed = rig.cluster.seed().to_string();
    let out = out.display().to_string();
    [
        "record",
        "--seed",
        &seed,
        "--interval",
        "100ms",
        "--quiet",
        "--out",
        &out,
    ]
    .iter()
    .chain(extra)
    .map(|s| (*s).to_owned())
    .collect()
}

/// `record` into a tmpfs of `size` that fills up (`name` ending in `/`: an always-on directory
/// rotating every second, whose newest file ends on the error, or was removed when nothing of it
/// fitted, its predecessor then complete).
fn record_until_full(rig: &Rig, name: &str, size: &str, o: &mut DiskOutcome) -> Result<(), String> {
    let at = rig
        .work
        .join(format!("full-{}", name.replace(['.', '/'], "-")));
    let _mount = Mount::tmpfs(&at, &format!("size={size}"))?;
    let rotate = name.ends_with('/');
    let extra: &[&str] = if rotate { &["--rotate", "1s"] } else { &[] };
    run(
        rig,
        &record_args(rig, &at.join(name), extra),
        Duration::from_secs(120),
        o,
    );
    let (name, at) = if rotate {
        let dir = at.join(name);
        let (files, _) = files_named(&dir, "slotscope-");
        for older in files.iter().rev().skip(1) {
            match Left::read(older) {
                Ok(l) if l.end == Some(EndReason::Rotated) => {}
                Ok(l) => {
                    o.problems
                        .push(format!("{} ends {:?}, not rotated", older.display(), l.end))
                }
                Err(e) => o.problems.push(e),
            }
        }
        let newest = files.last().ok_or("no file in the directory")?;
        let name = newest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (name, dir)
    } else {
        (name.to_owned(), at)
    };
    let out = at.join(&name);
    if o.status != Some(1) {
        o.problems
            .push(format!("exit status {:?}, not 1: {}", o.status, o.message));
    }
    if !o.message.to_lowercase().contains("no space left") {
        o.problems.push(format!(
            "the message does not say the disk is full: {}",
            o.message
        ));
    }
    match Left::read(&out) {
        Ok(left) => {
            o.rounds = Some(left.rounds());
            if left.rounds() == 0 {
                o.problems.push("no round in the file".into());
            }
            let removed = rotate && o.message.contains("it was removed");
            if removed && left.end != Some(EndReason::Rotated) {
                o.problems.push(format!(
                    "the file before the one removed ends {:?}, not rotated",
                    left.end
                ));
            } else if !removed && left.end != Some(EndReason::Error) {
                o.problems.push(format!(
                    "the file ends {:?}, not with an end line saying why (error)",
                    left.end
                ));
            }
            if let Err(e) = open_as_user(&rig.bin, &out) {
                o.problems.push(e);
            }
        }
        Err(e) => o.problems.push(format!("the file left: {e}")),
    }
    let (_, tmps) = files_named(&at, &name);
    // Its reserve made room for its end and is gone.
    if !tmps.is_empty() {
        o.problems.push(format!("temporary files left: {tmps:?}"));
    }
    Ok(())
}

/// Connections the seed node has accepted so far, asked on `client`'s own connection.
fn connections(client: &mut Client) -> Result<u64, String> {
    let info = client
        .cmd_text(&["INFO", "stats"])
        .map_err(|e| format!("INFO of the seed: {e}"))?;
    info_field(&info, "total_connections_received")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| "no total_connections_received in INFO".to_owned())
}

/// `record` into a directory it cannot write: status 2 and no connection to the cluster.
fn bad_directory(
    rig: &Rig,
    read_only: bool,
    rotate: bool,
    o: &mut DiskOutcome,
) -> Result<(), String> {
    let at = rig
        .work
        .join(format!("bad-{}-{}", u8::from(read_only), u8::from(rotate)));
    let _mount = if read_only {
        Some(Mount::tmpfs(&at, "ro,size=16k")?)
    } else {
        None
    };
    let parent = if read_only { at } else { at.join("missing") };
    let out = parent.join(if rotate { "rec/" } else { "rec.jsonl" });
    let mut args = record_args(rig, &out, &[]);
    if rotate {
        args.extend(["--rotate".to_owned(), "1h".to_owned()]);
    }
    let mut client = rig.cluster.client(0);
    let before = connections(&mut client)?;
    run(rig, &args, Duration::from_secs(10), o);
    let after = connections(&mut client)?;
    if o.status != Some(2) {
        o.problems
            .push(format!("exit status {:?}, not 2: {}", o.status, o.message));
    }
    if after != before {
        o.problems.push(format!(
            "the seed accepted {} connections: the recorder polled before failing",
            after - before
        ));
    }
    if !o.message.contains(&parent.display().to_string()) {
        o.problems.push(format!(
            "the message does not name the directory: {}",
            o.message
        ));
    }
    Ok(())
}

/// `tap` into a tmpfs of 64 KiB that a client's writes through it fill: the client is served
/// to the end without an error, the tap stops with status 1 when asked to (SIGTERM) and says the
/// disk was full, and the file ends at its last flush with an end line.
fn tap_until_full(rig: &Rig, o: &mut DiskOutcome) -> Result<(), String> {
    let at = rig.work.join("full-tap");
    let _mount = Mount::tmpfs(&at, "size=64k")?;
    let out = at.join("tap.jsonl");
    let port = free_port();
    let listen = NodeAddr::new("127.0.0.1", port).ok_or("a loopback address")?;
    let (seed, listen_at) = (rig.cluster.seed().to_string(), listen.to_string());
    let started = Instant::now();
    let mut child = Command::new(&rig.bin)
        .args(["tap", "--upstream", &seed, "--listen", &listen_at])
        .args(["--node-ports", "any", "--quiet", "--out"])
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("start slotscope tap: {e}"))?;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            return Err("the tap did not listen within 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let router = Router::connect(std::slice::from_ref(&listen), None)
        .map_err(|e| format!("a client through the tap: {e}"))?;
    let load = Load::with_router(
        router,
        LoadOptions {
            prefix: "full-tap:".into(),
            max_ops: 100_000,
            max_duration: Duration::from_secs(20),
            interval: Duration::from_millis(1),
            ..LoadOptions::default()
        },
    );
    // 64 KiB of command lines take the client well under a second; it goes on for 4.
    std::thread::sleep(Duration::from_secs(2));
    let halfway = load.ops();
    std::thread::sleep(Duration::from_secs(2));
    let report = load.stop();
    if report.ok <= halfway {
        o.problems.push(format!(
            "the client's writes stopped with the disk full: {halfway} by 2 s, {} answered in all",
            report.ok
        ));
    }
    if report.errors > 0 {
        o.problems.push(format!(
            "{} of the client's writes failed: {:?}",
            report.errors, report.error_samples
        ));
    }
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let deadline = Instant::now() + Duration::from_secs(30);
    while matches!(child.try_wait(), Ok(None)) {
        if Instant::now() > deadline {
            let _ = child.kill();
            o.problems
                .push("the tap did not end within 30 s of SIGTERM".into());
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    o.took = started.elapsed();
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    o.status = output.status.code();
    let text = String::from_utf8_lossy(&output.stderr);
    o.message = text
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default()
        .to_owned();
    if o.status != Some(1) {
        o.problems.push(format!(
            "exit status {:?}, not 1: {}",
            o.status,
            text.trim()
        ));
    }
    if !o.message.to_lowercase().contains("no space left") {
        o.problems.push(format!(
            "the message does not say the disk is full: {}",
            text.trim()
        ));
    }
    match Left::read(&out) {
        Ok(left) if left.end == Some(EndReason::Error) => {
            if let Err(e) = open_as_user(&rig.bin, &out) {
                o.problems.push(e);
            }
        }
        Ok(left) => o.problems.push(format!(
            "the file ends {:?}, not with an end line saying why (error)",
            left.end
        )),
        Err(e) => o.problems.push(format!("the file left: {e}")),
    }
    let (_, tmps) = files_named(&at, "tap.");
    if !tmps.is_empty() {
        o.problems.push(format!("temporary files left: {tmps:?}"));
    }
    Ok(())
}

/// Every full-disk and bad-directory case.
pub fn run_all(rig: &Rig) -> Vec<DiskOutcome> {
    let mut outcomes = Vec::new();
    let mut case = |what: &str, f: &dyn Fn(&mut DiskOutcome) -> Result<(), String>| {
        let mut o = DiskOutcome {
            what: what.to_owned(),
            ..DiskOutcome::default()
        };
        if let Err(e) = f(&mut o) {
            o.problems.push(format!("the harness: {e}"));
        }
        outcomes.push(o);
    };
    case("record FILE.jsonl into a full 128 KiB tmpfs", &|o| {
        record_until_full(rig, "rec.jsonl", "128k", o)
    });
    case("record FILE.jsonl.zst into a full 48 KiB tmpfs", &|o| {
        record_until_full(rig, "rec.jsonl.zst", "48k", o)
    });
    case("record DIR/ --rotate 1s into a full 64 KiB tmpfs", &|o| {
        record_until_full(rig, "rec/", "64k", o)
    });
    case(
        "tap FILE.jsonl into a full 64 KiB tmpfs, a client through it",
        &|o| tap_until_full(rig, o),
    );
    case("cut into a full 16 KiB tmpfs", &|o| {
        let at = rig.work.join("full-cut");
        let _mount = Mount::tmpfs(&at, "size=16k")?;
        let out = at.join("cut.jsonl");
        let args = with_out(&rig.cut.args, &out);
        run(rig, &args, Duration::from_secs(120), o);
        if o.status == Some(0) || o.status.is_none() {
            o.problems.push(format!("exit status {:?}", o.status));
        }
        if !o.message.to_lowercase().contains("no space left") {
            o.problems.push(format!(
                "the message does not say the disk is full: {}",
                o.message
            ));
        }
        let (finals, tmps) = files_named(&at, "cut.");
        if !finals.is_empty() || !tmps.is_empty() {
            o.problems.push(format!("files left: {finals:?} {tmps:?}"));
        }
        Ok(())
    });
    for (what, read_only, rotate) in [
        ("record into a read-only directory", true, false),
        ("record --rotate into a read-only directory", true, true),
        ("record into a missing directory", false, false),
    ] {
        case(what, &|o| bad_directory(rig, read_only, rotate, o));
    }
    outcomes
}
