//! `slotscope record` against real clusters (Redis 7.0.15 and Valkey 8.1.8 on 127.0.0.1), each
//! recording made by the real binary and read back through the core reader.

use std::collections::BTreeSet;
use std::path::Path;
use std::thread::sleep;
use std::time::Duration;

use slotscope_core::info::{ServerName, CLUSTER_INFO_SECTION};
use slotscope_core::recording::{
    Discovery, EndReason, FailureKind, GoneReason, InfoSample, Line, PollRound,
};
use slotscope_core::summary::{Summary, SummaryBuilder};
use slotscope_core::{NodeAddr, Slot, SlotRange, Timestamp};
use slotscope_tests::{
    run_slotscope, Cluster, ClusterOptions, Load, LoadOptions, Recorder, Recording, ServerKind,
};
use tempfile::TempDir;

fn summarise(rec: &Recording) -> Summary {
    let mut b = SummaryBuilder::new(rec.header.clone());
    for l in &rec.lines {
        b.push(l);
    }
    b.set_truncated_tail(rec.truncated_tail);
    b.finish()
}

fn infos<'a>(rec: &'a Recording, addr: &NodeAddr) -> Vec<&'a InfoSample> {
    rec.lines
        .iter()
        .filter_map(|l| match l {
            Line::Info(i) if &i.node.addr == addr => Some(i),
            _ => None,
        })
        .collect()
}

fn rounds(rec: &Recording) -> Vec<&PollRound> {
    rec.lines
        .iter()
        .filter_map(|l| match l {
            Line::PollRound(r) => Some(r),
            _ => None,
        })
        .collect()
}

fn end_reason(rec: &Recording) -> Option<EndReason> {
    match rec.lines.last() {
        Some(Line::End(e)) => Some(e.reason),
        _ => None,
    }
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn max_gap(times: &[Timestamp]) -> u64 {
    times
        .windows(2)
        .map(|w| w[1].millis_since(w[0]))
        .max()
        .unwrap_or(0)
}

/// A steady 3-master cluster with keys, a redirected command and a named client: every node, every
/// counter family and CLIENT LIST are in the recording, and `summary` agrees with it.
fn steady_cluster_is_recorded_whole(kind: ServerKind) {
    let cluster = Cluster::start(kind, 3, ClusterOptions::default());
    let mut router = cluster.router();
    for n in 0..300 {
        let key = format!("steady:{n}");
        router.cmd_key(key.as_bytes(), &["SET", &key, "v"]).unwrap();
    }
    // A command sent to a node that does not own the key: counted as MOVED in its errorstats.
    let wrong_node = (0..3)
        .find(|&i| cluster.owner_seen_by(0, Slot::for_key(b"foo")) != Some(i))
        .unwrap();
    let mut c = cluster.client(wrong_node);
    let reply = c.cmd(&["GET", "foo"]).unwrap();
    assert!(reply.as_error().unwrap().starts_with("MOVED"), "{reply:?}");
    // A long-lived client with a name (and, on Valkey, library name and version).
    let mut census = cluster.client(1);
    census
        .cmd_ok(&["CLIENT", "SETNAME", "census-probe"])
        .unwrap();
    if kind == ServerKind::Valkey {
        census
            .cmd_ok(&["CLIENT", "SETINFO", "LIB-NAME", "slotscope-test"])
            .unwrap();
        census
            .cmd_ok(&["CLIENT", "SETINFO", "LIB-VER", "1.2.3"])
            .unwrap();
    }

    let dir = TempDir::new().unwrap();
    let out = dir.path().join("steady.jsonl");
    let seed = cluster.seed().to_string();
    let rec = Recorder::start(
        &out,
        &["--seed", &seed, "--interval", "500ms", "--duration", "3s"],
        &[],
    );
    let o = rec.wait(Duration::from_secs(30));
    assert!(o.status.success(), "record failed: {}", stderr(&o));
    let r = Recording::read(&out);
    assert_eq!(r.truncated_tail, None);
    assert_eq!(end_reason(&r), Some(EndReason::Duration));
    assert_eq!(r.header.seed, cluster.seed());
    assert_eq!(r.header.options.interval_ms, 500);

    let discovered: BTreeSet<NodeAddr> = r
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::NodeDiscovered(d) => Some(d.node.addr.clone()),
            _ => None,
        })
        .collect();
    let expected: BTreeSet<NodeAddr> = (0..3).map(|i| cluster.addr(i)).collect();
    assert_eq!(discovered, expected);

    let mut keys = 0;
    for i in 0..3 {
        let addr = cluster.addr(i);
        let samples = infos(&r, &addr);
        assert!(samples.len() >= 5, "{addr}: {} INFO samples", samples.len());
        let last = samples.last().unwrap();
        assert_eq!(
            last.node.id.as_ref().map(|id| id.as_str()),
            Some(cluster.node_id(i))
        );
        let info = &last.info;
        let server = info.server();
        match kind {
            ServerKind::Redis => assert_eq!(server.name, ServerName::Redis),
            ServerKind::Valkey => {
                assert_eq!(server.name, ServerName::Valkey);
                assert!(server.version.starts_with("8."), "{server:?}");
            }
        }
        for section in ["server", "clients", "stats", "memory", CLUSTER_INFO_SECTION] {
            assert!(info.sections.contains_key(section), "{addr}: no {section}");
        }
        assert_eq!(info.get(CLUSTER_INFO_SECTION, "cluster_state"), Some("ok"));
        // Asked on the first poll, then not again in 3 s of a steady cluster (--topology-every
        // 10 by default): fewer calls than polls.
        let shards = &info.commandstats["cluster|shards"];
        assert!(
            shards.calls >= 1 && shards.calls < samples.len() as u64,
            "{shards:?} in {} polls",
            samples.len()
        );
        assert!(
            info.commandstats.contains_key("set"),
            "{addr}: no SET stats"
        );
        keys += info.keyspace.get(&0).map_or(0, |k| k.keys);
        if i == wrong_node {
            assert!(info.errorstats.get("MOVED").copied().unwrap_or(0) >= 1);
            assert!(info.commandstats["get"].rejected_calls.unwrap_or(0) >= 1);
        }
        // The node's own view: three shards covering every slot, itself as myself.
        let view = r
            .lines
            .iter()
            .find_map(|l| match l {
                Line::Topology(t) if t.node.addr == addr => Some(&t.view),
                _ => None,
            })
            .expect("a topology sample");
        assert_eq!(view.shards.len(), 3);
        assert_eq!(view.assigned_slots(), 16384);
        assert_eq!(
            view.myself.as_ref().map(|m| m.as_str()),
            Some(cluster.node_id(i))
        );
    }
    assert_eq!(keys, 300, "keyspace counts add up to the keys written");

    let census_entry = r
        .lines
        .iter()
        .rev()
        .find_map(|l| match l {
            Line::ClientList(c) if c.node.addr == cluster.addr(1) => c
                .clients
                .iter()
                .find(|e| e.name() == Some("census-probe"))
                .cloned(),
            _ => None,
        })
        .expect("the named client in CLIENT LIST");
    assert!(census_entry.age_secs().is_some());
    assert!(census_entry.addr().is_some());
    match kind {
        ServerKind::Valkey => {
            assert_eq!(census_entry.lib_name(), Some("slotscope-test"));
            assert_eq!(census_entry.lib_ver(), Some("1.2.3"));
            assert!(census_entry.tot_cmds().is_some());
        }
        ServerKind::Redis => {
            assert_eq!(census_entry.lib_name(), None);
            assert!(census_entry.tot_cmds().is_none());
        }
    }
    let polls = rounds(&r);
    assert!(polls.len() >= 5);
    assert!(
        polls.iter().all(|p| p.ok == 3 && p.failed == 0),
        "{polls:?}"
    );

    // `slotscope summary` tells the same story as the lines.
    let o = run_slotscope(&["summary", "--format", "json", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["nodes"].as_array().unwrap().len(), 3);
    assert_eq!(s["rounds"].as_u64().unwrap(), polls.len() as u64);
    let info_count = r
        .lines
        .iter()
        .filter(|l| matches!(l, Line::Info(_)))
        .count();
    assert_eq!(s["info_samples"].as_u64().unwrap(), info_count as u64);
    assert!(s["failures"].as_array().unwrap().is_empty());
    assert!(s["slot_moves"].as_array().unwrap().is_empty());
}

#[test]
fn steady_three_master_redis_cluster_is_recorded_whole() {
    steady_cluster_is_recorded_whole(ServerKind::Redis);
}

#[test]
fn steady_three_master_valkey_cluster_is_recorded_whole() {
    steady_cluster_is_recorded_whole(ServerKind::Valkey);
}

/// Incident 1's shape: one master owns every slot, a second master joins mid-recording and slots
/// 8192–16383 move to it with the per-slot protocol while a load writes keys.
fn scale_out_is_followed(kind: ServerKind) {
    let mut cluster = Cluster::start(kind, 1, ClusterOptions::default());
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("scale-out.jsonl.zst");
    let seed = cluster.seed().to_string();
    let rec = Recorder::start(&out, &["--seed", &seed, "--interval", "500ms"], &[]);
    sleep(Duration::from_millis(1200));
    let load = Load::start(
        &cluster,
        LoadOptions {
            prefix: "scale:".into(),
            max_ops: 200_000,
            max_duration: Duration::from_secs(20),
            interval: Duration::from_millis(1),
            ..LoadOptions::default()
        },
    );
    let new = cluster.add_master();
    sleep(Duration::from_millis(1000));
    let moved = SlotRange::new(Slot::new(8192).unwrap(), Slot::new(16383).unwrap()).unwrap();
    cluster.migrate_slots_paced(moved, 0, new, 1024, Duration::from_millis(300));
    cluster.wait_converged();
    sleep(Duration::from_millis(1500));
    let report = load.stop();
    assert!(report.ok > 0, "{report:?}");
    rec.terminate();
    let o = rec.wait(Duration::from_secs(20));
    assert!(o.status.success(), "record failed: {}", stderr(&o));

    let r = Recording::read(&out);
    assert_eq!(end_reason(&r), Some(EndReason::Signal));
    let new_addr = cluster.addr(new);
    let appeared = r
        .lines
        .iter()
        .find_map(|l| match l {
            Line::NodeDiscovered(d) if d.node.addr == new_addr => Some(d),
            _ => None,
        })
        .expect("the new master is discovered");
    assert!(matches!(appeared.via, Discovery::Topology { .. }));
    assert!(appeared.t > r.header.started);
    assert!(
        infos(&r, &new_addr).len() >= 4,
        "the new node is polled once discovered"
    );

    let s = summarise(&r);
    let old_id = cluster.node_id(0);
    let new_id = cluster.node_id(new);
    let m = s
        .slot_moves
        .iter()
        .find(|m| m.from.as_ref().map(|i| i.as_str()) == Some(old_id))
        .unwrap_or_else(|| panic!("no slot move from the old master: {:?}", s.slot_moves));
    assert_eq!(m.to.as_ref().map(|i| i.as_str()), Some(new_id));
    assert_eq!(m.slots, 8192);
    assert_eq!(m.ranges, vec![moved]);
    assert!(
        m.span.start >= appeared.t,
        "slots move after the node appears"
    );
    assert!(
        m.span.millis() >= 1000,
        "the paced migration takes time: {m:?}"
    );
    let mig = s
        .migrations
        .iter()
        .find(|g| g.from.as_str() == old_id && g.to.as_str() == new_id)
        .unwrap_or_else(|| panic!("no MIGRATING/IMPORTING state seen: {:?}", s.migrations));
    assert!(mig.ranges.iter().all(|r| moved.contains(r.start())));
    assert!(mig.span.start >= m.span.start.min(mig.span.start));

    let o = run_slotscope(&["summary", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("nodes (2)"), "{text}");
    assert!(
        text.contains(&format!("8192 slots {} -> {}", &old_id[..8], &new_id[..8])),
        "{text}"
    );
    assert!(text.contains("[8192-16383]"), "{text}");
}

#[test]
fn redis_scale_out_like_incident_1_is_recorded() {
    scale_out_is_followed(ServerKind::Redis);
}

#[test]
fn valkey_scale_out_like_incident_1_is_recorded() {
    scale_out_is_followed(ServerKind::Valkey);
}

/// A node stopped with SIGSTOP for a few seconds, then another node killed: the others keep their
/// cadence, failures are events, the run goes on.
#[test]
fn a_paused_then_a_killed_node_never_delay_the_others() {
    let mut cluster = Cluster::start(ServerKind::Redis, 3, ClusterOptions::default());
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("faults.jsonl");
    let seed = cluster.seed().to_string();
    let rec = Recorder::start(&out, &["--seed", &seed, "--interval", "1s"], &[]);
    sleep(Duration::from_millis(2000));
    cluster.pause(2);
    sleep(Duration::from_millis(3500));
    cluster.resume(2);
    sleep(Duration::from_millis(1500));
    cluster.kill(1);
    sleep(Duration::from_millis(4500));
    rec.terminate();
    let o = rec.wait(Duration::from_secs(20));
    assert!(o.status.success(), "record failed: {}", stderr(&o));

    let r = Recording::read(&out);
    assert_eq!(end_reason(&r), Some(EndReason::Signal));
    let healthy: Vec<Timestamp> = infos(&r, &cluster.addr(0)).iter().map(|i| i.t).collect();
    assert!(healthy.len() >= 10, "{} samples", healthy.len());
    assert!(
        max_gap(&healthy) <= 1500,
        "node 0 kept its 1 s cadence: largest gap {} ms",
        max_gap(&healthy)
    );
    let round_times: Vec<Timestamp> = rounds(&r).iter().map(|p| p.t).collect();
    assert!(max_gap(&round_times) <= 1600, "rounds kept their cadence");

    let failures = |i: usize, kind: FailureKind| {
        r.lines
            .iter()
            .filter(|l| matches!(l, Line::PollFailed(f) if f.node.addr == cluster.addr(i) && f.kind == kind))
            .count()
    };
    assert!(
        failures(2, FailureKind::Timeout) >= 2,
        "paused node timed out"
    );
    assert!(
        failures(1, FailureKind::Connect) >= 2,
        "killed node refused"
    );
    assert_eq!(failures(0, FailureKind::Timeout), 0);
    let gone: Vec<(NodeAddr, GoneReason)> = r
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::NodeGone(g) => Some((g.node.addr.clone(), g.reason)),
            _ => None,
        })
        .collect();
    assert!(
        gone.contains(&(cluster.addr(1), GoneReason::Unreachable)),
        "{gone:?}"
    );
    if gone.iter().any(|(a, _)| *a == cluster.addr(2)) {
        assert!(
            r.lines.iter().any(|l| matches!(l, Line::NodeDiscovered(d)
                if d.node.addr == cluster.addr(2) && d.via == Discovery::Recovered)),
            "the paused node is recorded as answering again"
        );
    }
    // The paused node answers again after SIGCONT.
    let paused = infos(&r, &cluster.addr(2));
    let last = paused.last().expect("samples of node 2").t;
    assert!(last.millis_since(r.header.started) >= 6000);
    let o = run_slotscope(&["summary", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("unreachable"), "{text}");
    assert!(text.contains("timeout"), "{text}");
}

/// SIGTERM mid-run ends the recording cleanly: exit status 0, a complete file with an end line,
/// compressed and plain.
#[test]
fn sigterm_mid_run_leaves_a_complete_file() {
    let cluster = Cluster::start(ServerKind::Valkey, 3, ClusterOptions::default());
    let dir = TempDir::new().unwrap();
    let seed = cluster.seed().to_string();
    for name in ["term.jsonl.zst", "term.jsonl"] {
        let out = dir.path().join(name);
        let rec = Recorder::start(&out, &["--seed", &seed, "--interval", "300ms"], &[]);
        sleep(Duration::from_millis(2200));
        rec.terminate();
        let o = rec.wait(Duration::from_secs(10));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stderr(&o).contains("ended by signal"), "{}", stderr(&o));
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(
            bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]),
            name.ends_with(".zst")
        );
        let r = Recording::read(&out);
        assert_eq!(r.truncated_tail, None);
        assert_eq!(end_reason(&r), Some(EndReason::Signal));
        assert!(rounds(&r).len() >= 4);
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

fn assert_secret_absent(secret: &str, path: &Path, o: &std::process::Output) {
    let file = std::fs::read(path).unwrap_or_default();
    assert!(!contains(&file, secret), "the password is in the recording");
    assert!(!contains(&o.stdout, secret), "the password is on stdout");
    assert!(!contains(&o.stderr, secret), "the password is on stderr");
}

/// A password-protected cluster: an ACL user allowed just the collector's allowlist is enough, and
/// the password appears nowhere; a wrong password fails clearly without showing it.
fn password_protected_cluster(kind: ServerKind) {
    const PW: &str = "Default-Pass-7781";
    const ACL_PW: &str = "Acl-Pass-5523";
    let acl = format!(
        "slotscope on >{ACL_PW} resetkeys -@all +cluster|shards +cluster|slots +cluster|nodes \
         +cluster|info +info +client|list +ping +auth +hello"
    );
    let cluster = Cluster::start(
        kind,
        3,
        ClusterOptions {
            acl_users: vec![acl],
            ..ClusterOptions::with_password(PW)
        },
    );
    let dir = TempDir::new().unwrap();
    let seed = cluster.seed().to_string();

    // The restricted ACL user, password from the environment.
    let out = dir.path().join("acl.jsonl");
    let rec = Recorder::start(
        &out,
        &[
            "--seed",
            &seed,
            "--interval",
            "500ms",
            "--duration",
            "2s",
            "--user",
            "slotscope",
        ],
        &[("SLOTSCOPE_PASSWORD", ACL_PW)],
    );
    let o = rec.wait(Duration::from_secs(20));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_secret_absent(ACL_PW, &out, &o);
    let r = Recording::read(&out);
    assert_eq!(r.header.options.user.as_deref(), Some("slotscope"));
    assert!(r.header.options.auth);
    let failed: Vec<&Line> = r
        .lines
        .iter()
        .filter(|l| matches!(l, Line::PollFailed(_)))
        .collect();
    assert!(
        failed.is_empty(),
        "an allowlist-only ACL user is enough: {failed:?}"
    );
    for i in 0..3 {
        assert!(infos(&r, &cluster.addr(i)).len() >= 3);
        assert!(r.lines.iter().any(
            |l| matches!(l, Line::ClientList(c) if c.node.addr == cluster.addr(i) && !c.clients.is_empty())
        ));
    }

    // The default user, password from a file.
    let pw_file = dir.path().join("pw");
    std::fs::write(&pw_file, format!("{PW}\n")).unwrap();
    let out = dir.path().join("default.jsonl.zst");
    let rec = Recorder::start(
        &out,
        &[
            "--seed",
            &seed,
            "--interval",
            "500ms",
            "--duration",
            "1500ms",
            "--password-file",
            pw_file.to_str().unwrap(),
        ],
        &[],
    );
    let o = rec.wait(Duration::from_secs(20));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_secret_absent(PW, &out, &o);
    let plain = Recording::read(&out);
    assert!(infos(&plain, &cluster.addr(0)).len() >= 2);
    let text = plain
        .lines
        .iter()
        .map(Line::to_json)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !text.contains(PW),
        "the password is in the decompressed recording"
    );

    // A wrong password: a clear error that does not show it, and no file.
    let out = dir.path().join("wrong.jsonl");
    let rec = Recorder::start(
        &out,
        &["--seed", &seed, "--duration", "1s"],
        &[("SLOTSCOPE_PASSWORD", "Wrong-Pass-0001")],
    );
    let o = rec.wait(Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("login refused"), "{}", stderr(&o));
    assert_secret_absent("Wrong-Pass-0001", &out, &o);
    assert!(!out.exists());
}

#[test]
fn redis_password_never_reaches_the_recording_and_acl_allowlist_suffices() {
    password_protected_cluster(ServerKind::Redis);
}

#[test]
fn valkey_password_never_reaches_the_recording_and_acl_allowlist_suffices() {
    password_protected_cluster(ServerKind::Valkey);
}

/// A node removed from the cluster (`CLUSTER FORGET` on every other node, as a scale-in does) is
/// recorded as having left the topology, and polling it stops.
#[test]
fn a_forgotten_node_is_recorded_as_left() {
    let mut cluster = Cluster::start(ServerKind::Valkey, 3, ClusterOptions::default());
    let spare = cluster.add_master();
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("scale-in.jsonl");
    let seed = cluster.seed().to_string();
    let rec = Recorder::start(&out, &["--seed", &seed, "--interval", "500ms"], &[]);
    sleep(Duration::from_millis(1500));
    let spare_id = cluster.node_id(spare).to_owned();
    for i in 0..3 {
        cluster
            .client(i)
            .cmd_ok(&["CLUSTER", "FORGET", &spare_id])
            .unwrap();
    }
    sleep(Duration::from_millis(2000));
    rec.terminate();
    let o = rec.wait(Duration::from_secs(20));
    assert!(o.status.success(), "{}", stderr(&o));
    let r = Recording::read(&out);
    let spare_addr = cluster.addr(spare);
    let gone = r
        .lines
        .iter()
        .find_map(|l| match l {
            Line::NodeGone(g) if g.node.addr == spare_addr => Some(g.clone()),
            _ => None,
        })
        .expect("the forgotten node is recorded as gone");
    assert_eq!(gone.reason, GoneReason::LeftTopology);
    assert_eq!(
        gone.node.id.as_ref().map(|i| i.as_str()),
        Some(spare_id.as_str())
    );
    let after = infos(&r, &spare_addr)
        .iter()
        .filter(|i| i.t > gone.t)
        .count();
    assert_eq!(after, 0, "no samples of a node after it left");
    let last_round = rounds(&r).last().unwrap().nodes;
    assert_eq!(
        last_round, 3,
        "the last rounds poll the three remaining nodes"
    );
}
