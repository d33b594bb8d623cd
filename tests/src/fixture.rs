//! Keeping a live scenario's recording as a fixture (`scripts/regenerate-fixtures`).

use std::path::Path;

use serde_json::Value;

/// The environment variable that makes passing scenarios keep their recordings.
pub const REGENERATE_ENV: &str = "SLOTSCOPE_REGENERATE_FIXTURES";

/// With [`REGENERATE_ENV`] set, keeps the recording and the clients' summaries as
/// `tests/fixtures/<name>.jsonl.zst` and `<name>.client.json`; does nothing otherwise.
///
/// # Panics
///
/// If the files cannot be written.
pub fn keep(name: &str, recording: &Path, clients: &Value) {
    if std::env::var_os(REGENERATE_ENV).is_none() {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(recording, dir.join(format!("{name}.jsonl.zst"))).unwrap();
    let mut text = serde_json::to_string(clients).unwrap();
    text.push('\n');
    std::fs::write(dir.join(format!("{name}.client.json")), text).unwrap();
    eprintln!("kept tests/fixtures/{name}.jsonl.zst");
}
