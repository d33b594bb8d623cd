//! Running the real `slotscope` binary from the collector's integration tests.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `slotscope ARGS…` without `SLOTSCOPE_PASSWORD` in its environment.
pub fn slotscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_slotscope"))
        .args(args)
        .env_remove("SLOTSCOPE_PASSWORD")
        .output()
        .expect("run slotscope")
}

/// Stdout and stderr together.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A fresh, empty directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("slotscope-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
