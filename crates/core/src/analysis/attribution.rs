//! Attribution of findings to client groups: server counters are global, so a finding is tied to
//! the groups seen running the commands that carry it, or to the groups that behaved alike.

use std::collections::BTreeSet;

use crate::census::{Census, ClientGroup};
use crate::finding::Attribution;

/// The business commands a group was seen running.
pub(super) fn business_commands(g: &ClientGroup) -> Vec<String> {
    g.commands
        .keys()
        .filter(|c| crate::metrics::is_business_command(c))
        .cloned()
        .collect()
}

/// Ties commands to the client groups seen running them: the group that alone runs one of them
/// (or the only group running any), several groups when no one stands out, unknown when no
/// group was seen running them. A command no group was seen running belongs to clients the
/// polls missed (a short-lived group inferred from the counters, when one ran it): with others
/// owned by seen groups the attribution is ambiguous, never the seen group's alone; alone, it is
/// that inferred group's.
pub(super) fn attribute(census: &Census, commands: &[String]) -> Attribution {
    if commands.is_empty() {
        return Attribution::Unknown {
            commands: Vec::new(),
        };
    }
    let mut owners: BTreeSet<usize> = BTreeSet::new();
    let mut exclusive: BTreeSet<usize> = BTreeSet::new();
    // Labels of the clients of the commands no group was seen running.
    let mut unseen: BTreeSet<String> = BTreeSet::new();
    for c in commands {
        let users = census.groups_using(c);
        if let [one] = users.as_slice() {
            exclusive.insert(*one);
        }
        if users.is_empty() {
            unseen.insert(
                census
                    .inferred
                    .iter()
                    .find(|g| g.commands.contains_key(c))
                    .map_or_else(|| format!("clients of {c} no poll saw"), |g| g.label()),
            );
        }
        owners.extend(users);
    }
    if !unseen.is_empty() {
        return match (owners.is_empty(), unseen.len()) {
            (true, 1) if unseen.iter().all(|l| l.starts_with("short-lived")) => {
                Attribution::Group {
                    group: unseen.into_iter().next().unwrap_or_default(),
                    commands: commands.to_vec(),
                }
            }
            (true, _) => Attribution::Unknown {
                commands: commands.to_vec(),
            },
            (false, _) => Attribution::Ambiguous {
                groups: owners
                    .iter()
                    .map(|&g| census.groups[g].key.label())
                    .chain(unseen)
                    .collect(),
                commands: commands.to_vec(),
            },
        };
    }
    match (exclusive.len(), owners.len()) {
        (_, 0) => Attribution::Unknown {
            commands: commands.to_vec(),
        },
        (1, _) | (_, 1) => {
            let g = exclusive
                .iter()
                .next()
                .or_else(|| owners.iter().next())
                .copied()
                .unwrap_or(0);
            Attribution::Group {
                group: census.groups[g].key.label(),
                commands: commands
                    .iter()
                    .filter(|c| census.groups[g].commands.contains_key(*c))
                    .cloned()
                    .collect(),
            }
        }
        _ => Attribution::Ambiguous {
            groups: owners
                .iter()
                .map(|&g| census.groups[g].key.label())
                .collect(),
            commands: commands.to_vec(),
        },
    }
}

/// The attribution to groups that behaved alike (vanished, churned): the one group with its
/// business commands, or all of them without commands; `None` without any.
pub(super) fn to_groups(groups: &[&ClientGroup]) -> Option<Attribution> {
    match groups {
        [] => None,
        [one] => Some(Attribution::Group {
            group: one.key.label(),
            commands: business_commands(one),
        }),
        many => Some(Attribution::Ambiguous {
            groups: many.iter().map(|g| g.key.label()).collect(),
            commands: Vec::new(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{clients, finishing, A, T0};

    /// Group "redis-py 8.1.0" runs zrevrange and get; "jedis 5.0.0" runs hgetall and get.
    fn census() -> Census {
        finishing(&[clients(
            T0,
            7000,
            A,
            "id=1 addr=10.2.0.1:5000 fd=9 name= age=9 idle=0 flags=N cmd=zrevrange lib-name=redis-py lib-ver=8.1.0\n\
             id=2 addr=10.2.0.1:5001 fd=9 name= age=9 idle=0 flags=N cmd=get lib-name=redis-py lib-ver=8.1.0\n\
             id=3 addr=10.3.0.1:5000 fd=9 name= age=9 idle=0 flags=N cmd=hgetall lib-name=jedis lib-ver=5.0.0\n\
             id=4 addr=10.3.0.1:5001 fd=9 name= age=9 idle=0 flags=N cmd=get lib-name=jedis lib-ver=5.0.0\n\
             id=5 addr=10.3.0.1:5002 fd=9 name= age=9 idle=0 flags=N cmd=cluster|slots lib-name=jedis lib-ver=5.0.0\n",
        )])
        .census
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_command_only_one_group_runs_names_that_group() {
        let c = census();
        assert_eq!(
            attribute(&c, &strings(&["zrevrange", "get"])),
            Attribution::Group {
                group: "redis-py 8.1.0".into(),
                commands: strings(&["zrevrange", "get"]),
            }
        );
    }

    #[test]
    fn commands_every_group_runs_are_ambiguous() {
        let c = census();
        match attribute(&c, &strings(&["get"])) {
            Attribution::Ambiguous { groups, commands } => {
                assert_eq!(groups.len(), 2, "{groups:?}");
                assert_eq!(commands, strings(&["get"]));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_command_no_group_was_seen_running_beside_an_owned_one_is_ambiguous() {
        let c = census();
        match attribute(&c, &strings(&["xadd", "zrevrange"])) {
            Attribution::Ambiguous { groups, commands } => {
                assert_eq!(
                    groups,
                    strings(&["redis-py 8.1.0", "clients of xadd no poll saw"])
                );
                assert_eq!(commands, strings(&["xadd", "zrevrange"]));
            }
            other => panic!("the seen group is not the storm's alone: {other:?}"),
        }
    }

    #[test]
    fn commands_no_group_runs_are_unknown() {
        let c = census();
        assert_eq!(
            attribute(&c, &strings(&["xadd"])),
            Attribution::Unknown {
                commands: strings(&["xadd"]),
            }
        );
        assert_eq!(
            attribute(&c, &[]),
            Attribution::Unknown {
                commands: Vec::new()
            }
        );
    }

    #[test]
    fn business_commands_leave_out_cluster_housekeeping() {
        let c = census();
        let jedis = c
            .groups
            .iter()
            .find(|g| g.key.label() == "jedis 5.0.0")
            .unwrap();
        assert_eq!(business_commands(jedis), strings(&["get", "hgetall"]));
    }

    #[test]
    fn groups_that_behaved_alike_are_named() {
        let c = census();
        let all: Vec<&ClientGroup> = c.groups.iter().collect();
        assert_eq!(to_groups(&[]), None);
        match to_groups(&all[..1]) {
            Some(Attribution::Group { group, commands }) => {
                assert_eq!(group, all[0].key.label());
                assert!(!commands.is_empty());
            }
            other => panic!("{other:?}"),
        }
        match to_groups(&all) {
            Some(Attribution::Ambiguous { groups, commands }) => {
                assert_eq!(groups.len(), 2);
                assert!(commands.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }
}
