//! Tests of the signals' derivation and of their OpenMetrics text.

use super::openmetrics::render;
use super::*;
use crate::info::InfoReport;
use crate::node::NodeRef;
use crate::recording::InfoSample;
use crate::time::Timestamp;

/// A small deterministic generator (64-bit LCG), seeded and printed by each test that draws.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// A random seed (no clock: it also runs on wasm32), or `SLOTSCOPE_SEED` to repeat a run; printed.
fn seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let s = std::env::var("SLOTSCOPE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
        });
    println!("seed {s} (SLOTSCOPE_SEED={s} repeats it)");
    s
}

fn addr(port: u16) -> NodeAddr {
    format!("127.0.0.1:{port}").parse().unwrap()
}

/// An `INFO` line of the node at `port`: uptime, connections received, connected clients and
/// `(command, calls, rejected)` counters.
fn info(t: u64, port: u16, uptime: u64, conns: u64, open: u64, cmds: &[(&str, u64, u64)]) -> Line {
    let mut text = format!(
        "# Server\r\nuptime_in_seconds:{uptime}\r\n# Clients\r\nconnected_clients:{open}\r\n\
         # Stats\r\ntotal_connections_received:{conns}\r\n# Commandstats\r\n"
    );
    for (c, calls, rejected) in cmds {
        text.push_str(&format!(
            "cmdstat_{c}:calls={calls},usec=1,usec_per_call=0.00,rejected_calls={rejected},failed_calls=0\r\n"
        ));
    }
    Line::Info(InfoSample {
        t: Timestamp(t),
        node: NodeRef {
            addr: addr(port),
            id: None,
        },
        latency_us: 100,
        info: InfoReport::parse(&text).unwrap(),
    })
}

fn json(text: &str) -> Line {
    serde_json::from_str(text).unwrap()
}

/// A topology line of the node at `port` (id `n<port>`): primary of a shard with `slots` when
/// given, else a replica.
fn topology(port: u16, slots: Option<(u16, u16)>) -> Line {
    let me = format!("{port:0>40}");
    let other = format!("{:0>40}", port + 1000);
    let shard = match slots {
        Some((a, b)) => format!(
            r#"{{"slots":[[{a},{b}]],"nodes":[{{"id":"{me}","addr":"127.0.0.1:{port}","role":"primary","health":"online","flags":["myself","master"]}}]}}"#
        ),
        None => format!(
            r#"{{"slots":[[0,16383]],"nodes":[{{"id":"{other}","role":"primary","health":"online","flags":["master"]}},{{"id":"{me}","addr":"127.0.0.1:{port}","role":"replica","health":"online","flags":["myself","slave"]}}]}}"#
        ),
    };
    json(&format!(
        r#"{{"type":"topology","t":1,"node":{{"addr":"127.0.0.1:{port}"}},"view":{{"source":"shards","myself":"{me}","shards":[{shard}]}}}}"#
    ))
}

fn samples<'a>(fams: &'a [Family], name: &str) -> &'a [Sample] {
    &fams.iter().find(|f| f.name == name).unwrap().samples
}

fn value(fams: &[Family], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples(fams, name)
        .iter()
        .find(|s| {
            s.labels.len() == labels.len()
                && s.labels
                    .iter()
                    .zip(labels)
                    .all(|(a, b)| a.0 == b.0 && a.1 == b.1)
        })
        .map(|s| s.value)
}

#[test]
fn moved_share_rates_and_refreshes_come_from_the_last_interval() {
    let mut d = Draw(seed());
    for _ in 0..50 {
        let mut s = Signals::new();
        let (c0, r0) = (d.below(1_000_000), d.below(1_000_000));
        let (dc, dr) = (d.below(10_000), 1 + d.below(10_000));
        let (k0, dk) = (d.below(1_000), d.below(500));
        let (slots0, dslots) = (10 + d.below(100), 1 + d.below(100));
        let ms = 500 + d.below(2_000);
        let open = d.below(5_000);
        s.push(&info(
            1_000,
            7000,
            10,
            k0,
            3,
            &[("get", c0, r0), ("cluster|slots", slots0, 0)],
        ));
        s.push(&info(
            1_000 + ms,
            7000,
            11,
            k0 + dk,
            open,
            &[
                ("get", c0 + dc, r0 + dr),
                ("cluster|slots", slots0 + dslots, 0),
            ],
        ));
        let f = s.families();
        let n = addr(7000).to_string();
        let share = value(&f, "slotscope_moved_share", &[("node", &n), ("cmd", "get")]).unwrap();
        assert!((share - dr as f64 / (dc + dr) as f64).abs() < 1e-12);
        // Topology commands are not business commands.
        assert_eq!(samples(&f, "slotscope_moved_share").len(), 1);
        let secs = ms as f64 / 1000.0;
        let conns = value(&f, "slotscope_new_connections_per_second", &[("node", &n)]).unwrap();
        assert!((conns - dk as f64 / secs).abs() < 1e-9);
        assert_eq!(
            value(&f, "slotscope_connected_clients", &[("node", &n)]),
            Some(open as f64)
        );
        // The collector's own CLUSTER SLOTS (one per poll) is taken out.
        let refresh = value(
            &f,
            "slotscope_topology_refreshes_per_second",
            &[("node", &n)],
        )
        .unwrap();
        assert!((refresh - (dslots - 1) as f64 / secs).abs() < 1e-9);
    }
}

/// Feeds `rounds` INFO samples, 1 s apart, of nodes 7000 (serving nothing) and 7001 (serving
/// `get`).
fn feed_rounds(s: &mut Signals, rounds: u64) {
    for k in 0..rounds {
        let t = 1_000 + k * 1_000;
        s.push(&info(t, 7000, 10 + k, 0, 1, &[("get", 5, 0)]));
        s.push(&info(t, 7001, 10 + k, 0, 1, &[("get", 5 + 100 * k, 0)]));
    }
}

#[test]
fn a_slot_owner_that_serves_nothing_while_others_do_is_idle() {
    let n = addr(7000).to_string();
    let busy = addr(7001).to_string();
    // Too few intervals: not yet.
    let mut s = Signals::new();
    s.push(&topology(7000, Some((0, 8000))));
    s.push(&topology(7001, Some((8001, 16383))));
    feed_rounds(&mut s, IDLE_INTERVALS as u64);
    let f = s.families();
    assert_eq!(
        value(&f, "slotscope_idle_shard", &[("node", &n)]),
        Some(0.0)
    );
    // One more interval (the repeated samples are not after the last and are ignored): idle,
    // the busy one not.
    feed_rounds(&mut s, IDLE_INTERVALS as u64 + 1);
    let f = s.families();
    assert_eq!(
        value(&f, "slotscope_idle_shard", &[("node", &n)]),
        Some(1.0)
    );
    assert_eq!(
        value(&f, "slotscope_idle_shard", &[("node", &busy)]),
        Some(0.0)
    );
    // A replica owns no slots: never idle.
    let mut s = Signals::new();
    s.push(&topology(7000, None));
    feed_rounds(&mut s, IDLE_INTERVALS as u64 + 1);
    let f = s.families();
    assert_eq!(
        value(&f, "slotscope_idle_shard", &[("node", &n)]),
        Some(0.0)
    );
    // A node that left is no longer reported.
    let mut s = Signals::new();
    s.push(&topology(7000, Some((0, 8000))));
    feed_rounds(&mut s, IDLE_INTERVALS as u64 + 1);
    s.push(&json(
        r#"{"type":"node_gone","t":9999,"node":{"addr":"127.0.0.1:7000"},"reason":"left_topology"}"#,
    ));
    assert_eq!(
        value(&s.families(), "slotscope_idle_shard", &[("node", &n)]),
        None
    );
}

fn client_list(port: u16, libs: &[(&str, &str, &str)]) -> Line {
    let clients: Vec<String> = libs
        .iter()
        .enumerate()
        .map(|(k, (lib, ver, name))| {
            format!(
                r#"{{"addr":"127.0.0.1:{}","id":"{k}","cmd":"get","name":"{name}","lib-name":"{lib}","lib-ver":"{ver}"}}"#,
                40000 + k
            )
        })
        .collect();
    json(&format!(
        r#"{{"type":"client_list","t":5,"node":{{"addr":"127.0.0.1:{port}"}},"clients":[{}]}}"#,
        clients.join(",")
    ))
}

#[test]
fn groups_with_a_known_defect_count_once_across_nodes() {
    let mut s = Signals::new();
    s.push(&client_list(
        7000,
        &[
            ("redis-py", "5.0.0", "api"),
            ("redis-py", "5.0.0", "api"),
            ("redis-py", "8.0.0", "api"),
        ],
    ));
    s.push(&client_list(
        7001,
        &[
            ("redis-py", "5.0.0", "api"),
            ("redis-py", "5.0.0", "worker"),
            ("jedis", "5.0.0", ""),
        ],
    ));
    let f = s.families();
    assert_eq!(
        samples(&f, "slotscope_client_groups_with_known_defect").len(),
        1
    );
    assert_eq!(
        value(
            &f,
            "slotscope_client_groups_with_known_defect",
            &[("library", "redis-py"), ("version", "5.0.0")]
        ),
        Some(2.0)
    );
    // The latest list of a node replaces its previous one.
    s.push(&client_list(7000, &[("redis-py", "8.0.0", "api")]));
    s.push(&client_list(7001, &[("redis-py", "8.0.0", "api")]));
    assert!(samples(&s.families(), "slotscope_client_groups_with_known_defect").is_empty());
}

#[test]
fn client_lists_written_as_changes_count_as_whole_ones() {
    let mut s = Signals::new();
    let whole = client_list(
        7000,
        &[("redis-py", "8.0.0", "api"), ("redis-py", "8.0.0", "api")],
    );
    let Line::ClientList(first) = &whole else {
        panic!("a client list")
    };
    let mut base = crate::client_delta::ClientListWriter::default();
    let first_line = base.line_for(first.t, first.node.clone(), first.clients.clone());
    s.push(&first_line);
    assert!(samples(&s.families(), "slotscope_client_groups_with_known_defect").is_empty());
    // A redis-py 5.0.0 connection joins: a change to the list, not a whole one.
    let Line::ClientList(next) = client_list(
        7000,
        &[
            ("redis-py", "8.0.0", "api"),
            ("redis-py", "8.0.0", "api"),
            ("redis-py", "5.0.0", "api"),
        ],
    ) else {
        panic!("a client list")
    };
    let delta = base.line_for(Timestamp(first.t.0 + 1000), next.node, next.clients);
    assert!(matches!(delta, Line::ClientListDelta(_)), "{delta:?}");
    s.push(&delta);
    assert_eq!(
        value(
            &s.families(),
            "slotscope_client_groups_with_known_defect",
            &[("library", "redis-py"), ("version", "5.0.0")]
        ),
        Some(1.0)
    );
}

#[test]
fn poll_health_counts_rounds_failures_and_overruns() {
    let mut s = Signals::new();
    s.push(&json(
        r#"{"type":"header","schema":1,"collector":"t","seed":"127.0.0.1:7000","started":1,"options":{"interval_ms":1000,"timeout_ms":800,"tls":false,"auth":false,"client_list_every":1}}"#,
    ));
    let round = |elapsed: u64, ok: u32, failed: u32| {
        json(&format!(
            r#"{{"type":"poll_round","t":2,"elapsed_ms":{elapsed},"round":0,"nodes":2,"ok":{ok},"failed":{failed}}}"#
        ))
    };
    let fail = || {
        json(
            r#"{"type":"poll_failed","t":2,"node":{"addr":"127.0.0.1:7000"},"step":"info","kind":"timeout","error":"x"}"#,
        )
    };
    s.push(&round(12, 2, 0));
    s.push(&fail());
    s.push(&fail());
    s.push(&round(30, 1, 1));
    s.push(&round(1000, 2, 0));
    s.push(&round(950, 1, 0));
    let f = s.families();
    assert_eq!(value(&f, "slotscope_poll_rounds", &[]), Some(4.0));
    assert_eq!(
        value(&f, "slotscope_poll_failures", &[("node", "127.0.0.1:7000")]),
        Some(1.0)
    );
    assert_eq!(value(&f, "slotscope_round_seconds", &[]), Some(0.95));
    assert_eq!(value(&f, "slotscope_round_overruns", &[]), Some(2.0));
}

/// A parsed sample: its full name, labels and value.
type Parsed = (String, Vec<(String, String)>, f64);

/// Parses OpenMetrics text back: checks that `# TYPE` comes before a family's samples, that
/// sample names belong to the family just typed, and that `# EOF` ends it.
fn parse(text: &str) -> Vec<Parsed> {
    let mut out = Vec::new();
    let mut family: Option<(String, String)> = None;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.last(), Some(&"# EOF"));
    assert!(text.ends_with("# EOF\n"));
    for line in &lines[..lines.len() - 1] {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            family = Some((name.to_owned(), kind.to_owned()));
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            assert!(rest.starts_with(&family.as_ref().unwrap().0));
            continue;
        }
        let (fam, kind) = family.as_ref().expect("a sample before any # TYPE");
        let (head, val) = line.rsplit_once(' ').unwrap();
        let (name, labels) = match head.split_once('{') {
            Some((n, l)) => (n, parse_labels(l.strip_suffix('}').unwrap())),
            None => (head, Vec::new()),
        };
        let expected = if kind == "counter" {
            format!("{fam}_total")
        } else {
            fam.clone()
        };
        assert_eq!(name, expected);
        out.push((name.to_owned(), labels, val.parse::<f64>().unwrap()));
    }
    out
}

fn parse_labels(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while chars.peek().is_some() {
        let name: String = chars.by_ref().take_while(|&c| c != '=').collect();
        assert_eq!(chars.next(), Some('"'));
        let mut value = String::new();
        loop {
            match chars.next().unwrap() {
                '\\' => match chars.next().unwrap() {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                '"' => break,
                c => value.push(c),
            }
        }
        out.push((name, value));
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
    out
}

#[test]
fn the_text_parses_back_to_the_families() {
    let mut d = Draw(seed());
    let mut s = Signals::new();
    for k in 0..3 {
        for port in [7000u16, 7001, 7002] {
            let (c, r) = (d.below(1_000) * (k + 1), d.below(1_000) * (k + 1));
            s.push(&info(
                1_000 + k * 1_000,
                port,
                k,
                k,
                2,
                &[("get", c, r), ("set", c, 0)],
            ));
        }
    }
    s.push(&client_list(7000, &[("redis-py", "5.0.0", "api")]));
    let mut fams = s.families();
    fams.push(Family {
        name: "slotscope_test",
        help: "a \\ help\nline",
        kind: Kind::Gauge,
        samples: vec![Sample {
            labels: vec![("cmd", "a\"b\\c\nd".into()), ("node", "x".into())],
            value: 0.25,
        }],
    });
    let text = render(&fams);
    let parsed = parse(&text);
    let expected: Vec<Parsed> = fams
        .iter()
        .flat_map(|f| {
            f.samples.iter().map(move |s| {
                let suffix = if f.kind == Kind::Counter {
                    "_total"
                } else {
                    ""
                };
                (
                    format!("{}{suffix}", f.name),
                    s.labels
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), v.clone()))
                        .collect(),
                    s.value,
                )
            })
        })
        .collect();
    assert_eq!(parsed, expected);
    assert!(parsed.iter().any(|p| p.0 == "slotscope_moved_share"));
    assert!(text.contains("# HELP slotscope_test a \\\\ help\\nline\n"));
}
