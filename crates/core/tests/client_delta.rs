//! Client lists written as changes (`client_list_delta`) read back whole: drawn sequences of
//! `CLIENT LIST` replies of a few nodes (connections that open, close, change name or command,
//! volatile fields that move every time) go through the writer's choice ([`ClientListWriter::line_for`])
//! and the JSON text of a recording, and [`RecordingReader`] gives every list back as it was,
//! apart from the volatile fields of the connections carried over.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::io::Cursor;

use proptest::prelude::*;

use slotscope_core::client_delta::{ClientListWriter, VOLATILE};
use slotscope_core::client_list::ClientEntry;
use slotscope_core::field_map::FieldMap;
use slotscope_core::reader::RecordingReader;
use slotscope_core::recording::Line;
use slotscope_core::Timestamp;

/// A connection of the draw.
#[derive(Clone, Debug)]
struct Conn {
    id: u64,
    opened: u64,
    name: &'static str,
    cmd: &'static str,
}

/// Its `CLIENT LIST` entry at `t` (whole seconds of age, as the server gives them), with
/// volatile fields drawn anew.
fn entry(c: &Conn, t: u64, noise: u64) -> ClientEntry {
    let mut fields = FieldMap::new();
    for (k, v) in [
        ("id", c.id.to_string()),
        ("addr", format!("10.0.0.9:{}", 1000 + c.id)),
        ("name", c.name.to_owned()),
        ("age", ((t - c.opened) / 1000).to_string()),
        ("idle", (noise % 7).to_string()),
        ("tot-mem", (20_000 + noise % 5000).to_string()),
        ("flags", "N".to_owned()),
        ("cmd", c.cmd.to_owned()),
    ] {
        fields.insert(k, v);
    }
    ClientEntry { fields }
}

/// `e` without the volatile fields but `age`.
fn lasting(e: &ClientEntry) -> BTreeMap<String, String> {
    e.fields
        .iter()
        .filter(|(k, _)| *k == "age" || !VOLATILE.contains(k))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// What happens to a node's connections between two polls.
#[derive(Clone, Debug)]
struct Step {
    /// Seconds to the next poll.
    secs: u64,
    /// Connections opened.
    open: usize,
    /// Each connection closes with this chance in 1000.
    close_per_mille: u64,
    /// Each connection changes its command with this chance in 1000.
    change_per_mille: u64,
    noise: u64,
}

fn step() -> impl Strategy<Value = Step> {
    (1u64..10, 0usize..6, 0u64..300, 0u64..300, any::<u64>()).prop_map(
        |(secs, open, close_per_mille, change_per_mille, noise)| Step {
            secs,
            open,
            close_per_mille,
            change_per_mille,
            noise,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn lists_written_as_changes_read_back_whole(
        nodes in 1usize..4,
        start in 0usize..40,
        steps in proptest::collection::vec(step(), 1..30),
    ) {
        const CMDS: [&str; 3] = ["get", "zadd", "hello"];
        let mut text = Line::Header(common::header()).to_json() + "\n";
        let mut written: Vec<Vec<ClientEntry>> = Vec::new();
        let mut bases = vec![ClientListWriter::default(); nodes];
        let mut conns: Vec<Vec<Conn>> = vec![Vec::new(); nodes];
        let mut next_id = 1u64;
        let mut t = common::T0;
        let mut whole = 0usize;
        for (k, s) in steps.iter().enumerate() {
            for (n, list) in conns.iter_mut().enumerate() {
                let opening = if k == 0 { start } else { s.open };
                for _ in 0..opening {
                    list.push(Conn { id: next_id, opened: t - 500, name: "api", cmd: "hello" });
                    next_id += 1;
                }
                let mut r = s.noise.wrapping_add(n as u64);
                let mut draw = |per_mille: u64| {
                    r = r.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    (r >> 33) % 1000 < per_mille
                };
                list.retain(|_| !draw(s.close_per_mille));
                for c in list.iter_mut() {
                    if draw(s.change_per_mille) {
                        c.cmd = CMDS[(c.id as usize + k) % CMDS.len()];
                    }
                }
                let entries: Vec<ClientEntry> =
                    list.iter().map(|c| entry(c, t, s.noise ^ c.id)).collect();
                let line = bases[n].line_for(
                    Timestamp(t),
                    common::node(7000 + n as u16, common::A),
                    entries.clone(),
                );
                if matches!(line, Line::ClientList(_)) {
                    whole += 1;
                }
                text.push_str(&line.to_json());
                text.push('\n');
                written.push(entries);
            }
            t += s.secs * 1000;
        }
        let mut reader = RecordingReader::new(Cursor::new(text.into_bytes()));
        let read: Vec<Vec<ClientEntry>> = reader
            .by_ref()
            .map(|l| match l.unwrap().1 {
                Line::ClientList(s) => s.clients,
                other => panic!("not a client list: {other:?}"),
            })
            .collect();
        prop_assert_eq!(read.len(), written.len());
        for (k, (r, w)) in read.iter().zip(&written).enumerate() {
            let r: Vec<_> = r.iter().map(lasting).collect();
            let w: Vec<_> = w.iter().map(lasting).collect();
            prop_assert_eq!(r, w, "list {}", k);
        }
        prop_assert!(whole >= nodes.min(written.len()), "each node's first list is whole");
    }
}

#[test]
fn a_steady_list_costs_a_few_bytes_a_poll() {
    let conns: Vec<Conn> = (1..=5000)
        .map(|id| Conn {
            id,
            opened: common::T0 - 60_000,
            name: "api",
            cmd: "get",
        })
        .collect();
    let mut base = ClientListWriter::default();
    let mut sizes = Vec::new();
    for k in 0..10u64 {
        let t = common::T0 + k * 1000;
        let entries = conns.iter().map(|c| entry(c, t, k * 31 + c.id)).collect();
        let line = base.line_for(Timestamp(t), common::node(7000, common::A), entries);
        sizes.push(line.to_json().len());
    }
    assert!(
        sizes[0] > 5000 * 100,
        "the first list is whole: {} bytes",
        sizes[0]
    );
    for s in &sizes[1..] {
        assert!(*s < 300, "a steady list is written as no change: {sizes:?}");
    }
}
