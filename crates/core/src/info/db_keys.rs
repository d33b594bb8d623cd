//! The keyspace of an `INFO` report as the recording writes it: `dbN` names (`db0`, `db12`)
//! for the map of database numbers [`super::InfoReport::keyspace`] holds (`#[serde(with)]`).
//!
//! Serialises the keyspace map with the server's own keys (`"db0"`), since JSON object keys are
//! strings and a recording line is read through a tagged enum, which cannot turn `"0"` back into a
//! number.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::KeyspaceStat;

pub fn serialize<S: Serializer>(
    map: &BTreeMap<u32, KeyspaceStat>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let named: BTreeMap<String, &KeyspaceStat> =
        map.iter().map(|(db, st)| (format!("db{db}"), st)).collect();
    named.serialize(s)
}

/// Read straight into the map by index: a `dbN` name is read as text and parsed, never kept
/// (every `INFO` sample of a recording has a keyspace).
pub fn deserialize<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<u32, KeyspaceStat>, D::Error> {
    d.deserialize_map(Keyspace)
}

/// A map of `dbN` names to their key counts.
struct Keyspace;

impl<'de> Visitor<'de> for Keyspace {
    type Value = BTreeMap<u32, KeyspaceStat>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of dbN names to key counts")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(DbIndex(db)) = map.next_key()? {
            let stat: KeyspaceStat = map.next_value()?;
            out.insert(db, stat);
        }
        Ok(out)
    }
}

/// The `N` of a `dbN` name.
struct DbIndex(u32);

impl<'de> Deserialize<'de> for DbIndex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<DbIndex, D::Error> {
        d.deserialize_str(DbIndexVisitor)
    }
}

struct DbIndexVisitor;

impl Visitor<'_> for DbIndexVisitor {
    type Value = DbIndex;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a keyspace name dbN")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<DbIndex, E> {
        name.strip_prefix("db")
            .and_then(|n| n.parse().ok())
            .map(DbIndex)
            .ok_or_else(|| E::custom(format!("keyspace key `{name}` is not dbN")))
    }
}
