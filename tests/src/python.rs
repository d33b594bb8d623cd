//! Real Python cluster clients (pinned redis-py releases) run as child processes.
//!
//! `scripts/setup` creates one virtual environment per redis-py release under
//! `<workspace>/.tools/py/redis-<version>` (override the directory with `$SLOTSCOPE_PY_DIR`); the
//! client scripts live in `tests/scenarios/`. A [`PyClient`] runs one script with arguments, bounded
//! by a time limit, captures its output (a script prints one JSON summary line to stdout when it
//! ends, logs to stderr) and is killed by its PID when dropped, so a failing test never leaves a
//! client running.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::kind::workspace_root;

/// Environment variable naming the directory holding the `redis-<version>` virtual environments.
pub const PY_DIR_ENV: &str = "SLOTSCOPE_PY_DIR";

/// The redis-py release whose asyncio cluster client drops its startup nodes (incident 1).
pub const REDIS_PY_5_0_0: &str = "5.0.0";
/// The redis-py release that keeps them (and that incident 2 ran).
pub const REDIS_PY_8_0_0: &str = "8.0.0";
/// The newest 8.x release, the one the fidelity matrix runs beside 5.0.0 (`tests/src/matrix`).
pub const REDIS_PY_8_1_0: &str = "8.1.0";

/// The directory of the virtual environments.
pub fn venv_root() -> PathBuf {
    std::env::var_os(PY_DIR_ENV)
        .filter(|p| !p.is_empty())
        .map_or_else(|| workspace_root().join(".tools/py"), PathBuf::from)
}

/// The Python interpreter of the virtual environment with redis-py `version`.
///
/// # Panics
///
/// If the environment is missing or imports another redis-py version, with a message telling to
/// run `scripts/setup`.
pub fn venv_python(version: &str) -> PathBuf {
    let python = venv_root().join(format!("redis-{version}/bin/python"));
    assert!(
        python.is_file(),
        "no Python environment with redis-py {version} at {}: run scripts/setup from the \
         repository root",
        python.display()
    );
    let out = Command::new(&python)
        .args(["-c", "import redis; print(redis.__version__)"])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    let found = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        out.status.success() && found == version,
        "{} imports redis-py {found:?}, expected {version} ({}): run scripts/setup",
        python.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    python
}

/// A script of `tests/scenarios/`.
///
/// # Panics
///
/// If it does not exist.
pub fn scenario_script(name: &str) -> PathBuf {
    let p = workspace_root().join("tests/scenarios").join(name);
    assert!(p.is_file(), "no scenario script {}", p.display());
    p
}

/// What a finished client left behind.
#[derive(Debug)]
pub struct PyOutput {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it printed to stdout.
    pub stdout: String,
    /// Everything it printed to stderr.
    pub stderr: String,
    /// How long it ran.
    pub elapsed: Duration,
}

impl PyOutput {
    /// The last stdout line parsed as JSON (the scripts' summary).
    ///
    /// # Panics
    ///
    /// If the process failed or the line is not JSON; the message carries stderr.
    pub fn summary(&self) -> serde_json::Value {
        assert!(
            self.status.success(),
            "client exited with {}\n--- stderr ---\n{}",
            self.status,
            self.stderr
        );
        let line = self.stdout.lines().last().unwrap_or_default();
        serde_json::from_str(line).unwrap_or_else(|e| {
            panic!(
                "client summary is not JSON ({e}): {line:?}\n--- stderr ---\n{}",
                self.stderr
            )
        })
    }
}

/// A running Python client script.
pub struct PyClient {
    label: String,
    child: Option<Child>,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
    started: Instant,
    limit: Duration,
}

impl std::fmt::Debug for PyClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyClient")
            .field("label", &self.label)
            .field("pid", &self.pid())
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl PyClient {
    /// Starts `tests/scenarios/<script> ARGS…` with the redis-py `version` environment. The client
    /// may run for at most `limit` from now: [`PyClient::wait`] kills it and fails after that.
    ///
    /// # Panics
    ///
    /// If the environment or the script is missing, or the process cannot be spawned.
    pub fn start(version: &str, script: &str, args: &[String], limit: Duration) -> PyClient {
        let python = venv_python(version);
        let path = scenario_script(script);
        let mut child = Command::new(&python)
            // -u: unbuffered, so stderr lines arrive as they are written.
            .arg("-u")
            .arg(&path)
            .args(args)
            .current_dir(path.parent().expect("scenarios directory"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {} {}: {e}", python.display(), path.display())
            });
        let stdout = child.stdout.take().map(drain);
        let stderr = child.stderr.take().map(drain);
        PyClient {
            label: format!("{script} (redis-py {version})"),
            child: Some(child),
            stdout,
            stderr,
            started: Instant::now(),
            limit,
        }
    }

    /// The process id (0 once it has been waited for).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Whether the process has ended.
    pub fn is_finished(&mut self) -> bool {
        self.child
            .as_mut()
            .is_none_or(|c| c.try_wait().ok().flatten().is_some())
    }

    /// Asks the client to stop with SIGTERM (by its PID); it then prints its summary and exits.
    pub fn terminate(&self) {
        let pid = self.pid();
        if pid == 0 {
            return;
        }
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// Waits until the client exits, at most until its time limit (then it is killed and the test
    /// fails with its stderr), and returns what it printed.
    ///
    /// # Panics
    ///
    /// If the limit runs out.
    pub fn wait(mut self) -> PyOutput {
        let mut child = self.child.take().expect("a client is waited for once");
        let deadline = self.started + self.limit;
        let status = loop {
            if let Some(status) = child.try_wait().expect("poll the client") {
                break Some(status);
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            thread::sleep(Duration::from_millis(20));
        };
        let stdout = self.stdout.take().map(join).unwrap_or_default();
        let stderr = self.stderr.take().map(join).unwrap_or_default();
        let Some(status) = status else {
            panic!(
                "{} did not exit within {:?}; killed\n--- stderr ---\n{stderr}",
                self.label, self.limit
            );
        };
        PyOutput {
            status,
            stdout,
            stderr,
            elapsed: self.started.elapsed(),
        }
    }

    /// [`PyClient::terminate`], then [`PyClient::wait`].
    pub fn stop(self) -> PyOutput {
        self.terminate();
        self.wait()
    }
}

impl Drop for PyClient {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SIGKILL to this child's PID only.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn drain(mut r: impl Read + Send + 'static) -> JoinHandle<String> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

fn join(h: JoinHandle<String>) -> String {
    h.join().unwrap_or_default()
}
