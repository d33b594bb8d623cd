//! The files of a built viewer bundle (`web/dist`) as the binary embeds them: every file under the
//! directory by its `/`-separated path relative to it, dotfiles and dot-directories skipped,
//! symbolic links followed, sorted by that path. Shared by `build.rs` (which embeds them, reading
//! this file through `#[path]`) and [`crate::serve::bundle`] (which tells a bundle on disk that
//! differs from the embedded one), so that both see the same files.

use std::io::{Error, ErrorKind};
use std::path::{Path, PathBuf};

/// Every file under `dir`: (relative path, path), sorted by relative path. A name that is not
/// UTF-8 cannot be served: an error that names it.
pub fn files_under(dir: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut files = Vec::new();
    walk(dir, "", &mut files)?;
    files.sort();
    Ok(files)
}

/// Adds the files under `dir` (itself at `rel` in the bundle, empty for its root) to `files`.
fn walk(dir: &Path, rel: &str, files: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!(
                    "{}: a file name that is not UTF-8 cannot be served; rename or remove it",
                    path.display()
                ),
            ));
        };
        if name.starts_with('.') {
            continue;
        }
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let meta = std::fs::metadata(&path)?;
        if meta.is_dir() {
            walk(&path, &child, files)?;
        } else if meta.is_file() {
            files.push((child, path));
        }
    }
    Ok(())
}
