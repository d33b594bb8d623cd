//! A loaded recording as the viewer holds it: its tracks, reduced for drawing, and its analysis,
//! from what the reader found ([`slotscope_reader::Read`]) or from an overview.

use std::rc::Rc;

use slotscope_core::analysis::Analysis;
use slotscope_core::overview::{min_max, Overview, COLUMNS};
use slotscope_core::tap::Versus;
use slotscope_core::track::Tracks;
use slotscope_reader::{Deltas, Read};

use crate::reader::DeltaSource;

/// Everything the viewer shows of one recording.
#[derive(Debug)]
pub struct Dataset {
    /// Display name (file name or URL).
    pub name: String,
    /// The time tracks.
    pub tracks: Tracks,
    /// The tracks reduced for drawing long windows, finest first ([`Pyramid`]).
    pub pyramid: Pyramid,
    /// Findings, story, census and summary (its per-node metrics stay with the reader, which
    /// answers [`Dataset::deltas`]).
    pub analysis: Analysis,
    /// Lines read (the header included).
    pub lines: u64,
    /// The tapped client's per-command counts beside the servers' (empty without tap lines).
    pub versus: Vec<Versus>,
    /// The observed business rate, the what-if's default (`None`: no business command seen).
    pub business_rate: Option<u32>,
    /// The recording's bytes as loaded (plain or zstd), kept so the what-if replay can read the
    /// lines again (see `crate::whatif`).
    pub bytes: Rc<[u8]>,
    /// Where the deltas over a selection come from.
    pub deltas: DeltaSource,
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
            versus: Vec::new(),
            business_rate: None,
            bytes: Rc::from(Vec::new()),
            deltas: DeltaSource::None,
        }
    }

    /// What the reader found in the recording `bytes` (all of it, or the part read so far), with
    /// where its deltas come from.
    pub fn read(
        name: impl Into<String>,
        read: Read,
        bytes: Rc<[u8]>,
        deltas: DeltaSource,
    ) -> Dataset {
        Dataset {
            name: name.into(),
            pyramid: Pyramid::of(&read.tracks),
            tracks: read.tracks,
            analysis: read.analysis,
            lines: read.lines,
            versus: read.versus,
            business_rate: read.business_rate,
            bytes,
            deltas,
        }
    }

    /// The counter deltas over `window` (epoch milliseconds): none for an overview or a preview.
    pub async fn deltas(&self, window: (u64, u64)) -> Deltas {
        self.deltas.over(window).await
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

/// The fixture recordings shared with the core's tests (native tests only): read in process and
/// handed over as the reader module hands it, through a [`slotscope_reader::Parcel`].
#[cfg(test)]
pub(crate) fn fixture(name: &str) -> Dataset {
    let path = format!(
        "{}/../tests/fixtures/{name}.jsonl.zst",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(path).unwrap();
    let (read, metrics) = slotscope_reader::Parser::new(bytes.clone())
        .unwrap()
        .run()
        .unwrap();
    let read = slotscope_reader::Parcel::of(read).unwrap().open().unwrap();
    let deltas = DeltaSource::Metrics(Rc::new(metrics));
    Dataset::read(name, read, bytes.into(), deltas)
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    use super::*;

    /// What a future that never waits gives (the in-process deltas answer at once).
    fn now<T>(f: impl Future<Output = T>) -> T {
        match std::pin::pin!(f).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(v) => v,
            Poll::Pending => panic!("the future waited"),
        }
    }

    #[test]
    fn a_read_recording_answers_deltas_and_an_overview_none() {
        let data = fixture("incident2-valkey");
        let d = now(data.deltas(data.span()));
        assert_eq!(d.nodes.len(), 2);
        assert!(d.nodes.iter().all(|n| n.calls > 0), "{d:?}");
        assert!(!d.commands.is_empty());
        assert!(data.business_rate.is_some_and(|r| r > 0));
        assert!(!data.pyramid.levels.is_empty() || data.tracks.grid.buckets <= COLUMNS);

        let path = format!(
            "{}/../tests/fixtures/incident2-valkey.jsonl.zst",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(path).unwrap();
        let len = u64::try_from(bytes.len()).unwrap();
        let overview = Overview::of_recording(std::io::Cursor::new(bytes), len).unwrap();
        let shown = Dataset::from_overview("incident2", overview);
        assert_eq!(now(shown.deltas(data.span())), Deltas::default());
    }
}
