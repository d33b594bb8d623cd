//! The models by name: what `--model NAME` accepts (a model's name, or a library release one
//! covers, see [`super::version`]) and what each model's options are.

use super::client::{ClientModel, ModelOptions};
use super::{redis_py, ReplayError};

/// A client model as users pick it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelInfo {
    /// Name to pass to [`model`], `library@version`.
    pub name: &'static str,
    /// What it imitates, in one line.
    pub about: &'static str,
    /// Its own options (`name`, description with the default), besides `startup_nodes` and
    /// `socket_timeout`, which every model takes.
    pub options: &'static [(&'static str, &'static str)],
}

/// Every model, in the order `--help` lists them.
pub const MODELS: &[ModelInfo] = &[
    ModelInfo {
        name: "redis-py@5.0.0",
        about: "redis-py 4.4.0-7.1.1 asyncio RedisCluster: a node error pops it from startup_nodes",
        options: redis_py::OPTIONS,
    },
    ModelInfo {
        name: "redis-py@8.0.0",
        about: "redis-py 7.2.0+ asyncio RedisCluster: a node error moves it last in startup_nodes",
        options: redis_py::OPTIONS,
    },
    ModelInfo {
        name: "ideal",
        about: "patches its slot table on every MOVED, keeps its seeds, never rebuilds on its own",
        options: &[],
    },
    ModelInfo {
        name: super::redis_rs::NAME,
        about: "redis-rs async ClusterConnection: every MOVED rebuilds the slot map, keeps initial_nodes",
        options: super::redis_rs::OPTIONS,
    },
    ModelInfo {
        name: super::go_redis::NAME,
        about: "go-redis v9 ClusterClient: MOVED follows and lazily reloads (200 ms hold), 10 s staleness",
        options: super::go_redis::OPTIONS,
    },
    ModelInfo {
        name: super::lettuce::NAME,
        about: "Lettuce 6.x RedisClusterClient: follows MOVED without refreshing unless refresh triggers are on",
        options: super::lettuce::OPTIONS,
    },
    ModelInfo {
        name: super::jedis::NAME,
        about: "Jedis 5.x JedisCluster: every MOVED renews the slot cache, start nodes always retried",
        options: super::jedis::OPTIONS,
    },
];

/// The names of every model, comma-separated (for messages).
pub fn model_names() -> String {
    MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

/// The model named `name` (one of [`MODELS`], or a library release one of them covers:
/// `redis-py@8.1.0` builds `redis-py@8.0.0`, see [`resolve`](super::resolve)) with `options`.
/// The model keeps its own name; [`Resolved::label`](super::Resolved::label) says what it covers.
pub fn model(name: &str, mut options: ModelOptions) -> Result<Box<dyn ClientModel>, ReplayError> {
    let resolved = match super::version::resolve(name)? {
        Some(r) => r,
        None => return Err(ReplayError::UnknownModel(name.to_owned())),
    };
    let name = resolved.model;
    // redis-py 7.2.0-7.4.x share 8.0.0's routing but not its pool limit: `max_connections`
    // defaults to 2**31 there (7.4.1 `redis/asyncio/cluster.py` l. 283), to 100 from 8.0.0 (l. 340).
    if name == "redis-py@8.0.0"
        && resolved
            .asked
            .is_some_and(|v| v < super::Version::new(8, 0, 0))
    {
        options
            .library
            .entry("max_connections".to_owned())
            .or_insert_with(|| (1_u64 << 31).to_string());
    }
    match name {
        "redis-py@5.0.0" | "redis-py@8.0.0" | "ideal" => redis_py::build(name, options),
        super::redis_rs::NAME => super::redis_rs::build(name, options),
        super::go_redis::NAME => super::go_redis::build(name, options),
        super::lettuce::NAME => super::lettuce::build(name, options),
        super::jedis::NAME => super::jedis::build(name, options),
        other => Err(ReplayError::UnknownModel(other.to_owned())),
    }
}
