//! What the reader hands the viewer, and how it crosses between the two wasm modules: a JSON head
//! and the series' values in one flat `f32` array, so a day of one-second buckets crosses as a
//! copy of memory, not as text to parse.

use serde::{Deserialize, Serialize};
use slotscope_core::analysis::Analysis;
use slotscope_core::metrics::Metrics;
use slotscope_core::tap::Versus;
use slotscope_core::track::Tracks;

/// What the viewer shows of a recording read (or of the part read so far).
#[derive(Debug, Serialize, Deserialize)]
pub struct Read {
    /// The time tracks.
    pub tracks: Tracks,
    /// Findings, story, census and summary. Its per-node metrics and timeline stay with the
    /// reader (see [`Read::of`]).
    pub analysis: Analysis,
    /// Lines read (the header included).
    pub lines: u64,
    /// The tapped client's per-command counts beside the servers' ([`Analysis::versus`]; empty
    /// without tap lines).
    pub versus: Vec<Versus>,
    /// The observed business rate ([`Metrics::observed_business_rate`]).
    pub business_rate: Option<u32>,
}

impl Read {
    /// What the viewer is handed of `analysis` and its `tracks`, with what it needs of the
    /// per-node metrics worked out here; the metrics themselves, which take memory in
    /// proportion to the recording, are returned beside it to answer queries (deltas over a
    /// selection) where they are.
    pub fn of(tracks: Tracks, mut analysis: Analysis, lines: u64) -> (Read, Metrics) {
        let versus = analysis.versus();
        let metrics = std::mem::take(&mut analysis.metrics);
        analysis.timeline = Default::default();
        let read = Read {
            tracks,
            lines,
            versus,
            business_rate: metrics.observed_business_rate(),
            analysis,
        };
        (read, metrics)
    }
}

/// A [`Read`] packed to cross between wasm modules.
#[derive(Debug, Default)]
pub struct Parcel {
    /// The [`Read`] as JSON, its series without values.
    pub head: String,
    /// Every series' values, one after another in the order of [`Tracks::series_mut`].
    pub values: Vec<f32>,
    /// How many values each series has, in the same order.
    pub lengths: Vec<u32>,
}

impl Parcel {
    /// Packs `read`.
    pub fn of(mut read: Read) -> Result<Parcel, String> {
        let mut values = Vec::new();
        let mut lengths = Vec::new();
        for s in read.tracks.series_mut() {
            let n = u32::try_from(s.values.len()).map_err(|_| "a series too long to pack")?;
            lengths.push(n);
            values.append(&mut s.values);
        }
        let head = serde_json::to_string(&read).map_err(|e| format!("cannot pack: {e}"))?;
        Ok(Parcel {
            head,
            values,
            lengths,
        })
    }

    /// Unpacks the [`Read`], or says why this is not a whole parcel.
    pub fn open(self) -> Result<Read, String> {
        // From bytes, as the viewer reads an overview: one instance of the deserialisers for both.
        let mut read: Read = serde_json::from_slice(self.head.as_bytes())
            .map_err(|e| format!("bad parcel head: {e}"))?;
        let mut lengths = self.lengths.into_iter();
        let mut rest = &self.values[..];
        for s in read.tracks.series_mut() {
            let n = lengths
                .next()
                .ok_or("bad parcel: fewer lengths than series")?;
            let n = usize::try_from(n).map_err(|_| "bad parcel: a length out of range")?;
            if n > rest.len() {
                return Err("bad parcel: fewer values than its lengths say".to_owned());
            }
            let (mine, after) = rest.split_at(n);
            s.values = mine.to_vec();
            rest = after;
        }
        if lengths.next().is_some() || !rest.is_empty() {
            return Err("bad parcel: more values than series".to_owned());
        }
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    /// Every series' label and values, NaN compared by its bits.
    fn series(tracks: &mut Tracks) -> Vec<(String, Vec<u32>)> {
        tracks
            .series_mut()
            .map(|s| {
                let bits = s.values.iter().map(|v| v.to_bits()).collect();
                (s.label.clone(), bits)
            })
            .collect()
    }

    #[test]
    fn a_read_crosses_whole() {
        for name in ["incident1-redis-py-5.0.0-valkey", "incident2-tap-valkey"] {
            let (mut read, _) = fixture(name);
            let before = series(&mut read.tracks);
            let (layouts, marks) = (read.tracks.layouts.len(), read.tracks.node_events.len());
            let findings: Vec<String> = read
                .analysis
                .findings
                .iter()
                .map(|f| f.title.clone())
                .collect();
            let (versus, rate, lines) = (read.versus.clone(), read.business_rate, read.lines);
            let parcel = Parcel::of(read).unwrap();
            let values: usize = before.iter().map(|(_, v)| v.len()).sum();
            assert!(values > 0, "{name}");
            assert_eq!(
                parcel.values.len(),
                values,
                "{name}: every value crosses as a number"
            );
            let mut opened = parcel.open().unwrap();
            assert_eq!(series(&mut opened.tracks), before, "{name}");
            assert_eq!(opened.tracks.layouts.len(), layouts, "{name}");
            assert_eq!(opened.tracks.node_events.len(), marks, "{name}");
            let after: Vec<String> = opened
                .analysis
                .findings
                .iter()
                .map(|f| f.title.clone())
                .collect();
            assert_eq!(after, findings, "{name}");
            assert_eq!(opened.versus, versus, "{name}");
            assert_eq!(
                (opened.business_rate, opened.lines),
                (rate, lines),
                "{name}"
            );
        }
    }

    #[test]
    fn a_parcel_that_does_not_add_up_is_refused() {
        let (read, _) = fixture("incident2-valkey");
        let whole = Parcel::of(read).unwrap();
        let with = |f: &dyn Fn(&mut Parcel)| {
            let mut p = Parcel {
                head: whole.head.clone(),
                values: whole.values.clone(),
                lengths: whole.lengths.clone(),
            };
            f(&mut p);
            p.open().unwrap_err()
        };
        assert!(with(&|p| {
            p.values.pop();
        })
        .contains("fewer values"));
        assert!(with(&|p| p.values.push(1.0)).contains("more values"));
        assert!(with(&|p| {
            p.lengths.pop();
        })
        .contains("fewer lengths"));
        assert!(with(&|p| p.lengths.push(0)).contains("more values"));
        assert!(with(&|p| p.head.truncate(10)).contains("bad parcel head"));
    }

    /// Fuzzing (`fuzz/fuzz_targets/parcel.rs`) found a head whose float came back one ulp off
    /// after opening and packing (serde_json's default parse is not exact; the workspace turns on
    /// `float_roundtrip`). The input it kept: the parcel opens, packs, and opens to the same head.
    #[test]
    fn a_float_comes_back_the_same_after_its_way_round() {
        let input = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/regressions/parcel/float-one-ulp-off-on-its-way-round"
        ))
        .unwrap();
        // As the fuzz target reads it: a count of lengths, the lengths, then the head.
        let k = usize::from(input[0] & 15);
        let lengths: Vec<u32> = input[1..=k].iter().map(|&b| u32::from(b)).collect();
        let total = lengths.iter().sum::<u32>() + u32::from(input[0] >> 4 & 1);
        let parcel = Parcel {
            head: String::from_utf8(input[1 + k..].to_vec()).unwrap(),
            values: (0..total).map(|i| i as f32 * 0.5).collect(),
            lengths,
        };
        let packed = Parcel::of(parcel.open().unwrap()).unwrap();
        let head = packed.head.clone();
        let again = Parcel::of(packed.open().unwrap()).unwrap();
        assert_eq!(again.head, head);
        assert!(
            head.contains("\"failed\":4.44444444444444"),
            "the float it found is in the head"
        );
    }
}
