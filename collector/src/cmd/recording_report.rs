//! What the commands that report on one recording (`analyze`, `summary`) do around their report:
//! say why the recording could not be read, or warn of each line that could not be, and choose
//! the exit status.

use std::process::ExitCode;

use crate::store::input::{Input, InputError};

/// Prints the report `render` makes of `read` (a recording as read, `input` giving what reading it
/// met), then a warning for each unreadable line. Fails when the recording could not be read at
/// all (nothing printed but the error) or had unreadable lines.
pub fn print<T>(
    read: Result<T, InputError>,
    input: impl Fn(&T) -> &Input,
    render: impl FnOnce(&T),
) -> ExitCode {
    let read = match read {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    render(&read);
    let bad_lines = &input(&read).bad_lines;
    for e in bad_lines {
        eprintln!("warning: {e}");
    }
    if bad_lines.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
