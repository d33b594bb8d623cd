//! The window of a recording a replay runs over: from the first moment every slot is covered (or
//! `--from`) to the recording's end (or `--to`), and why it starts where it does.

use slotscope_core::time::format_millis;
use slotscope_core::{TimeSpan, Timestamp};

use slotscope_core::moment::Moment;

/// Why the window starts where it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartReason {
    /// `--from`.
    Option,
    /// The first moment the recording shows every one of the 16384 slots with an owner.
    Covered,
    /// The recording's start, on a slot map assumed from the keys (it has no topology).
    Assumed,
}

impl StartReason {
    /// The reason in words, as reports give it.
    pub fn text(self) -> &'static str {
        match self {
            StartReason::Option => "--from",
            StartReason::Covered => "first moment all 16384 slots are covered",
            StartReason::Assumed => {
                "the recording's start; it has no topology (imported from metrics), so the slot \
                 map is assumed: one contiguous range per node in address order, its share of \
                 the slots its share of the keys"
            }
        }
    }
}

/// The span replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The recording's span.
    pub recording: TimeSpan,
    /// The span replayed (inside the recording's, not empty).
    pub span: TimeSpan,
    /// Why it starts there.
    pub start: StartReason,
    /// Whether `--to` set its end (else: the recording's end).
    pub end_option: bool,
}

impl Window {
    /// Why it ends there, in words.
    pub fn end_text(&self) -> &'static str {
        if self.end_option {
            "--to"
        } else {
            "end of the recording"
        }
    }

    /// The window as JSON: `from`, `to` (RFC 3339), `from_ms`, `to_ms`, `start_reason`,
    /// `end_reason`, `recording_from`, `recording_to`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "from": self.span.start.to_rfc3339(),
            "to": self.span.end.to_rfc3339(),
            "from_ms": self.span.start.0,
            "to_ms": self.span.end.0,
            "start_reason": self.start.text(),
            "end_reason": self.end_text(),
            "recording_from": self.recording.start.to_rfc3339(),
            "recording_to": self.recording.end.to_rfc3339(),
        })
    }

    /// One line: `from 05:17:14.250Z (+1.2s) to … (first moment …)`.
    pub fn text(&self) -> String {
        let at = |t: Timestamp| {
            format!(
                "{} (+{})",
                t.to_rfc3339(),
                format_millis(t.millis_since(self.recording.start))
            )
        };
        format!(
            "{} to {}, {} (start: {}; end: {})",
            at(self.span.start),
            at(self.span.end),
            format_millis(self.span.millis()),
            self.start.text(),
            self.end_text()
        )
    }
}

/// Why no window could be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowError {
    /// The slots are never all covered and no `--from` was given.
    #[error(
        "the recording never shows all 16384 slots covered, so there is no moment a client could \
         start on a working cluster; give --from to replay from a moment of your choice"
    )]
    NeverCovered,
    /// Every slot is covered only at the recording's very end.
    #[error("the recording's slots are all covered only at its end ({0}): nothing to replay")]
    CoveredAtEnd(String),
    /// A `--from`/`--to` outside the recording.
    #[error("--{which} {at} is outside the recording ({from} to {to})")]
    Outside {
        /// `from` or `to`.
        which: &'static str,
        /// The moment given.
        at: String,
        /// The recording's start.
        from: String,
        /// The recording's end.
        to: String,
    },
    /// `--from` is not before `--to` (or before the recording's end).
    #[error("the window is empty: it starts at {from} and ends at {to}")]
    Empty {
        /// The start.
        from: String,
        /// The end.
        to: String,
    },
}

/// Chooses the window of `recording`: from `from` (default: `covered_from`, the first moment
/// every slot is covered) to `to` (default: the recording's end). Moments outside the recording
/// and an empty window are errors.
pub fn choose(
    recording: TimeSpan,
    covered_from: Option<Timestamp>,
    from: Option<Moment>,
    to: Option<Moment>,
) -> Result<Window, WindowError> {
    let origin = recording.start;
    let outside = |which, t: Timestamp| WindowError::Outside {
        which,
        at: t.to_rfc3339(),
        from: recording.start.to_rfc3339(),
        to: recording.end.to_rfc3339(),
    };
    let inside = |t: Timestamp| recording.start <= t && t <= recording.end;
    let (start, reason) = match from {
        Some(f) => {
            let t = f.at(origin);
            if !inside(t) {
                return Err(outside("from", t));
            }
            (t, StartReason::Option)
        }
        None => {
            let t = covered_from.ok_or(WindowError::NeverCovered)?.max(origin);
            if t >= recording.end {
                return Err(WindowError::CoveredAtEnd(t.to_rfc3339()));
            }
            (t, StartReason::Covered)
        }
    };
    let end = match to {
        Some(x) => {
            let t = x.at(origin);
            if !inside(t) {
                return Err(outside("to", t));
            }
            t
        }
        None => recording.end,
    };
    if end <= start {
        return Err(WindowError::Empty {
            from: start.to_rfc3339(),
            to: end.to_rfc3339(),
        });
    }
    Ok(Window {
        recording,
        span: TimeSpan::new(start, end),
        start: reason,
        end_option: to.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_700_000_000_000;

    fn rec() -> TimeSpan {
        TimeSpan::new(Timestamp(T0), Timestamp(T0 + 60_000))
    }

    #[test]
    fn by_default_from_the_first_covered_moment_to_the_end() {
        let w = choose(rec(), Some(Timestamp(T0 + 7_000)), None, None).unwrap();
        assert_eq!(
            w.span,
            TimeSpan::new(Timestamp(T0 + 7_000), Timestamp(T0 + 60_000))
        );
        assert_eq!(w.start, StartReason::Covered);
        assert!(!w.end_option);
        assert!(w.text().contains("(+7.0s)"), "{}", w.text());
        assert!(w
            .text()
            .contains("first moment all 16384 slots are covered"));
        // A layout known before the first line counts from the recording's start.
        let w = choose(rec(), Some(Timestamp(T0 - 5)), None, None).unwrap();
        assert_eq!(w.span.start, Timestamp(T0));
    }

    #[test]
    fn from_and_to_choose_the_window() {
        let w = choose(
            rec(),
            Some(Timestamp(T0 + 7_000)),
            Some(Moment::Offset(1_000)),
            Some(Moment::At(Timestamp(T0 + 30_000))),
        )
        .unwrap();
        assert_eq!(
            w.span,
            TimeSpan::new(Timestamp(T0 + 1_000), Timestamp(T0 + 30_000))
        );
        assert_eq!(w.start, StartReason::Option);
        assert_eq!(w.end_text(), "--to");
        // --from needs no covered moment.
        assert!(choose(rec(), None, Some(Moment::Offset(0)), None).is_ok());
    }

    #[test]
    fn moments_outside_the_recording_and_empty_windows_are_refused() {
        let covered = Some(Timestamp(T0));
        assert!(matches!(
            choose(rec(), covered, Some(Moment::Offset(61_000)), None),
            Err(WindowError::Outside { which: "from", .. })
        ));
        assert!(matches!(
            choose(rec(), covered, Some(Moment::At(Timestamp(T0 - 1))), None),
            Err(WindowError::Outside { which: "from", .. })
        ));
        assert!(matches!(
            choose(rec(), covered, None, Some(Moment::Offset(60_001))),
            Err(WindowError::Outside { which: "to", .. })
        ));
        assert!(matches!(
            choose(
                rec(),
                covered,
                Some(Moment::Offset(20_000)),
                Some(Moment::Offset(10_000))
            ),
            Err(WindowError::Empty { .. })
        ));
        assert_eq!(
            choose(rec(), None, None, None),
            Err(WindowError::NeverCovered)
        );
        assert!(matches!(
            choose(rec(), Some(Timestamp(T0 + 60_000)), None, None),
            Err(WindowError::CoveredAtEnd(_))
        ));
    }
}
