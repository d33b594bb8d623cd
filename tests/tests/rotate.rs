//! The always-on recorder against real clusters: `record --out DIR/ --rotate --retain` rotates,
//! each file stands alone, retention deletes the oldest, `cut` joins across files into a recording
//! `analyze` reads, a SIGKILL loses at most the round being written, and the ACL user of
//! `deploy/acl.md` is enough (and no more); each file gets its overview, deleted with it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use slotscope_core::overview::{Overview, SUFFIX};
use slotscope_core::recording::{EndReason, Line};
use slotscope_core::{NodeAddr, Timestamp};
use slotscope_tests::kind::workspace_root;
use slotscope_tests::{
    run_slotscope, Client, Cluster, ClusterOptions, Recorder, Recording, ServerKind,
};
use tempfile::TempDir;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn now() -> Timestamp {
    Timestamp(
        u64::try_from(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_millis(),
        )
        .unwrap(),
    )
}

/// The period files of `dir`, oldest first.
fn period_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.starts_with("slotscope-") && n.ends_with(".jsonl.zst")
        })
        .collect();
    files.sort();
    files
}

fn end_of(r: &Recording) -> Option<EndReason> {
    match r.lines.last() {
        Some(Line::End(e)) => Some(e.reason),
        _ => None,
    }
}

fn poll_round_times(r: &Recording) -> Vec<(u64, Timestamp)> {
    r.lines
        .iter()
        .filter_map(|l| match l {
            Line::PollRound(p) => Some((p.round, p.t)),
            _ => None,
        })
        .collect()
}

/// Asserts that `r` stands alone: every node of `nodes` is discovered, and its topology and INFO
/// are there, before or in the first round; rounds are numbered from 0.
fn assert_stands_alone(r: &Recording, nodes: &BTreeSet<NodeAddr>, what: &str) {
    let first_round = r
        .lines
        .iter()
        .position(|l| matches!(l, Line::PollRound(_)))
        .unwrap_or_else(|| panic!("{what}: no poll round"));
    let head = &r.lines[..first_round];
    for n in nodes {
        let discovered = head
            .iter()
            .filter(|l| matches!(l, Line::NodeDiscovered(d) if &d.node.addr == n))
            .count();
        assert_eq!(discovered, 1, "{what}: {n} discovered {discovered} times");
        assert!(
            head.iter()
                .any(|l| matches!(l, Line::Topology(t) if &t.node.addr == n)),
            "{what}: no topology of {n} before its first round ends"
        );
        assert!(
            head.iter()
                .any(|l| matches!(l, Line::Info(i) if &i.node.addr == n)),
            "{what}: no INFO of {n} in its first round"
        );
    }
    let rounds = poll_round_times(r);
    for (i, (n, _)) in rounds.iter().enumerate() {
        assert_eq!(*n, i as u64, "{what}: rounds numbered from 0");
    }
    let times: Vec<Timestamp> = r.lines.iter().map(Line::time).collect();
    assert!(
        times.iter().all(|t| *t >= r.header.started),
        "{what}: a line before the header's start"
    );
}

/// A week of hourly files, simulated with 2 s periods kept 6 s, over ~13 s of a 3-master cluster.
#[test]
fn a_simulated_week_rotates_retains_and_cuts_across_files() {
    let cluster = Cluster::start(ServerKind::Redis, 3, ClusterOptions::default());
    let nodes: BTreeSet<NodeAddr> = (0..3).map(|i| cluster.addr(i)).collect();
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("rec/");
    let seed = cluster.seed().to_string();
    let started = now();
    let rec = Recorder::start(
        &dir,
        &[
            "--seed",
            &seed,
            "--interval",
            "500ms",
            "--rotate",
            "2s",
            "--retain",
            "6s",
            "--duration",
            "13s",
            "--quiet",
        ],
        &[],
    );
    let o = rec.wait(Duration::from_secs(60));
    assert!(o.status.success(), "record failed: {}", stderr(&o));
    let files = period_files(&dir);
    println!("{} files left: {files:?}", files.len());
    // 13 s of 2 s periods is 7 or 8 files; 6 s of retention keeps the last 3 or 4 (and the one
    // that ended within the last round).
    assert!(
        (2..=5).contains(&files.len()),
        "{} files left: {files:?}",
        files.len()
    );
    let recs: Vec<Recording> = files.iter().map(|f| Recording::read(f)).collect();
    // The oldest files were deleted: what is left spans at most the retention and two periods
    // (13 s of files would span about 12 s), whatever the recorder's start-up took on a loaded
    // machine; and it starts after the recording did.
    let newest = recs
        .last()
        .map_or(0, |r| r.header.started.millis_since(started));
    let oldest = recs[0].header.started.millis_since(started);
    assert!(
        newest - oldest <= 6_000 + 2 * 2_000,
        "the files left span {} ms (oldest at +{oldest} ms, newest at +{newest} ms)",
        newest - oldest
    );
    assert!(
        oldest >= 2_000,
        "the oldest file left starts at +{oldest} ms"
    );
    for (f, r) in files.iter().zip(&recs) {
        let what = f.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(r.truncated_tail, None, "{what}");
        assert_stands_alone(r, &nodes, &what);
        let ends = r.lines.iter().filter(|l| matches!(l, Line::End(_))).count();
        assert_eq!(ends, 1, "{what}: one end line");
        assert!(
            r.lines.iter().all(|l| !matches!(l, Line::PollFailed(_))),
            "{what}: a poll failed"
        );
    }
    // Each file left has its overview beside it (written when its period ended, the last one
    // when the recording did), and the retention deleted the overviews of the files it deleted.
    for f in &files {
        let mut name = f.as_os_str().to_owned();
        name.push(SUFFIX);
        let bytes = std::fs::read(&name)
            .unwrap_or_else(|e| panic!("no overview beside {}: {e}", f.display()));
        let overview = Overview::from_json(&bytes).unwrap();
        assert_eq!(
            overview.recording_bytes,
            std::fs::metadata(f).unwrap().len()
        );
        assert!(overview.lines > 3 && overview.tracks.nodes.len() == 3);
    }
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let n = p.to_string_lossy().into_owned();
        if let Some(rec) = n.strip_suffix(SUFFIX) {
            assert!(
                Path::new(rec).is_file(),
                "an overview without its recording: {n}"
            );
        }
    }
    for r in &recs[..recs.len() - 1] {
        assert_eq!(end_of(r), Some(EndReason::Rotated));
    }
    assert_eq!(end_of(recs.last().unwrap()), Some(EndReason::Duration));
    // No round is lost at a seam: the next file's first round follows the last one's by about one
    // interval, and files start on the 2 s boundaries.
    for w in recs.windows(2) {
        let last = poll_round_times(&w[0]).last().unwrap().1;
        let next = poll_round_times(&w[1])[0].1;
        let gap = next.millis_since(last);
        assert!(
            (250..=1_000).contains(&gap),
            "a gap of {gap} ms between files"
        );
        assert!(w[1].header.started.0 % 2_000 < 600, "{:?}", w[1].header);
    }
    let rounds_per_file: Vec<usize> = recs.iter().map(|r| poll_round_times(r).len()).collect();
    println!("rounds per file: {rounds_per_file:?}");
    for n in &rounds_per_file[..rounds_per_file.len() - 1] {
        assert!((3..=5).contains(n), "{rounds_per_file:?}");
    }

    // One period file alone is a recording `analyze` reads.
    let o = run_slotscope(&["analyze", files[1].to_str().unwrap()]);
    assert!(o.status.success(), "analyze of one file: {}", stderr(&o));

    // A cut from 1 s before the second file's start to 1 s after it crosses the seam.
    let seam = recs[1].header.started;
    let from = Timestamp(seam.0 - 1_000);
    let to = Timestamp(seam.0 + 1_000);
    let out = tmp.path().join("cut.jsonl");
    let o = run_slotscope(&[
        "cut",
        dir.to_str().unwrap(),
        "--from",
        &from.0.to_string(),
        "--to",
        &to.to_rfc3339(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "cut failed: {}", stderr(&o));
    println!("{}", stderr(&o));
    assert!(stderr(&o).contains("from 2 file(s)"), "{}", stderr(&o));
    assert!(!tmp.path().join("cut.jsonl.tmp").exists());
    let cut = Recording::read(&out);
    assert_eq!(cut.header.started, from);
    assert_eq!(cut.header.seed, cluster.seed());
    assert_stands_alone(&cut, &nodes, "the cut");
    let rounds = poll_round_times(&cut);
    println!("cut: {} rounds", rounds.len());
    assert!((3..=5).contains(&rounds.len()), "{rounds:?}");
    assert!(rounds.iter().all(|(_, t)| *t >= from && *t <= to));
    assert!(rounds.iter().any(|(_, t)| *t < seam) && rounds.iter().any(|(_, t)| *t >= seam));
    let ends: Vec<&Line> = cut
        .lines
        .iter()
        .filter(|l| matches!(l, Line::End(_)))
        .collect();
    assert_eq!(ends.len(), 1);
    assert_eq!(end_of(&cut), Some(EndReason::Cut));
    // The seam repeats nothing: each node discovered once, one INFO per node and round.
    let infos = cut
        .lines
        .iter()
        .filter(|l| matches!(l, Line::Info(_)))
        .count();
    assert_eq!(infos, rounds.len() * nodes.len());
    let o = run_slotscope(&["analyze", out.to_str().unwrap()]);
    assert!(o.status.success(), "analyze of the cut: {}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.trim().is_empty());

    // A cut with offsets through the end of the last file keeps its end reason.
    let all = tmp.path().join("all.jsonl.zst");
    let o = run_slotscope(&[
        "cut",
        dir.to_str().unwrap(),
        "--from",
        "+0",
        "--to",
        "+1h",
        "--out",
        all.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "cut failed: {}", stderr(&o));
    let whole = Recording::read(&all);
    assert_eq!(end_of(&whole), Some(EndReason::Duration));
    let total: usize = rounds_per_file.iter().sum();
    assert_eq!(poll_round_times(&whole).len(), total);
    let o = run_slotscope(&["analyze", all.to_str().unwrap()]);
    assert!(o.status.success(), "analyze of the whole: {}", stderr(&o));

    // Nothing covers a window before the files; an unreadable file is named.
    let o = run_slotscope(&[
        "cut",
        dir.to_str().unwrap(),
        "--from",
        "2001-01-01T00:00:00Z",
        "--to",
        "2001-01-01T01:00:00Z",
        "--out",
        tmp.path().join("none.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no recorded round"), "{}", stderr(&o));
    assert!(!tmp.path().join("none.jsonl").exists());
    assert!(!tmp.path().join("none.jsonl.tmp").exists());
    let bad = dir.join("slotscope-20010101T000000Z.jsonl.zst");
    std::fs::write(&bad, b"this is not a recording\n").unwrap();
    let o = run_slotscope(&[
        "cut",
        dir.to_str().unwrap(),
        "--from",
        "+0",
        "--to",
        "+1h",
        "--out",
        tmp.path().join("bad.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("slotscope-20010101T000000Z.jsonl.zst"),
        "{}",
        stderr(&o)
    );
}

/// SIGKILL mid-period: the file being written reads back up to its last round, no more than one
/// round is lost, and `cut` reads it (saying when a partial line was skipped).
#[test]
fn sigkill_mid_period_loses_at_most_the_round_being_written() {
    let cluster = Cluster::start(ServerKind::Redis, 3, ClusterOptions::default());
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("rec/");
    let seed = cluster.seed().to_string();
    let rec = Recorder::start(
        &dir,
        &[
            "--seed",
            &seed,
            "--interval",
            "250ms",
            "--rotate",
            "1h",
            "--quiet",
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(2_600));
    let killed_at = now();
    let status = Command::new("kill")
        .arg("-KILL")
        .arg(rec.pid().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let o = rec.wait(Duration::from_secs(10));
    assert!(!o.status.success());
    let files = period_files(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let r = Recording::read(&files[0]);
    println!("truncated tail: {:?}", r.truncated_tail);
    assert_eq!(end_of(&r), None, "a killed recorder wrote no end line");
    let rounds = poll_round_times(&r);
    let last = rounds.last().expect("rounds before the kill").1;
    let lost = killed_at.millis_since(last);
    println!(
        "{} rounds read back; the last began {lost} ms before the kill",
        rounds.len()
    );
    // At most the round being written (and the one whose samples were arriving) is lost.
    assert!(lost <= 2 * 250 + 150, "{lost} ms lost");
    assert!(rounds.len() >= 6, "{rounds:?}");
    let out = tmp.path().join("after-crash.jsonl");
    let o = run_slotscope(&[
        "cut",
        dir.to_str().unwrap(),
        "--from",
        "+0",
        "--to",
        "+1m",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    if r.truncated_tail.is_some() {
        assert!(stderr(&o).contains("cut short"), "{}", stderr(&o));
    }
    let cut = Recording::read(&out);
    assert_eq!(poll_round_times(&cut).len(), rounds.len());
    assert_eq!(end_of(&cut), Some(EndReason::Cut));
}

/// `--retain-size`: the files the recorder finished fit in the size once the oldest are deleted.
#[test]
fn retain_size_deletes_the_oldest_files_beyond_the_size() {
    let cluster = Cluster::start(ServerKind::Redis, 3, ClusterOptions::default());
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("rec/");
    let seed = cluster.seed().to_string();
    let started = now();
    // Files of 1 s of 3 nodes are about 4 KB: the limit keeps two or three of them.
    let limit: u64 = 12_000;
    let rec = Recorder::start(
        &dir,
        &[
            "--seed",
            &seed,
            "--interval",
            "250ms",
            "--rotate",
            "1s",
            "--retain-size",
            "12KB",
            "--duration",
            "7s",
            "--quiet",
        ],
        &[],
    );
    let o = rec.wait(Duration::from_secs(40));
    assert!(o.status.success(), "{}", stderr(&o));
    let files = period_files(&dir);
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .collect();
    println!("sizes left: {sizes:?}");
    assert!(files.len() >= 2, "{files:?}");
    // At the last rotation the older files and the new one (a header) fitted in the limit.
    let older: u64 = sizes[..sizes.len() - 1].iter().sum();
    assert!(older <= limit, "{older} bytes in the older files");
    // ... and one more file would not have: the oldest were deleted, not kept by luck.
    let first = Recording::read(&files[0]);
    assert!(
        first.header.started.millis_since(started) >= 1_000,
        "nothing was deleted"
    );
    let typical = sizes[..sizes.len() - 1].iter().max().copied().unwrap_or(0);
    assert!(limit - older < 2 * typical, "{sizes:?}");
    for f in &files {
        assert_eq!(Recording::read(f).truncated_tail, None);
    }
}

/// The `ACL SETUSER` line of deploy/acl.md, without `ACL SETUSER ` and with `password`.
fn deploy_acl(password: &str) -> String {
    let text = std::fs::read_to_string(workspace_root().join("deploy/acl.md")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("ACL SETUSER slotscope "))
        .expect("an ACL SETUSER line in deploy/acl.md");
    line.trim_start_matches("ACL SETUSER ")
        .replace(">CHANGE-ME-LONG-RANDOM", &format!(">{password}"))
}

fn acl_user_is_enough_and_nothing_more(kind: ServerKind) {
    const PW: &str = "Acl-Deploy-Pass-3141";
    let cluster = Cluster::start(
        kind,
        3,
        ClusterOptions {
            acl_users: vec![deploy_acl(PW)],
            ..ClusterOptions::default()
        },
    );
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("rec/");
    let seed = cluster.seed().to_string();
    let rec = Recorder::start(
        &dir,
        &[
            "--seed",
            &seed,
            "--interval",
            "500ms",
            "--rotate",
            "1s",
            "--duration",
            "2500ms",
            "--user",
            "slotscope",
            "--quiet",
        ],
        &[("SLOTSCOPE_PASSWORD", PW)],
    );
    let o = rec.wait(Duration::from_secs(30));
    assert!(o.status.success(), "{}", stderr(&o));
    let files = period_files(&dir);
    assert!(files.len() >= 2, "{files:?}");
    let mut infos = 0;
    let mut client_lists = 0;
    for f in &files {
        let r = Recording::read(f);
        assert_eq!(r.header.options.user.as_deref(), Some("slotscope"));
        let failed: Vec<&Line> = r
            .lines
            .iter()
            .filter(|l| matches!(l, Line::PollFailed(_)))
            .collect();
        assert!(failed.is_empty(), "{}: {failed:?}", f.display());
        infos += r
            .lines
            .iter()
            .filter(|l| matches!(l, Line::Info(_)))
            .count();
        client_lists += r
            .lines
            .iter()
            .filter(|l| matches!(l, Line::ClientList(_)))
            .count();
        let bytes = std::fs::read(f).unwrap();
        assert!(!bytes.windows(PW.len()).any(|w| w == PW.as_bytes()));
    }
    println!(
        "{}: {} files, {infos} INFO, {client_lists} CLIENT LIST",
        kind.name(),
        files.len()
    );
    assert!(infos >= 3 * 4 && client_lists >= 3 * 4);
    // The same user is refused everything outside the allowlist.
    let mut c = Client::connect(&cluster.addr(0)).unwrap();
    c.auth("slotscope", PW).unwrap();
    for cmd in [
        vec!["SET", "k", "v"],
        vec!["GET", "k"],
        vec!["CONFIG", "GET", "maxmemory"],
        vec!["CLIENT", "KILL", "ID", "1"],
        vec!["KEYS", "*"],
        vec!["CLUSTER", "FAILOVER"],
    ] {
        let reply = c.cmd(&cmd).unwrap();
        let err = reply
            .as_error()
            .unwrap_or_else(|| panic!("{cmd:?} allowed: {reply:?}"));
        assert!(err.starts_with("NOPERM"), "{cmd:?}: {err}");
    }
    assert!(c.cmd(&["INFO", "server"]).unwrap().as_error().is_none());
}

#[test]
fn the_acl_user_of_deploy_acl_md_is_enough_and_nothing_more_on_redis() {
    acl_user_is_enough_and_nothing_more(ServerKind::Redis);
}

#[test]
fn the_acl_user_of_deploy_acl_md_is_enough_and_nothing_more_on_valkey() {
    acl_user_is_enough_and_nothing_more(ServerKind::Valkey);
}

/// Rotation options need a directory, and periods shorter than a second or than the interval are
/// refused before anything is written.
#[test]
fn rotation_options_are_checked_before_recording() {
    let tmp = TempDir::new().unwrap();
    let file = tmp.path().join("one.jsonl");
    let o = run_slotscope(&[
        "record",
        "--seed",
        "127.0.0.1:1",
        "--out",
        file.to_str().unwrap(),
        "--retain",
        "7d",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("need --out to name a directory"),
        "{}",
        stderr(&o)
    );
    assert!(!file.exists());
    let dir = tmp.path().join("rec/");
    for (rotate, interval) in [("500ms", "100ms"), ("2s", "5s")] {
        let o = run_slotscope(&[
            "record",
            "--seed",
            "127.0.0.1:1",
            "--out",
            dir.to_str().unwrap(),
            "--rotate",
            rotate,
            "--interval",
            interval,
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("--rotate must be"), "{}", stderr(&o));
    }
    for bad in [["--retain-size", "lots"], ["--retain", "5w"]] {
        let o = run_slotscope(&[
            "record",
            "--seed",
            "127.0.0.1:1",
            "--out",
            dir.to_str().unwrap(),
            bad[0],
            bad[1],
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    }
    assert!(!dir.exists());
    // An unreachable seed leaves no empty period file behind.
    let o = run_slotscope(&[
        "record",
        "--seed",
        "127.0.0.1:1",
        "--out",
        dir.to_str().unwrap(),
        "--interval",
        "200ms",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(period_files(&dir).is_empty());
    // cut on a directory without recordings says so.
    let o = run_slotscope(&[
        "cut",
        dir.to_str().unwrap(),
        "--from",
        "+0",
        "--to",
        "+1m",
        "--out",
        tmp.path().join("x.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no recording files"), "{}", stderr(&o));
}
