//! The real `slotscope` binary, run as a user would: a child process recording a cluster, stopped
//! by its duration or by SIGTERM, and its recording read back through the core reader.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use slotscope_core::reader::RecordingReader;
use slotscope_core::recording::{Header, Line};

use crate::kind::workspace_root;

/// Path of the `slotscope` binary (`$SLOTSCOPE_BIN` if set), building it once if `cargo test` has
/// not.
pub fn slotscope_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // Test executables live in target/<profile>/deps, other binaries in target/<profile>,
        // which is where the slotscope binary is.
        if let Some(bin) = std::env::var_os("SLOTSCOPE_BIN") {
            return PathBuf::from(bin);
        }
        let exe = std::env::current_exe().expect("executable path");
        let mut profile_dir = exe.parent().expect("target/<profile>").to_owned();
        if profile_dir.ends_with("deps") {
            profile_dir.pop();
        }
        let bin = profile_dir.join("slotscope");
        if !bin.exists() {
            let status = Command::new(env!("CARGO"))
                .args(["build", "-p", "slotscope", "--bin", "slotscope"])
                .current_dir(workspace_root())
                .status()
                .expect("run cargo build -p slotscope");
            assert!(status.success(), "cargo build -p slotscope failed");
        }
        assert!(bin.exists(), "no slotscope binary at {}", bin.display());
        bin
    })
    .clone()
}

/// A running `slotscope record`.
pub struct Recorder {
    child: Option<Child>,
    out: PathBuf,
    started: Instant,
}

impl Recorder {
    /// Starts `slotscope record --out OUT ARGS…` with extra environment variables. Stdout and
    /// stderr are captured.
    pub fn start(out: &Path, args: &[&str], env: &[(&str, &str)]) -> Recorder {
        let mut cmd = Command::new(slotscope_bin());
        cmd.arg("record")
            .arg("--out")
            .arg(out)
            .args(args)
            .env_remove("SLOTSCOPE_PASSWORD")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("start slotscope record");
        Recorder {
            child: Some(child),
            out: out.to_owned(),
            started: Instant::now(),
        }
    }

    /// The recording's path.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Time since the recorder was started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The recorder's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Sends SIGTERM to the recorder (by its PID).
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Waits for the recorder to exit (at most `limit`, then it is killed and the test fails) and
    /// returns its exit status and output.
    pub fn wait(mut self, limit: Duration) -> Output {
        let mut child = self.child.take().expect("recorder running");
        let deadline = Instant::now() + limit;
        while child.try_wait().expect("poll recorder").is_none() {
            if Instant::now() >= deadline {
                let _ = child.kill();
                let out = child.wait_with_output().expect("recorder output");
                panic!(
                    "slotscope record did not exit within {limit:?}; stderr:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        child.wait_with_output().expect("recorder output")
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs `slotscope ARGS…` to completion (bounded by 60 s of the command's own doing).
pub fn run_slotscope(args: &[&str]) -> Output {
    Command::new(slotscope_bin())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run slotscope")
}

/// A recording read back: its header, every line with its number, and whether it ended in a
/// partial line. Panics on any bad line.
#[derive(Debug)]
pub struct Recording {
    /// The header.
    pub header: Header,
    /// Every event line, in order.
    pub lines: Vec<Line>,
    /// Line number of a partial last line, if any.
    pub truncated_tail: Option<u64>,
}

impl Recording {
    /// Reads `path` (plain or zstd) through the core reader.
    pub fn read(path: &Path) -> Recording {
        let file = File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
        let mut reader = RecordingReader::detect(BufReader::new(file)).expect("read recording");
        let header = reader.header().expect("recording header").clone();
        let mut lines = Vec::new();
        for item in reader.by_ref() {
            let (_, line) = item.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            lines.push(line);
        }
        Recording {
            header,
            lines,
            truncated_tail: reader.truncated_tail(),
        }
    }
}
