//! The client libraries whose real applications the matrix runs, each at the release its app
//! pins: how to start the app (docs/FIDELITY.md, "The application contract") and which replay
//! model stands for it.
//!
//! redis-py runs `tests/scenarios/app.py` in the virtual environment of its release
//! (`.tools/py/redis-<version>`); the other libraries' apps live in `apps/` and are built by their
//! `apps/*/build`, which `scripts/setup` runs.

use std::path::PathBuf;
use std::process::Command;

use crate::kind::workspace_root;
use crate::python::{REDIS_PY_5_0_0, REDIS_PY_8_1_0};

/// The script of the redis-py application, in `tests/scenarios/`.
pub const APP_SCRIPT: &str = "app.py";

/// A client library at one release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Library {
    /// redis-py's asyncio `RedisCluster` at this release (`5.0.0` or `8.1.0`).
    RedisPy(&'static str),
    /// ioredis `Redis.Cluster` at this release (`6.0.0`, or `5.4.1` from the package `ioredis-5`;
    /// `apps/node`).
    Ioredis(&'static str),
    /// node-redis 6.3.1 `createCluster` (`apps/node`).
    NodeRedis,
    /// go-redis v9.8.0 `ClusterClient` (`apps/go-redis`).
    GoRedis,
    /// Jedis 5.1.0 `JedisCluster` (`apps/java`).
    Jedis,
    /// Lettuce 6.3.2 `RedisClusterClient` (`apps/java`).
    Lettuce,
    /// redis-rs (crate `redis`) 1.8.1 async `ClusterClient` (`apps/redis-rs`).
    RedisRs,
    /// Valkey GLIDE 2.5.2 `GlideClusterClient` (`apps/node`, npm `@valkey/valkey-glide`).
    Glide,
}

/// ioredis 6.0.0, the release its model was written from.
pub const IOREDIS_6_0_0: &str = "6.0.0";
/// ioredis 5.4.1, a 5.x release its model covers.
pub const IOREDIS_5_4_1: &str = "5.4.1";

/// Every library and release the matrix can run.
pub const ALL: [Library; 10] = [
    Library::RedisPy(REDIS_PY_5_0_0),
    Library::RedisPy(REDIS_PY_8_1_0),
    Library::Ioredis(IOREDIS_6_0_0),
    Library::Ioredis(IOREDIS_5_4_1),
    Library::NodeRedis,
    Library::GoRedis,
    Library::Jedis,
    Library::Lettuce,
    Library::RedisRs,
    Library::Glide,
];

impl Library {
    /// The library's name as its app reports it (`client` of the contract).
    pub fn name(self) -> &'static str {
        match self {
            Library::RedisPy(_) => "redis-py",
            Library::Ioredis(_) => "ioredis",
            Library::NodeRedis => "node-redis",
            Library::GoRedis => "go-redis",
            Library::Jedis => "jedis",
            Library::Lettuce => "lettuce",
            Library::RedisRs => "redis-rs",
            Library::Glide => "glide",
        }
    }

    /// The release its app runs.
    pub fn version(self) -> &'static str {
        match self {
            Library::RedisPy(v) | Library::Ioredis(v) => v,
            Library::NodeRedis => "6.3.1",
            Library::GoRedis => "9.8.0",
            Library::Jedis => "5.1.0",
            Library::Lettuce => "6.3.2",
            Library::RedisRs => "1.8.1",
            Library::Glide => "2.5.2",
        }
    }

    /// Whether `reported` (the `version` its app reports, read from the library at run time) is
    /// this release: the same, or with Java's `.RELEASE` suffix (Lettuce's `6.3.2.RELEASE`).
    pub fn is_release(self, reported: &str) -> bool {
        reported == self.version() || reported.strip_suffix(".RELEASE") == Some(self.version())
    }

    /// `name@version`.
    pub fn label(self) -> String {
        format!("{}@{}", self.name(), self.version())
    }

    /// What the census names this library's connections on Valkey 8.1, where `CLIENT LIST` has
    /// the `lib-name` a library sends with `CLIENT SETINFO`: the library, or nothing for ioredis
    /// 5.4.1, which sends no `CLIENT SETINFO` (ioredis sends it from 5.8.0, 5.8.2
    /// `built/redis/event_handler.js:65-70`) and no `HELLO` (RESP2): nothing in its handshake
    /// names it.
    pub fn named_on_valkey(self) -> Vec<&'static str> {
        match self {
            Library::Ioredis(IOREDIS_5_4_1) => Vec::new(),
            l => vec![l.name()],
        }
    }

    /// What the census names this library's connections on Redis 7.0, where no `lib-name`
    /// reaches `CLIENT LIST` and the `CLIENT SETINFO` rejection fingerprint decides
    /// (`slotscope_core::fingerprint`): the libraries it cannot tell apart there, this one among
    /// them; empty for a library that leaves no such fingerprint (Lettuce sends `CLIENT SETINFO`
    /// only to 7.2 and later). Connections named by the app.
    pub fn named_on_redis_7_0(self) -> &'static [&'static str] {
        match self {
            Library::RedisPy(v) if v.starts_with("8.1") => &["redis-py"],
            // redis-py 5.0–7.4, Jedis 5 and redis-rs 1 leave one fingerprint
            // (crates/core/src/fingerprint/mod.rs): the three are named.
            Library::RedisPy(_) | Library::Jedis | Library::RedisRs => {
                &["redis-py", "jedis", "redis-rs"]
            }
            Library::GoRedis | Library::Glide => &["redis-py", "go-redis", "glide"],
            // 5.4.1 sends no `CLIENT SETINFO`: no rejection to count.
            Library::Ioredis(IOREDIS_5_4_1) => &[],
            Library::Ioredis(_) => &["ioredis"],
            Library::NodeRedis => &["node-redis"],
            Library::Lettuce => &[],
        }
    }

    /// The library named `text`: `name` or `name@version` (`redis-py` alone is every redis-py
    /// release the matrix runs, so it gives several).
    pub fn parse(text: &str) -> Result<Vec<Library>, String> {
        let text = text.trim();
        let (name, version) = match text.split_once('@') {
            Some((n, v)) => (n, Some(v)),
            None => (text, None),
        };
        let found: Vec<Library> = ALL
            .into_iter()
            .filter(|l| l.name() == name && version.is_none_or(|v| v == l.version()))
            .collect();
        if found.is_empty() {
            let known: Vec<String> = ALL.into_iter().map(Library::label).collect();
            return Err(format!(
                "unknown library `{text}` (known: {})",
                known.join(", ")
            ));
        }
        Ok(found)
    }

    /// The app's command with its one settings argument, or why it cannot run (not built: run
    /// `scripts/setup`).
    pub fn command(self, settings: &str) -> Result<Command, String> {
        let root = workspace_root();
        let need = |p: PathBuf| -> Result<PathBuf, String> {
            if p.is_file() {
                Ok(p)
            } else {
                Err(format!(
                    "the {} app is not built ({} is missing): run scripts/setup",
                    self.label(),
                    p.display()
                ))
            }
        };
        let command = match self {
            Library::RedisPy(v) => {
                let python = crate::python::venv_python(v);
                let script = crate::python::scenario_script(APP_SCRIPT);
                let mut c = Command::new(python);
                c.arg("-u").arg(script).env("PYTHONDONTWRITEBYTECODE", "1");
                c
            }
            Library::Ioredis(_) | Library::NodeRedis | Library::Glide => {
                let app = need(root.join("apps/node/app.mjs"))?;
                if self == Library::Glide {
                    // The package and its native module (npm install of the optional
                    // `@valkey/valkey-glide-linux-x64-gnu`) come with `apps/node/build`.
                    need(root.join("apps/node/node_modules/@valkey/valkey-glide/package.json"))?;
                }
                let mut c = Command::new("node");
                c.arg(app).arg(self.node_adapter());
                c
            }
            Library::GoRedis => Command::new(need(root.join("apps/go-redis/bin/app"))?),
            Library::RedisRs => Command::new(need(root.join("apps/redis-rs/target/release/app"))?),
            Library::Jedis | Library::Lettuce => {
                let jar = need(root.join("apps/java/target/slotscope-apps.jar"))?;
                let mut c = Command::new("java");
                c.arg("-jar").arg(jar).arg(self.name());
                c
            }
        };
        let mut command = command;
        command.arg(settings).current_dir(&root);
        Ok(command)
    }

    /// Whether its app can be started here (built by `scripts/setup`).
    pub fn is_available(self) -> bool {
        match self {
            Library::RedisPy(v) => crate::python::venv_root()
                .join(format!("redis-{v}/bin/python"))
                .is_file(),
            _ => self.command("{}").is_ok(),
        }
    }

    /// Whether the library translates the addresses the cluster announces (redis-py
    /// `address_remap`, ioredis `natMap`, node-redis `nodeAddressMap`, Jedis `HostAndPortMapper`,
    /// Lettuce `MappingSocketAddressResolver`, GLIDE `addressResolver`); go-redis has no such
    /// option (its app could only dial through a custom `Dialer`), nor has redis-rs 1.8.1 one for
    /// every node (its `node_address_map` maps given addresses one by one at connect time, and
    /// its model does not replay a remap; the app maps through an `AsyncDNSResolver`), so the
    /// remap axis does not apply to them.
    ///
    /// go-redis v9.8.0: `ClusterOptions.Dialer` (`osscluster.go:65`, handed to every node's
    /// `Options`, :292) and `ClusterOptions.NewClient` (:40, :350) are functions that could dial
    /// another address than the one named (its app does so for a remap), but they are code, not an
    /// address the model can be given.
    pub fn has_address_translation(self) -> bool {
        !matches!(self, Library::GoRedis | Library::RedisRs)
    }

    /// The option of its replay model that translates every address to one (what the matrix's
    /// `address_remap` sets), by the library's own name: redis-py `address_remap`, ioredis
    /// `natMap`, node-redis `nodeAddressMap`, Jedis `hostAndPortMapper`, Lettuce
    /// `socketAddressResolver`, GLIDE `addressResolver`; `None` for a library without address
    /// translation.
    pub fn address_option(self) -> Option<&'static str> {
        match self {
            Library::RedisPy(_) => Some("address_remap"),
            Library::Ioredis(_) => Some("natMap"),
            Library::Jedis => Some("hostAndPortMapper"),
            Library::Lettuce => Some("socketAddressResolver"),
            Library::NodeRedis => Some("nodeAddressMap"),
            Library::Glide => Some("addressResolver"),
            Library::GoRedis | Library::RedisRs => None,
        }
    }

    /// Its model's option for the application's connect timeout, in milliseconds, where the
    /// model simulates one the library waits out (redis-rs's `connection_timeout`: a slot
    /// rebuild's check of a silent node waits it, and the application sets it).
    pub fn connect_timeout_option(self) -> Option<&'static str> {
        match self {
            Library::RedisRs => Some("connection_timeout"),
            _ => None,
        }
    }

    /// Whether its application reports `wedged` from its outcomes (every command that ended
    /// since a moment at least 1 s before the schedule's end failed: `apps/java`, `apps/node`,
    /// `apps/go-redis`, whose libraries never drop their seeds) rather than from the client's
    /// state (redis-py's `app.py`: no startup node left). The comparison applies the same rule
    /// to the replay's outcomes.
    pub fn wedged_by_outcomes(self) -> bool {
        !matches!(self, Library::RedisPy(_))
    }

    /// What `apps/node/app.mjs` and `apps/node/cpu-cost.mjs` call its adapter: the library's
    /// name, or `ioredis@5.4.1` for the release beside the one the Node apps pin.
    pub fn node_adapter(self) -> &'static str {
        match self {
            Library::Ioredis(IOREDIS_5_4_1) => "ioredis@5.4.1",
            l => l.name(),
        }
    }

    /// The replay model that stands for it (`--model`): its label, which the replay resolves to
    /// the model covering the release (every library the matrix runs has one).
    pub fn model(self) -> Option<String> {
        Some(self.label())
    }
}

/// The libraries a long draw goes over by default: every one whose app is built here, else all
/// of them (the draw then says which app is missing).
pub fn built_or_all() -> Vec<Library> {
    let built: Vec<Library> = ALL.into_iter().filter(|l| l.is_available()).collect();
    if built.is_empty() {
        ALL.to_vec()
    } else {
        built
    }
}

/// The libraries a test draws over: every one whose app is built here; under
/// `SLOTSCOPE_REQUIRE_APPS=1` (as `scripts/test` runs the tests) every one, failing on one not
/// built.
///
/// # Panics
///
/// Under `SLOTSCOPE_REQUIRE_APPS=1` with an app not built, or with no app built at all (the
/// message says to run `scripts/setup`).
pub fn built_libraries() -> Vec<Library> {
    let required = std::env::var("SLOTSCOPE_REQUIRE_APPS").is_ok_and(|v| v == "1");
    let built: Vec<Library> = ALL.into_iter().filter(|l| l.is_available()).collect();
    let missing: Vec<String> = ALL
        .into_iter()
        .filter(|l| !built.contains(l))
        .map(Library::label)
        .collect();
    assert!(
        !required || missing.is_empty(),
        "SLOTSCOPE_REQUIRE_APPS=1 and not built: {} (run scripts/setup)",
        missing.join(", ")
    );
    if !missing.is_empty() {
        eprintln!("not built here, not drawn: {}", missing.join(", "));
    }
    assert!(
        !built.is_empty(),
        "no application is built (run scripts/setup)"
    );
    built
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_library_replays_through_a_model_that_covers_its_release() {
        for l in ALL {
            let label = l.model().expect("every library has a model");
            let options =
                slotscope_core::replay::ModelOptions::new("127.0.0.1:7000".parse().unwrap());
            let built = slotscope_core::replay::model(&label, options);
            assert!(
                built.is_ok(),
                "{label}: {:?}",
                built.err().map(|e| e.to_string())
            );
        }
    }

    #[test]
    fn libraries_are_named_with_or_without_their_release() {
        assert_eq!(
            Library::parse("redis-py").unwrap(),
            vec![
                Library::RedisPy(REDIS_PY_5_0_0),
                Library::RedisPy(REDIS_PY_8_1_0)
            ]
        );
        assert_eq!(
            Library::parse("ioredis").unwrap(),
            vec![
                Library::Ioredis(IOREDIS_6_0_0),
                Library::Ioredis(IOREDIS_5_4_1)
            ]
        );
        assert_eq!(
            Library::Ioredis(IOREDIS_5_4_1).node_adapter(),
            "ioredis@5.4.1"
        );
        assert_eq!(Library::Ioredis(IOREDIS_6_0_0).node_adapter(), "ioredis");
        assert_eq!(
            Library::parse("go-redis@9.8.0").unwrap(),
            vec![Library::GoRedis]
        );
        let e = Library::parse("go-redis@9.0.0").unwrap_err();
        assert!(
            e.contains("go-redis@9.8.0") && e.contains("lettuce@6.3.2"),
            "{e}"
        );
        for l in ALL {
            assert_eq!(Library::parse(&l.label()).unwrap(), vec![l]);
            assert!(l.is_release(l.version()));
        }
        assert!(Library::Lettuce.is_release("6.3.2.RELEASE"));
        assert!(!Library::Lettuce.is_release("6.3.3.RELEASE"));
        assert!(!Library::GoRedis.is_release("9.8"));
        assert_eq!(Library::parse("redis-rs").unwrap(), vec![Library::RedisRs]);
        assert_eq!(Library::RedisRs.model().as_deref(), Some("redis-rs@1.8.1"));
        assert!(!Library::RedisRs.has_address_translation());
        assert_eq!(Library::parse("glide").unwrap(), vec![Library::Glide]);
        assert!(Library::Glide.has_address_translation());
        assert_eq!(Library::Glide.model().as_deref(), Some("glide@2.5.2"));
    }

    #[test]
    fn every_library_with_a_model_and_address_translation_names_its_remap_option() {
        for l in ALL {
            if l.has_address_translation() && l.model().is_some() {
                assert!(l.address_option().is_some(), "{}", l.label());
            }
            if !l.has_address_translation() {
                assert_eq!(l.address_option(), None, "{}", l.label());
            }
        }
        assert_eq!(Library::Jedis.address_option(), Some("hostAndPortMapper"));
        assert_eq!(
            Library::Lettuce.address_option(),
            Some("socketAddressResolver")
        );
    }
}
