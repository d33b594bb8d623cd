//! Round trips of the recording schema: every [`Line`] variant, built from random but realistic
//! content, survives `to_json` → `serde_json::from_str` unchanged and is written as exactly one
//! line; a header followed by random events, written as JSON Lines, reads back through
//! [`RecordingReader`] line for line with the right line numbers.

use std::collections::BTreeMap;
use std::io::Cursor;

use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use slotscope_core::client_list::ClientEntry;
use slotscope_core::info::{CommandStat, InfoReport, KeyspaceStat};
use slotscope_core::reader::RecordingReader;
use slotscope_core::recording::{
    Annotation, ClientListDelta, ClientListSample, ConnEvent, Discovery, End, EndReason,
    FailureKind, GoneReason, Header, InfoSample, Line, NodeDiscovered, NodeGone, PollFailed,
    PollRound, RecordOptions, ReplyClass, TapCommand, TapConn, TopologySample, SCHEMA_VERSION,
};
use slotscope_core::redirect::Redirect;
use slotscope_core::topology::{
    NodeHealth, NodeRole, Shard, SlotMigration, TopoNode, TopologySource, TopologyView,
};
use slotscope_core::{NodeAddr, NodeId, NodeRef, Slot, SlotRange, Timestamp, SLOT_COUNT};

// ---------------------------------------------------------------------------------------------
// Leaf values
// ---------------------------------------------------------------------------------------------

/// Wall-clock times around now, plus the extremes.
fn timestamp() -> BoxedStrategy<Timestamp> {
    prop_oneof![
        8 => (1_600_000_000_000u64..1_900_000_000_000).prop_map(Timestamp),
        1 => Just(Timestamp(0)),
        1 => Just(Timestamp(u64::MAX)),
    ]
    .boxed()
}

/// Free text: mostly realistic, sometimes anything (quotes, backslashes, newlines, control
/// characters, non-ASCII), which the JSON encoding must escape to keep one line per event.
fn text() -> BoxedStrategy<String> {
    prop_oneof![
        4 => "[a-zA-Z0-9_ .:/-]{0,40}",
        1 => Just(String::new()),
        1 => Just("line one\nline two\r\n\ttabbed \"quoted\" \\ back\u{0}nul".to_owned()),
        1 => Just("MOVED 3443 10.0.0.2:7000 — résumé ✓ 🚀".to_owned()),
        3 => any::<String>(),
    ]
    .boxed()
}

/// A field or section name as servers print them.
fn ident() -> BoxedStrategy<String> {
    "[a-z][a-z0-9_|]{0,23}".boxed()
}

/// A 40-hex-digit cluster node id (occasionally something shorter, which the schema allows).
fn node_id() -> BoxedStrategy<NodeId> {
    prop_oneof![
        9 => "[0-9a-f]{40}",
        1 => "[0-9a-zA-Z]{1,12}",
    ]
    .prop_map(|s| NodeId::new(s).expect("non-empty"))
    .boxed()
}

/// Host names, IPv4 and IPv6 addresses (ports 1-65535: the schema rejects port 0).
fn node_addr() -> BoxedStrategy<NodeAddr> {
    let host = prop_oneof![
        (any::<u8>(), any::<u8>(), any::<u8>(), 1u8..255)
            .prop_map(|(a, b, c, d)| format!("{}.{b}.{c}.{d}", a.max(1))),
        Just("::1".to_owned()),
        "fd00:[0-9a-f]{1,4}::[0-9a-f]{1,4}",
        "[a-z][a-z0-9-]{0,15}(\\.[a-z][a-z0-9-]{0,10}){0,3}",
        Just("clustercfg.prod-cache.abc123.use1.cache.amazonaws.com".to_owned()),
    ];
    let port = prop_oneof![
        3 => 7000u16..7010,
        1 => Just(6379u16),
        1 => 1u16..=u16::MAX,
    ];
    (host, port)
        .prop_map(|(h, p)| NodeAddr::new(h, p).expect("host is not empty"))
        .boxed()
}

fn node_ref() -> BoxedStrategy<NodeRef> {
    (node_addr(), option::of(node_id()))
        .prop_map(|(addr, id)| NodeRef { addr, id })
        .boxed()
}

fn slot() -> BoxedStrategy<Slot> {
    (0..SLOT_COUNT)
        .prop_map(|n| Slot::new(n).expect("in range"))
        .boxed()
}

/// Sorted, disjoint slot ranges (what a shard holds after normalisation), possibly none.
fn slot_ranges() -> BoxedStrategy<Vec<SlotRange>> {
    vec(0..SLOT_COUNT, 0..12)
        .prop_map(|mut cuts| {
            cuts.sort_unstable();
            cuts.dedup();
            cuts.chunks(2)
                .map(|pair| {
                    let start = Slot::new(pair[0]).expect("in range");
                    let end =
                        Slot::new(*pair.last().expect("chunk is not empty")).expect("in range");
                    SlotRange::new(start, end).expect("sorted")
                })
                .collect()
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Topology
// ---------------------------------------------------------------------------------------------

fn topo_node(role: NodeRole) -> BoxedStrategy<TopoNode> {
    let flags = vec(
        prop_oneof![
            Just("myself"),
            Just(if role == NodeRole::Primary {
                "master"
            } else {
                "slave"
            }),
            Just("fail?"),
            Just("fail"),
            Just("handshake"),
            Just("noaddr"),
            Just("nofailover"),
            Just("noflags"),
        ]
        .prop_map(str::to_owned),
        0..4,
    );
    let health = prop_oneof![
        Just(NodeHealth::Online),
        Just(NodeHealth::Failed),
        Just(NodeHealth::Loading),
        Just(NodeHealth::Unknown),
    ];
    (
        node_id(),
        option::of(node_addr()),
        option::of("[a-z][a-z0-9-]{0,20}"),
        option::of(any::<u16>()),
        health,
        flags,
        option::of(node_id()),
        option::of(any::<u64>()),
        option::of(any::<bool>()),
    )
        .prop_map(
            move |(
                id,
                addr,
                hostname,
                tls_port,
                health,
                flags,
                primary_id,
                config_epoch,
                link_connected,
            )| TopoNode {
                id,
                addr,
                hostname,
                tls_port,
                role,
                health,
                flags,
                primary_id,
                config_epoch,
                link_connected,
            },
        )
        .boxed()
}

fn shard() -> BoxedStrategy<Shard> {
    (
        slot_ranges(),
        option::weighted(0.9, topo_node(NodeRole::Primary)),
        vec(topo_node(NodeRole::Replica), 0..3),
    )
        .prop_map(|(slots, primary, replicas)| Shard {
            slots,
            nodes: primary.into_iter().chain(replicas).collect(),
        })
        .boxed()
}

fn migration() -> BoxedStrategy<SlotMigration> {
    (slot(), node_id())
        .prop_map(|(slot, peer)| SlotMigration { slot, peer })
        .boxed()
}

fn topology_view() -> BoxedStrategy<TopologyView> {
    let source = prop_oneof![
        Just(TopologySource::Shards),
        Just(TopologySource::Slots),
        Just(TopologySource::Nodes),
    ];
    (
        source,
        option::of(node_id()),
        vec(shard(), 0..5),
        vec(migration(), 0..3),
        vec(migration(), 0..3),
    )
        .prop_map(
            |(source, myself, shards, migrating, importing)| TopologyView {
                source,
                myself,
                shards,
                migrating,
                importing,
            },
        )
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// INFO and CLIENT LIST
// ---------------------------------------------------------------------------------------------

fn info_value() -> BoxedStrategy<String> {
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        "[0-9]{1,4}\\.[0-9]{2}[KMG%]?",
        Just(String::new()),
        Just("POSIX clock_gettime".to_owned()),
        Just("Linux 6.18.44-fc-v657 x86_64".to_owned()),
        Just("ip=10.0.0.2,port=7000,state=online,offset=1234,lag=0".to_owned()),
        text(),
    ]
    .boxed()
}

fn command_stat() -> BoxedStrategy<CommandStat> {
    (
        any::<u64>(),
        any::<u64>(),
        option::of(any::<u64>()),
        option::of(any::<u64>()),
    )
        .prop_map(|(calls, usec, rejected_calls, failed_calls)| CommandStat {
            calls,
            usec,
            rejected_calls,
            failed_calls,
        })
        .boxed()
}

fn info_report() -> BoxedStrategy<InfoReport> {
    let section_name = prop_oneof![
        Just(String::new()),
        Just("server".to_owned()),
        Just("clients".to_owned()),
        Just("memory".to_owned()),
        Just("stats".to_owned()),
        Just("replication".to_owned()),
        Just("cluster_info".to_owned()),
        ident(),
    ];
    // Sections may be empty maps: a `# Section` header with no fields.
    let sections = btree_map(section_name, btree_map(ident(), info_value(), 0..8), 0..6);
    let command = prop_oneof![
        Just("get".to_owned()),
        Just("set".to_owned()),
        Just("cluster|shards".to_owned()),
        Just("client|list".to_owned()),
        ident(),
    ];
    let error = prop_oneof![
        Just("MOVED".to_owned()),
        Just("ASK".to_owned()),
        Just("CLUSTERDOWN".to_owned()),
        Just("ERR".to_owned()),
        "[A-Z]{2,12}",
    ];
    let keyspace =
        (any::<u64>(), any::<u64>(), any::<u64>()).prop_map(|(keys, expires, avg_ttl)| {
            KeyspaceStat {
                keys,
                expires,
                avg_ttl,
            }
        });
    (
        sections,
        btree_map(command, command_stat(), 0..6),
        btree_map(error, any::<u64>(), 0..4),
        btree_map(prop_oneof![0u32..16, any::<u32>()], keyspace, 0..4),
    )
        .prop_map(
            |(sections, commandstats, errorstats, keyspace)| InfoReport {
                sections: sections
                    .into_iter()
                    .map(|(name, fields)| (name, fields.into_iter().collect()))
                    .collect(),
                commandstats,
                errorstats,
                keyspace,
                own_topology_calls: None,
                own_client_list_calls: None,
            },
        )
        .boxed()
}

fn client_entry() -> BoxedStrategy<ClientEntry> {
    let field = prop_oneof![
        Just("id"),
        Just("addr"),
        Just("laddr"),
        Just("fd"),
        Just("name"),
        Just("age"),
        Just("idle"),
        Just("flags"),
        Just("db"),
        Just("sub"),
        Just("psub"),
        Just("multi"),
        Just("qbuf"),
        Just("omem"),
        Just("tot-mem"),
        Just("events"),
        Just("cmd"),
        Just("user"),
        Just("lib-name"),
        Just("lib-ver"),
        Just("resp"),
    ]
    .prop_map(str::to_owned);
    let value = prop_oneof![
        any::<u32>().prop_map(|n| n.to_string()),
        Just(String::new()),
        Just("10.0.0.9:51234".to_owned()),
        Just("N".to_owned()),
        Just("client|list".to_owned()),
        Just("redis-py".to_owned()),
        text(),
    ];
    btree_map(prop_oneof![9 => field, 1 => ident()], value, 0..16)
        .prop_map(|fields| ClientEntry {
            fields: fields.into_iter().collect(),
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Lines
// ---------------------------------------------------------------------------------------------

fn record_options() -> BoxedStrategy<RecordOptions> {
    (
        1u64..120_000,
        1u64..60_000,
        option::of(any::<u64>()),
        any::<bool>(),
        option::of(prop_oneof![Just("default".to_owned()), text()]),
        any::<bool>(),
        prop_oneof![Just(1u32), any::<u32>()],
    )
        .prop_map(
            |(interval_ms, timeout_ms, duration_ms, tls, user, auth, client_list_every)| {
                RecordOptions {
                    interval_ms,
                    timeout_ms,
                    duration_ms,
                    tls,
                    user,
                    auth,
                    client_list_every,
                    topology_every: None,
                }
            },
        )
        .boxed()
}

/// A header; `schema` is any number here (the serde round trip does not care), see
/// [`readable_header`] for one the reader accepts.
fn header_with(schema: impl Strategy<Value = u32> + 'static) -> BoxedStrategy<Header> {
    (
        schema,
        prop_oneof![Just("slotscope 0.1.0".to_owned()), text()],
        node_addr(),
        timestamp(),
        record_options(),
    )
        .prop_map(|(schema, collector, seed, started, options)| Header {
            schema,
            collector,
            seed,
            started,
            options,
            source: None,
        })
        .boxed()
}

fn readable_header() -> BoxedStrategy<Header> {
    header_with(Just(SCHEMA_VERSION)).boxed()
}

fn node_discovered() -> BoxedStrategy<Line> {
    let via = prop_oneof![
        Just(Discovery::Seed),
        node_addr().prop_map(|from| Discovery::Topology { from }),
        Just(Discovery::Recovered),
    ];
    (timestamp(), node_ref(), via)
        .prop_map(|(t, node, via)| Line::NodeDiscovered(NodeDiscovered { t, node, via }))
        .boxed()
}

fn node_gone() -> BoxedStrategy<Line> {
    let reason = prop_oneof![
        Just(GoneReason::LeftTopology),
        Just(GoneReason::Unreachable)
    ];
    (timestamp(), node_ref(), reason)
        .prop_map(|(t, node, reason)| Line::NodeGone(NodeGone { t, node, reason }))
        .boxed()
}

fn topology() -> BoxedStrategy<Line> {
    (timestamp(), node_ref(), topology_view())
        .prop_map(|(t, node, view)| Line::Topology(TopologySample { t, node, view }))
        .boxed()
}

fn info() -> BoxedStrategy<Line> {
    (timestamp(), node_ref(), any::<u64>(), info_report())
        .prop_map(|(t, node, latency_us, info)| {
            Line::Info(InfoSample {
                t,
                node,
                latency_us,
                info,
            })
        })
        .boxed()
}

fn client_list() -> BoxedStrategy<Line> {
    (timestamp(), node_ref(), vec(client_entry(), 0..6))
        .prop_map(|(t, node, clients)| Line::ClientList(ClientListSample { t, node, clients }))
        .boxed()
}

/// A client list written as changes (the reader gives it whole, so it is not among [`event`]'s
/// lines, whose reading back is compared line for line).
fn client_list_delta() -> BoxedStrategy<Line> {
    (
        timestamp(),
        timestamp(),
        node_ref(),
        vec(client_entry(), 0..4),
        vec(any::<u64>(), 0..4),
    )
        .prop_map(|(t, since, node, changed, gone)| {
            Line::ClientListDelta(ClientListDelta {
                t,
                node,
                since,
                changed,
                gone,
            })
        })
        .boxed()
}

fn poll_failed() -> BoxedStrategy<Line> {
    let kind = prop_oneof![
        Just(FailureKind::Timeout),
        Just(FailureKind::Connect),
        Just(FailureKind::Auth),
        Just(FailureKind::Io),
        Just(FailureKind::ServerError),
        Just(FailureKind::Protocol),
    ];
    let step = prop_oneof![
        Just("connect".to_owned()),
        Just("auth".to_owned()),
        Just("CLUSTER SHARDS".to_owned()),
        Just("INFO".to_owned()),
        text(),
    ];
    (timestamp(), node_ref(), step, kind, text())
        .prop_map(|(t, node, step, kind, error)| {
            Line::PollFailed(PollFailed {
                t,
                node,
                step,
                kind,
                error,
            })
        })
        .boxed()
}

fn poll_round() -> BoxedStrategy<Line> {
    let elapsed_ms = prop_oneof![0u64..2000, any::<u64>()];
    (
        timestamp(),
        elapsed_ms,
        any::<u64>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
    )
        .prop_map(|(t, elapsed_ms, round, nodes, ok, failed)| {
            Line::PollRound(PollRound {
                t,
                elapsed_ms,
                round,
                nodes,
                ok,
                failed,
            })
        })
        .boxed()
}

fn annotation() -> BoxedStrategy<Line> {
    let source = prop_oneof![
        Just("operator".to_owned()),
        Just("cloud_event_log".to_owned()),
        Just("app_log".to_owned()),
        text(),
    ];
    let fields = btree_map(
        prop_oneof![
            Just("error_class".to_owned()),
            Just("per_s".to_owned()),
            text()
        ],
        text(),
        0..5,
    );
    (timestamp(), source, text(), option::of(timestamp()), fields)
        .prop_map(|(t, source, text, end, fields)| {
            Line::Annotation(Annotation {
                t,
                source,
                text,
                end,
                fields,
            })
        })
        .boxed()
}

fn end() -> BoxedStrategy<Line> {
    let reason = prop_oneof![
        Just(EndReason::Duration),
        Just(EndReason::Signal),
        Just(EndReason::Error),
        Just(EndReason::Rotated),
        Just(EndReason::Cut),
    ];
    (timestamp(), reason, any::<u64>())
        .prop_map(|(t, reason, rounds)| Line::End(End { t, reason, rounds }))
        .boxed()
}

fn tap_conn() -> BoxedStrategy<Line> {
    let event = prop_oneof![
        Just(ConnEvent::Opened),
        Just(ConnEvent::Closed),
        Just(ConnEvent::Refused),
    ];
    (
        timestamp(),
        any::<u64>(),
        event,
        text(),
        node_addr(),
        node_addr(),
        option::of(text()),
    )
        .prop_map(|(t, conn, event, client, node, listener, error)| {
            Line::TapConn(TapConn {
                t,
                conn,
                event,
                client,
                node,
                listener,
                error,
            })
        })
        .boxed()
}

fn reply_class() -> BoxedStrategy<ReplyClass> {
    prop_oneof![
        4 => Just(ReplyClass::Ok),
        2 => (slot(), node_addr())
            .prop_map(|(slot, to)| ReplyClass::Redirect(Redirect::Moved { slot, to })),
        1 => (slot(), node_addr())
            .prop_map(|(slot, to)| ReplyClass::Redirect(Redirect::Ask { slot, to })),
        1 => Just(ReplyClass::TryAgain),
        1 => Just(ReplyClass::ClusterDown),
        1 => text().prop_map(|code| ReplyClass::Error { code }),
        1 => Just(ReplyClass::Closed),
    ]
    .boxed()
}

fn tap_command() -> BoxedStrategy<Line> {
    (
        timestamp(),
        any::<u64>(),
        prop_oneof![ident(), text()],
        option::of(slot()),
        option::of(text()),
        node_addr(),
        reply_class(),
        any::<u64>(),
    )
        .prop_map(|(t, conn, cmd, slot, key, node, reply, latency_us)| {
            Line::TapCommand(TapCommand {
                t,
                conn,
                cmd,
                slot,
                key,
                node,
                reply,
                latency_us,
            })
        })
        .boxed()
}

/// Every line that may follow the header.
fn event() -> BoxedStrategy<Line> {
    prop_oneof![
        node_discovered(),
        node_gone(),
        topology(),
        info(),
        client_list(),
        poll_failed(),
        poll_round(),
        annotation(),
        tap_conn(),
        tap_command(),
        end(),
    ]
    .boxed()
}

/// Every line, the header included.
fn any_line() -> BoxedStrategy<Line> {
    prop_oneof![
        1 => header_with(any::<u32>()).prop_map(Line::Header),
        1 => client_list_delta(),
        9 => event(),
    ]
    .boxed()
}

/// The `"type"` tag a line must carry. Exhaustive on purpose: a new variant fails to compile here
/// until the strategies above generate it.
fn tag(line: &Line) -> &'static str {
    match line {
        Line::Header(_) => "header",
        Line::NodeDiscovered(_) => "node_discovered",
        Line::NodeGone(_) => "node_gone",
        Line::Topology(_) => "topology",
        Line::Info(_) => "info",
        Line::ClientList(_) => "client_list",
        Line::ClientListDelta(_) => "client_list_delta",
        Line::PollFailed(_) => "poll_failed",
        Line::PollRound(_) => "poll_round",
        Line::Annotation(_) => "annotation",
        Line::TapConn(_) => "tap_conn",
        Line::TapCommand(_) => "tap_command",
        Line::End(_) => "end",
    }
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_line_survives_to_json_and_back_unchanged(line in any_line()) {
        let json = line.to_json();
        let back: Line = serde_json::from_str(&json)
            .map_err(|e| TestCaseError::fail(format!("{e} in {json}")))?;
        prop_assert_eq!(back, line);
    }

    #[test]
    fn to_json_is_one_line_tagged_with_its_type(line in any_line()) {
        let json = line.to_json();
        prop_assert!(!json.contains('\n'), "newline in {}", json);
        prop_assert!(!json.contains('\r'), "carriage return in {}", json);
        let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        prop_assert_eq!(value["type"].as_str(), Some(tag(&line)));
        // The compact form the collector writes is the form read back.
        prop_assert_eq!(serde_json::to_string(&line).expect("serialisable"), json);
    }

    #[test]
    fn reader_yields_written_lines_with_their_line_numbers(
        header in readable_header(),
        events in vec(event(), 0..24),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut file = Line::Header(header.clone()).to_json();
        for e in &events {
            file.push_str(eol);
            file.push_str(&e.to_json());
        }
        if final_newline {
            file.push_str(eol);
        }

        let mut reader = RecordingReader::new(file.as_bytes());
        prop_assert_eq!(reader.header().expect("header"), &header);
        let got: Vec<(u64, Line)> = reader
            .by_ref()
            .collect::<Result<_, _>>()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let want: Vec<(u64, Line)> = (2u64..).zip(events.iter().cloned()).collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(reader.truncated_tail(), None);
        prop_assert_eq!(reader.lines_read(), events.len() as u64 + 1);

        // `detect` takes the same bytes as plain text, and reads the header on first `next`.
        let detected = RecordingReader::detect(Cursor::new(file.into_bytes())).expect("detect");
        let again: Vec<(u64, Line)> = detected
            .collect::<Result<_, _>>()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let want: Vec<(u64, Line)> = (2u64..).zip(events).collect();
        prop_assert_eq!(again, want);
    }
}

#[test]
fn strategies_generate_every_line_variant() {
    let mut runner = TestRunner::deterministic();
    let strategy = any_line();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for _ in 0..2000 {
        let line = strategy
            .new_tree(&mut runner)
            .expect("strategy generates")
            .current();
        *seen.entry(tag(&line)).or_default() += 1;
    }
    for t in Line::KINDS {
        assert!(seen.get(t).copied().unwrap_or(0) > 20, "{t}: {seen:?}");
    }
}

#[test]
fn optional_fields_are_omitted_when_absent_and_restored_as_absent() {
    let line = Line::Annotation(Annotation {
        t: Timestamp(1_732_000_000_000),
        source: "operator".into(),
        text: "failover started".into(),
        end: None,
        fields: BTreeMap::new(),
    });
    let json = line.to_json();
    assert_eq!(
        json,
        r#"{"type":"annotation","t":1732000000000,"source":"operator","text":"failover started"}"#
    );
    assert_eq!(serde_json::from_str::<Line>(&json).unwrap(), line);

    let info = Line::Info(InfoSample {
        t: Timestamp(1),
        node: NodeRef {
            addr: "127.0.0.1:7000".parse().unwrap(),
            id: None,
        },
        latency_us: 812,
        info: InfoReport::default(),
    });
    let json = info.to_json();
    assert_eq!(
        json,
        r#"{"type":"info","t":1,"node":{"addr":"127.0.0.1:7000"},"latency_us":812,"info":{}}"#
    );
    assert_eq!(serde_json::from_str::<Line>(&json).unwrap(), info);
}

#[test]
fn keyspace_database_numbers_survive_inside_a_line() {
    // JSON object keys are strings; inside the internally tagged `Line` they pass through serde's
    // buffered content, which must still read them back as database numbers.
    let mut report = InfoReport::default();
    report.keyspace.insert(
        0,
        KeyspaceStat {
            keys: 1,
            expires: 1,
            avg_ttl: 997_847,
        },
    );
    report.keyspace.insert(
        15,
        KeyspaceStat {
            keys: 42,
            expires: 0,
            avg_ttl: 0,
        },
    );
    let line = Line::Info(InfoSample {
        t: Timestamp(1_732_000_000_004),
        node: NodeRef {
            addr: "127.0.0.1:7000".parse().unwrap(),
            id: NodeId::new("07c37dfeb235213a872192d90877d0cd55635b91"),
        },
        latency_us: 812,
        info: report,
    });
    let json = line.to_json();
    assert!(json.contains(r#""keyspace":{"#), "{json}");
    assert_eq!(serde_json::from_str::<Line>(&json).unwrap(), line);
}
