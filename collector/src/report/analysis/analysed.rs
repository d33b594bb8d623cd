//! A recording read and analysed, with what reading the file met.

use std::path::Path;

use slotscope_core::analysis::{Analysis, Analyzer};

use crate::store::input::{read_recording, Input, InputError};

/// An analysis and what reading the file met.
pub struct Analysed {
    /// The analysis.
    pub analysis: Analysis,
    /// Bad lines, truncation, file size.
    pub input: Input,
}

/// Reads and analyses `path`.
pub fn analyse(path: &Path) -> Result<Analysed, InputError> {
    let (mut analyzer, input) =
        read_recording(path, |h| Analyzer::new(h.clone()), |a, line| a.push(line))?;
    analyzer.set_truncated_tail(input.truncated_tail);
    Ok(Analysed {
        analysis: analyzer.finish(),
        input,
    })
}
