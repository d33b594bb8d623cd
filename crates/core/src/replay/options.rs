//! A model's options: [`ModelOption`] (one option as a model's descriptor lists it) and
//! [`ModelOptions`] (the values given, read from `key=value` text).

use std::collections::BTreeMap;

use super::ReplayError;
use crate::node::NodeAddr;

/// One option of a model, besides `startup_nodes` and `socket_timeout`, which every model takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelOption {
    /// The name, as the library names it (`reinitialize_steps`, `maxAttempts`, …).
    pub name: &'static str,
    /// What it does, in one line, with its default (what `--help` shows).
    pub doc: &'static str,
    /// Its default value, as it would be written after `=` (empty: unset by default, the library
    /// then does without it or follows another option, as `doc` says).
    pub default: &'static str,
}

/// `true`/`True`/`1` or `false`/`False`/`0`, as option values are written.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "true" | "True" | "1" => Some(true),
        "false" | "False" | "0" => Some(false),
        _ => None,
    }
}

/// Seconds with up to three decimals (`30`, `0.5`) as milliseconds.
pub fn parse_secs_ms(v: &str) -> Option<u64> {
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || frac.len() > 3 || !digits(int) || !digits(frac) {
        return None;
    }
    let secs: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let ms: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<3}").parse().ok()?
    };
    secs.checked_mul(1000)?.checked_add(ms)
}

/// redis-py's default `reinitialize_steps`.
const DEFAULT_REINITIALIZE_STEPS: u32 = 5;
/// redis-py's default `cluster_error_retry_attempts`.
const DEFAULT_RETRY_ATTEMPTS: u32 = 3;

/// Options of a model, named as the library names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelOptions {
    /// Every this many MOVED replies the client does a full re-initialisation (0: never).
    pub reinitialize_steps: u32,
    /// After an initialisation, replace `startup_nodes` by the discovered nodes.
    pub dynamic_startup_nodes: bool,
    /// `address_remap`: every address of a `CLUSTER SLOTS` answer becomes this one.
    pub address_remap: Option<NodeAddr>,
    /// The seed addresses.
    pub startup_nodes: Vec<NodeAddr>,
    /// `cluster_error_retry_attempts`: retries of a command after a connection error / timeout.
    pub retry_attempts: u32,
    /// `socket_timeout` in milliseconds. With it set, every timeout costs the client that long, and
    /// a sequential client issues none of the commands scheduled while it waits. `None` (the
    /// default here): waiting is not modelled.
    pub socket_timeout_ms: Option<u64>,
    /// Options of other libraries, by the library's own name (`adaptiveRefreshTriggersTimeout`,
    /// `MaxRedirects`, …): read and checked by the model that knows them.
    pub library: BTreeMap<String, String>,
}

impl ModelOptions {
    /// Library defaults with `startup_nodes` = `[seed]`.
    pub fn new(seed: NodeAddr) -> ModelOptions {
        ModelOptions {
            reinitialize_steps: DEFAULT_REINITIALIZE_STEPS,
            dynamic_startup_nodes: true,
            address_remap: None,
            startup_nodes: vec![seed],
            retry_attempts: DEFAULT_RETRY_ATTEMPTS,
            socket_timeout_ms: None,
            library: BTreeMap::new(),
        }
    }

    /// Sets option `key` from its text `value` (`address_remap=host:port` maps every node to
    /// that address; `startup_nodes=a:1,b:2`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ReplayError> {
        let bad = |reason: &str| ReplayError::BadValue {
            option: key.to_owned(),
            value: value.to_owned(),
            reason: reason.to_owned(),
        };
        let addr = |v: &str| {
            v.trim()
                .parse::<NodeAddr>()
                .map_err(|e| bad(&e.to_string()))
        };
        match key {
            "reinitialize_steps" => {
                self.reinitialize_steps = value.parse().map_err(|_| bad("not a number"))?;
            }
            "retry_attempts" | "cluster_error_retry_attempts" => {
                self.retry_attempts = value
                    .parse()
                    .ok()
                    .filter(|&n| n <= 100)
                    .ok_or_else(|| bad("not a number up to 100"))?;
            }
            "dynamic_startup_nodes" => {
                self.dynamic_startup_nodes =
                    parse_bool(value).ok_or_else(|| bad("expected true or false"))?;
            }
            "address_remap" => {
                self.address_remap = match value {
                    "" | "none" | "None" => None,
                    v => Some(addr(v)?),
                };
            }
            "startup_nodes" => {
                let list = value.split(',').map(addr).collect::<Result<Vec<_>, _>>()?;
                if list.is_empty() {
                    return Err(bad("at least one address"));
                }
                self.startup_nodes = list;
            }
            "socket_timeout" => {
                self.socket_timeout_ms = match value {
                    "" | "none" | "None" => None,
                    v => {
                        let secs: f64 = v.parse().map_err(|_| bad("not a number of seconds"))?;
                        if !(secs.is_finite() && secs > 0.0 && secs <= 3600.0) {
                            return Err(bad("expected seconds in (0, 3600]"));
                        }
                        // In (0, 3.6e6]: the conversion cannot truncate.
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        let ms = (secs * 1000.0).round() as u64;
                        Some(ms.max(1))
                    }
                };
            }
            other => {
                let plausible = !other.is_empty()
                    && other.len() <= 64
                    && other
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-');
                if !plausible {
                    return Err(ReplayError::UnknownOption(other.to_owned()));
                }
                self.library
                    .insert(other.to_owned(), value.trim().to_owned());
            }
        }
        Ok(())
    }

    /// The library options for `model`, which knows the option names `known`: an error names the
    /// first option the model does not know.
    pub fn library_options_for(
        &self,
        model: &str,
        known: &[&str],
    ) -> Result<&BTreeMap<String, String>, ReplayError> {
        if let Some(k) = self.library.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(ReplayError::OptionOfOtherModel {
                model: model.to_owned(),
                option: k.clone(),
            });
        }
        Ok(&self.library)
    }

    /// Checks that none of redis-py's own options was changed from its default (for the models
    /// of other libraries).
    pub fn redis_py_options_unset(&self, model: &str) -> Result<(), ReplayError> {
        let changed = [
            (
                "reinitialize_steps",
                self.reinitialize_steps != DEFAULT_REINITIALIZE_STEPS,
            ),
            ("dynamic_startup_nodes", !self.dynamic_startup_nodes),
            ("address_remap", self.address_remap.is_some()),
            (
                "cluster_error_retry_attempts",
                self.retry_attempts != DEFAULT_RETRY_ATTEMPTS,
            ),
        ];
        match changed.iter().find(|(_, c)| *c) {
            Some((option, _)) => Err(ReplayError::OptionOfOtherModel {
                model: model.to_owned(),
                option: (*option).to_owned(),
            }),
            None => Ok(()),
        }
    }

    /// Checks that the options given are model `name`'s own, `known` (none of redis-py's, no
    /// library option it does not know): the common start of a model's build.
    pub fn check_for_model(&self, name: &str, known: &[ModelOption]) -> Result<(), ReplayError> {
        self.redis_py_options_unset(name)?;
        let known: Vec<&str> = known.iter().map(|o| o.name).collect();
        self.library_options_for(name, &known)?;
        Ok(())
    }

    /// `socket_timeout` under the library's own name `option` for `model`, given as `own`
    /// (`None`: not given): whichever of the two was given (`socket_timeout` through `socket`),
    /// `None` when neither was; both are an error, as they are the same setting.
    pub fn timeout_alias<T>(
        &self,
        model: &str,
        option: &str,
        own: Option<T>,
        socket: impl FnOnce(u64) -> T,
    ) -> Result<Option<T>, ReplayError> {
        match (own, self.socket_timeout_ms) {
            (Some(_), Some(_)) => Err(ReplayError::Unsupported {
                model: model.to_owned(),
                what: format!("both {option} and socket_timeout (they are the same setting)"),
            }),
            (Some(t), None) => Ok(Some(t)),
            (None, Some(ms)) => Ok(Some(socket(ms))),
            (None, None) => Ok(None),
        }
    }

    /// Reads library option `key` with `parse`, `default` when absent.
    pub fn library_value<T>(
        &self,
        key: &str,
        default: T,
        parse: impl Fn(&str) -> Option<T>,
        expected: &str,
    ) -> Result<T, ReplayError> {
        match self.library.get(key) {
            None => Ok(default),
            Some(v) => parse(v).ok_or_else(|| ReplayError::BadValue {
                option: key.to_owned(),
                value: v.clone(),
                reason: expected.to_owned(),
            }),
        }
    }
}
