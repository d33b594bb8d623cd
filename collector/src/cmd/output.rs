//! The output file of `record` and `tap`, created as the command line asks.

use std::path::Path;
use std::process::ExitCode;

use crate::store::sink::FileSink;

/// Creates `out`, as `OUT.tmp` until its header is on disk (zstd-compressed at level `zstd`, if given; replacing an existing file only with
/// `force`), or returns the exit status after saying why it cannot be made.
pub fn create_sink(out: &Path, zstd: Option<i32>, force: bool) -> Result<FileSink, ExitCode> {
    FileSink::create_named_on_flush(out, zstd, force).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            eprintln!(
                "error: {} already exists; choose another --out or pass --force to overwrite it",
                out.display()
            );
        } else {
            eprintln!("error: cannot create {}: {e}", out.display());
        }
        ExitCode::from(2)
    })
}
