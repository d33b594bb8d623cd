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
/// group was seen running them.
pub(super) fn attribute(census: &Census, commands: &[String]) -> Attribution {
    if commands.is_empty() {
        return Attribution::Unknown {
            commands: Vec::new(),
        };
    }
    let mut owners: BTreeSet<usize> = BTreeSet::new();
    let mut exclusive: BTreeSet<usize> = BTreeSet::new();
    for c in commands {
        let users = census.groups_using(c);
        if let [one] = users.as_slice() {
            exclusive.insert(*one);
        }
        owners.extend(users);
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
