//! Where a built viewer is on disk: the directory given with `--dist`, checked, or the first
//! `web/dist` found from the current directory or the executable's upwards. Used by
//! [`crate::serve::server`] when the binary embeds no viewer, or to tell one on disk that differs.

use std::path::{Path, PathBuf};

/// The viewer's directory given with `--dist`, canonical, if it holds a built viewer.
pub fn checked_dist(dir: &Path) -> Result<PathBuf, String> {
    if !dir.join("index.html").is_file() {
        return Err(format!(
            "{} holds no built viewer (no index.html); build the viewer with scripts/build-web \
             (from a slotscope checkout), or pass its output directory with --dist",
            dir.display()
        ));
    }
    dir.canonicalize()
        .map_err(|e| format!("{}: {e}", dir.display()))
}

/// Where [`find_dist`] looks from: the current directory, then the executable's.
pub fn search_starts() -> Vec<PathBuf> {
    let mut starts = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        starts.push(cwd);
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.canonicalize().ok())
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        starts.push(dir);
    }
    starts
}

/// The first `web/dist` holding an `index.html` in `starts[0]` or a directory above it, then in
/// `starts[1]` or above, …; canonical.
pub fn find_dist(starts: &[PathBuf]) -> Option<PathBuf> {
    starts
        .iter()
        .flat_map(|start| start.ancestors())
        .map(|dir| dir.join("web").join("dist"))
        .find(|dist| dist.join("index.html").is_file())
        .and_then(|dist| dist.canonicalize().ok())
}
