//! One application, one group: a connection caught by `CLIENT LIST` mid-handshake shows a partial
//! identity. A client library connects with `HELLO`, then `CLIENT SETNAME`, then `CLIENT SETINFO
//! LIB-NAME`, then `LIB-VER`; a poll between two of them lists the connection as `host 10.0.0.7`
//! (nothing set yet), `"api"` (named, no library yet) or `redis-py "api"` (no version yet). A
//! connection seen again later moves to its full identity as it is (the builder follows it by
//! id); one that was only seen mid-handshake (a short-lived connection, typical of a client that
//! rebuilds itself) stays under its partial key unless this merge runs. It runs when the census
//! is finished, because a key seen later may complete one seen earlier.

use std::collections::BTreeMap;

use super::group::{ClientGroup, GroupKey, MergedKey};

/// Commands a connection runs before its identity is complete: what `cmd` shows for a
/// connection caught mid-handshake.
pub const HANDSHAKE: &[&str] = &["hello", "auth", "client|setname", "client|setinfo"];

/// Whether every command the group was seen running is a handshake command (or none was seen):
/// a connection that ran anything else has finished its handshake, so its key is its identity.
fn handshake_only(g: &ClientGroup) -> bool {
    g.commands.keys().all(|c| HANDSHAKE.contains(&c.as_str()))
}

/// How many of the identity fields `key` has.
fn fields(key: &GroupKey) -> usize {
    [&key.lib_name, &key.lib_ver, &key.name]
        .iter()
        .filter(|f| f.is_some())
        .count()
}

/// Whether `full` completes `part`: both named (no host key), every field `part` has is the same
/// in `full`, and `full` has more.
fn completes(full: &GroupKey, part: &GroupKey) -> bool {
    let same = |p: &Option<String>, f: &Option<String>| p.is_none() || p == f;
    full.host.is_none()
        && part.host.is_none()
        && same(&part.lib_name, &full.lib_name)
        && same(&part.lib_ver, &full.lib_ver)
        && same(&part.name, &full.name)
        && fields(full) > fields(part)
}

/// Moves group `src`'s counts into `dst` and records its key as merged.
fn absorb(groups: &mut [ClientGroup], src: usize, dst: usize) {
    let from = groups[src].clone();
    groups[src].connections_seen = 0;
    let to = &mut groups[dst];
    to.hosts.extend(from.hosts);
    to.nodes.extend(from.nodes);
    for (c, n) in from.commands {
        *to.commands.entry(c).or_default() += n;
    }
    to.connections_seen += from.connections_seen;
    to.lifetimes_secs.extend(from.lifetimes_secs);
    for (s, n) in from.new_by_second {
        *to.new_by_second.entry(s).or_default() += n;
    }
    to.first_seen = to.first_seen.min(from.first_seen);
    to.last_seen = to.last_seen.max(from.last_seen);
    to.merged.push(MergedKey {
        key: from.key,
        connections: from.connections_seen,
    });
    to.merged.extend(from.merged);
}

/// Whether `g` opened a connection within a second of every second `anon` did (and `anon`
/// opened any after the first poll).
fn opened_alongside(g: &ClientGroup, anon: &ClientGroup) -> bool {
    !anon.new_by_second.is_empty()
        && anon.new_by_second.keys().all(|&s| {
            g.new_by_second
                .range(s.saturating_sub(1)..=s + 1)
                .any(|(_, &n)| n > 0)
        })
}

/// Merges the groups of connections seen mid-handshake into their application's group and
/// returns, for every group index, the index of the group its connections now count in (its
/// own when it stays). Merged-away groups are left with `connections_seen == 0`.
///
/// 1. A named partial key (`"api"`, `redis-py "api"`) that only ran handshake commands joins
///    the fullest key that completes it on a shared client host, when exactly one such key
///    exists (two different libraries or versions under one name stay apart: the partial key
///    cannot say which it was).
/// 2. A nameless connection (`host 10.0.0.7`) that only ran handshake commands joins the only
///    named group on its host. When several named groups share the host, nothing in the
///    connection ties it to one of them, and counting it in the wrong application would misstate
///    both rows and the attribution that reads them: it joins one only if that group alone
///    opened connections within a second of every one of its own; otherwise it stays its own
///    group.
pub(super) fn merge_partial_keys(groups: &mut [ClientGroup]) -> Vec<usize> {
    let mut into: Vec<usize> = (0..groups.len()).collect();
    let live = |g: &ClientGroup| g.connections_seen > 0;
    let share_host = |a: &ClientGroup, b: &ClientGroup| !a.hosts.is_disjoint(&b.hosts);

    // 1. Named partial keys.
    let mut moves: BTreeMap<usize, usize> = BTreeMap::new();
    for (p, part) in groups.iter().enumerate() {
        if !live(part) || part.key.host.is_some() || !handshake_only(part) {
            continue;
        }
        let candidates: Vec<usize> = (0..groups.len())
            .filter(|&h| {
                live(&groups[h])
                    && completes(&groups[h].key, &part.key)
                    && share_host(&groups[h], part)
            })
            .collect();
        let fullest: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&h| {
                !candidates
                    .iter()
                    .any(|&o| completes(&groups[o].key, &groups[h].key))
            })
            .collect();
        if let [one] = fullest.as_slice() {
            moves.insert(p, *one);
        }
    }
    for (&p, &h) in &moves {
        absorb(groups, p, h);
        into[p] = h;
    }

    // 2. Nameless connections mid-handshake.
    let mut moves: BTreeMap<usize, usize> = BTreeMap::new();
    for (a, anon) in groups.iter().enumerate() {
        let Some(host) = &anon.key.host else { continue };
        if !live(anon) || !handshake_only(anon) {
            continue;
        }
        let named: Vec<usize> = (0..groups.len())
            .filter(|&h| {
                live(&groups[h]) && groups[h].key.host.is_none() && groups[h].hosts.contains(host)
            })
            .collect();
        let chosen = match named.as_slice() {
            [one] => Some(*one),
            [] => None,
            many => {
                let alongside: Vec<usize> = many
                    .iter()
                    .copied()
                    .filter(|&h| opened_alongside(&groups[h], anon))
                    .collect();
                match alongside.as_slice() {
                    [one] => Some(*one),
                    _ => None,
                }
            }
        };
        if let Some(h) = chosen {
            moves.insert(a, h);
        }
    }
    for (&a, &h) in &moves {
        absorb(groups, a, h);
        into[a] = h;
    }
    // A partial key merged in step 1 into a group that step 2 never moves: one hop suffices,
    // but follow chains anyway.
    for g in 0..into.len() {
        let mut t = into[g];
        while into[t] != t {
            t = into[t];
        }
        into[g] = t;
    }
    into
}
