//! Quantities as people read them: a finding's numbers with a label and a unit instead of their
//! snake_case keys ("successful commands before: 200.0/s", "lost: 99 %"), durations in the unit
//! that shows them ("28 ms", not "~0.0 s"), and counts with the noun agreeing ("1
//! re-initialisation"). The JSON keeps the raw numbers under their keys.

/// What a number measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Per second.
    PerSec,
    /// A share from 0 to 1, shown as a percentage.
    Share,
    /// Seconds.
    Secs,
    /// A count.
    Count,
}

/// The label and unit of a finding's number key; a key of the form `name:part` (a per-command
/// number such as `moved_share:get`) puts the part after the label.
pub fn label(key: &str) -> (String, Unit) {
    let (base, part) = key
        .split_once(':')
        .map_or((key, None), |(b, p)| (b, Some(p)));
    let (text, unit) = match base {
        "commands_per_sec_before" => ("successful commands before", Unit::PerSec),
        "commands_per_sec_after" => ("successful commands after", Unit::PerSec),
        "commands_per_sec" => ("commands received", Unit::PerSec),
        "cluster_commands_per_sec_before" => ("cluster-wide commands before", Unit::PerSec),
        "cluster_commands_per_sec_after" => ("cluster-wide commands after", Unit::PerSec),
        "errors_per_sec_before" => ("rejected or failed before", Unit::PerSec),
        "errors_per_sec_after" => ("rejected or failed after", Unit::PerSec),
        "failed_per_sec_after" => ("failed after", Unit::PerSec),
        "rejected_per_sec_after" => ("rejected after", Unit::PerSec),
        "moved_per_sec_elsewhere" => ("MOVED from other nodes", Unit::PerSec),
        "rejected_per_sec_elsewhere" => ("rejected by other nodes", Unit::PerSec),
        "lost_share" => ("lost", Unit::Share),
        "caught_up_share" => ("missed commands served after", Unit::Share),
        "duration_secs" => ("lasted", Unit::Secs),
        "window_secs" | "window_secs_after" => ("measured over", Unit::Secs),
        "keys" => ("keys held", Unit::Count),
        "slots" => ("slots owned", Unit::Count),
        "slot_share" => ("share of the slots", Unit::Share),
        "mean_lifetime_secs" => ("mean connection lifetime", Unit::Secs),
        "new_connections_per_sec" => ("new connections", Unit::PerSec),
        "open_connections" => ("open connections", Unit::Count),
        "nodes_churning" => ("nodes churning", Unit::Count),
        "refresh_per_sec" => ("topology refresh", Unit::PerSec),
        "moved_per_sec" => ("MOVED replies", Unit::PerSec),
        "redirects_per_sec" => ("redirects", Unit::PerSec),
        "redirect_share" => ("share redirected", Unit::Share),
        "redirect_share_first_third" => ("share redirected, first third", Unit::Share),
        "redirect_share_last_third" => ("share redirected, last third", Unit::Share),
        "moved_share" => ("share MOVED", Unit::Share),
        "connections_seen" => ("connections seen", Unit::Count),
        "fleet_instances_affected" => ("instances affected (k of n)", Unit::Count),
        "fleet_instances" => ("instances in all (n)", Unit::Count),
        "business_attempts" => ("business commands attempted", Unit::Count),
        "business_rejected" => ("rejected", Unit::Count),
        "business_failed" => ("failed", Unit::Count),
        "error_share" => ("share rejected or failed", Unit::Share),
        "connections_received" => ("connections received", Unit::Count),
        "connections_unseen" => ("connections no poll saw", Unit::Count),
        "nodes" => ("nodes reached", Unit::Count),
        "setinfo_errors" => ("CLIENT SETINFO rejections (ERR)", Unit::Count),
        "fingerprinted_connections" => ("connections they account for", Unit::Count),
        "hello_per_connection" => ("HELLO per connection", Unit::Count),
        "hosts" => ("client hosts", Unit::Count),
        other => return (fallback(other, part), guess_unit(other)),
    };
    let text = match part {
        Some(p) => format!("{text} ({p})"),
        None => text.to_owned(),
    };
    (text, unit)
}

/// A key no table row names, as words: `foo_bar_per_sec` → `foo bar`.
fn fallback(key: &str, part: Option<&str>) -> String {
    let base = key
        .trim_end_matches("_per_sec")
        .trim_end_matches("_secs")
        .trim_end_matches("_share")
        .replace('_', " ");
    match part {
        Some(p) => format!("{base} ({p})"),
        None => base,
    }
}

/// The unit a key's suffix suggests.
fn guess_unit(key: &str) -> Unit {
    if key.ends_with("_per_sec") {
        Unit::PerSec
    } else if key.ends_with("_share") || key.ends_with("_ratio") {
        Unit::Share
    } else if key.ends_with("_secs") {
        Unit::Secs
    } else {
        Unit::Count
    }
}

/// `v` in `unit`: `54.6/s`, `16.1 %`, `28 ms`, `2.5 s`, `302`.
pub fn value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::PerSec => format!("{v:.1}/s"),
        Unit::Share => format!("{:.1} %", v * 100.0),
        Unit::Secs => duration(v),
        Unit::Count if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        Unit::Count => format!("{v:.1}"),
    }
}

/// A finding's number as `label: value`.
pub fn labelled(key: &str, v: f64) -> String {
    let (l, unit) = label(key);
    format!("{l}: {}", value(v, unit))
}

/// Seconds in the unit that shows them: `28 ms` below one second, `2.5 s` below a minute, then
/// `3 min 20 s`.
pub fn duration(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        "-".to_owned()
    } else if secs < 1.0 {
        format!("{:.0} ms", secs * 1000.0)
    } else if secs < 60.0 {
        format!("{secs:.1} s")
    } else {
        let whole = secs.round();
        format!("{:.0} min {:.0} s", (whole / 60.0).floor(), whole % 60.0)
    }
}

/// `n noun`, the noun in the plural unless `n` is 1: `1 re-initialisation`, `2 connections`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A size in bytes as people read it: `512 B`, `1.5 KiB`, `3.0 MiB`, `2.4 GiB` (powers of 1024,
/// one decimal past bytes).
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_powers_of_1024() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 20), "3.0 MiB");
        assert_eq!(human_bytes(5 << 40), "5120.0 GiB");
    }

    #[test]
    fn numbers_read_with_labels_and_units() {
        assert_eq!(
            labelled("commands_per_sec_before", 200.0),
            "successful commands before: 200.0/s"
        );
        assert_eq!(labelled("lost_share", 0.986), "lost: 98.6 %");
        assert_eq!(
            labelled("mean_lifetime_secs", 0.028),
            "mean connection lifetime: 28 ms"
        );
        assert_eq!(
            labelled("moved_share:get", 0.25),
            "share MOVED (get): 25.0 %"
        );
        assert_eq!(labelled("keys", 302.0), "keys held: 302");
        assert_eq!(labelled("odd_thing_per_sec", 2.0), "odd thing: 2.0/s");
    }

    #[test]
    fn durations_and_counts_read_naturally() {
        assert_eq!(duration(0.028), "28 ms");
        assert_eq!(duration(2.5), "2.5 s");
        assert_eq!(duration(200.0), "3 min 20 s");
        assert_eq!(count(1, "re-initialisation"), "1 re-initialisation");
        assert_eq!(count(0, "connection"), "0 connections");
        assert_eq!(count(3, "connection"), "3 connections");
    }
}
