//! Real Python cluster clients (pinned redis-py releases) run as child processes.
//!
//! `scripts/setup` creates one virtual environment per redis-py release under
//! `<workspace>/.tools/py/redis-<version>` (override the directory with `$SLOTSCOPE_PY_DIR`); the
//! client scripts live in `tests/scenarios/`. [`start_script`] runs one script with arguments as a
//! [`Program`] (bounded by a time limit, its output captured, killed by its PID when dropped).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::kind::workspace_root;
use crate::program::{Output, Program};

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
pub type PyOutput = Output;

/// A running Python client script: a [`Program`].
pub type PyClient = Program;

/// Starts `tests/scenarios/<script> ARGS…` with the redis-py `version` environment. The client
/// may run for at most `limit` from now: [`Program::wait`] kills it and fails after that.
///
/// # Panics
///
/// If the environment or the script is missing, or the process cannot be spawned.
pub fn start_script(version: &str, script: &str, args: &[String], limit: Duration) -> PyClient {
    let python = venv_python(version);
    let path = scenario_script(script);
    let mut command = Command::new(&python);
    // -u: unbuffered, so stderr lines arrive as they are written.
    command
        .arg("-u")
        .arg(&path)
        .args(args)
        .current_dir(path.parent().expect("scenarios directory"))
        .env("PYTHONDONTWRITEBYTECODE", "1");
    Program::start(format!("{script} (redis-py {version})"), command, limit)
}
