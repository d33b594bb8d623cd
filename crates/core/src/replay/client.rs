//! What a client library model is: the [`ClientModel`] trait, the [`Transport`] it talks through,
//! what it reports ([`ClientState`], [`ClientSnapshot`]) and its [`ModelOptions`].

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use serde::Serialize;

use super::descriptor::ModelOption;
use super::{ReplayError, Routed};
use crate::node::NodeAddr;
use crate::slot::SlotRange;
use crate::time::Timestamp;
use crate::timeline::{NodeIdx, SlotTable};

use super::cluster::Reply;
use super::net::Net;
use super::outcome::{ClientError, Outcome};

/// What a [`SyncModel`](super::SyncModel) can ask the (simulated) cluster; the driver knows the
/// time and the command.
pub trait Transport {
    /// The virtual time of the current command (for models with timers: periodic refresh, rate
    /// limits on refreshes).
    fn now(&self) -> Timestamp;
    /// Waits `ms` (a backoff, a lock held by another task): later exchanges happen that much
    /// later, and the application's lane stays busy. A timeout reply has already cost the
    /// model's `socket_timeout` this way.
    fn sleep(&mut self, ms: u64);
    /// Ends work the client did in the background (a lazy reload, a scheduled refresh): the
    /// command goes on at `t`, its time before that work, as it did not wait for it (never
    /// earlier than the command's start).
    fn resume_at(&mut self, t: Timestamp);
    /// Sends the current command for `cmd` to `to` (after `ASKING` when `asking`).
    fn send(&mut self, to: &NodeAddr, cmd: Routed, asking: bool) -> Reply;
    /// Sends `CLUSTER SLOTS` to `to`.
    fn cluster_slots(&mut self, to: &NodeAddr) -> Result<Vec<(SlotRange, NodeAddr)>, Reply>;
}

/// A client's state, sampled after each command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClientState {
    /// Entries of `nodes_manager.startup_nodes`.
    pub startup_nodes: usize,
    /// True when the client needs a re-initialisation and has no startup node left: every
    /// later command fails, forever.
    pub wedged: bool,
    /// Successful full initialisations so far (one `CLUSTER SLOTS` answer each).
    pub full_reinits: u64,
    /// `CLUSTER SLOTS` calls sent so far (including failed ones).
    pub cluster_slots_calls: u64,
    /// Connections opened so far.
    pub new_connections: u64,
}

/// What a client holds at one moment, sampled once per second of a replay (it takes a pass over
/// the slot table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClientSnapshot {
    /// Connections open now.
    pub open_connections: u64,
    /// Distinct nodes the slot table points to.
    pub table_nodes: usize,
    /// Slots the table gives to the node it names most (16384 when a table has collapsed onto
    /// one address; about 16384 ÷ shards when healthy).
    pub top_node_slots: usize,
    /// Slots the table has no node for.
    pub unmapped_slots: usize,
}

impl ClientSnapshot {
    /// The snapshot of a slot table and a count of open connections.
    pub fn of_table(table: &SlotTable, open_connections: u64) -> ClientSnapshot {
        let mut counts: Vec<(NodeIdx, usize)> = Vec::new();
        let mut unmapped = 0;
        for run in table.as_slice().chunk_by(|a, b| a == b) {
            match run[0] {
                None => unmapped += run.len(),
                Some(n) => match counts.iter_mut().find(|c| c.0 == n) {
                    Some(c) => c.1 += run.len(),
                    None => counts.push((n, run.len())),
                },
            }
        }
        ClientSnapshot {
            open_connections,
            table_nodes: counts.len(),
            top_node_slots: counts.iter().map(|c| c.1).max().unwrap_or(0),
            unmapped_slots: unmapped,
        }
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

/// The numbers `number` gives `addrs`, in order, each once: a model's seed list. An address it
/// cannot number (past 65,535 addresses) is left out.
pub fn numbered_once(
    addrs: &[NodeAddr],
    mut number: impl FnMut(&NodeAddr) -> Option<NodeIdx>,
) -> Vec<NodeIdx> {
    let mut out: Vec<NodeIdx> = Vec::with_capacity(addrs.len());
    for n in addrs.iter().filter_map(&mut number) {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// A running command of a model: completes with its outcome (see [`ClientModel::execute`]).
pub type Execution<'a> = Pin<Box<dyn Future<Output = Outcome> + 'a>>;

/// A client library's routing state machine, shared by the application's commands in flight.
///
/// The state lives behind `&self` (interior mutability): several commands run at once, each an
/// [`Execution`] that awaits its exchanges on the [`Net`], so what a reply does to the client
/// lands when the reply arrives and the others see it from then on.
pub trait ClientModel {
    /// The model's name, e.g. `redis-py@5.0.0`.
    fn name(&self) -> &str;
    /// Runs one application command on `cmd`'s key through `net`.
    fn execute<'a>(&'a self, cmd: Routed, net: &'a Net<'_>) -> Execution<'a>;
    /// Runs one application command to its end at once (the instant clock of the lanes, where
    /// nothing waits for another task). The default runs [`execute`](Self::execute); a model
    /// can run the same code without boxing it.
    fn execute_instant(&self, cmd: Routed, net: &Net<'_>) -> Outcome {
        net.block_on(self.execute(cmd, net).as_mut())
            .unwrap_or(Outcome::Failed(ClientError::UNFINISHED))
    }
    /// The client's state now.
    fn state(&self) -> ClientState;
    /// What it holds now: open connections and a summary of its slot table.
    fn snapshot(&self) -> ClientSnapshot;
    /// `socket_timeout` in milliseconds: how long a request waits on a silent node before it fails
    /// with a timeout. `None`: waiting is not modelled in the instant clock, and in the timed one
    /// a request waits until the node answers.
    fn socket_timeout_ms(&self) -> Option<u64> {
        None
    }
    /// Told once before the first command, in the lanes mode only: how many commands the
    /// application has in flight at most. Models with connection pools size them by it (with
    /// commands in flight the pools grow by themselves).
    fn set_concurrency(&mut self, _in_flight: u32) {}
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
