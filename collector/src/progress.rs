//! The live one-line progress display on a terminal; silent when stderr is not a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use slotscope_core::quantity::human_bytes;

/// Figures shown on the progress line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    /// Nodes being polled.
    pub nodes: usize,
    /// Of which currently unreachable.
    pub down: usize,
    /// Poll rounds done.
    pub rounds: u64,
    /// Successful node samples.
    pub samples: u64,
    /// Failed node polls.
    pub failures: u64,
    /// Bytes written to the file.
    pub bytes: u64,
}

/// The progress line.
pub struct Progress {
    enabled: bool,
    started: Instant,
    shown: bool,
}

impl Progress {
    /// A progress line on stderr, enabled only if stderr is a terminal.
    pub fn on_stderr() -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            started: Instant::now(),
            shown: false,
        }
    }

    /// A progress line that never shows (`--quiet`).
    pub fn disabled() -> Progress {
        Progress {
            enabled: false,
            started: Instant::now(),
            shown: false,
        }
    }

    /// Redraws the line.
    pub fn update(&mut self, f: &Figures) {
        if !self.enabled {
            return;
        }
        let line = render(self.started.elapsed(), f);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        self.shown = true;
    }

    /// Ends the line so later output starts on a fresh one.
    pub fn finish(&mut self) {
        if self.enabled && self.shown {
            eprintln!();
            self.shown = false;
        }
    }
}

/// The text of the progress line.
pub fn render(elapsed: Duration, f: &Figures) -> String {
    let s = elapsed.as_secs();
    format!(
        "recording {:02}:{:02}:{:02}  nodes {}{}  rounds {}  samples {}  failures {}  file {}",
        s / 3600,
        s / 60 % 60,
        s % 60,
        f.nodes,
        if f.down > 0 {
            format!(" ({} down)", f.down)
        } else {
            String::new()
        },
        f.rounds,
        f.samples,
        f.failures,
        human_bytes(f.bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_line_shows_every_figure() {
        let f = Figures {
            nodes: 3,
            down: 1,
            rounds: 42,
            samples: 120,
            failures: 6,
            bytes: 1536,
        };
        assert_eq!(
            render(Duration::from_millis(42_500), &f),
            "recording 00:00:42  nodes 3 (1 down)  rounds 42  samples 120  failures 6  file 1.5 KiB"
        );
    }
}
