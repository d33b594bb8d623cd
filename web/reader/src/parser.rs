//! A recording parsed in steps of a bounded number of lines, then finished (tracks, then the
//! analysis) a derivation at a time: each step short enough for a page to stay responsive between
//! them, with the share done for a progress indicator.

use std::cell::Cell;
use std::io::{self, BufRead, Cursor};
use std::rc::Rc;

use slotscope_core::analysis::{Analyzer, Finishing};
use slotscope_core::metrics::Metrics;
use slotscope_core::reader::{self, Chunk, FedLines, ReadError, RecordingReader};
use slotscope_core::recording::Line;
use slotscope_core::track::{Tracks, TracksBuilder};

use crate::parcel::Read;

/// A byte source that counts what has been consumed (for the progress indicator).
struct Counted {
    inner: Cursor<Vec<u8>>,
    consumed: Rc<Cell<u64>>,
}

impl io::Read for Counted {
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

/// Where the lines come from: the recording's bytes, or its text decoded elsewhere and fed in
/// chunks.
enum Input {
    /// The whole file (plain or zstd), decoded here; the file's bytes consumed so far.
    Whole(Box<dyn BufRead>, Rc<Cell<u64>>),
    /// Chunks of text fed as they are decoded (see [`slotscope_core::reader::LineChunks`]).
    Fed(FedLines),
}

impl io::Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Whole(r, _) => r.read(buf),
            Input::Fed(r) => r.read(buf),
        }
    }
}

impl BufRead for Input {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            Input::Whole(r, _) => r.fill_buf(),
            Input::Fed(r) => r.fill_buf(),
        }
    }

    fn consume(&mut self, amt: usize) {
        match self {
            Input::Whole(r, _) => r.consume(amt),
            Input::Fed(r) => r.consume(amt),
        }
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
    /// Every line fed so far is read: feed the next chunk ([`Parser::feed`]) and step again.
    Starved,
    /// Every line is read: call [`Parser::finishing`].
    Done,
}

/// Parses a recording in steps of a bounded number of lines.
pub struct Parser {
    reader: RecordingReader<Input>,
    tracks: TracksBuilder,
    analyzer: Analyzer,
    total: u64,
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser")
            .field("lines", &self.reader.lines_read())
            .finish_non_exhaustive()
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
    pub fn new(bytes: Vec<u8>) -> Result<Parser, LoadError> {
        let total = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        let consumed = Rc::new(Cell::new(0));
        let src = Counted {
            inner: Cursor::new(bytes),
            consumed: consumed.clone(),
        };
        let text = reader::text(src).map_err(|e| LoadError {
            line: None,
            message: format!("cannot read the file: {e}"),
        })?;
        Parser::over(RecordingReader::new(Input::Whole(text, consumed)), total)
    }

    /// Starts parsing a zstd recording of `total` compressed bytes that is decoded elsewhere
    /// and fed in chunks, from its `first` (which holds the header): see [`Parser::feed`].
    pub fn fed(total: u64, first: Chunk) -> Result<Parser, LoadError> {
        let mut fed = FedLines::new();
        fed.push(first);
        Parser::over(RecordingReader::new(Input::Fed(fed)), total)
    }

    fn over(mut reader: RecordingReader<Input>, total: u64) -> Result<Parser, LoadError> {
        let header = reader.header().map_err(|e| LoadError::read(&e))?.clone();
        Ok(Parser {
            reader,
            tracks: TracksBuilder::new(&header),
            analyzer: Analyzer::new(header),
            total,
        })
    }

    /// Takes in the next chunk of a recording fed in chunks ([`Parser::fed`]). A parser of a
    /// whole file ignores it.
    pub fn feed(&mut self, chunk: Chunk) {
        if let Input::Fed(fed) = self.reader.source_mut() {
            fed.push(chunk);
        }
    }

    /// The chunks fed and not yet read through (none for a whole file).
    pub fn queued(&self) -> usize {
        match self.reader.source() {
            Input::Fed(fed) => fed.queued(),
            Input::Whole(..) => 0,
        }
    }

    /// Whether every line fed so far is read, more to come.
    fn starved(&self) -> bool {
        matches!(self.reader.source(), Input::Fed(fed) if fed.starved())
    }

    /// The share of the compressed bytes read (or decoded, when fed).
    fn share(&self) -> f64 {
        let done = match self.reader.source() {
            Input::Fed(fed) => fed.consumed(),
            Input::Whole(_, consumed) => consumed.get(),
        };
        share(done, self.total)
    }

    fn fold(&mut self, line: Line) {
        self.tracks.push(&line);
        self.analyzer.push_owned(line);
    }

    /// Reads up to `max_lines` lines. A bad line stops the load with an error naming it.
    pub fn step(&mut self, max_lines: usize) -> Result<Step, LoadError> {
        for _ in 0..max_lines {
            if self.starved() {
                return Ok(Step::Starved);
            }
            match self.reader.next() {
                Some(Ok((_, line))) => self.fold(line),
                Some(Err(e)) => return Err(LoadError::read(&e)),
                None => return Ok(Step::Done),
            }
        }
        Ok(Step::Progress(self.share()))
    }

    /// What the lines read so far show, while reading goes on: a preview to show while a big
    /// recording loads. It costs a copy of what was folded so far, so it is meant for early in
    /// the load.
    pub fn preview(&self) -> Read {
        let mut analyzer = self.analyzer.clone();
        analyzer.set_truncated_tail(None);
        let mut analysis = analyzer.finish();
        // Still loading: the end line may yet come.
        analysis.story.forget_cut();
        let tracks = self
            .tracks
            .clone()
            .finish(&analysis.metrics, &analysis.timeline);
        Read::of(tracks, analysis, self.reader.lines_read()).0
    }

    /// Ends reading: what the lines read so far show, to finish in steps.
    pub fn finishing(self) -> Finisher {
        let lines = self.reader.lines_read();
        let mut analyzer = self.analyzer;
        analyzer.set_truncated_tail(self.reader.truncated_tail());
        Finisher {
            lines,
            builder: Some(self.tracks),
            tracks: None,
            analysis: analyzer.finishing(),
        }
    }

    /// Parses everything at once (tests and small files): what the recording shows, and its
    /// per-node metrics.
    pub fn run(mut self) -> Result<(Read, Metrics), LoadError> {
        while self.step(10_000)? != Step::Done {}
        Ok(self.finishing().done())
    }
}

/// A read being finished: the tracks, then the analysis one derivation at a time, each step short
/// enough for the page to stay responsive between them.
pub struct Finisher {
    lines: u64,
    builder: Option<TracksBuilder>,
    tracks: Option<Tracks>,
    analysis: Finishing,
}

impl std::fmt::Debug for Finisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finisher")
            .field("lines", &self.lines)
            .finish_non_exhaustive()
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

    /// What the recording shows, and its per-node metrics (finishing whatever steps are left).
    pub fn done(mut self) -> (Read, Metrics) {
        while self.step() != Step::Done {}
        let tracks = self
            .tracks
            .take()
            .expect("the first step builds the tracks");
        Read::of(tracks, self.analysis.done(), self.lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use slotscope_core::reader::{LineChunks, ZSTD_MAGIC};

    fn fixture_bytes(name: &str) -> Vec<u8> {
        let path = format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(path).unwrap()
    }

    fn span(read: &Read) -> (u64, u64) {
        let s = read.tracks.grid.span();
        (s.start.as_millis(), s.end.as_millis())
    }

    #[test]
    fn the_incident_2_recording_loads_in_steps_with_progress() {
        let mut parser = Parser::new(fixture_bytes("incident2-valkey.jsonl.zst")).unwrap();
        let mut shares = Vec::new();
        while let Step::Progress(p) = parser.step(50).unwrap() {
            shares.push(p);
        }
        let mut finisher = parser.finishing();
        let mut steps = Vec::new();
        while let Step::Progress(p) = finisher.step() {
            steps.push(p);
        }
        let (read, _) = finisher.done();
        assert!(shares.len() > 2, "{shares:?}");
        assert!(shares.windows(2).all(|w| w[0] <= w[1]), "{shares:?}");
        assert!(shares.iter().all(|&p| (0.0..=1.0).contains(&p)));
        assert!(steps.len() > 2, "{steps:?}");
        assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
        assert_eq!(read.tracks.nodes.len(), 2);
        assert!(!read.analysis.findings.is_empty());
        let (a, b) = span(&read);
        assert!(b > a);
    }

    #[test]
    fn a_preview_shows_the_first_part_and_reading_goes_on() {
        let mut parser = Parser::new(fixture_bytes("incident2-valkey.jsonl.zst")).unwrap();
        parser.step(100).unwrap();
        let preview = parser.preview();
        assert_eq!(preview.lines, 101, "the header and 100 lines");
        while parser.step(100).unwrap() != Step::Done {}
        let (whole, _) = parser.finishing().done();
        let (p, w) = (span(&preview), span(&whole));
        assert_eq!(p.0, w.0);
        assert!(p.1 < w.1, "{p:?} {w:?}");
        assert!(preview.tracks.grid.buckets < whole.tracks.grid.buckets);
        assert!(whole.lines > preview.lines);
    }

    #[test]
    fn what_the_viewer_is_handed_keeps_the_metrics_out_and_what_it_needs_of_them_in() {
        let (read, metrics) = fixture("incident2-valkey");
        assert!(!metrics.nodes.is_empty());
        assert!(read.analysis.metrics.nodes.is_empty());
        assert_eq!(read.business_rate, metrics.observed_business_rate());
        assert!(read.business_rate.is_some_and(|r| r > 0));
    }

    #[test]
    fn a_tapped_clients_moved_share_is_its_own_count() {
        let (read, _) = fixture("incident2-tap-valkey");
        let client: serde_json::Value =
            serde_json::from_slice(&fixture_bytes("incident2-tap-valkey.client.json")).unwrap();
        let own = &client["recommendation"]["commands"];
        for cmd in ["zrevrange", "zrangebyscore"] {
            let r = read.versus.iter().find(|r| r.cmd == cmd).unwrap();
            assert_eq!(r.moved, own[cmd]["moved"].as_u64().unwrap(), "{cmd}");
            assert_eq!(r.sent, own[cmd]["sent"].as_u64().unwrap(), "{cmd}");
            let share = own[cmd]["moved_share_of_calls"].as_f64().unwrap();
            assert!((r.client_moved_share - share).abs() < 1e-12, "{cmd}");
            assert!(share > 0.2, "the storm: {share}");
            // The servers counted the same storm (only this client sends these commands).
            assert!(r.server_share().unwrap() > 0.2, "{r:?}");
        }
        // The recording without tap lines has no client-side evidence.
        let (plain, _) = fixture("incident2-valkey");
        assert!(plain.analysis.tap.is_empty());
        assert!(plain.versus.is_empty());
    }

    /// Reads `bytes` decoded in chunks of `max` and fed as the parser starves, as the viewer's
    /// two workers do: what it shows, the steps that starved, and the shares reported.
    fn fed(bytes: &[u8], max: usize) -> Result<(Read, usize, Vec<f64>), LoadError> {
        let total = u64::try_from(bytes.len()).unwrap();
        let mut chunks = LineChunks::new(bytes.to_vec());
        let mut parser = Parser::fed(total, chunks.next_chunk(max))?;
        let (mut starved, mut shares) = (0, Vec::new());
        loop {
            match parser.step(7)? {
                Step::Progress(p) => shares.push(p),
                Step::Starved => {
                    starved += 1;
                    parser.feed(chunks.next_chunk(max));
                }
                Step::Done => break,
            }
        }
        Ok((parser.finishing().done().0, starved, shares))
    }

    #[test]
    fn a_recording_fed_in_chunks_reads_as_the_whole_file() {
        let names = [
            "incident2-valkey",
            "incident1-redis-py-5.0.0-redis",
            "failover-redis-py-8.1.0-redis",
        ];
        for name in names {
            let bytes = fixture_bytes(&format!("{name}.jsonl.zst"));
            let whole = Parser::new(bytes.clone()).unwrap().run().unwrap().0;
            for max in [1, 3_000, 1 << 20] {
                let (read, starved, shares) = fed(&bytes, max).unwrap();
                assert_eq!(
                    serde_json::to_string(&read.analysis).unwrap(),
                    serde_json::to_string(&whole.analysis).unwrap(),
                    "{name}, chunks of {max}"
                );
                // Debug text: the tracks hold NaN where nothing was measured.
                assert_eq!(
                    (read.lines, format!("{:?}", read.tracks)),
                    (whole.lines, format!("{:?}", whole.tracks))
                );
                assert!(starved > 0 || max == 1 << 20, "{name}: {max}");
                assert!(shares.windows(2).all(|w| w[0] <= w[1]), "{shares:?}");
                assert!(shares.iter().all(|&p| (0.0..=1.0).contains(&p)));
            }
        }
        // Cut short inside a frame: the same lines, the same tail flagged.
        let bytes = fixture_bytes("incident2-valkey.jsonl.zst");
        let cut = &bytes[..bytes.len() * 2 / 3];
        let whole = Parser::new(cut.to_vec()).unwrap().run().unwrap().0;
        let (read, ..) = fed(cut, 2_000).unwrap();
        assert_eq!(read.lines, whole.lines);
        assert_eq!(
            serde_json::to_string(&read.analysis).unwrap(),
            serde_json::to_string(&whole.analysis).unwrap()
        );
        // Not a recording: the same error.
        let garbage = [&ZSTD_MAGIC[..], b"not a frame at all"].concat();
        let e = Parser::new(garbage.clone()).unwrap_err();
        assert_eq!(fed(&garbage, 100).unwrap_err(), e);
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
        let e = Parser::new(text.as_bytes().to_vec())
            .unwrap()
            .run()
            .unwrap_err();
        assert_eq!(e.line, Some(3), "{}", e.message);
        assert!(e.message.starts_with("line 3:"), "{}", e.message);
    }

    #[test]
    fn garbage_is_not_a_recording() {
        let e = Parser::new(b"hello\nworld\n".to_vec()).unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(
            e.message.contains("not a slotscope recording"),
            "{}",
            e.message
        );
    }
}

/// Load timing of a large recording, natively: `SLOTSCOPE_BENCH_FILE=… cargo test --release -p
/// slotscope-reader load_timing -- --ignored --nocapture`.
#[cfg(test)]
mod timing {
    use super::*;
    use crate::parcel::Parcel;

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
        let mut p = Parser::new(bytes).unwrap();
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
        let (done, _) = f.done();
        let (buckets, findings) = (done.tracks.grid.buckets, done.analysis.findings.len());
        let t = std::time::Instant::now();
        let parcel = Parcel::of(done).unwrap();
        let packed = t.elapsed();
        let t = std::time::Instant::now();
        let (head, values) = (parcel.head.len(), parcel.values.len());
        parcel.open().unwrap();
        eprintln!(
            "read+fold {read:?}, finishing steps (tracks, then the analysis) {steps:?}; {buckets} buckets, {findings} findings; \
             packed in {packed:?} ({head} bytes of head, {values} values), opened in {:?}",
            t.elapsed()
        );
    }
}
