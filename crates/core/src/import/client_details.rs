//! redis_exporter's client list (`--export-client-list`): one `redis_connected_clients_details`
//! series per connection, its labels the `CLIENT LIST` fields the exporter keeps (`name`,
//! `created_at`, `idle_since` as Unix seconds, `cmd`, `flags`, `db`, `omem`, `host`, and `port`
//! with `--export-client-port`; checked on redis_exporter 1.45). A point of such a series at `t`
//! says the connection was open then; it becomes a `CLIENT LIST` entry of its node at `t`, so the
//! census finds client groups in a recording imported from metrics.
//!
//! The exporter gives no connection id: the entry's `id` is a digest of what names the
//! connection (host, port, name, creation second), stable from point to point. Without the port
//! two connections of one host and name opened in the same second are one series (the exporter
//! merges them), so they count once.

use crate::client_list::ClientEntry;
use crate::field_map::FieldMap;
use crate::time::Timestamp;

use super::Series;

/// The series name.
pub const DETAILS: &str = "redis_connected_clients_details";

/// A stable id for the connection `s` stands for (FNV-1a over its naming labels; below 2^53 so
/// it reads back exactly wherever JSON numbers are doubles).
fn id(s: &Series) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for k in ["host", "port", "name", "created_at"] {
        for b in s
            .labels
            .get(k)
            .map_or("", String::as_str)
            .bytes()
            .chain([0xff])
        {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h >> 11
}

/// The `CLIENT LIST` entry the details series `s` stands for at `t`.
pub fn entry(s: &Series, t: Timestamp) -> ClientEntry {
    let label = |k: &str| s.labels.get(k).map(String::as_str);
    let secs = t.0 / 1000;
    let since = |k: &str| {
        label(k)
            .and_then(|v| v.parse::<u64>().ok())
            .map(|at| secs.saturating_sub(at).to_string())
    };
    let mut fields = FieldMap::new();
    fields.insert("id", id(s).to_string());
    let host = label("host").unwrap_or("");
    fields.insert("addr", format!("{host}:{}", label("port").unwrap_or("0")));
    if let Some(age) = since("created_at") {
        fields.insert("age", age);
    }
    if let Some(idle) = since("idle_since") {
        fields.insert("idle", idle);
    }
    for (from, to) in [
        ("name", "name"),
        ("cmd", "cmd"),
        ("flags", "flags"),
        ("db", "db"),
        ("omem", "omem"),
        ("user", "user"),
        ("lib_name", "lib-name"),
        ("lib_ver", "lib-ver"),
        ("resp", "resp"),
    ] {
        if let Some(v) = label(from) {
            fields.insert(to, v);
        }
    }
    ClientEntry { fields }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(labels: &[(&str, &str)]) -> Series {
        Series {
            name: DETAILS.to_owned(),
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            points: Vec::new(),
        }
    }

    #[test]
    fn a_details_series_is_a_client_list_entry() {
        // Labels as redis_exporter 1.45 gives them (`--export-client-list`).
        let s = series(&[
            ("addr", "127.0.0.1:7000"),
            ("cmd", "zadd"),
            ("created_at", "1796170837"),
            ("db", "0"),
            ("flags", "N"),
            ("host", "10.0.0.9"),
            ("idle_since", "1796170839"),
            ("name", "metrics-app"),
            ("omem", "0"),
        ]);
        let e = entry(&s, Timestamp(1_796_170_840_500));
        assert_eq!(e.name(), Some("metrics-app"));
        assert_eq!(e.client_host(), Some("10.0.0.9"));
        assert_eq!(e.age_secs(), Some(3));
        assert_eq!(e.idle_secs(), Some(1));
        assert_eq!(e.cmd(), Some("zadd"));
        assert_eq!(
            e.id(),
            entry(&s, Timestamp(1_796_170_900_000)).id(),
            "stable"
        );
        let mut other = s.clone();
        other
            .labels
            .insert("created_at".to_owned(), "1796170838".to_owned());
        assert_ne!(e.id(), entry(&other, Timestamp(1_796_170_840_500)).id());
    }
}
