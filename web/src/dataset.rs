//! A loaded recording: its tracks and its analysis, parsed a chunk at a time so the page stays
//! responsive and can show progress.

use std::cell::Cell;
use std::io::{self, BufRead, Cursor, Read};
use std::rc::Rc;

use slotscope_core::analysis::{Analysis, Analyzer, Finishing};
use slotscope_core::overview::{min_max, Overview, COLUMNS};
use slotscope_core::reader::{ReadError, RecordingReader};
use slotscope_core::recording::Line;
use slotscope_core::track::{Tracks, TracksBuilder};

/// Everything the viewer shows of one recording.
#[derive(Debug)]
pub struct Dataset {
    /// Display name (file name or URL).
    pub name: String,
    /// The time tracks.
    pub tracks: Tracks,
    /// The tracks reduced for drawing long windows, finest first ([`Pyramid`]).
    pub pyramid: Pyramid,
    /// Findings, census and per-node metrics.
    pub analysis: Analysis,
    /// Lines read (the header included).
    pub lines: u64,
    /// The recording's bytes as loaded (plain or zstd), kept so the what-if replay can read the
    /// lines again (see `crate::whatif`).
    pub bytes: Rc<[u8]>,
}

impl Dataset {
    /// What a recording's overview (`slotscope index`) holds, to show while the recording itself
    /// is read: the analysis without its per-node metrics, the tracks reduced, no bytes (so no
    /// what-if yet).
    pub fn from_overview(name: impl Into<String>, overview: Overview) -> Dataset {
        Dataset {
            name: name.into(),
            pyramid: Pyramid::default(),
            tracks: overview.tracks,
            analysis: overview.analysis,
            lines: overview.lines,
            bytes: Rc::from(Vec::new()),
        }
    }

    /// The span the recording covers, in epoch milliseconds.
    pub fn span(&self) -> (u64, u64) {
        let s = self.tracks.grid.span();
        (s.start.as_millis(), s.end.as_millis())
    }
}

/// A recording's tracks reduced by [`min_max`] to fewer and fewer buckets (each level a quarter
/// of the one before, from [`COLUMNS`] × 4^k down to [`COLUMNS`]): a window of a day at one
/// second is drawn from about as many points as the canvas has pixels, not 86,400 per series.
#[derive(Debug, Default)]
pub struct Pyramid {
    /// Finest first.
    levels: Vec<Tracks>,
}

impl Pyramid {
    /// The levels of `tracks` (none when they fit in [`COLUMNS`] buckets).
    pub fn of(tracks: &Tracks) -> Pyramid {
        let mut columns = COLUMNS;
        while columns * 4 < tracks.grid.buckets {
            columns *= 4;
        }
        let mut levels = Vec::new();
        while columns >= COLUMNS && columns < tracks.grid.buckets {
            levels.push(min_max(tracks, columns).0);
            columns /= 4;
        }
        Pyramid { levels }
    }

    /// What to draw a window from where a pixel spans `ms_per_px`: the coarsest level whose
    /// runs (two buckets) span at most half a pixel, so no pixel's extremes come from a run
    /// that reaches far into the next; `tracks` when none does.
    pub fn for_pixel<'a>(&'a self, tracks: &'a Tracks, ms_per_px: f64) -> &'a Tracks {
        self.levels
            .iter()
            .rev()
            .find(|l| slotscope_core::float::from_u64(l.grid.bucket_ms * 4) <= ms_per_px)
            .unwrap_or(tracks)
    }
}

/// A shared, loaded recording, compared by identity (two loads of one file are two datasets).
#[derive(Clone, Debug)]
pub struct Shared(pub Rc<Dataset>);

impl PartialEq for Shared {
    fn eq(&self, other: &Shared) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for Shared {
    type Target = Dataset;

    fn deref(&self) -> &Dataset {
        &self.0
    }
}

/// A byte source that counts what has been consumed (for the progress indicator).
struct Counted {
    inner: Cursor<Rc<[u8]>>,
    consumed: Rc<Cell<u64>>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.set(
            self.consumed
                .get()
                .saturating_add(u64::try_from(n).unwrap_or(0)),
        );
        Ok(n)
    }
}

impl BufRead for Counted {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.consumed.set(
            self.consumed
                .get()
                .saturating_add(u64::try_from(amt).unwrap_or(0)),
        );
        self.inner.consume(amt);
    }
}

/// Why a recording could not be loaded.
#[derive(Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The line it refers to (1-based), when one.
    pub line: Option<u64>,
    /// What was wrong, naming the line.
    pub message: String,
}

impl LoadError {
    fn read(e: &ReadError) -> LoadError {
        LoadError {
            line: Some(e.line()),
            message: e.to_string(),
        }
    }
}

/// What one parsing step ended with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// More to do; the share done so far (0 to 1).
    Progress(f64),
    /// Every line is read: call [`Parser::finish`].
    Done,
}

/// Parses a recording in steps of a bounded number of lines.
pub struct Parser {
    name: String,
    reader: RecordingReader<Box<dyn BufRead>>,
    tracks: TracksBuilder,
    analyzer: Analyzer,
    consumed: Rc<Cell<u64>>,
    total: u64,
    bytes: Rc<[u8]>,
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser").field("name", &self.name).finish()
    }
}

fn share(done: u64, total: u64) -> f64 {
    if total == 0 {
        return 1.0;
    }
    let d = u32::try_from(done.saturating_mul(10_000) / total).unwrap_or(10_000);
    f64::from(d.min(10_000)) / 10_000.0
}

impl Parser {
    /// Starts parsing `bytes` (plain JSON Lines or zstd): reads the header.
    pub fn new(name: impl Into<String>, bytes: Vec<u8>) -> Result<Parser, LoadError> {
        let total = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        let consumed = Rc::new(Cell::new(0));
        let bytes: Rc<[u8]> = bytes.into();
        let src = Counted {
            inner: Cursor::new(bytes.clone()),
            consumed: consumed.clone(),
        };
        let mut reader = RecordingReader::detect(src).map_err(|e| LoadError {
            line: None,
            message: format!("cannot read the file: {e}"),
        })?;
        let header = reader.header().map_err(|e| LoadError::read(&e))?.clone();
        Ok(Parser {
            name: name.into(),
            reader,
            tracks: TracksBuilder::new(&header),
            analyzer: Analyzer::new(header),
            consumed,
            total,
            bytes,
        })
    }

    fn fold(&mut self, line: Line) {
        self.tracks.push(&line);
        self.analyzer.push_owned(line);
    }

    /// Reads up to `max_lines` lines. A bad line stops the load with an error naming it.
    pub fn step(&mut self, max_lines: usize) -> Result<Step, LoadError> {
        for _ in 0..max_lines {
            match self.reader.next() {
                Some(Ok((_, line))) => self.fold(line),
                Some(Err(e)) => return Err(LoadError::read(&e)),
                None => return Ok(Step::Done),
            }
        }
        Ok(Step::Progress(share(self.consumed.get(), self.total)))
    }

    /// The dataset of the lines read so far, while reading goes on: a preview to show while a
    /// big recording loads. It costs a copy of what was folded so far, so it is meant for early
    /// in the load.
    pub fn preview(&self) -> Dataset {
        let mut analyzer = self.analyzer.clone();
        analyzer.set_truncated_tail(None);
        let mut analysis = analyzer.finish();
        // Still loading: the end line may yet come.
        analysis.story.forget_cut();
        Dataset {
            name: self.name.clone(),
            pyramid: Pyramid::default(),
            tracks: self
                .tracks
                .clone()
                .finish(&analysis.metrics, &analysis.timeline),
            analysis,
            lines: self.reader.lines_read(),
            bytes: self.bytes.clone(),
        }
    }

    /// Ends reading: the dataset from the lines read so far, to finish in steps.
    pub fn finishing(self) -> Finisher {
        let lines = self.reader.lines_read();
        let mut analyzer = self.analyzer;
        analyzer.set_truncated_tail(self.reader.truncated_tail());
        Finisher {
            name: self.name,
            lines,
            bytes: self.bytes,
            builder: Some(self.tracks),
            tracks: None,
            analysis: analyzer.finishing(),
        }
    }

    /// The dataset, from the lines read so far.
    pub fn finish(self) -> Dataset {
        self.finishing().done()
    }

    /// Parses everything at once (tests and small files).
    pub fn run(mut self) -> Result<Dataset, LoadError> {
        while self.step(10_000)? != Step::Done {}
        Ok(self.finish())
    }
}

/// A dataset being finished: the tracks, then the analysis one derivation at a time, each step
/// short enough for the page to stay responsive between them.
pub struct Finisher {
    name: String,
    lines: u64,
    bytes: Rc<[u8]>,
    builder: Option<TracksBuilder>,
    tracks: Option<Tracks>,
    analysis: Finishing,
}

impl std::fmt::Debug for Finisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finisher")
            .field("name", &self.name)
            .finish()
    }
}

impl Finisher {
    /// Runs the next step: [`Step::Progress`] with the share of steps done, or [`Step::Done`].
    pub fn step(&mut self) -> Step {
        if let Some(builder) = self.builder.take() {
            self.tracks = Some(builder.finish(self.analysis.metrics(), self.analysis.timeline()));
        } else if self.analysis.step() {
            return Step::Done;
        }
        let done = u32::from(self.analysis.steps_done()) + 1;
        let all = u32::from(Finishing::STEPS) + 1;
        Step::Progress(f64::from(done) / f64::from(all))
    }

    /// The dataset (finishing whatever steps are left).
    pub fn done(mut self) -> Dataset {
        while self.step() != Step::Done {}
        let tracks = self
            .tracks
            .take()
            .expect("the first step builds the tracks");
        Dataset {
            name: self.name,
            pyramid: Pyramid::of(&tracks),
            tracks,
            analysis: self.analysis.done(),
            lines: self.lines,
            bytes: self.bytes,
        }
    }
}

/// The fixture recordings shared with the core's tests (native tests only).
#[cfg(test)]
pub(crate) fn fixture(name: &str) -> Dataset {
    let path = format!(
        "{}/../tests/fixtures/{name}.jsonl.zst",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(path).unwrap();
    Parser::new(name, bytes).unwrap().run().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_incident_2_recording_loads_in_steps_with_progress() {
        let path = format!(
            "{}/../tests/fixtures/incident2-valkey.jsonl.zst",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(path).unwrap();
        let mut parser = Parser::new("incident2", bytes).unwrap();
        let mut shares = Vec::new();
        while let Step::Progress(p) = parser.step(50).unwrap() {
            shares.push(p);
        }
        let data = parser.finish();
        assert!(shares.len() > 2, "{shares:?}");
        assert!(shares.windows(2).all(|w| w[0] <= w[1]), "{shares:?}");
        assert!(shares.iter().all(|&p| (0.0..=1.0).contains(&p)));
        assert_eq!(data.tracks.nodes.len(), 2);
        assert!(!data.analysis.findings.is_empty());
        let (a, b) = data.span();
        assert!(b > a);
    }

    #[test]
    fn a_preview_shows_the_first_part_and_reading_goes_on() {
        let path = format!(
            "{}/../tests/fixtures/incident2-valkey.jsonl.zst",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut parser = Parser::new("incident2", std::fs::read(path).unwrap()).unwrap();
        parser.step(100).unwrap();
        let preview = parser.preview();
        assert_eq!(preview.lines, 101, "the header and 100 lines");
        while parser.step(100).unwrap() != Step::Done {}
        let whole = parser.finish();
        let (p, w) = (preview.span(), whole.span());
        assert_eq!(p.0, w.0);
        assert!(p.1 < w.1, "{p:?} {w:?}");
        assert!(preview.tracks.grid.buckets < whole.tracks.grid.buckets);
        assert!(whole.lines > preview.lines);
    }

    #[test]
    fn a_tapped_clients_moved_share_is_its_own_count() {
        let data = fixture("incident2-tap-valkey");
        let path = format!(
            "{}/../tests/fixtures/incident2-tap-valkey.client.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let client: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let own = &client["recommendation"]["commands"];
        let rows = data.analysis.versus();
        for cmd in ["zrevrange", "zrangebyscore"] {
            let r = rows.iter().find(|r| r.cmd == cmd).unwrap();
            assert_eq!(r.moved, own[cmd]["moved"].as_u64().unwrap(), "{cmd}");
            assert_eq!(r.sent, own[cmd]["sent"].as_u64().unwrap(), "{cmd}");
            let share = own[cmd]["moved_share_of_calls"].as_f64().unwrap();
            assert!((r.client_moved_share - share).abs() < 1e-12, "{cmd}");
            assert!(share > 0.2, "the storm: {share}");
            // The servers counted the same storm (only this client sends these commands).
            assert!(r.server_share().unwrap() > 0.2, "{r:?}");
        }
        // The recording without tap lines has no client-side evidence.
        assert!(fixture("incident2-valkey").analysis.tap.is_empty());
    }

    #[test]
    fn a_bad_line_stops_the_load_and_is_named() {
        let text = concat!(
            r#"{"type":"header","schema":1,"collector":"slotscope 0.1.0","seed":"127.0.0.1:22809","#,
            r#""started":1795992896812,"options":{"interval_ms":500,"timeout_ms":400,"tls":false,"auth":false}}"#,
            "\n",
            r#"{"type":"node_discovered","t":1795992896830,"node":{"addr":"127.0.0.1:22809"},"via":{"kind":"seed"}}"#,
            "\n{\"type\": \"info\", oops\n",
            r#"{"type":"node_discovered","t":1795992896830,"node":{"addr":"127.0.0.1:22810"},"via":{"kind":"seed"}}"#,
            "\n",
        );
        let parser = Parser::new("bad.jsonl", text.as_bytes().to_vec()).unwrap();
        let e = parser.run().unwrap_err();
        assert_eq!(e.line, Some(3), "{}", e.message);
        assert!(e.message.starts_with("line 3:"), "{}", e.message);
    }

    #[test]
    fn garbage_is_not_a_recording() {
        let e = Parser::new("x", b"hello\nworld\n".to_vec()).unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(
            e.message.contains("not a slotscope recording"),
            "{}",
            e.message
        );
    }
}

/// Load timing of a large recording, natively: `SLOTSCOPE_BENCH_FILE=… cargo test --release -p
/// slotscope-web load_timing -- --ignored --nocapture`.
#[cfg(test)]
mod timing {
    use super::*;

    #[test]
    #[ignore = "needs SLOTSCOPE_BENCH_FILE"]
    fn load_timing() {
        let Ok(path) = std::env::var("SLOTSCOPE_BENCH_FILE") else {
            return;
        };
        let bytes = std::fs::read(path).unwrap();
        let t = std::time::Instant::now();
        let mut r = RecordingReader::detect(Cursor::new(bytes.clone())).unwrap();
        let lines = r.by_ref().filter(|l| l.is_ok()).count();
        eprintln!("read only: {lines} lines in {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let mut p = Parser::new("bench", bytes).unwrap();
        while p.step(10_000).unwrap() != Step::Done {}
        let read = t.elapsed();
        let mut f = p.finishing();
        let mut steps = Vec::new();
        loop {
            let t = std::time::Instant::now();
            let last = f.step() == Step::Done;
            steps.push(t.elapsed());
            if last {
                break;
            }
        }
        let data = f.done();
        let (tracks, analysis) = (data.tracks, data.analysis);
        eprintln!(
            "read+fold {read:?}, finishing steps (tracks, then the analysis) {steps:?}; {} buckets, {} findings",
            tracks.grid.buckets,
            analysis.findings.len()
        );
    }
}
