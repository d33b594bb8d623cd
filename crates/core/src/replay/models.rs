//! Every client model, in the order `--help` lists them: [`BUILDS`]. A model is one file here
//! that exports its [`ModelDescriptor`] and its [`Build`], its `mod` line, and its entry in
//! [`BUILDS`]. [`MODELS`], the descriptors alone (taken from [`BUILDS`] at compile time), is what
//! the version ranges, the hypotheses and the viewer's model list read; only the registry reads
//! [`BUILDS`], so the viewer, which lists the models but never runs one, carries none of their
//! code. A model that outgrows one file keeps its descriptor, options and client there and moves
//! parts of the client into a folder of the same name (`node_redis/discovery.rs`,
//! `jedis/topology.rs`).

mod glide;
mod go_redis;
mod ioredis;
mod jedis;
mod lettuce;
mod node_redis;
mod redis_py;
mod redis_rs;

use super::descriptor::{Build, ModelDescriptor};

/// Every model with its build, in the order `--help` lists them (a library's models by release).
pub(super) const BUILDS: &[(&ModelDescriptor, Build)] = &[
    (&redis_py::V5, redis_py::build_v5),
    (&redis_py::V8, redis_py::build_v8),
    (&redis_py::IDEAL, redis_py::build_ideal),
    (&redis_rs::DESCRIPTOR, redis_rs::build),
    (&go_redis::DESCRIPTOR, go_redis::build),
    (&ioredis::DESCRIPTOR, ioredis::build),
    (&node_redis::DESCRIPTOR, node_redis::build),
    (&lettuce::DESCRIPTOR, lettuce::build),
    (&jedis::DESCRIPTOR, jedis::build),
    (&glide::DESCRIPTOR, glide::build),
];

/// Every model's descriptor, in the order of the private `BUILDS` list (each descriptor with its
/// build function): computed at compile time, so that it holds no build function.
pub const MODELS: &[&ModelDescriptor] = &descriptors::<{ BUILDS.len() }>();

/// The descriptors of [`BUILDS`] (`N` of them).
const fn descriptors<const N: usize>() -> [&'static ModelDescriptor; N] {
    let mut out = [BUILDS[0].0; N];
    let mut i = 0;
    while i < N {
        out[i] = BUILDS[i].0;
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Hypotheses, ModelOptions};

    fn options() -> ModelOptions {
        ModelOptions::new("10.0.0.1:6379".parse().unwrap())
    }

    #[test]
    fn every_model_is_built_by_its_own_build() {
        assert_eq!(MODELS.len(), BUILDS.len());
        for (d, build) in BUILDS {
            let model = build(None, options()).unwrap();
            assert_eq!(model.name(), d.name);
        }
    }

    #[test]
    fn every_model_has_its_own_name_and_builds_with_each_default_written_out() {
        for (i, (m, build)) in BUILDS.iter().enumerate() {
            assert!(
                MODELS[..i].iter().all(|o| o.name != m.name),
                "{} twice",
                m.name
            );
            assert!(build(None, options()).is_ok(), "{}", m.name);
            for (k, o) in m.options.iter().enumerate() {
                assert!(!o.doc.is_empty(), "{} {}", m.name, o.name);
                assert!(
                    m.options[..k].iter().all(|p| p.name != o.name),
                    "{} {} twice",
                    m.name,
                    o.name
                );
                if o.default.is_empty() {
                    continue;
                }
                let mut opts = options();
                opts.set(o.name, o.default).unwrap();
                assert!(
                    build(None, opts).is_ok(),
                    "{} {}={}",
                    m.name,
                    o.name,
                    o.default
                );
            }
        }
    }

    #[test]
    fn the_options_hypotheses_try_are_the_model_s_own() {
        for m in MODELS {
            let keys: Vec<&str> = match m.hypotheses {
                Hypotheses::Suspect { per_node, each } => std::iter::once(per_node)
                    .chain(each.iter().map(|(k, _)| *k))
                    .collect(),
                Hypotheses::Library { extra } => extra
                    .iter()
                    .flat_map(|set| set.iter().map(|(k, _)| *k))
                    .collect(),
                Hypotheses::Contrast => Vec::new(),
            };
            for k in keys {
                assert!(m.option(k).is_some(), "{}: {k}", m.name);
            }
        }
    }

    #[test]
    fn an_option_is_read_by_its_model_and_an_alias_kept_under_its_name() {
        let mut o = options();
        o.set("retry_attempts", "7").unwrap();
        let given = o.library.get("cluster_error_retry_attempts");
        assert_eq!(given.map(String::as_str), Some("7"));
        // redis-py's options are checked when given, the others' when the model is built.
        assert!(o.clone().set("retry_attempts", "101").is_err());
        let e = crate::replay::model("jedis@5.1.0", o).err().unwrap();
        assert_eq!(
            e.to_string(),
            "model `jedis@5.1.0` has no option `cluster_error_retry_attempts` (see `slotscope \
             replay --help` for each model's options)"
        );
        let mut o = options();
        o.set("MaxRedirects", "many").unwrap();
        assert!(crate::replay::model("go-redis@9.8.0", o).is_err());
    }
}
