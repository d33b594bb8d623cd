//! `slotscope cut`: joins the files of an always-on recording that cover a window into one
//! recording, as if it had been recorded on its own from the window's start to its end.
//!
//! The rules:
//!
//! - **Which files**: a file covers the time from its header's start to the next file's start (the
//!   last one, to its last line); the files that meet `[from, to]` are read, oldest first.
//! - **Which lines**: whole poll rounds whose start is in `[from, to]`, with the lines written
//!   during them (samples, failures, membership changes); rounds are numbered again from 0.
//! - **The state at the start**: what was known before the window (the polled nodes, those
//!   unreachable, each node's last topology) is written at the window's start, so the cut stands
//!   alone even when the window starts in the middle of a file.
//! - **The seams**: what a file repeats at its start to stand alone (the nodes, their unchanged
//!   topologies) is left out when the previous file said it already; the files' end lines are
//!   replaced by one at the end (reason `cut`, or the last file's own reason when the window
//!   reaches its end).
//! - **Damage**: a partial last line (a file cut short by a crash) is skipped and reported, as
//!   the reader does; any other bad line is an error naming the file and line.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use slotscope_core::client_delta::ClientListWriter;
use slotscope_core::reader::RecordingReader;
use slotscope_core::recording::{
    Discovery, End, EndReason, GoneReason, Header, Line, NodeDiscovered, NodeGone, TopologySample,
};
use slotscope_core::{NodeAddr, Timestamp};

use crate::store::rotation;
use crate::store::sink::{tmp_path, wants_zstd, FileSink, Sink, ZSTD_LEVEL};
use slotscope_core::moment::Moment;

/// Why a cut could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CutError {
    /// The directory holds no recording files.
    #[error("{dir}: no recording files (slotscope-*.jsonl.zst) in this directory")]
    NoFiles {
        /// The directory.
        dir: PathBuf,
    },
    /// The directory cannot be listed.
    #[error("{dir}: {source}")]
    Dir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A file cannot be read.
    #[error("{path}: {message}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// `--from` is not before `--to`.
    #[error("--from ({from}) is not before --to ({to})")]
    EmptyWindow {
        /// The window's start.
        from: String,
        /// The window's end.
        to: String,
    },
    /// No recorded round starts in the window.
    #[error(
        "no recorded round starts between {from} and {to}: the files in this directory cover {first} to {last}"
    )]
    NothingCovers {
        /// The window's start.
        from: String,
        /// The window's end.
        to: String,
        /// The start of the oldest file.
        first: String,
        /// The last line of the newest file read (or the start of the newest file).
        last: String,
    },
    /// Writing the output failed.
    #[error("writing {path}: {source}")]
    Write {
        /// The file being written.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// What a cut holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutReport {
    /// The files read, oldest first.
    pub files: Vec<PathBuf>,
    /// The window, as instants.
    pub from: Timestamp,
    /// The window's end.
    pub to: Timestamp,
    /// Poll rounds written.
    pub rounds: u64,
    /// Lines written (header and end line included).
    pub lines: u64,
    /// Files that ended in a partial line, with its line number (skipped).
    pub truncated: Vec<(PathBuf, u64)>,
}

/// A file of the directory and its header.
struct Part {
    path: PathBuf,
    header: Header,
}

/// What is known of a node at a point of the recording.
struct NodeState {
    discovered: NodeDiscovered,
    unreachable: bool,
    topology: Option<TopologySample>,
}

/// The state carried from line to line: the polled nodes, and whether the window began.
#[derive(Default)]
struct State {
    nodes: BTreeMap<NodeAddr, NodeState>,
}

impl State {
    /// Takes `line` into the state; returns whether it says something new (a line that only
    /// repeats the state, as a file's start does, returns false).
    fn apply(&mut self, line: &Line) -> bool {
        match line {
            Line::NodeDiscovered(d) => match self.nodes.get_mut(&d.node.addr) {
                Some(n) if d.via == Discovery::Recovered => {
                    let new = n.unreachable;
                    n.unreachable = false;
                    new
                }
                Some(n) => {
                    if d.node.id.is_some() {
                        n.discovered.node.id.clone_from(&d.node.id);
                    }
                    false
                }
                None => {
                    self.nodes.insert(
                        d.node.addr.clone(),
                        NodeState {
                            discovered: d.clone(),
                            unreachable: false,
                            topology: None,
                        },
                    );
                    true
                }
            },
            Line::NodeGone(g) => match g.reason {
                GoneReason::LeftTopology => self.nodes.remove(&g.node.addr).is_some(),
                GoneReason::Unreachable => match self.nodes.get_mut(&g.node.addr) {
                    Some(n) if n.unreachable => false,
                    Some(n) => {
                        n.unreachable = true;
                        true
                    }
                    None => true,
                },
            },
            Line::Topology(t) => match self.nodes.get_mut(&t.node.addr) {
                Some(n) if n.topology.as_ref().is_some_and(|old| old.view == t.view) => false,
                Some(n) => {
                    n.topology = Some(t.clone());
                    true
                }
                None => true,
            },
            _ => true,
        }
    }

    /// The state as lines at `t`: every node discovered, those unreachable gone, and each node's
    /// last topology.
    fn lines(&self, t: Timestamp) -> Vec<Line> {
        let mut out = Vec::new();
        for n in self.nodes.values() {
            out.push(Line::NodeDiscovered(NodeDiscovered {
                t,
                ..n.discovered.clone()
            }));
        }
        for n in self.nodes.values().filter(|n| n.unreachable) {
            out.push(Line::NodeGone(NodeGone {
                t,
                node: n.discovered.node.clone(),
                reason: GoneReason::Unreachable,
            }));
        }
        for n in self.nodes.values() {
            if let Some(topo) = &n.topology {
                out.push(Line::Topology(TopologySample { t, ..topo.clone() }));
            }
        }
        out
    }
}

fn open(path: &Path) -> Result<RecordingReader<Box<dyn io::BufRead>>, CutError> {
    let unreadable = |message: String| CutError::Unreadable {
        path: path.to_owned(),
        message,
    };
    let file = File::open(path).map_err(|e| unreadable(e.to_string()))?;
    RecordingReader::detect(BufReader::new(file)).map_err(|e| unreadable(e.to_string()))
}

/// The files of `dir` with their headers, oldest first; empty files (a period whose first line
/// never reached the disk) are left out and reported on stderr.
fn parts(dir: &Path) -> Result<Vec<Part>, CutError> {
    let stored = rotation::list(dir).map_err(|source| CutError::Dir {
        dir: dir.to_owned(),
        source,
    })?;
    let mut parts = Vec::new();
    for s in stored {
        if s.bytes == 0 {
            eprintln!("slotscope: {}: empty, skipped", s.path.display());
            continue;
        }
        let mut reader = open(&s.path)?;
        let header = reader
            .header()
            .map_err(|e| CutError::Unreadable {
                path: s.path.clone(),
                message: e.to_string(),
            })?
            .clone();
        parts.push(Part {
            path: s.path,
            header,
        });
    }
    parts.sort_by_key(|p| p.header.started);
    if parts.is_empty() {
        return Err(CutError::NoFiles {
            dir: dir.to_owned(),
        });
    }
    Ok(parts)
}

/// Joins the files of `dir` that cover `[from, to]` (offsets count from the oldest file's start)
/// into the recording `out`, written to `out.tmp` first and renamed when complete.
pub fn cut(dir: &Path, from: Moment, to: Moment, out: &Path) -> Result<CutReport, CutError> {
    let parts = parts(dir)?;
    let origin = parts[0].header.started;
    let (from, to) = (from.at(origin), to.at(origin));
    if from >= to {
        return Err(CutError::EmptyWindow {
            from: from.to_rfc3339(),
            to: to.to_rfc3339(),
        });
    }
    let chosen: Vec<&Part> = parts
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            let next = parts
                .get(i + 1)
                .map_or(Timestamp(u64::MAX), |n| n.header.started);
            p.header.started <= to && next > from
        })
        .map(|(_, p)| p)
        .collect();
    let nothing = |last: Timestamp| CutError::NothingCovers {
        from: from.to_rfc3339(),
        to: to.to_rfc3339(),
        first: origin.to_rfc3339(),
        last: last.to_rfc3339(),
    };
    if chosen.is_empty() {
        return Err(nothing(parts[parts.len() - 1].header.started));
    }

    let tmp = tmp_path(out);
    let write_err = |source: io::Error| CutError::Write {
        path: tmp.clone(),
        source,
    };
    let zstd = wants_zstd(out).then_some(ZSTD_LEVEL);
    let mut sink = FileSink::create(&tmp, zstd, true).map_err(write_err)?;
    let result = join(&chosen, from, to, &mut sink);
    let (mut report, end) = match result {
        Ok(r) => r,
        Err(e) => {
            drop(sink);
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    if report.rounds == 0 {
        drop(sink);
        let _ = std::fs::remove_file(&tmp);
        return Err(nothing(end.t));
    }
    let finished = sink
        .write_line(&Line::End(end))
        .and_then(|()| sink.finish_synced())
        .and_then(|()| std::fs::rename(&tmp, out));
    if let Err(e) = finished {
        let _ = std::fs::remove_file(&tmp);
        return Err(write_err(e));
    }
    report.lines += 1;
    report.files = chosen.iter().map(|p| p.path.clone()).collect();
    Ok(report)
}

/// `FILE.tmp`, next to `FILE`.
/// `l` as the output writes it: a client list as the changes since the node's previous one in
/// the output when they are smaller (the reader gave it whole).
fn encoded(clients: &mut BTreeMap<NodeAddr, ClientListWriter>, l: Line) -> Line {
    match l {
        Line::ClientList(s) => clients
            .entry(s.node.addr.clone())
            .or_default()
            .line_for(s.t, s.node, s.clients),
        other => other,
    }
}

/// Writes the header and the lines of `parts` in `[from, to]`; returns the figures and the end
/// line to write.
fn join(
    parts: &[&Part],
    from: Timestamp,
    to: Timestamp,
    sink: &mut FileSink,
) -> Result<(CutReport, End), CutError> {
    let start = from.max(parts[0].header.started);
    let mut report = CutReport {
        files: Vec::new(),
        from: start,
        to,
        rounds: 0,
        lines: 0,
        truncated: Vec::new(),
    };
    let mut state = State::default();
    let mut clients: BTreeMap<NodeAddr, ClientListWriter> = BTreeMap::new();
    let mut began = false;
    let mut last_t = start;
    let mut last_reason = None;
    let mut past = false;
    for (i, part) in parts.iter().enumerate() {
        let write_err = |source: io::Error| CutError::Write {
            path: PathBuf::from("the output"),
            source,
        };
        if i == 0 {
            let header = Header {
                started: start,
                options: slotscope_core::recording::RecordOptions {
                    duration_ms: None,
                    ..part.header.options.clone()
                },
                ..part.header.clone()
            };
            sink.write_line(&Line::Header(header)).map_err(write_err)?;
            report.lines += 1;
        }
        let mut reader = open(&part.path)?;
        let mut group: Vec<Line> = Vec::new();
        for item in reader.by_ref() {
            let (_, line) = item.map_err(|e| CutError::Unreadable {
                path: part.path.clone(),
                message: e.to_string(),
            })?;
            match line {
                Line::End(e) => {
                    last_reason = Some(e.reason);
                }
                Line::PollRound(r) => {
                    let t = r.t;
                    if t > to {
                        past = true;
                        break;
                    }
                    group.push(Line::PollRound(r));
                    let lines = std::mem::take(&mut group);
                    if t < from {
                        for l in &lines {
                            state.apply(l);
                        }
                        continue;
                    }
                    if !began {
                        began = true;
                        for l in state.lines(start) {
                            sink.write_line(&l).map_err(write_err)?;
                            report.lines += 1;
                        }
                    }
                    for l in lines {
                        if !state.apply(&l) {
                            continue;
                        }
                        let l = match l {
                            Line::PollRound(mut r) => {
                                r.round = report.rounds;
                                report.rounds += 1;
                                Line::PollRound(r)
                            }
                            other => other,
                        };
                        last_t = last_t.max(l.time());
                        sink.write_line(&encoded(&mut clients, l))
                            .map_err(write_err)?;
                        report.lines += 1;
                    }
                }
                other => group.push(other),
            }
        }
        if let Some(n) = reader.truncated_tail() {
            eprintln!(
                "slotscope: {}: the file was cut short (a crash: no end line, and line {n} on \
                 is partial or missing); read up to line {}",
                part.path.display(),
                n.saturating_sub(1)
            );
            report.truncated.push((part.path.clone(), n));
            last_reason = None;
        }
        // Lines after a file's last round (membership changes) belong to the window when it
        // goes on past them.
        if began && !past {
            for l in group {
                if l.time() <= to && state.apply(&l) {
                    last_t = last_t.max(l.time());
                    sink.write_line(&encoded(&mut clients, l))
                        .map_err(write_err)?;
                    report.lines += 1;
                }
            }
        } else {
            for l in &group {
                state.apply(l);
            }
        }
        if past {
            break;
        }
    }
    // The last file's own reason when the window reaches its end; `cut` when the window ends
    // inside the recording.
    let reason = match last_reason {
        Some(r) if !past && r != EndReason::Rotated => r,
        _ => EndReason::Cut,
    };
    let end = End {
        t: if past { to.max(last_t) } else { last_t },
        reason,
        rounds: report.rounds,
    };
    Ok((report, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_header as header;
    use slotscope_core::recording::PollRound;
    use slotscope_core::topology::TopologyView;
    use slotscope_core::NodeRef;

    fn node(port: u16) -> NodeRef {
        NodeRef {
            addr: format!("127.0.0.1:{port}").parse().unwrap(),
            id: None,
        }
    }

    fn view(source: &str) -> TopologyView {
        serde_json::from_str(&format!(r#"{{"source":"{source}","shards":[]}}"#)).unwrap()
    }

    /// A file as the recorder writes one: header, the nodes, their topology, ten rounds.
    fn period(started: u64, node_b_view: &str, end: bool) -> String {
        let t = Timestamp(started);
        let mut lines = vec![header(started)];
        for (n, v) in [(node(7000), "shards"), (node(7001), node_b_view)] {
            lines.push(Line::NodeDiscovered(NodeDiscovered {
                t,
                node: n.clone(),
                via: Discovery::Seed,
            }));
            lines.push(Line::Topology(TopologySample {
                t: Timestamp(started + 50),
                node: n,
                view: view(v),
            }));
        }
        for k in 0..10 {
            lines.push(Line::PollRound(PollRound {
                t: Timestamp(started + 100 + k * 1000),
                elapsed_ms: 3,
                round: k,
                nodes: 2,
                ok: 2,
                failed: 0,
            }));
        }
        if end {
            lines.push(Line::End(End {
                t: Timestamp(started + 9_999),
                reason: EndReason::Rotated,
                rounds: 10,
            }));
        }
        let mut text: String = lines.iter().map(|l| l.to_json() + "\n").collect();
        if !end {
            text.push_str(r#"{"type":"poll_rou"#);
        }
        text
    }

    #[test]
    fn a_cut_across_three_files_restates_once_and_keeps_only_changes() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("slotscope-cut-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let base = 1_800_000_000_000;
        // Node B's topology changes in the second file and stays so in the third.
        for (i, (v, end)) in [("shards", true), ("slots", true), ("slots", false)]
            .into_iter()
            .enumerate()
        {
            let start = base + i as u64 * 10_000;
            let name = format!("slotscope-{start}.jsonl");
            std::fs::write(dir.join(name), period(start, v, end)).unwrap();
        }
        let out = dir.join("out.jsonl");
        let r = cut(
            &dir,
            Moment::Offset(5_500),
            Moment::At(Timestamp(base + 40_000)),
            &out,
        )
        .unwrap();
        assert_eq!(r.files.len(), 3);
        assert_eq!(r.rounds, 4 + 10 + 10);
        assert_eq!(r.truncated.len(), 1);
        let text = std::fs::read_to_string(&out).unwrap();
        let lines: Vec<Line> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let Line::Header(h) = &lines[0] else {
            panic!("no header")
        };
        assert_eq!(h.started, Timestamp(base + 5_500));
        let discovered = lines
            .iter()
            .filter(|l| matches!(l, Line::NodeDiscovered(_)))
            .count();
        assert_eq!(discovered, 2);
        // Each node's topology at the start, and node B's change once.
        let topologies: Vec<(u16, Timestamp)> = lines
            .iter()
            .filter_map(|l| match l {
                Line::Topology(t) => Some((t.node.addr.port(), t.t)),
                _ => None,
            })
            .collect();
        assert_eq!(
            topologies,
            vec![
                (7000, Timestamp(base + 5_500)),
                (7001, Timestamp(base + 5_500)),
                (7001, Timestamp(base + 10_050)),
            ]
        );
        let rounds: Vec<u64> = lines
            .iter()
            .filter_map(|l| match l {
                Line::PollRound(p) => Some(p.round),
                _ => None,
            })
            .collect();
        assert_eq!(rounds, (0..24).collect::<Vec<_>>());
        let Some(Line::End(end)) = lines.last() else {
            panic!("no end line")
        };
        // The last file was cut short (no end line of its own): the cut ends as a cut.
        assert_eq!(end.reason, EndReason::Cut);
        assert_eq!(end.rounds, 24);
        assert_eq!(end.t, Timestamp(base + 29_100));
        // A window that ends inside the recording stops there, before the partial line.
        let inner = dir.join("inner.jsonl");
        let r = cut(&dir, Moment::Offset(0), Moment::Offset(15_000), &inner).unwrap();
        assert_eq!((r.files.len(), r.rounds, r.truncated.len()), (2, 15, 0));
        assert!(lines.windows(2).all(|w| w[0].time() <= w[1].time()));
        assert!(!dir.join("out.jsonl.tmp").exists());

        // Nothing in the window: an error, and no file.
        let none = dir.join("none.jsonl");
        let e = cut(
            &dir,
            Moment::At(Timestamp(base + 60_000)),
            Moment::At(Timestamp(base + 70_000)),
            &none,
        )
        .unwrap_err();
        assert!(matches!(e, CutError::NothingCovers { .. }), "{e}");
        assert!(!none.exists() && !dir.join("none.jsonl.tmp").exists());
        let e = cut(&dir, Moment::Offset(5), Moment::Offset(5), &none).unwrap_err();
        assert!(matches!(e, CutError::EmptyWindow { .. }), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
