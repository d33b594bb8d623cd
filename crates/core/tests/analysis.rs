//! Analysis of synthetic recordings: every finding on the shape that should produce it, and none
//! where it should not (empty recordings, a single node, counter resets, a cut-short file).

use slotscope_core::analysis::{Analysis, Analyzer};
use slotscope_core::finding::{Attribution, FindingKind, Severity};
use slotscope_core::reader::RecordingReader;
use slotscope_core::recording::Line;
use slotscope_core::topology::TopologyView;
use slotscope_core::Timestamp;

mod common;

use common::{addr, clients, header, info, round, topology, view, Counters, A, B, T0};

fn analyse(lines: &[Line]) -> Analysis {
    let mut a = Analyzer::new(header());
    for l in lines {
        a.push(l);
    }
    a.finish()
}

fn kinds(a: &Analysis) -> Vec<FindingKind> {
    a.findings.iter().map(|f| f.kind).collect()
}

#[test]
fn an_empty_recording_has_no_findings() {
    let a = analyse(&[]);
    assert!(a.findings.is_empty());
    assert!(a.shard_traffic.is_empty());
    assert!(a.census.groups.is_empty());
}

#[test]
fn a_steady_single_node_cluster_has_no_findings() {
    let mut lines = vec![topology(T0, 7000, A, {
        let text = format!("{A} 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n");
        TopologyView::from_nodes(&text).unwrap()
    })];
    for k in 0..30u64 {
        let t = T0 + k * 1000;
        lines.push(info(
            t,
            7000,
            A,
            &Counters {
                uptime: 100 + k,
                commands: vec![("zadd", 100 * k, 0), ("info", k, 0)],
                conns_received: 50,
                connected: 20,
                keys: 1000 + k,
                ..Counters::default()
            },
        ));
        lines.push(round(t, k));
    }
    let a = analyse(&lines);
    assert!(a.findings.is_empty(), "{:#?}", a.findings);
    assert_eq!(a.shard_traffic.len(), 1);
    let t = &a.shard_traffic[0];
    assert_eq!(t.slots, 16384);
    assert!((t.before.calls - 100.0).abs() < 1e-9, "{}", t.before.calls);
}

/// Incident 1's shape: after slots 8192–16383 move to B, clients keep sending everything to A,
/// which rejects the half it no longer owns with MOVED; B receives nothing.
fn incident_1_lines() -> Vec<Line> {
    let mut lines = vec![
        topology(T0, 7000, A, view(A, "0-16383", "")),
        topology(T0, 7001, B, view(B, "0-16383", "")),
    ];
    let mut a = Counters {
        uptime: 1000,
        connected: 10,
        keys: 4_000_000,
        ..Counters::default()
    };
    let mut b = Counters {
        uptime: 10,
        connected: 1,
        ..Counters::default()
    };
    let (mut zadd_ok, mut zadd_rej) = (0u64, 0u64);
    for k in 0..60u64 {
        let t = T0 + k * 1000;
        if k == 20 {
            lines.push(topology(t, 7000, A, view(A, "0-8191", "8192-16383")));
            lines.push(topology(t, 7001, B, view(B, "0-8191", "8192-16383")));
        }
        if k > 0 {
            if k <= 20 {
                zadd_ok += 280;
            } else {
                zadd_ok += 140;
                zadd_rej += 140;
                a.moved += 140;
            }
        }
        a.uptime += 1;
        b.uptime += 1;
        a.commands = vec![("zadd", zadd_ok, zadd_rej), ("info", k, 0)];
        b.commands = vec![("info", k, 0)];
        b.keys = if k >= 20 { 2_000_000 } else { 0 };
        lines.push(info(t, 7000, A, &a));
        lines.push(info(t, 7001, B, &b));
        lines.push(round(t, k));
    }
    lines
}

#[test]
fn a_new_shard_that_gets_no_commands_follows_the_storm_that_starves_it() {
    let a = analyse(&incident_1_lines());
    // The clients keep sending to A, which redirects them: the storm is the root cause and leads;
    // the idle shard is its effect.
    assert_eq!(
        a.findings[0].kind,
        FindingKind::RedirectStorm,
        "{:#?}",
        kinds(&a)
    );
    let cause = a.story.root_cause().expect("a root cause");
    assert_eq!(cause.finding, Some(0));
    let first = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::IdleShard)
        .expect("the idle shard");
    assert_eq!(first.severity, Severity::Critical);
    assert_eq!(first.node, Some(addr(7001)));
    assert_eq!(first.numbers["slots"], 8192.0);
    assert_eq!(first.numbers["commands_per_sec"], 0.0);
    assert!((first.numbers["moved_per_sec_elsewhere"] - 140.0).abs() < 1.0);
    let b = a
        .shard_traffic
        .iter()
        .find(|t| t.addr == addr(7001))
        .unwrap();
    assert_eq!(b.slots, 8192);
    let a_node = a
        .shard_traffic
        .iter()
        .find(|t| t.addr == addr(7000))
        .unwrap();
    assert!((a_node.before.calls - 280.0).abs() < 1.0, "{a_node:?}");
    assert!((a_node.after.rejected - 140.0).abs() < 1.0, "{a_node:?}");
    // Half of all commands bounce for the rest of the recording: that is a storm too.
    assert!(kinds(&a).contains(&FindingKind::RedirectStorm));
}

#[test]
fn a_storm_is_attributed_to_the_only_group_using_its_commands() {
    let mut lines = vec![
        topology(T0, 7000, A, view(A, "0-8191", "8192-16383")),
        topology(T0, 7001, B, view(B, "0-8191", "8192-16383")),
    ];
    let mut c = Counters {
        uptime: 50,
        connected: 280,
        keys: 100,
        ..Counters::default()
    };
    for k in 0..40u64 {
        let t = T0 + k * 1000;
        c.uptime += 1;
        // zrevrange: 200/s attempted, 85 of them MOVED (42.5 %); hgetall: 300/s, 0 MOVED.
        c.commands = vec![
            ("zrevrange", 115 * k, 85 * k),
            ("hgetall", 300 * k, 0),
            ("cluster|slots", 30 * k, 0),
        ];
        c.moved = 85 * k;
        c.conns_received = 440 * k;
        lines.push(info(t, 7000, A, &c));
        lines.push(clients(
            t,
            7000,
            A,
            &format!(
                "id={} addr=10.2.0.1:{} fd=9 name= age=0 idle=0 flags=N cmd=zrevrange lib-name=redis-py lib-ver=8.1.0\n\
                 id=7 addr=10.3.0.1:5000 fd=10 name= age={} idle=0 flags=N cmd=hgetall lib-name=redis-py lib-ver=8.0.0\n",
                100 + k,
                6000 + k,
                3600 + k
            ),
        ));
        lines.push(round(t, k));
    }
    let a = analyse(&lines);
    let storm = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::RedirectStorm)
        .unwrap_or_else(|| panic!("{:#?}", kinds(&a)));
    assert_eq!(a.findings[0].kind, FindingKind::RedirectStorm);
    assert!((storm.numbers["moved_share:zrevrange"] - 0.425).abs() < 0.001);
    assert!(!storm.numbers.contains_key("moved_share:hgetall"));
    match storm.attribution.as_ref().unwrap() {
        Attribution::Group { group, commands } => {
            assert_eq!(group, "redis-py 8.1.0");
            assert_eq!(commands, &vec!["zrevrange".to_owned()]);
        }
        other => panic!("{other:?}"),
    }
    let churn = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::ConnectionChurn)
        .expect("churn: 440 new/s against 280 open");
    assert!((churn.numbers["new_connections_per_sec"] - 440.0).abs() < 1.0);
    // 30 CLUSTER SLOTS/s counted by the server, less the collector's own one per poll.
    assert!((churn.numbers["refresh_per_sec:cluster|slots"] - 29.0).abs() < 0.01);
    match churn.attribution.as_ref().unwrap() {
        Attribution::Group { group, .. } => assert_eq!(group, "redis-py 8.1.0"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn redirects_that_fade_after_a_reshard_are_not_a_storm() {
    let mut lines = vec![
        topology(T0, 7000, A, view(A, "0-16383", "")),
        topology(T0, 7001, B, view(B, "0-16383", "")),
    ];
    let mut a = Counters {
        uptime: 10,
        connected: 10,
        ..Counters::default()
    };
    let mut b = a.clone();
    let (mut a_ok, mut rej, mut b_ok) = (0u64, 0u64, 0u64);
    for k in 0..40u64 {
        let t = T0 + k * 1000;
        if k == 10 {
            lines.push(topology(t, 7000, A, view(A, "0-8191", "8192-16383")));
            lines.push(topology(t, 7001, B, view(B, "0-8191", "8192-16383")));
        }
        if k > 0 && k <= 10 {
            a_ok += 200;
        } else if k > 10 {
            // 50 MOVED in the first second after the move, then 25, 12, 6, 3, then none.
            let r = if k <= 15 { 100 >> (k - 10) } else { 0 };
            rej += r;
            a_ok += 100;
            b_ok += 100;
        }
        a.uptime += 1;
        b.uptime += 1;
        a.commands = vec![("set", a_ok, rej)];
        a.moved = rej;
        b.commands = vec![("set", b_ok, 0)];
        lines.push(info(t, 7000, A, &a));
        lines.push(info(t, 7001, B, &b));
        lines.push(round(t, k));
    }
    let an = analyse(&lines);
    assert!(
        !kinds(&an).contains(&FindingKind::RedirectStorm),
        "{:#?}",
        an.findings
    );
    assert!(!kinds(&an).contains(&FindingKind::IdleShard));
    let decayed = an
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::RedirectsDecayed)
        .expect("a decaying burst is reported as such");
    assert_eq!(decayed.severity, Severity::Info);
}

#[test]
fn counter_resets_give_no_negative_rates_and_no_findings() {
    let mut lines = vec![topology(T0, 7000, A, {
        let text = format!("{A} 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n");
        TopologyView::from_nodes(&text).unwrap()
    })];
    for k in 0..30u64 {
        let t = T0 + k * 1000;
        // A restart at k = 15: uptime and every counter start again from zero.
        let (uptime, base) = if k < 15 {
            (1000 + k, k)
        } else {
            (k - 15, k - 15)
        };
        lines.push(info(
            t,
            7000,
            A,
            &Counters {
                uptime,
                commands: vec![("get", 50 * base, 0)],
                conns_received: base,
                connected: 5,
                ..Counters::default()
            },
        ));
    }
    let a = analyse(&lines);
    let n = &a.metrics.nodes[0];
    assert!(n.intervals.iter().all(|i| i.command("get").calls <= 50));
    assert!(n.intervals.iter().any(|i| i.restarted));
    assert!(a.findings.is_empty(), "{:#?}", a.findings);
}

#[test]
fn unowned_slots_are_a_coverage_finding() {
    let text = format!("{A} 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16000\n");
    let v = TopologyView::from_nodes(&text).unwrap();
    let a = analyse(&[topology(T0, 7000, A, v)]);
    let f = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::SlotCoverage)
        .expect("coverage finding");
    assert_eq!(f.numbers["unowned_slots"], 383.0);
    assert_eq!(f.severity, Severity::Critical);
}

#[test]
fn a_known_defective_client_version_is_named() {
    let a = analyse(&[clients(
        T0,
        7000,
        A,
        "id=9 addr=10.9.0.1:4000 fd=9 name= age=9 idle=0 flags=N cmd=zadd lib-name=redis-py lib-ver=5.0.0\n",
    )]);
    let f = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::KnownClientDefect)
        .expect("redis-py 5.0.0 is flagged");
    assert!(f.explanation.contains("#3221"));
}

#[test]
fn a_recording_cut_mid_line_is_analysed_up_to_the_cut() {
    let mut text = Line::Header(header()).to_json();
    text.push('\n');
    let lines = incident_1_lines();
    for l in &lines {
        text.push_str(&l.to_json());
        text.push('\n');
    }
    // Cut inside the last line (a poll round).
    let cut = text.len() - 10;
    let mut reader = RecordingReader::new(&text.as_bytes()[..cut]);
    let mut an = Analyzer::new(reader.header().unwrap().clone());
    let mut n = 0;
    for item in reader.by_ref() {
        an.push(&item.unwrap().1);
        n += 1;
    }
    an.set_truncated_tail(reader.truncated_tail());
    assert_eq!(n, lines.len() - 1);
    let a = an.finish();
    assert!(a.summary.truncated_tail.is_some());
    assert_eq!(a.findings[0].kind, FindingKind::RedirectStorm);
    let cut = a.story.cut_short.as_ref().expect("the cut is flagged");
    assert!(cut.partial_line.is_some());
    assert!(
        a.story.limits.iter().any(|l| l.contains("cut short")),
        "{:?}",
        a.story.limits
    );
}

#[test]
fn the_first_client_error_is_placed_after_the_migration_start() {
    use slotscope_core::recording::Annotation;
    use std::collections::BTreeMap;
    let note = |t: u64, source: &str, text: &str, kind: &str| {
        Line::Annotation(Annotation {
            t: Timestamp(t),
            source: source.into(),
            text: text.into(),
            end: None,
            fields: BTreeMap::from([
                ("kind".to_owned(), kind.to_owned()),
                ("class".to_owned(), "RedisClusterException".to_owned()),
            ]),
        })
    };
    let a = analyse(&[
        note(
            T0 + 5_000,
            "cloud_event_log",
            "Migrating slots from node groups 0001 to 0002 to rebalance slots",
            "migration_start",
        ),
        note(
            T0 + 17_000,
            "app_log",
            "3 × RedisClusterException: Redis Cluster cannot be connected.",
            "app_error",
        ),
        note(
            T0 + 18_000,
            "app_log",
            "5 × RedisClusterException: …",
            "app_error",
        ),
    ]);
    assert_eq!(
        a.evidence,
        vec![
            "first client error (RedisClusterException) 12.0s after \"Migrating slots from node groups 0001 to 0002 to rebalance slots\" (cloud_event_log)"
                .to_owned()
        ]
    );
}

/// A recording that starts before the slots are assigned: at poll 5 A takes 0–8191 and B
/// 8192–16383 (the cluster's creation), then both serve 100 `set`/s to the end. The creation is
/// not a topology change: no before and after are measured from it, nothing is idle or lost, and
/// the story tells the creation.
#[test]
fn the_creation_of_the_cluster_is_not_a_change() {
    use slotscope_core::analysis::StepKind;
    let mut lines = vec![
        topology(T0, 7000, A, view(A, "", "")),
        topology(T0, 7001, B, view(B, "", "")),
    ];
    let mut a = Counters {
        uptime: 100,
        connected: 2,
        ..Counters::default()
    };
    let mut b = a.clone();
    let mut calls = 0;
    for k in 0..30u64 {
        let t = T0 + k * 1000;
        if k == 5 {
            lines.push(topology(t, 7000, A, view(A, "0-8191", "8192-16383")));
            lines.push(topology(t, 7001, B, view(B, "0-8191", "8192-16383")));
        }
        if k > 6 {
            calls += 100;
        }
        a.uptime += 1;
        b.uptime += 1;
        a.commands = vec![("set", calls, 0)];
        b.commands = vec![("set", calls, 0)];
        lines.push(info(t, 7000, A, &a));
        lines.push(info(t, 7001, B, &b));
        lines.push(round(t, k));
    }
    let an = analyse(&lines);
    assert_eq!(
        an.summary.slot_moves.len(),
        2,
        "{:?}",
        an.summary.slot_moves
    );
    assert!(an.summary.slot_moves.iter().all(|m| m.creation));
    assert_eq!(an.summary.changes().count(), 0);
    assert!(an.findings.is_empty(), "{:#?}", kinds(&an));
    // Traffic is all "before" (there is no change), at the rate of the whole recording.
    for t in &an.shard_traffic {
        assert_eq!(t.after.secs, 0.0, "{t:?}");
        assert!(t.before.calls > 50.0, "{t:?}");
    }
    let kinds: Vec<StepKind> = an.story.steps.iter().map(|s| s.kind).collect();
    assert_eq!(kinds[0], StepKind::Creation, "{kinds:?}");
    assert!(an.story.steps[0]
        .text
        .contains("16384 slots assigned to 2 nodes"));
    assert!(an.story.root_cause().is_none());
}
