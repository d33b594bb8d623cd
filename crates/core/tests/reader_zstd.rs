//! The reader on zstd-compressed recordings written the way the collector writes them
//! (`zstd::Encoder` at level 9, every line written whole, a flush after each poll round, `finish`
//! at the end): a complete file reads exactly like its plain form, a file cut short by a crash
//! yields what was flushed before the cut, appended frames read as one recording, and damaged
//! input never panics.
// Native only: the reference encoder, the `zstd` crate, is C and is not built for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use std::io::{Cursor, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use slotscope_core::client_list::ClientEntry;
use slotscope_core::info::{CommandStat, InfoReport, KeyspaceStat};
use slotscope_core::reader::{ReadError, RecordingReader, ZSTD_MAGIC};
use slotscope_core::recording::{
    Annotation, ClientListSample, Discovery, End, EndReason, FailureKind, Header, InfoSample, Line,
    NodeDiscovered, PollFailed, PollRound, RecordOptions, TopologySample, SCHEMA_VERSION,
};
use slotscope_core::topology::{
    NodeHealth, NodeRole, Shard, SlotMigration, TopoNode, TopologySource, TopologyView,
};
use slotscope_core::{NodeAddr, NodeId, NodeRef, Slot, SlotRange, Timestamp};

// ---------------------------------------------------------------------------------------------
// A recording
// ---------------------------------------------------------------------------------------------

/// A small deterministic generator, so the files are the same on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const T0: u64 = 1_732_000_000_000;

fn addr(n: u64) -> NodeAddr {
    NodeAddr::new("10.0.0.".to_owned() + &(n + 1).to_string(), 7000).expect("host")
}

fn id(n: u64) -> NodeId {
    NodeId::new(format!("{:040x}", 0x07c3_7dfe_b235_u64 * (n + 1))).expect("id")
}

fn node(n: u64) -> NodeRef {
    NodeRef {
        addr: addr(n),
        id: Some(id(n)),
    }
}

fn header() -> Header {
    Header {
        schema: SCHEMA_VERSION,
        collector: "slotscope 0.1.0".into(),
        seed: NodeAddr::new(
            "clustercfg.prod-cache.abc123.use1.cache.amazonaws.com",
            6379,
        )
        .expect("host"),
        started: Timestamp(T0),
        options: RecordOptions {
            interval_ms: 1000,
            timeout_ms: 800,
            duration_ms: Some(600_000),
            tls: true,
            user: Some("slotscope".into()),
            auth: true,
            client_list_every: 5,
            topology_every: None,
        },
        source: None,
    }
}

fn topology(round: u64) -> TopologyView {
    let moved = u16::try_from(round % 100).expect("small");
    let range = |a: u16, b: u16| {
        SlotRange::new(Slot::new(a).expect("slot"), Slot::new(b).expect("slot")).expect("range")
    };
    let topo_node = |n: u64, role: NodeRole| TopoNode {
        id: id(n),
        addr: Some(addr(n)),
        hostname: n
            .is_multiple_of(2)
            .then(|| format!("node-{n}.cache.internal")),
        tls_port: Some(7100),
        role,
        health: if round % 17 == 3 && n == 4 {
            NodeHealth::Failed
        } else {
            NodeHealth::Online
        },
        flags: match role {
            NodeRole::Primary => vec!["master".into()],
            NodeRole::Replica => vec!["slave".into()],
        },
        primary_id: (role == NodeRole::Replica).then(|| id(n - 3)),
        config_epoch: Some(round / 10 + n),
        link_connected: Some(true),
    };
    TopologyView {
        source: TopologySource::Shards,
        myself: Some(id(round % 3)),
        shards: (0..3)
            .map(|s| Shard {
                slots: match s {
                    0 => vec![range(0, 5460 + moved)],
                    1 => vec![range(5461 + moved, 10922)],
                    _ => vec![range(10923, 16383)],
                },
                nodes: vec![
                    topo_node(s, NodeRole::Primary),
                    topo_node(s + 3, NodeRole::Replica),
                ],
            })
            .collect(),
        migrating: vec![SlotMigration {
            slot: Slot::new(5461 + moved).expect("slot"),
            peer: id(0),
        }],
        importing: Vec::new(),
    }
}

fn info(rng: &mut Lcg, round: u64, n: u64) -> InfoReport {
    let mut report = InfoReport::default();
    let server = report.sections.entry("server".into()).or_default();
    server.insert("redis_version", "7.2.4");
    server.insert("valkey_version", "8.1.8");
    server.insert("uptime_in_seconds", (100 + round).to_string());
    let clients = report.sections.entry("clients".into()).or_default();
    clients.insert("connected_clients", (40 + rng.below(20)).to_string());
    clients.insert("blocked_clients", "0");
    let memory = report.sections.entry("memory".into()).or_default();
    memory.insert("used_memory", (2_149_376 + rng.below(100_000)).to_string());
    memory.insert("used_memory_human", "2.05M");
    report
        .sections
        .entry("errorstats_empty".into())
        .or_default();
    for (cmd, calls) in [("get", 1000), ("set", 300), ("cluster|shards", 7)] {
        let calls = calls * (round + 1) + rng.below(50);
        report.commandstats.insert(
            cmd.into(),
            CommandStat {
                calls,
                usec: calls * (3 + n),
                rejected_calls: Some(rng.below(3)),
                failed_calls: round.is_multiple_of(2).then_some(0),
            },
        );
    }
    report.errorstats.insert("MOVED".into(), round * 3 + n);
    report.keyspace.insert(
        0,
        KeyspaceStat {
            keys: 100_000 + rng.below(1000),
            expires: 500,
            avg_ttl: 997_847,
        },
    );
    report
}

fn client(rng: &mut Lcg, i: u64) -> ClientEntry {
    let mut c = ClientEntry::default();
    let mut set = |k: &str, v: String| {
        c.fields.insert(k, v);
    };
    set("id", i.to_string());
    set(
        "addr",
        format!("10.1.{}.{}:{}", i % 250, i / 250, 40_000 + i),
    );
    set("laddr", "10.0.0.1:7000".into());
    set("fd", (10 + i).to_string());
    set(
        "name",
        if i.is_multiple_of(3) {
            String::new()
        } else {
            format!("worker-{i}")
        },
    );
    set("age", rng.below(10_000).to_string());
    set("idle", rng.below(100).to_string());
    set("flags", "N".into());
    set("db", "0".into());
    set(
        "cmd",
        ["get", "set", "client|list"][(i % 3) as usize].into(),
    );
    set("lib-name", "redis-py".into());
    c
}

/// One poll round's lines: what the collector writes between two flushes.
fn round_lines(rng: &mut Lcg, round: u64, clients: usize) -> Vec<Line> {
    let t = |ms: u64| Timestamp(T0 + round * 1000 + ms);
    let mut lines = Vec::new();
    if round == 0 {
        for n in 0..6 {
            lines.push(Line::NodeDiscovered(NodeDiscovered {
                t: t(n),
                node: node(n),
                via: if n == 0 {
                    Discovery::Seed
                } else {
                    Discovery::Topology { from: addr(0) }
                },
            }));
        }
    }
    if round.is_multiple_of(4) {
        lines.push(Line::Topology(TopologySample {
            t: t(3),
            node: node(round % 3),
            view: topology(round),
        }));
    }
    let mut failed = 0;
    for n in 0..6 {
        if round % 9 == 5 && n == 4 {
            failed += 1;
            lines.push(Line::PollFailed(PollFailed {
                t: t(800),
                node: node(n),
                step: "INFO".into(),
                kind: FailureKind::Timeout,
                error: "no reply within 800 ms".into(),
            }));
            continue;
        }
        lines.push(Line::Info(InfoSample {
            t: t(4 + n),
            node: node(n),
            latency_us: 700 + rng.below(400),
            info: info(rng, round, n),
        }));
    }
    if clients > 0 {
        lines.push(Line::ClientList(ClientListSample {
            t: t(20),
            node: node(0),
            clients: (0..clients as u64).map(|i| client(rng, i)).collect(),
        }));
    }
    if round % 7 == 2 {
        lines.push(Line::Annotation(Annotation {
            t: t(500),
            source: "operator".into(),
            text: format!("failover test {round} — « résumé » \"quoted\"\nsecond line"),
            end: Some(t(900)),
            fields: [("per_s".to_owned(), "12.5".to_owned())].into(),
        }));
    }
    lines.push(Line::PollRound(PollRound {
        t: t(0),
        elapsed_ms: 800 + rng.below(150),
        round,
        nodes: 6,
        ok: 6 - failed,
        failed,
    }));
    lines
}

/// A recording: the header, then groups of lines (one per poll round), the last ending in `end`.
struct Recording {
    header: Header,
    groups: Vec<Vec<Line>>,
}

impl Recording {
    /// `rounds` poll rounds; with `big_client_list`, round 5 carries a `CLIENT LIST` whose line
    /// exceeds zstd's 128 KiB block, so the flush after it emits several blocks.
    fn new(rounds: u64, big_client_list: bool) -> Recording {
        let mut rng = Lcg(0x5eed);
        let mut groups = vec![Vec::new()];
        for round in 0..rounds {
            let clients = match round {
                5 if big_client_list => 800,
                r if r % 5 == 0 => 12,
                _ => 0,
            };
            groups.push(round_lines(&mut rng, round, clients));
        }
        if let Some(last) = groups.last_mut() {
            last.push(Line::End(End {
                t: Timestamp(T0 + rounds * 1000),
                reason: EndReason::Signal,
                rounds,
            }));
        }
        Recording {
            header: header(),
            groups,
        }
    }

    /// Every event line, numbered as the reader numbers them (the header is line 1).
    fn numbered(&self) -> Vec<(u64, Line)> {
        (2u64..)
            .zip(self.groups.iter().flatten().cloned())
            .collect()
    }

    /// The text of each group; the header leads the first.
    fn group_texts(&self) -> Vec<Vec<u8>> {
        self.groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let mut text = Vec::new();
                if i == 0 {
                    text.extend_from_slice(Line::Header(self.header.clone()).to_json().as_bytes());
                    text.push(b'\n');
                }
                for line in g {
                    text.extend_from_slice(line.to_json().as_bytes());
                    text.push(b'\n');
                }
                text
            })
            .collect()
    }

    fn plain(&self) -> Vec<u8> {
        self.group_texts().concat()
    }
}

/// Encoder settings.
#[derive(Clone, Copy, Debug)]
enum Settings {
    /// `zstd::Encoder::new(w, 9)` and nothing else.
    Level9,
    /// What the collector's sink sets: level 9, content checksum, 1 MiB window
    /// (`collector/src/sink.rs`).
    Collector,
    /// Level 9 with a content checksum at the end of the frame.
    Checksummed,
}

fn encoder(settings: Settings) -> zstd::Encoder<'static, Vec<u8>> {
    let mut enc = zstd::Encoder::new(Vec::new(), 9).expect("encoder");
    match settings {
        Settings::Level9 => {}
        Settings::Collector => {
            enc.include_checksum(true).expect("checksum flag");
            enc.window_log(20).expect("window log");
        }
        Settings::Checksummed => enc.include_checksum(true).expect("checksum flag"),
    }
    enc
}

/// A compressed recording and where its flushes ended.
struct Compressed {
    bytes: Vec<u8>,
    /// `(compressed length after the flush, lines complete by then, header included)`, per group.
    flushes: Vec<(usize, u64)>,
}

impl Compressed {
    /// Writes `rec` as the collector does: each line whole, a flush after each group, `finish`.
    fn write(rec: &Recording, settings: Settings) -> Compressed {
        let mut enc = encoder(settings);
        let mut flushes = Vec::new();
        let mut lines = 0u64;
        for (i, group) in rec.group_texts().iter().enumerate() {
            for line in group.split_inclusive(|&b| b == b'\n') {
                enc.write_all(line).expect("write");
            }
            enc.flush().expect("flush");
            lines += rec.groups[i].len() as u64 + u64::from(i == 0);
            flushes.push((enc.get_ref().len(), lines));
        }
        let bytes = enc.finish().expect("finish");
        Compressed { bytes, flushes }
    }

    /// Lines (header included) that were complete and flushed within the first `cut` bytes.
    fn flushed_lines(&self, cut: usize) -> u64 {
        self.flushes
            .iter()
            .take_while(|(end, _)| *end <= cut)
            .last()
            .map_or(0, |(_, lines)| *lines)
    }

    /// Cut points: every byte of the first group and of the bytes around every flush, and a
    /// stride through the rest, so big files stay quick to test.
    fn cut_points(&self) -> Vec<usize> {
        let len = self.bytes.len();
        let mut cuts: Vec<usize> = (0..=self.flushes[0].0.min(len)).collect();
        for &(end, _) in &self.flushes {
            cuts.extend(end.saturating_sub(4)..=(end + 4).min(len));
        }
        let stride = (len / 150).max(1);
        cuts.extend((0..=len).step_by(stride));
        cuts.extend(len.saturating_sub(8)..=len);
        cuts.sort_unstable();
        cuts.dedup();
        cuts
    }
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/// What a reader made of some bytes.
#[derive(Debug)]
struct Outcome {
    header: Option<Header>,
    lines: Vec<(u64, Line)>,
    errors: Vec<ReadError>,
    truncated: Option<u64>,
}

fn read(bytes: Vec<u8>) -> Outcome {
    let mut reader = RecordingReader::detect(Cursor::new(bytes)).expect("detect on memory");
    let mut out = Outcome {
        header: None,
        lines: Vec::new(),
        errors: Vec::new(),
        truncated: None,
    };
    match reader.header() {
        Ok(h) => out.header = Some(h.clone()),
        Err(e) => out.errors.push(e),
    }
    for item in reader.by_ref() {
        match item {
            Ok(line) => out.lines.push(line),
            Err(e) => out.errors.push(e),
        }
    }
    out.truncated = reader.truncated_tail();
    out
}

/// Reads `bytes` with a panic turned into a test failure that names `what`.
fn read_or_fail(bytes: Vec<u8>, what: &str) -> Outcome {
    catch_unwind(AssertUnwindSafe(|| read(bytes)))
        .unwrap_or_else(|_| panic!("the reader panicked on {what}"))
}

/// Checks that `got` are the lines `want`, naming the first that differs (whole recordings are
/// too long to print).
fn assert_same_lines(got: &[(u64, Line)], want: &[(u64, Line)], what: &str) {
    if let Some(i) = (0..got.len().min(want.len())).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: line {} differs\n got: {:?}\nwant: {:?}",
            want[i].0, got[i], want[i]
        );
    }
    assert_eq!(got.len(), want.len(), "{what}: number of lines read");
}

/// Checks what holds for any prefix of a recording: the lines read are the recording's first
/// lines, unchanged and rightly numbered; no line is reported bad; a reported truncation names
/// the line after the last one read.
fn assert_sound_prefix(out: &Outcome, want: &[(u64, Line)], what: &str) {
    assert!(
        out.lines.len() <= want.len(),
        "{what}: more lines than written"
    );
    for (got, want) in out.lines.iter().zip(want) {
        assert_eq!(got, want, "{what}: line differs from the one written");
    }
    for e in &out.errors {
        assert!(
            matches!(e, ReadError::NotARecording { .. }) && out.header.is_none(),
            "{what}: unexpected error {e}"
        );
    }
    if let Some(n) = out.truncated {
        let last = out
            .lines
            .last()
            .map_or(u64::from(out.header.is_some()), |l| l.0);
        assert_eq!(n, last + 1, "{what}: truncated tail names the wrong line");
    }
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn complete_compressed_recording_reads_like_its_plain_form() {
    let rec = Recording::new(40, true);
    let plain = read_or_fail(rec.plain(), "the plain file");
    assert_eq!(plain.header.as_ref(), Some(&rec.header));
    assert_same_lines(&plain.lines, &rec.numbered(), "the plain file");
    assert!(plain.errors.is_empty() && plain.truncated.is_none());
    for settings in [Settings::Level9, Settings::Collector, Settings::Checksummed] {
        let z = Compressed::write(&rec, settings);
        assert!(z.bytes.starts_with(&ZSTD_MAGIC));
        assert!(
            z.bytes.len() * 5 < rec.plain().len(),
            "{settings:?}: compresses"
        );
        let out = read_or_fail(z.bytes, "a complete compressed file");
        assert_eq!(out.header, plain.header, "{settings:?}");
        assert_same_lines(&out.lines, &plain.lines, &format!("{settings:?}"));
        assert!(out.errors.is_empty(), "{settings:?}: {:?}", out.errors);
        assert_eq!(out.truncated, None, "{settings:?}");
    }
}

#[test]
fn one_frame_per_line_group_reads_like_one_frame() {
    // A writer may finish a frame after any group; the frames then follow one another.
    let rec = Recording::new(12, false);
    let mut bytes = Vec::new();
    for group in rec.group_texts() {
        bytes.extend(zstd::encode_all(&group[..], 9).expect("encode"));
    }
    let out = read_or_fail(bytes, "one frame per group");
    assert_eq!(out.header.as_ref(), Some(&rec.header));
    assert_same_lines(&out.lines, &rec.numbered(), "one frame per group");
    assert!(out.errors.is_empty() && out.truncated.is_none());
}

#[test]
fn recording_appended_to_later_reads_as_one_recording() {
    let rec = Recording::new(20, false);
    let texts = rec.group_texts();
    let (first, second) = texts.split_at(8);
    let mut bytes = Vec::new();
    for part in [first, second] {
        let mut enc = encoder(Settings::Collector);
        for group in part {
            enc.write_all(group).expect("write");
            enc.flush().expect("flush");
        }
        bytes.extend(enc.finish().expect("finish"));
    }
    assert_eq!(
        bytes.windows(4).filter(|w| *w == ZSTD_MAGIC).count(),
        2,
        "two frames"
    );
    let out = read_or_fail(bytes, "two concatenated frames");
    assert_eq!(out.header.as_ref(), Some(&rec.header));
    assert_eq!(
        out.lines,
        rec.numbered(),
        "line numbers run on across frames"
    );
    assert!(out.errors.is_empty() && out.truncated.is_none());
}

#[test]
fn truncated_plain_recording_yields_every_complete_line() {
    let rec = Recording::new(10, false);
    let plain = rec.plain();
    let want = rec.numbered();
    // Every byte around every line end, and a stride through the lines.
    let mut cuts: Vec<usize> = plain
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .flat_map(|(i, _)| i.saturating_sub(2)..=(i + 3).min(plain.len()))
        .chain((0..=plain.len()).step_by(97))
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    for cut in cuts {
        let what = format!("the plain file cut at byte {cut} of {}", plain.len());
        let out = read_or_fail(plain[..cut].to_vec(), &what);
        assert_sound_prefix(&out, &want, &what);
        let complete = plain[..cut].iter().filter(|&&b| b == b'\n').count() as u64;
        let read = out.lines.len() as u64 + u64::from(out.header.is_some());
        // A cut just before a newline leaves a whole JSON text, which the reader may keep.
        assert!(
            read == complete || read == complete + 1,
            "{what}: {read} lines read, {complete} complete"
        );
        let at_line_end = cut == 0 || plain[cut - 1] == b'\n';
        if !at_line_end && read == complete {
            assert_eq!(out.truncated, Some(read + 1), "{what}");
        }
    }
}

#[test]
fn truncated_compressed_recording_never_yields_a_bad_or_altered_line() {
    // Whatever the reader yields from a file cut anywhere (between flushes, inside a block,
    // inside the frame header), it yields intact, rightly numbered lines and no `BadLine`.
    let rec = Recording::new(10, true);
    let want = rec.numbered();
    for settings in [Settings::Level9, Settings::Collector] {
        let z = Compressed::write(&rec, settings);
        for cut in z.cut_points() {
            let what = format!("{settings:?} file cut at byte {cut} of {}", z.bytes.len());
            let out = read_or_fail(z.bytes[..cut].to_vec(), &what);
            assert_sound_prefix(&out, &want, &what);
            if cut == z.bytes.len() {
                assert_eq!(out.lines.len(), want.len(), "{what}");
                assert_eq!(out.truncated, None, "{what}");
            }
        }
    }
}

#[test]
fn truncated_compressed_recording_yields_every_line_flushed_before_the_cut() {
    let rec = Recording::new(10, true);
    let want = rec.numbered();
    for settings in [Settings::Level9, Settings::Collector] {
        let z = Compressed::write(&rec, settings);
        for cut in z.cut_points() {
            let what = format!("{settings:?} file cut at byte {cut} of {}", z.bytes.len());
            let out = read_or_fail(z.bytes[..cut].to_vec(), &what);
            assert_sound_prefix(&out, &want, &what);
            let flushed = z.flushed_lines(cut);
            if flushed > 0 {
                assert_eq!(out.header.as_ref(), Some(&rec.header), "{what}");
                assert!(out.errors.is_empty(), "{what}: {:?}", out.errors);
            }
            let read = out.lines.len() as u64 + u64::from(out.header.is_some());
            assert!(
                read >= flushed,
                "{what}: {read} lines read, {flushed} were flushed before the cut"
            );
            if flushed > 0 && cut < z.bytes.len() && read < want.len() as u64 + 1 {
                assert_eq!(out.truncated, Some(read + 1), "{what}: the cut is reported");
            }
        }
    }
}

/// Copies of `bytes` with one bit flipped: every bit of the first 24 bytes (frame and first
/// block headers), then one bit of every further byte, the bit moving from byte to byte.
fn bit_flips(bytes: &[u8]) -> impl Iterator<Item = (String, Vec<u8>)> + '_ {
    let headers = (0..bytes.len().min(24)).flat_map(|at| (0..8).map(move |bit| (at, bit)));
    let rest = (24..bytes.len()).map(|at| (at, (at * 3) % 8));
    headers.chain(rest).map(move |(at, bit)| {
        let mut flipped = bytes.to_vec();
        flipped[at] ^= 1 << bit;
        (format!("bit {bit} of byte {at} flipped"), flipped)
    })
}

#[test]
fn bit_flips_anywhere_never_panic_and_keep_line_numbers_in_order() {
    // Without a checksum (zstd's default) a flipped literal can decode to another valid line;
    // what must hold is that the reader neither panics nor loops, and numbers lines in order.
    let rec = Recording::new(3, false);
    let z = Compressed::write(&rec, Settings::Level9);
    let limit = rec.plain().len() as u64 + 2;
    for (what, bytes) in bit_flips(&z.bytes) {
        let out = read_or_fail(bytes, &what);
        let numbers: Vec<u64> = out.lines.iter().map(|l| l.0).collect();
        assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{what}");
        assert!(numbers.iter().all(|&n| n >= 2 && n <= limit), "{what}");
        for e in &out.errors {
            assert!(e.line() <= limit, "{what}: {e}");
        }
    }
}

#[test]
fn damaged_magic_number_is_not_a_recording() {
    let rec = Recording::new(3, false);
    let mut bytes = Compressed::write(&rec, Settings::Collector).bytes;
    bytes[1] ^= 0x10;
    let out = read_or_fail(bytes, "a damaged magic number");
    assert!(out.lines.is_empty());
    assert!(
        matches!(out.errors.first(), Some(ReadError::NotARecording { .. })),
        "{:?}",
        out.errors
    );
}

#[test]
fn damaged_block_inside_the_file_is_an_error_after_the_lines_before_it() {
    let rec = Recording::new(20, false);
    let want = rec.numbered();
    let z = Compressed::write(&rec, Settings::Collector);
    // After a flush the next block starts; give its header the reserved block type 3.
    let (at, flushed) = z.flushes[10];
    let mut bytes = z.bytes.clone();
    bytes[at] |= 0b110;
    let out = read_or_fail(bytes, "a damaged block header");
    assert_eq!(out.header.as_ref(), Some(&rec.header));
    assert!(
        out.lines.len() as u64 + 1 >= flushed,
        "lines before the damage are read"
    );
    assert_same_lines(&out.lines, &want[..out.lines.len()], "before the damage");
    assert!(
        out.errors.iter().any(|e| matches!(e, ReadError::Io { .. })),
        "the damage is an error, not a truncation: errors {:?}, truncated {:?}",
        out.errors,
        out.truncated
    );
}

#[test]
fn altered_content_of_a_checksummed_recording_is_an_error() {
    let rec = Recording::new(3, false);
    let want = rec.numbered();
    let z = Compressed::write(&rec, Settings::Checksummed);
    for (what, bytes) in bit_flips(&z.bytes) {
        let out = read_or_fail(bytes, &what);
        // Damage reported as a truncation is the subject of the test above; here, a file read
        // to its end without complaint must be the file written.
        if out.errors.is_empty() && out.truncated.is_none() {
            assert_eq!(out.header.as_ref(), Some(&rec.header), "{what}");
            assert!(
                out.lines == want,
                "{what}: altered lines read as a complete file"
            );
        }
    }
}
