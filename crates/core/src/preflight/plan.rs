//! A planned change (issue 25): steps in order, each at a time relative to the plan's start, read
//! from JSON:
//!
//! ```json
//! {"steps": [
//!   {"at": "0s",  "add_master": "new1"},
//!   {"at": "5s",  "move": {"slots": "8192-16383", "from": "127.0.0.1:7000", "to": "new1", "rate": "800/s"}},
//!   {"at": "9s",  "stall": {"node": "127.0.0.1:7000", "for": "2.5s"}},
//!   {"at": "30s", "failover": {"replica_of": "127.0.0.1:7001"}},
//!   {"at": "40s", "remove": "127.0.0.1:7002"}
//! ]}
//! ```
//!
//! A node is named by its address (as the recording holds it) or by the name an `add_master`
//! step gave it. Slots are a range (`"0-5460"`, `"42"`), a count (`{"count": 500}`: the last ones
//! of the source's slots) or `"rebalance"` (every master to an even share, the new ones filled
//! first). Times and lengths are `"5s"`, `"2.5s"`, `"800ms"`, `"1m"`; a move's rate is slots per
//! second (`"800/s"`, default [`DEFAULT_MOVE_RATE`]). A failover is manual (`CLUSTER FAILOVER` on
//! the replica, the master still up) unless `"after_kill": true` (the master killed, its replica
//! promoted [`promotion_ms`] later with `node_timeout`, default [`DEFAULT_NODE_TIMEOUT_MS`]). Parsing checks the shape
//! only; whether the steps can be carried out on a cluster is [`super::schedule`]'s.

use serde_json::Value;

use crate::replay::parse_secs_ms;
use crate::slot::{Slot, SlotRange, SLOT_COUNT};

/// Slots a move carries per second unless told (a `redis-cli --cluster reshard` of small keys on
/// loopback moves a few hundred to a thousand a second).
pub const DEFAULT_MOVE_RATE: u32 = 500;
/// `cluster-node-timeout`'s default, milliseconds: how long after a kill the other nodes flag the
/// master as failing (see [`promotion_ms`]).
pub const DEFAULT_NODE_TIMEOUT_MS: u64 = 15_000;
/// The replica's wait before it asks for votes, on average, milliseconds (Redis
/// `clusterHandleSlaveFailover`: 500 ms plus a random 0–500 ms plus 1 s a rank; the first replica's
/// rank is 0).
pub const ELECTION_MS: u64 = 750;

/// How long after a kill its replica takes over, milliseconds, with `cluster-node-timeout` of
/// `node_timeout_ms`: the node timeout until the master is flagged `PFAIL`, about half of it more
/// until a majority's reports make it `FAIL` (each node pings every other at least once every half
/// node timeout, Redis `clusterCron`), then the replica's wait ([`ELECTION_MS`]). Measured on the
/// pre-flight check's live failovers (2 s node timeout, Redis 7.0 and Valkey 8.1): 3.1–4.4 s,
/// median 3.8 s; this gives 3.75 s.
pub fn promotion_ms(node_timeout_ms: u64) -> u64 {
    node_timeout_ms + node_timeout_ms / 2 + ELECTION_MS
}

/// A planned change: its steps, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The steps, by their time.
    pub steps: Vec<Step>,
}

/// One step.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// When, milliseconds from the plan's start.
    pub at_ms: u64,
    /// What.
    pub action: Action,
}

/// The slots a move takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slots {
    /// These slots.
    Range(SlotRange),
    /// The last `n` slots the source owns at that point.
    Count(u16),
    /// Every master to an even share (the source and target of the step are ignored).
    Rebalance,
}

/// What a step does.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A new master joins, owning nothing; later steps name it `name`.
    AddMaster {
        /// Its name in the plan.
        name: String,
    },
    /// Slots move from one master to another, `rate` a second.
    Move {
        /// Which.
        slots: Slots,
        /// From (ignored for [`Slots::Rebalance`]).
        from: String,
        /// To (ignored for [`Slots::Rebalance`]).
        to: String,
        /// Slots a second.
        rate: u32,
    },
    /// The node answers nothing for a while (`SIGSTOP`, a long fork, a network blip).
    Stall {
        /// Which.
        node: String,
        /// For how long, milliseconds.
        for_ms: u64,
    },
    /// The node dies and does not come back (its slots unserved unless a failover follows).
    Kill {
        /// Which.
        node: String,
    },
    /// A replica of `replica_of` takes over its slots.
    Failover {
        /// The master replaced.
        replica_of: String,
        /// The master killed first, its replica promoted [`promotion_ms`] later.
        after_kill: bool,
        /// `cluster-node-timeout`, milliseconds (automatic failover only).
        node_timeout_ms: u64,
    },
    /// The node leaves the cluster (it must own no slot by then).
    Remove {
        /// Which.
        node: String,
    },
    /// The node is reached at a new address from then on (its old one answers nothing).
    AddressChange {
        /// Which.
        node: String,
        /// The new address.
        to: String,
    },
}

/// Why a plan could not be read or carried out: the step (0-based) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanError {
    /// The step's index, `None` for the plan as a whole.
    pub step: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.step {
            Some(i) => write!(f, "plan step {i}: {}", self.message),
            None => write!(f, "plan: {}", self.message),
        }
    }
}

impl std::error::Error for PlanError {}

impl PlanError {
    /// An error of step `step`.
    pub fn at(step: usize, message: impl Into<String>) -> PlanError {
        PlanError {
            step: Some(step),
            message: message.into(),
        }
    }

    fn whole(message: impl Into<String>) -> PlanError {
        PlanError {
            step: None,
            message: message.into(),
        }
    }
}

/// A length of time, milliseconds: `"5s"`, `"2.5s"`, `"800ms"`, `"1m"`, or a number of seconds
/// (seconds and minutes with up to three decimals, milliseconds whole).
pub fn parse_duration(v: &Value) -> Option<u64> {
    let text = match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_owned(),
        _ => return None,
    };
    if let Some(n) = text.strip_suffix("ms") {
        n.trim().parse().ok()
    } else if let Some(n) = text.strip_suffix('s') {
        parse_secs_ms(n.trim())
    } else if let Some(n) = text.strip_suffix('m') {
        parse_secs_ms(n.trim())?.checked_mul(60)
    } else {
        parse_secs_ms(&text)
    }
}

/// A rate of slots a second: `"800/s"`, or a number.
fn parse_rate(v: &Value) -> Option<u32> {
    let n = match v.as_u64() {
        Some(n) => n,
        None => v
            .as_str()?
            .trim()
            .trim_end_matches("/s")
            .trim()
            .parse()
            .ok()?,
    };
    u32::try_from(n).ok().filter(|&n| n > 0)
}

/// A slot range: `"8192-16383"` or `"42"`.
pub fn parse_range(text: &str) -> Option<SlotRange> {
    let slot = |s: &str| s.trim().parse::<u16>().ok().and_then(Slot::new);
    match text.split_once('-') {
        Some((a, b)) => SlotRange::new(slot(a)?, slot(b)?),
        None => slot(text).map(SlotRange::single),
    }
}

/// `body[key]` read by `parse`, or `default` when absent; `wrong` says what it must be.
fn optional<T>(
    body: &Value,
    key: &str,
    default: T,
    parse: impl Fn(&Value) -> Option<T>,
    (step, wrong): (usize, &str),
) -> Result<T, PlanError> {
    match body.get(key) {
        None => Ok(default),
        Some(v) => parse(v).ok_or_else(|| PlanError::at(step, wrong)),
    }
}

fn text(v: &Value, step: usize, what: &str) -> Result<String, PlanError> {
    v.as_str()
        .map(str::to_owned)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| {
            PlanError::at(
                step,
                format!("{what} must be a node (an address or a name)"),
            )
        })
}

fn slots(v: &Value, step: usize) -> Result<Slots, PlanError> {
    if v.as_str() == Some("rebalance") {
        return Ok(Slots::Rebalance);
    }
    if let Some(n) = v.get("count") {
        return n
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .filter(|&n| n > 0 && n <= SLOT_COUNT)
            .map(Slots::Count)
            .ok_or_else(|| PlanError::at(step, "move.slots.count must be 1 to 16384"));
    }
    v.as_str()
        .and_then(parse_range)
        .map(Slots::Range)
        .ok_or_else(|| {
            PlanError::at(
                step,
                format!("move.slots must be a range (\"8192-16383\"), {{\"count\": N}} or \"rebalance\", not {v}"),
            )
        })
}

fn action(v: &Value, step: usize) -> Result<Action, PlanError> {
    let obj = v
        .as_object()
        .ok_or_else(|| PlanError::at(step, "a step is an object"))?;
    let kinds: Vec<&String> = obj.keys().filter(|k| *k != "at").collect();
    let [kind] = kinds.as_slice() else {
        return Err(PlanError::at(
            step,
            format!(
                "a step has \"at\" and one action (add_master, move, stall, kill, failover, \
                 remove, address_change), not {kinds:?}"
            ),
        ));
    };
    let body = &obj[kind.as_str()];
    let field = |name: &str| body.get(name).unwrap_or(&Value::Null);
    Ok(match kind.as_str() {
        "add_master" => Action::AddMaster {
            name: text(body, step, "add_master")?,
        },
        "move" => {
            // A rebalance names no source or target.
            let rebalance = field("slots").as_str() == Some("rebalance");
            let node = |what: &str| {
                let v = field(what);
                if rebalance && v.is_null() {
                    Ok(String::new())
                } else {
                    text(v, step, &format!("move.{what}"))
                }
            };
            Action::Move {
                slots: slots(field("slots"), step)?,
                from: node("from")?,
                to: node("to")?,
                rate: optional(
                    body,
                    "rate",
                    DEFAULT_MOVE_RATE,
                    parse_rate,
                    (step, "move.rate must be slots a second (\"800/s\")"),
                )?,
            }
        }
        "stall" => Action::Stall {
            node: text(field("node"), step, "stall.node")?,
            for_ms: parse_duration(field("for"))
                .filter(|&ms| ms > 0)
                .ok_or_else(|| PlanError::at(step, "stall.for must be a length (\"2.5s\")"))?,
        },
        "kill" => Action::Kill {
            node: text(body, step, "kill")?,
        },
        "failover" => Action::Failover {
            replica_of: text(field("replica_of"), step, "failover.replica_of")?,
            after_kill: field("after_kill").as_bool().unwrap_or(false),
            node_timeout_ms: optional(
                body,
                "node_timeout",
                DEFAULT_NODE_TIMEOUT_MS,
                parse_duration,
                (step, "failover.node_timeout must be a length (\"15s\")"),
            )?,
        },
        "remove" => Action::Remove {
            node: text(body, step, "remove")?,
        },
        "address_change" => Action::AddressChange {
            node: text(field("node"), step, "address_change.node")?,
            to: text(field("to"), step, "address_change.to")?,
        },
        other => {
            return Err(PlanError::at(
                step,
                format!(
                    "unknown action {other:?} (add_master, move, stall, kill, failover, remove, \
                     address_change)"
                ),
            ))
        }
    })
}

impl Plan {
    /// The plan in `json` (see the module's text): its shape checked, steps in the order given,
    /// which must be the order of their times.
    ///
    /// # Errors
    ///
    /// JSON that does not parse, no `steps`, a step without `at` or with a malformed action, or
    /// a step earlier than the one before: the step's index and what is wrong.
    pub fn from_json(json: &str) -> Result<Plan, PlanError> {
        let v: Value =
            serde_json::from_str(json).map_err(|e| PlanError::whole(format!("not JSON: {e}")))?;
        let steps = v
            .get("steps")
            .and_then(Value::as_array)
            .ok_or_else(|| PlanError::whole("no \"steps\" array"))?;
        if steps.is_empty() {
            return Err(PlanError::whole("no step"));
        }
        let mut out = Vec::with_capacity(steps.len());
        for (i, s) in steps.iter().enumerate() {
            let at_ms = s
                .get("at")
                .and_then(parse_duration)
                .ok_or_else(|| PlanError::at(i, "\"at\" must be a time from the start (\"5s\")"))?;
            if out.last().is_some_and(|p: &Step| p.at_ms > at_ms) {
                return Err(PlanError::at(i, "earlier than the step before"));
            }
            out.push(Step {
                at_ms,
                action: action(s, i)?,
            });
        }
        Ok(Plan { steps: out })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_issues_example_reads_step_by_step() {
        let plan = Plan::from_json(
            r#"{"steps": [
              {"at": "0s",  "add_master": "new1"},
              {"at": "5s",  "move": {"slots": "8192-16383", "from": "127.0.0.1:7000", "to": "new1", "rate": "800/s"}},
              {"at": "9s",  "stall": {"node": "127.0.0.1:7000", "for": "2.5s"}},
              {"at": "30s", "failover": {"replica_of": "127.0.0.1:7001"}},
              {"at": "40s", "remove": "127.0.0.1:7002"}
            ]}"#,
        )
        .unwrap();
        assert_eq!(plan.steps.len(), 5);
        assert_eq!(plan.steps[1].at_ms, 5_000);
        assert_eq!(
            plan.steps[1].action,
            Action::Move {
                slots: Slots::Range(parse_range("8192-16383").unwrap()),
                from: "127.0.0.1:7000".into(),
                to: "new1".into(),
                rate: 800,
            }
        );
        assert_eq!(
            plan.steps[2].action,
            Action::Stall {
                node: "127.0.0.1:7000".into(),
                for_ms: 2_500
            }
        );
        assert_eq!(
            plan.steps[3].action,
            Action::Failover {
                replica_of: "127.0.0.1:7001".into(),
                after_kill: false,
                node_timeout_ms: DEFAULT_NODE_TIMEOUT_MS
            }
        );
    }

    #[test]
    fn lengths_and_rates_read_in_their_units() {
        assert_eq!(parse_duration(&json!("800ms")), Some(800));
        assert_eq!(parse_duration(&json!("2.5s")), Some(2_500));
        assert_eq!(parse_duration(&json!("1m")), Some(60_000));
        assert_eq!(parse_duration(&json!(3)), Some(3_000));
        assert_eq!(parse_duration(&json!(2.5)), Some(2_500));
        assert_eq!(parse_duration(&json!("1.5m")), Some(90_000));
        assert_eq!(parse_duration(&json!("-1s")), None);
        assert_eq!(parse_duration(&json!("soon")), None);
        assert_eq!(parse_rate(&json!("800/s")), Some(800));
        assert_eq!(parse_rate(&json!(0)), None);
        assert_eq!(parse_range("42"), Slot::new(42).map(SlotRange::single));
        assert_eq!(parse_range("9-3"), None);
        assert_eq!(parse_range("0-16384"), None);
    }

    #[test]
    fn a_malformed_step_is_named_by_its_index() {
        let err = |json: &str| Plan::from_json(json).unwrap_err();
        assert_eq!(err("[").step, None);
        assert_eq!(err(r#"{"steps": []}"#).message, "no step");
        let e =
            err(r#"{"steps": [{"at": "0s", "add_master": "n"}, {"at": "1s", "explode": "x"}]}"#);
        assert_eq!(e.step, Some(1));
        assert!(e.message.contains("unknown action"), "{e}");
        let e = err(r#"{"steps": [{"at": "5s", "kill": "a:1"}, {"at": "1s", "kill": "b:1"}]}"#);
        assert_eq!(e.to_string(), "plan step 1: earlier than the step before");
        let e = err(r#"{"steps": [{"at": "0s", "move": {"slots": "x", "from": "a", "to": "b"}}]}"#);
        assert!(e.message.starts_with("move.slots"), "{e}");
        let e = err(r#"{"steps": [{"kill": "a:1"}]}"#);
        assert!(e.message.contains("\"at\""), "{e}");
        let e = err(r#"{"steps": [{"at": "0s", "kill": "a:1", "remove": "a:1"}]}"#);
        assert!(e.message.contains("one action"), "{e}");
    }

    #[test]
    fn a_rebalance_names_no_source_or_target() {
        let plan = Plan::from_json(r#"{"steps": [{"at": "1s", "move": {"slots": "rebalance"}}]}"#)
            .unwrap();
        assert!(matches!(
            plan.steps[0].action,
            Action::Move {
                slots: Slots::Rebalance,
                rate: DEFAULT_MOVE_RATE,
                ..
            }
        ));
    }
}
