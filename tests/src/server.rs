//! One server process in cluster mode, owned by the test that started it.
//!
//! The server runs in the foreground as a child of the test process (never daemonized), with its
//! data, cluster config and log in a private temporary directory, listening on 127.0.0.1 only.
//! Dropping a [`Server`] kills its child by PID (SIGKILL, which also ends a paused process) and reaps
//! it, so servers are cleaned up when a test panics too.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use slotscope_core::NodeAddr;
use tempfile::TempDir;

use crate::client::Client;
use crate::kind::ServerKind;
use crate::port::free_port;

/// How long [`Server::start`] waits for the first answer to `PING`.
pub const START_TIMEOUT: Duration = Duration::from_secs(10);
/// Cluster node timeout (`cluster-node-timeout`, milliseconds) every test server runs with.
pub const NODE_TIMEOUT_MS: u64 = 2000;
/// How many ports [`Server::start`] tries when one turns out to be taken.
const PORT_ATTEMPTS: usize = 5;

/// Settings of a server beyond the fixed cluster-mode ones.
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// `requirepass` (the `default` user's password); clients of the harness then authenticate.
    pub password: Option<String>,
    /// `masterauth`: the password a replica gives its master.
    pub masterauth: Option<String>,
    /// ACL rules, one user a line as in a config file, without the leading `user`:
    /// `"slotscope on >secret ~* &* -@all +ping"`.
    pub acl_users: Vec<String>,
    /// Further config as `(name, value)` pairs, each passed as `--name value`.
    pub extra: Vec<(String, String)>,
}

/// Whether the process runs, is stopped (SIGSTOP) or is gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerState {
    /// Running and answering.
    Running,
    /// Stopped by [`Server::pause`]: connections are accepted by the kernel but never answered.
    Paused,
    /// Killed by [`Server::kill`] and reaped.
    Killed,
}

/// A running server process.
pub struct Server {
    kind: ServerKind,
    port: u16,
    password: Option<String>,
    child: Child,
    state: ServerState,
    dir: TempDir,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("kind", &self.kind)
            .field("port", &self.port)
            .field("pid", &self.child.id())
            .field("state", &self.state)
            .field("dir", &self.dir.path())
            .finish()
    }
}

impl Server {
    /// Starts a cluster-mode server on a free port and waits until it answers `PING`.
    ///
    /// # Panics
    ///
    /// If the binary is missing (see [`ServerKind::binary`]), or the server does not come up within
    /// [`START_TIMEOUT`]; the message then carries the end of the server's log.
    pub fn start(kind: ServerKind, opts: &ServerOptions) -> Server {
        let bin = kind.binary();
        let mut dir = server_dir(kind);
        let mut last_failure = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port();
            let child = spawn(&bin, dir.path(), port, opts);
            let mut server = Server {
                kind,
                port,
                password: opts.password.clone(),
                child,
                state: ServerState::Running,
                dir,
            };
            match server.wait_ready() {
                Ok(()) => return server,
                Err(Startup::PortTaken) => {
                    last_failure = format!("port {port} was taken");
                    server.kill();
                    // Reuse the directory for the next port.
                    dir = std::mem::replace(&mut server.dir, server_dir(kind));
                }
                Err(Startup::Failed(why)) => panic!(
                    "{kind} server ({}) on port {port} did not start: {why}\n--- log tail ---\n{}",
                    bin.display(),
                    server.log_tail(40)
                ),
            }
        }
        panic!("{kind} server did not start after {PORT_ATTEMPTS} ports: {last_failure}");
    }

    /// Polls until the server answers `PING` (any reply, `NOAUTH` included), the child exits, or
    /// [`START_TIMEOUT`] passes.
    fn wait_ready(&mut self) -> Result<(), Startup> {
        let deadline = Instant::now() + START_TIMEOUT;
        let addr = self.addr();
        loop {
            if let Some(status) = self
                .child
                .try_wait()
                .map_err(|e| Startup::Failed(e.to_string()))?
            {
                self.state = ServerState::Killed;
                let log = self.log_tail(40);
                return Err(if log.contains("Address already in use") {
                    Startup::PortTaken
                } else {
                    Startup::Failed(format!("process exited with {status}"))
                });
            }
            if let Ok(mut c) = Client::connect_timeout(&addr, Duration::from_millis(500)) {
                if c.cmd(&["PING"]).is_ok() {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(Startup::Failed(format!(
                    "no answer to PING within {START_TIMEOUT:?}"
                )));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Which server this is.
    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The client port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:<port>`.
    pub fn addr(&self) -> NodeAddr {
        NodeAddr::new("127.0.0.1", self.port).expect("host is not empty")
    }

    /// The `default` user's password, if the server requires one.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The process id of the server.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process runs, is paused or is gone.
    pub fn state(&self) -> ServerState {
        self.state
    }

    /// The server's private directory (data, `nodes-<port>.conf`, `server.log`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server's log file.
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    /// The last `lines` lines of the server's log and console output.
    pub fn log_tail(&self, lines: usize) -> String {
        let mut out = String::new();
        for name in ["server.log", "console.log"] {
            let text = std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
            let all: Vec<&str> = text.lines().collect();
            for l in &all[all.len().saturating_sub(lines)..] {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }

    /// A new connection, authenticated as `default` when the server has a password.
    pub fn try_client(&self) -> io::Result<Client> {
        Client::connect_auth(&self.addr(), self.password())
    }

    /// A new connection, authenticated as `default` when the server has a password.
    ///
    /// # Panics
    ///
    /// If the server cannot be reached or rejects the password.
    pub fn client(&self) -> Client {
        self.try_client().unwrap_or_else(|e| {
            panic!(
                "{} server {}: cannot connect: {e}\n--- log tail ---\n{}",
                self.kind,
                self.addr(),
                self.log_tail(20)
            )
        })
    }

    /// Stops the process with SIGSTOP: it keeps its sockets but answers nothing until
    /// [`Server::resume`].
    ///
    /// # Panics
    ///
    /// If the server is not running, or the signal cannot be sent.
    pub fn pause(&mut self) {
        assert_eq!(self.state, ServerState::Running, "pause a running server");
        signal(self.pid(), "STOP");
        wait_stopped(self.pid(), true);
        self.state = ServerState::Paused;
    }

    /// Continues a paused process with SIGCONT.
    ///
    /// # Panics
    ///
    /// If the server is not paused, or the signal cannot be sent.
    pub fn resume(&mut self) {
        assert_eq!(self.state, ServerState::Paused, "resume a paused server");
        signal(self.pid(), "CONT");
        wait_stopped(self.pid(), false);
        self.state = ServerState::Running;
    }

    /// Kills the process with SIGKILL and reaps it. Does nothing if it is already gone.
    pub fn kill(&mut self) {
        if self.state == ServerState::Killed {
            return;
        }
        // Child::kill sends SIGKILL to this child's PID; a stopped process dies of it too.
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.state = ServerState::Killed;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Why a start attempt failed.
enum Startup {
    /// Another process took the port between the check and the server's bind.
    PortTaken,
    /// Anything else.
    Failed(String),
}

/// Spawns the server in the foreground with its fixed cluster-mode config and `opts`.
fn spawn(bin: &Path, dir: &Path, port: u16, opts: &ServerOptions) -> Child {
    let mut args: Vec<String> = Vec::new();
    let mut set = |name: &str, value: &str| {
        args.push(format!("--{name}"));
        args.push(value.to_owned());
    };
    set("port", &port.to_string());
    set("bind", "127.0.0.1");
    set("daemonize", "no");
    set("dir", &dir.display().to_string());
    set("logfile", &dir.join("server.log").display().to_string());
    set("save", "");
    set("appendonly", "no");
    set("cluster-enabled", "yes");
    set(
        "cluster-config-file",
        &dir.join(format!("nodes-{port}.conf")).display().to_string(),
    );
    set("cluster-node-timeout", &NODE_TIMEOUT_MS.to_string());
    if let Some(p) = &opts.password {
        set("requirepass", p);
    }
    if let Some(p) = &opts.masterauth {
        set("masterauth", p);
    }
    for (name, value) in &opts.extra {
        set(name, value);
    }
    for rules in &opts.acl_users {
        // Each command-line value is quoted as one config token, so the rules go one per argument.
        args.push("--user".to_owned());
        args.extend(rules.split_whitespace().map(str::to_owned));
    }
    // A log left by an attempt on a taken port must not be mistaken for this one's.
    let _ = std::fs::remove_file(dir.join("server.log"));
    let console = std::fs::File::create(dir.join("console.log")).expect("create console.log");
    let console_err = console.try_clone().expect("clone console.log handle");
    Command::new(bin)
        .args(&args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(console)
        .stderr(console_err)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {}: {e}", bin.display()))
}

/// Sends `SIG<name>` to `pid` with the `kill` program.
/// A private directory for one server: in memory (`/dev/shm`) where there is one and `TMPDIR` is
/// not set, since servers fsync their cluster config on every slot change (a migration of 8192
/// slots takes seconds there instead of half a minute on disk).
fn server_dir(kind: ServerKind) -> TempDir {
    let mut builder = tempfile::Builder::new();
    let prefix = format!("slotscope-{}-", kind.name());
    builder.prefix(&prefix);
    let shm = Path::new("/dev/shm");
    if std::env::var_os("TMPDIR").is_none() && shm.is_dir() {
        if let Ok(dir) = builder.tempdir_in(shm) {
            return dir;
        }
    }
    builder
        .tempdir()
        .expect("create a temporary directory for a server")
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .unwrap_or_else(|e| panic!("cannot run kill -{name} {pid}: {e}"));
    assert!(status.success(), "kill -{name} {pid} failed: {status}");
}

/// Waits (at most 2 s) until `/proc/<pid>/stat` shows the process stopped (`T`) or not.
fn wait_stopped(pid: u32, stopped: bool) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return;
        };
        // The state follows the parenthesised command name.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        if (state == Some("T")) == stopped {
            return;
        }
        thread::sleep(Duration::from_millis(5));
    }
}
