//! The short forms of a plan for the common procedures (`--plan 'scale-out:+1'`, `--plan
//! 'failover:HOST:PORT'`), each the plan it stands for (the report writes it out):
//!
//! - `scale-out:+N`: `N` new masters (`new1` …) join at 0 s, then at 5 s every master is brought
//!   to an even share ([`Slots::Rebalance`], at [`DEFAULT_MOVE_RATE`]): `redis-cli --cluster
//!   add-node` then `rebalance --cluster-use-empty-masters`;
//! - `failover:HOST:PORT`: `CLUSTER FAILOVER` on a replica of that master at 0 s.

use super::plan::{
    Action, Plan, PlanError, Slots, Step, DEFAULT_MOVE_RATE, DEFAULT_NODE_TIMEOUT_MS,
};

/// When a scale-out's rebalance starts after its masters joined, milliseconds.
const REBALANCE_AFTER_MS: u64 = 5_000;

/// The plan `text` stands for, if it is a short form (`None`: it is not one, read it as JSON or
/// a file).
///
/// # Errors
///
/// A short form with a bad argument (`scale-out:+0`, `failover:` without an address).
pub fn short_form(text: &str) -> Option<Result<Plan, PlanError>> {
    let text = text.trim();
    if let Some(n) = text.strip_prefix("scale-out:") {
        let n = n.trim().trim_start_matches('+');
        return Some(match n.parse::<u8>() {
            Ok(n) if n > 0 => {
                let mut steps: Vec<Step> = (1..=n)
                    .map(|k| Step {
                        at_ms: 0,
                        action: Action::AddMaster {
                            name: format!("new{k}"),
                        },
                    })
                    .collect();
                steps.push(Step {
                    at_ms: REBALANCE_AFTER_MS,
                    action: Action::Move {
                        slots: Slots::Rebalance,
                        from: String::new(),
                        to: String::new(),
                        rate: DEFAULT_MOVE_RATE,
                    },
                });
                Ok(Plan { steps })
            }
            _ => Err(PlanError {
                step: None,
                message: format!("scale-out:+N takes 1 to 255 new masters, not {n:?}"),
            }),
        });
    }
    if let Some(addr) = text.strip_prefix("failover:") {
        let addr = addr.trim();
        return Some(if addr.is_empty() {
            Err(PlanError {
                step: None,
                message: "failover:HOST:PORT names the master to replace".into(),
            })
        } else {
            Ok(Plan {
                steps: vec![Step {
                    at_ms: 0,
                    action: Action::Failover {
                        replica_of: addr.to_owned(),
                        after_kill: false,
                        node_timeout_ms: DEFAULT_NODE_TIMEOUT_MS,
                    },
                }],
            })
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_forms_stand_for_their_procedures() {
        let p = short_form("scale-out:+2").unwrap().unwrap();
        assert_eq!(p.steps.len(), 3);
        assert_eq!(
            p.steps[1].action,
            Action::AddMaster {
                name: "new2".into()
            }
        );
        assert_eq!(p.steps[2].at_ms, REBALANCE_AFTER_MS);
        let f = short_form("failover:127.0.0.1:7001").unwrap().unwrap();
        assert!(matches!(
            &f.steps[0].action,
            Action::Failover { replica_of, after_kill: false, .. } if replica_of == "127.0.0.1:7001"
        ));
        assert!(short_form("scale-out:+0").unwrap().is_err());
        assert!(short_form("failover:").unwrap().is_err());
        assert!(short_form("plan.json").is_none());
    }
}
