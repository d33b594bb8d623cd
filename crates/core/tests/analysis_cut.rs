//! A recording cut at any point (the collector killed, a disk full, a file copied while
//! recording) is analysed up to the cut without a panic, and says it was cut: property tests over
//! the real recordings of the founding incidents (`tests/fixtures/`), cut at a drawn byte.

use proptest::prelude::*;
use slotscope_core::analysis::{Analysis, Analyzer, StepKind};
use slotscope_core::reader::RecordingReader;

/// The fixture's JSON Lines, decompressed.
fn text(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/{name}.jsonl.zst",
        env!("CARGO_MANIFEST_DIR")
    );
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut reader = RecordingReader::detect(file).unwrap();
    let mut out = Vec::new();
    let header = reader.header().unwrap().clone();
    out.extend_from_slice(
        slotscope_core::recording::Line::Header(header)
            .to_json()
            .as_bytes(),
    );
    out.push(b'\n');
    for item in reader.by_ref() {
        out.extend_from_slice(item.unwrap().1.to_json().as_bytes());
        out.push(b'\n');
    }
    out
}

/// The analysis of `bytes` as the collector and the viewer make it: the lines that read, the
/// partial last line noted.
fn analyse(bytes: &[u8]) -> Option<Analysis> {
    let mut reader = RecordingReader::new(bytes);
    let header = reader.header().ok()?.clone();
    let mut a = Analyzer::new(header);
    for (_, line) in reader.by_ref().flatten() {
        a.push_owned(line);
    }
    a.set_truncated_tail(reader.truncated_tail());
    Some(a.finish())
}

const FIXTURES: [&str; 3] = [
    "incident1-redis-py-5.0.0-valkey",
    "incident1-redis-py-8.0.0-redis",
    "incident2-valkey",
];

#[test]
fn the_whole_recordings_are_not_cut() {
    for name in FIXTURES {
        let a = analyse(&text(name)).expect("a header");
        assert!(
            a.story.cut_short.is_none(),
            "{name}: {:?}",
            a.story.cut_short
        );
        assert!(
            a.story
                .steps
                .iter()
                .all(|s| s.kind != StepKind::RecordingCut),
            "{name}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Cut anywhere after the header: analysed, the cut flagged as the story's last step and as a
    /// limit; a cut inside a line names the partial line.
    #[test]
    fn a_recording_cut_anywhere_is_analysed_and_flagged(which in 0..FIXTURES.len(), at in 0.0f64..1.0) {
        let full = text(FIXTURES[which]);
        let header_end = full.iter().position(|&b| b == b'\n').unwrap() + 1;
        // Somewhere after the header and before the end line ends.
        let last_line = full[..full.len() - 1].iter().rposition(|&b| b == b'\n').unwrap() + 1;
        let cut = header_end + ((last_line - header_end) as f64 * at) as usize;
        let a = analyse(&full[..cut]).expect("the header is whole");
        let c = a.story.cut_short.as_ref().expect("the cut is flagged");
        // Inside a line; a cut just before a line's newline leaves the line whole (it reads).
        let mid_line = cut > 0 && full[cut - 1] != b'\n' && full[cut] != b'\n';
        prop_assert_eq!(c.partial_line.is_some(), mid_line);
        prop_assert!(a.story.limits.iter().any(|l| l.contains("cut short")), "{:?}", a.story.limits);
        prop_assert_eq!(a.story.steps.last().map(|s| s.kind), Some(StepKind::RecordingCut));
        // Findings and the story point at each other consistently.
        for s in &a.story.steps {
            if let Some(i) = s.finding {
                prop_assert!(i < a.findings.len());
            }
        }
        prop_assert!(a.story.steps.iter().filter(|s| s.root_cause).count() <= 1);
    }
}
