//! A model's options: [`ModelOption`] (one option as a model's descriptor lists it) and
//! [`ModelOptions`] (the values given: the options every model takes, typed, and each model's own
//! as text, which the model reads into its own settings when it is built).

use std::collections::BTreeMap;

use super::ReplayError;
use crate::node::NodeAddr;

/// Checks an option's value when it is given: why it is refused.
pub type Check = fn(&str) -> Result<(), String>;

/// One option of a model, besides `startup_nodes` and `socket_timeout`, which every model takes.
#[derive(Clone, Copy, Debug)]
pub struct ModelOption {
    /// The name, as the library names it (`reinitialize_steps`, `maxAttempts`, …).
    pub name: &'static str,
    /// What it does, in one line, with its default (what `--help` shows).
    pub doc: &'static str,
    /// Its default value, as it would be written after `=` (empty: unset by default, the library
    /// then does without it or follows another option, as `doc` says).
    pub default: &'static str,
    /// Other names it is given by (`retry_attempts` for `cluster_error_retry_attempts`).
    pub aliases: &'static [&'static str],
    /// A check of its value as soon as it is given (as a Python constructor checks its keyword
    /// arguments); without one the model checks it when it is built.
    pub check: Option<Check>,
}

impl ModelOption {
    /// No alias and no check when given: the base of an option's declaration
    /// (`ModelOption { name, doc, default, ..ModelOption::PLAIN }`).
    pub const PLAIN: ModelOption = ModelOption {
        name: "",
        doc: "",
        default: "",
        aliases: &[],
        check: None,
    };

    /// Whether `key` names it (its name or an alias).
    pub fn is_named(&self, key: &str) -> bool {
        self.name == key || self.aliases.contains(&key)
    }
}

/// `true`/`True`/`1` or `false`/`False`/`0`, as option values are written.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "true" | "True" | "1" => Some(true),
        "false" | "False" | "0" => Some(false),
        _ => None,
    }
}

/// The value of a library's address-translation option (redis-py `address_remap`, ioredis
/// `natMap`, node-redis `nodeAddressMap`, Jedis `hostAndPortMapper`, Lettuce
/// `socketAddressResolver`, GLIDE `addressResolver`): the address every address becomes, or none
/// (empty, `none`, `None`, `null`).
///
/// # Errors
///
/// The address error, in words, for anything else that is not an address.
pub fn parse_mapped_addr(v: &str) -> Result<Option<NodeAddr>, String> {
    match v.trim() {
        "" | "none" | "None" | "null" => Ok(None),
        v => v
            .parse()
            .map(Some)
            .map_err(|e: crate::node::AddrError| e.to_string()),
    }
}

/// A count from 0 to `max` (`100`: retries, redirects).
pub fn parse_count(v: &str, max: u32) -> Option<u32> {
    v.parse().ok().filter(|&n| n <= max)
}

/// Milliseconds of the client's own work (`0.8`, `29.5`), in [0, 10000], as microseconds.
pub fn parse_cpu_ms(v: &str) -> Option<u64> {
    let ms: f64 = v.trim().parse().ok()?;
    // Within [0, 10 s]: the conversion cannot truncate.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (ms.is_finite() && (0.0..=10_000.0).contains(&ms)).then(|| (ms * 1000.0).round() as u64)
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

/// The options given to a model: `startup_nodes` and `socket_timeout`, which every model takes,
/// and the model's own options as text, by the library's name for them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelOptions {
    /// The seed addresses.
    pub startup_nodes: Vec<NodeAddr>,
    /// `socket_timeout` in milliseconds. With it set, every timeout costs the client that long, and
    /// a sequential client issues none of the commands scheduled while it waits. `None` (the
    /// default here): waiting is not modelled.
    pub socket_timeout_ms: Option<u64>,
    /// The model's own options, by the library's own name (`reinitialize_steps`,
    /// `adaptiveRefreshTriggersTimeout`, `MaxRedirects`, …; an alias is stored under the name):
    /// read and checked by the model that knows them.
    pub library: BTreeMap<String, String>,
}

impl ModelOptions {
    /// No option given but `startup_nodes` = `[seed]`.
    pub fn new(seed: NodeAddr) -> ModelOptions {
        ModelOptions {
            startup_nodes: vec![seed],
            socket_timeout_ms: None,
            library: BTreeMap::new(),
        }
    }

    /// Sets `startup_nodes` (`a:1,b:2`) or `socket_timeout` (seconds) from its text `value`;
    /// `None` when `key` is neither (see [`set`](Self::set) for the others).
    pub(super) fn set_common(&mut self, key: &str, value: &str) -> Option<Result<(), ReplayError>> {
        let bad = |reason: &str| ReplayError::BadValue {
            option: key.to_owned(),
            value: value.to_owned(),
            reason: reason.to_owned(),
        };
        match key {
            "startup_nodes" => {
                let list = value
                    .split(',')
                    .map(|v| {
                        v.trim()
                            .parse::<NodeAddr>()
                            .map_err(|e| bad(&e.to_string()))
                    })
                    .collect::<Result<Vec<_>, _>>();
                Some(list.and_then(|list| {
                    if list.is_empty() {
                        return Err(bad("at least one address"));
                    }
                    self.startup_nodes = list;
                    Ok(())
                }))
            }
            "socket_timeout" => Some(match value {
                "" | "none" | "None" => {
                    self.socket_timeout_ms = None;
                    Ok(())
                }
                v => match v.parse::<f64>() {
                    Err(_) => Err(bad("not a number of seconds")),
                    Ok(secs) if !(secs.is_finite() && secs > 0.0 && secs <= 3600.0) => {
                        Err(bad("expected seconds in (0, 3600]"))
                    }
                    Ok(secs) => {
                        // In (0, 3.6e6]: the conversion cannot truncate.
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        let ms = (secs * 1000.0).round() as u64;
                        self.socket_timeout_ms = Some(ms.max(1));
                        Ok(())
                    }
                },
            }),
            _ => None,
        }
    }

    /// Whether `key` can be an option's name at all (letters, digits, `_`, `.`, `-`; 1 to 64).
    pub(super) fn plausible(key: &str) -> bool {
        !key.is_empty()
            && key.len() <= 64
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
    }

    /// The options given for `model`, which knows the option names `known`: an error names the
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

    /// Checks that the options given are model `name`'s own, `known` (no option of another
    /// model): the common start of a model's build.
    pub fn check_for_model(&self, name: &str, known: &[ModelOption]) -> Result<(), ReplayError> {
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

    /// Reads option `key` with `parse`, `default` when absent; a value `parse` refuses is a
    /// [`ReplayError::BadValue`] with `expected` as the reason.
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

    /// Reads option `key` with `parse`, which says why it refuses a value; `default` when absent.
    pub fn parsed_value<T>(
        &self,
        key: &str,
        default: T,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, ReplayError> {
        match self.library.get(key) {
            None => Ok(default),
            Some(v) => parse(v).map_err(|reason| ReplayError::BadValue {
                option: key.to_owned(),
                value: v.clone(),
                reason,
            }),
        }
    }
    /// The address `model`'s own translation option `own` (`natMap`, `nodeAddressMap`,
    /// `addressResolver`) or `address_remap`, which names the same setting, maps every address
    /// to (`host:port`, or empty for none); an error when both are given.
    ///
    /// # Errors
    ///
    /// A value that is not an address, or both options given.
    pub fn mapped_addr(&self, model: &str, own: &str) -> Result<Option<NodeAddr>, ReplayError> {
        match (
            self.parsed_value(own, None, parse_mapped_addr)?,
            self.parsed_value("address_remap", None, parse_mapped_addr)?,
        ) {
            (Some(_), Some(_)) => Err(ReplayError::Unsupported {
                model: model.to_owned(),
                what: format!("both {own} and address_remap (they are the same setting)"),
            }),
            (own, remap) => Ok(own.or(remap)),
        }
    }
}
