//! A file a killed command left, read back without trusting it: through the core reader (a partial
//! last line is a crash's cut, any other bad line an error) and through `slotscope summary` and
//! `analyze`, as a user would open it.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use slotscope_core::reader::RecordingReader;
use slotscope_core::recording::{EndReason, Line};
use slotscope_core::Timestamp;

/// A recording file as read back.
#[derive(Clone, Debug)]
pub struct Left {
    /// The file.
    pub path: PathBuf,
    /// Every complete line, the header first.
    pub lines: Vec<Line>,
    /// Why it ended, if it has an end line.
    pub end: Option<EndReason>,
    /// The line number of a partial last line, if the reader skipped one.
    pub truncated_tail: Option<u64>,
}

impl Left {
    /// Reads `path`; an error says what is wrong with it.
    pub fn read(path: &Path) -> Result<Left, String> {
        let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut reader = RecordingReader::detect(BufReader::new(file))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let header = reader
            .header()
            .map_err(|e| format!("{}: no header: {e}", path.display()))?
            .clone();
        let mut lines = vec![Line::Header(header)];
        for item in reader.by_ref() {
            let (_, line) = item.map_err(|e| format!("{}: {e}", path.display()))?;
            lines.push(line);
        }
        let end = match lines.last() {
            Some(Line::End(e)) => Some(e.reason),
            _ => None,
        };
        Ok(Left {
            path: path.to_owned(),
            lines,
            end,
            truncated_tail: reader.truncated_tail(),
        })
    }

    /// Its poll rounds.
    pub fn rounds(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l, Line::PollRound(_)))
            .count()
    }

    /// The times of its samples of the cluster (`INFO` of a node, or a command the tap saw).
    fn sample_times(&self) -> impl Iterator<Item = Timestamp> + '_ {
        self.lines.iter().filter_map(|l| match l {
            Line::Info(s) => Some(s.t),
            Line::TapCommand(c) => Some(c.t),
            _ => None,
        })
    }

    /// The time of its last sample.
    pub fn last_sample(&self) -> Option<Timestamp> {
        self.sample_times().max()
    }

    /// The time of its first sample.
    pub fn first_sample(&self) -> Option<Timestamp> {
        self.sample_times().min()
    }
}

/// Opens `path` with `slotscope summary` and `slotscope analyze` (`bin`); an error names the
/// command that failed and its message.
pub fn open_as_user(bin: &Path, path: &Path) -> Result<(), String> {
    for args in [&["summary"][..], &["analyze", "--format", "json"][..]] {
        let out = Command::new(bin)
            .args(args)
            .arg(path)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("run slotscope {}: {e}", args[0]))?;
        if !out.status.success() {
            return Err(format!(
                "slotscope {} {}: {}: {}",
                args[0],
                path.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    Ok(())
}

/// The files in `dir` whose names start with `prefix`, split into final names and temporary ones
/// (`NAME.tmp`, and a recording's reserve `.NAME.reserve`), each sorted; the harness's logs
/// (`.log`) and the overviews beside recordings (`.overview.json`) left out.
pub fn files_named(dir: &Path, prefix: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut finals = Vec::new();
    let mut tmps = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // A recording's reserve, `.NAME.reserve`, is temporary too.
            let reserve = name
                .strip_prefix('.')
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".reserve"));
            let other = name.ends_with(".log") || name.ends_with(".overview.json");
            if (!name.starts_with(prefix) && !reserve) || other {
                continue;
            }
            if name.ends_with(".tmp") || reserve {
                tmps.push(e.path());
            } else {
                finals.push(e.path());
            }
        }
    }
    finals.sort();
    tmps.sort();
    (finals, tmps)
}
