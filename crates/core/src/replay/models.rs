//! Every client model, in the order `--help` lists them: [`MODELS`]. A model is one file here
//! that exports its [`ModelDescriptor`], its `mod` line and its entry in the list; the registry,
//! the version ranges, the hypotheses and the viewer's model list all read the list.

mod go_redis;
mod jedis;
mod lettuce;
mod redis_py;
mod redis_rs;

use super::descriptor::ModelDescriptor;

/// Every model, in the order `--help` lists them (a library's models by release).
pub const MODELS: &[&ModelDescriptor] = &[
    &redis_py::V5,
    &redis_py::V8,
    &redis_py::IDEAL,
    &redis_rs::DESCRIPTOR,
    &go_redis::DESCRIPTOR,
    &lettuce::DESCRIPTOR,
    &jedis::DESCRIPTOR,
];
