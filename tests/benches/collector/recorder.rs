//! The `slotscope` binary the bench runs, and one running `slotscope record` of it.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use slotscope_core::NodeAddr;
use slotscope_tests::kind::workspace_root;

use crate::proc_figures::{self, ProcFigures};

/// `$SLOTSCOPE_BIN`, else `target/release/slotscope` after `cargo build --release -p slotscope`.
pub fn slotscope_release_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("SLOTSCOPE_BIN").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "$SLOTSCOPE_BIN names {}, which does not exist",
            p.display()
        );
        return p;
    }
    // The bench runs from target/release/deps; the binary lands in target/release.
    let exe = std::env::current_exe().expect("bench executable path");
    let release = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/release")
        .to_path_buf();
    let mut build = Command::new(env!("CARGO"));
    build
        .args([
            "build",
            "--release",
            "-p",
            "slotscope",
            "--bin",
            "slotscope",
        ])
        .current_dir(workspace_root());
    // `cargo bench` runs this bench with the variables of the tests package set; build scripts
    // that watch them (ring watches CARGO_MANIFEST_DIR) would rebuild on every run.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("CARGO_PKG_")
            || matches!(
                &*k,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "OUT_DIR"
            )
        {
            build.env_remove(&*k);
        }
    }
    let status = build
        .status()
        .expect("run cargo build --release -p slotscope");
    assert!(
        status.success(),
        "cargo build --release -p slotscope failed"
    );
    let bin = release.join("slotscope");
    assert!(
        bin.is_file(),
        "no slotscope binary at {}; set SLOTSCOPE_BIN",
        bin.display()
    );
    bin
}

/// A running `slotscope record`, killed on drop if still running.
pub struct Collector {
    /// The process, `None` once waited for.
    child: Option<Child>,
    /// The recording it writes.
    out: PathBuf,
    /// The file its stderr goes to (the recording's path plus `.stderr`).
    stderr: PathBuf,
    /// When it was started.
    pub started: Instant,
}

impl Collector {
    /// Starts `bin record --seed <seed> --out <out> --interval 1s --quiet`, stderr to a file.
    pub fn start(bin: &Path, seed: &NodeAddr, out: &Path) -> Collector {
        Collector::start_with(bin, seed, out, &[])
    }

    /// As [`Collector::start`], with `extra` arguments after the others.
    pub fn start_with(bin: &Path, seed: &NodeAddr, out: &Path, extra: &[&str]) -> Collector {
        let mut stderr = out.as_os_str().to_owned();
        stderr.push(".stderr");
        let stderr = PathBuf::from(stderr);
        let err_file = File::create(&stderr).expect("create the collector's stderr file");
        let child = Command::new(bin)
            .arg("record")
            .arg("--seed")
            .arg(seed.to_string())
            .arg("--out")
            .arg(out)
            .args(["--interval", "1s", "--quiet"])
            .args(extra)
            .env_remove("SLOTSCOPE_PASSWORD")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err_file)
            .spawn()
            .expect("start slotscope record");
        Collector {
            child: Some(child),
            out: out.to_owned(),
            stderr,
            started: Instant::now(),
        }
    }

    /// Its process id (0 once waited for).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// What it wrote to stderr so far.
    fn stderr_text(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Panics if the collector has already exited.
    pub fn check_running(&mut self) {
        let child = self.child.as_mut().expect("collector running");
        if let Some(status) = child.try_wait().expect("poll the collector") {
            panic!(
                "slotscope record ({}) exited early with {status}; stderr:\n{}",
                self.out.display(),
                self.stderr_text()
            );
        }
    }

    /// `VmRSS` now, in KiB (0 if unreadable).
    pub fn rss_kib(&self) -> u64 {
        proc_figures::rss_kib(self.pid())
    }

    /// Peak RSS and CPU ticks so far, from `/proc`.
    pub fn proc_figures(&self) -> ProcFigures {
        ProcFigures::read(self.pid(), self.started.elapsed())
    }

    /// SIGTERM by PID.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM {} failed", self.pid());
    }

    /// Waits (at most `limit`) for a clean exit.
    pub fn wait(mut self, limit: Duration) {
        let mut child = self.child.take().expect("collector running");
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = child.try_wait().expect("poll the collector") {
                assert!(
                    status.success(),
                    "slotscope record ({}) exited with {status}; stderr:\n{}",
                    self.out.display(),
                    self.stderr_text()
                );
                return;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "slotscope record ({}) did not exit within {limit:?} of SIGTERM; stderr:\n{}",
                    self.out.display(),
                    self.stderr_text()
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
