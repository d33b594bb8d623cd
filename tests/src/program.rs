//! A program run as a child process by a test: bounded by a time limit, its output captured (a
//! client prints one JSON summary line to stdout when it ends, logs to stderr), asked to stop with
//! SIGTERM by its PID, and killed by its PID when dropped, so a failing test never leaves it running.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// What a finished program left behind.
#[derive(Debug)]
pub struct Output {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it printed to stdout.
    pub stdout: String,
    /// Everything it printed to stderr.
    pub stderr: String,
    /// How long it ran.
    pub elapsed: Duration,
}

impl Output {
    /// The last stdout line parsed as JSON (a client's summary).
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

/// A running program.
pub struct Program {
    label: String,
    child: Option<Child>,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
    started: Instant,
    limit: Duration,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("label", &self.label)
            .field("pid", &self.pid())
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl Program {
    /// Starts `command` (its stdin closed, stdout and stderr captured); `label` names it in
    /// messages. It may run for at most `limit` from now: [`Program::wait`] kills it and fails
    /// after that.
    ///
    /// # Panics
    ///
    /// If the process cannot be spawned.
    pub fn start(label: String, mut command: Command, limit: Duration) -> Program {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {label}: {e}"));
        let stdout = child.stdout.take().map(drain);
        let stderr = child.stderr.take().map(drain);
        Program {
            label,
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
    pub fn wait(mut self) -> Output {
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
        Output {
            status,
            stdout,
            stderr,
            elapsed: self.started.elapsed(),
        }
    }

    /// [`Program::terminate`], then [`Program::wait`].
    pub fn stop(self) -> Output {
        self.terminate();
        self.wait()
    }
}

impl Drop for Program {
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
