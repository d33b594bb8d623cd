//! Raw text fields as a server lists them (`INFO` sections, `CLIENT LIST` entries): a map from
//! field name to value, kept in one buffer.
//!
//! A recording holds millions of these fields (a real `INFO` line some 180, a `CLIENT LIST`
//! entry some 30), and as a `BTreeMap<String, String>` every name and every value was an
//! allocation of its own, plus the map's nodes. [`FieldMap`] keeps every name and value in one
//! `String` and an index sorted by name beside it, read through a per-thread scratch and copied
//! out at its exact size: two allocations per map. `analyze` on the `incident2-valkey` fixture
//! went from 95.0 M to 52.2 M instructions (BENCHMARKS.md, "Issue 26, part 4: the day-long
//! recording in a worker"). It reads and writes the same JSON object as the map it replaces
//! (names in byte order; a later duplicate name replaces the earlier one).

use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Field name → value, in name order (byte order, as `BTreeMap<String, String>`).
#[derive(Clone, Default)]
pub struct FieldMap {
    /// Every name and value, each name followed by its value (overwritten ones left in place).
    text: String,
    /// Per field, sorted by name: where its name starts, where the name ends and the value
    /// starts, and where the value ends, in `text`.
    index: Vec<[usize; 3]>,
}

impl FieldMap {
    /// An empty map.
    pub fn new() -> FieldMap {
        FieldMap::default()
    }

    fn name(&self, at: &[usize; 3]) -> &str {
        &self.text[at[0]..at[1]]
    }

    fn value(&self, at: &[usize; 3]) -> &str {
        &self.text[at[1]..at[2]]
    }

    /// Where `name` is in the index, or where it would go.
    fn find(&self, name: &str) -> Result<usize, usize> {
        self.index.binary_search_by(|at| self.name(at).cmp(name))
    }

    /// The value of `name`, if the map has it.
    pub fn get(&self, name: &str) -> Option<&str> {
        let i = self.find(name).ok()?;
        Some(self.value(&self.index[i]))
    }

    /// Whether the map has `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.find(name).is_ok()
    }

    /// Appends `name` and `value` to the buffer: their place.
    fn push(&mut self, name: &str, value: &str) -> [usize; 3] {
        let start = self.text.len();
        self.text.push_str(name);
        let mid = self.text.len();
        self.text.push_str(value);
        [start, mid, self.text.len()]
    }

    /// Sets `name` to `value` (replacing its value if it had one).
    pub fn insert(&mut self, name: impl AsRef<str>, value: impl AsRef<str>) {
        let (name, value) = (name.as_ref(), value.as_ref());
        let at = self.push(name, value);
        match self.find(name) {
            Ok(i) => self.index[i] = at,
            Err(i) => self.index.insert(i, at),
        }
    }

    /// How many fields.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether it has no field.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Every field as `(name, value)`, in name order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.index.iter().map(|at| (self.name(at), self.value(at)))
    }

    /// Every name, in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.index.iter().map(|at| self.name(at))
    }

    /// Puts the index in name order, a later duplicate name replacing the earlier one (fields
    /// appended with [`push`](Self::push) in the order they came).
    fn settle(&mut self) {
        if self
            .index
            .windows(2)
            .all(|w| self.name(&w[0]) < self.name(&w[1]))
        {
            return;
        }
        let text = &self.text;
        let name = |at: &[usize; 3]| &text[at[0]..at[1]];
        // Stable: of equal names the later stays later, and is the one kept.
        self.index.sort_by(|a, b| name(a).cmp(name(b)));
        let mut kept: Vec<[usize; 3]> = Vec::with_capacity(self.index.len());
        for at in self.index.drain(..) {
            match kept.last_mut() {
                Some(last) if name(last) == name(&at) => *last = at,
                _ => kept.push(at),
            }
        }
        self.index = kept;
    }
}

impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for FieldMap {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(fields: I) -> FieldMap {
        let mut map = FieldMap::new();
        for (k, v) in fields {
            let at = map.push(k.as_ref(), v.as_ref());
            map.index.push(at);
        }
        map.settle();
        map
    }
}

impl<K: AsRef<str>, V: AsRef<str>, const N: usize> From<[(K, V); N]> for FieldMap {
    fn from(fields: [(K, V); N]) -> FieldMap {
        fields.into_iter().collect()
    }
}

impl PartialEq for FieldMap {
    fn eq(&self, other: &FieldMap) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for FieldMap {}

impl fmt::Debug for FieldMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for FieldMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Appends a JSON string to a buffer, without a `String` of its own on the way.
struct AppendTo<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for AppendTo<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for AppendTo<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        self.0.push_str(s);
        Ok(())
    }
}

/// Reads a JSON object of strings into a [`FieldMap`].
struct FieldMapVisitor;

impl<'de> Visitor<'de> for FieldMapVisitor {
    type Value = FieldMap;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of text fields")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<FieldMap, A::Error> {
        // Read into this thread's scratch map, then copy it out at its exact size: two
        // allocations per map, none for the buffers' growth (a map nested in a field being read
        // takes the scratch's place meanwhile, and gives it back).
        let mut map = SCRATCH.with(|s| s.take());
        map.text.clear();
        map.index.clear();
        let read: Result<(), A::Error> = (|| loop {
            let start = map.text.len();
            if access.next_key_seed(AppendTo(&mut map.text))?.is_none() {
                return Ok(());
            }
            let mid = map.text.len();
            access.next_value_seed(AppendTo(&mut map.text))?;
            map.index.push([start, mid, map.text.len()]);
        })();
        let out = read.map(|()| {
            map.settle();
            FieldMap {
                text: map.text.as_str().to_owned(),
                index: map.index.to_vec(),
            }
        });
        SCRATCH.with(|s| s.set(map));
        out
    }
}

thread_local! {
    /// The buffers [`FieldMapVisitor`] reads into, kept between maps.
    static SCRATCH: std::cell::Cell<FieldMap> = const {
        std::cell::Cell::new(FieldMap { text: String::new(), index: Vec::new() })
    };
}

impl<'de> Deserialize<'de> for FieldMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<FieldMap, D::Error> {
        deserializer.deserialize_map(FieldMapVisitor)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn reads_and_writes_the_object_a_btreemap_would() {
        let json = r#"{"b":"2","a":"1","c":"","a":"one again","é":"x\"y"}"#;
        let map: FieldMap = serde_json::from_str(json).unwrap();
        let reference: BTreeMap<String, String> = serde_json::from_str(json).unwrap();
        assert_eq!(
            serde_json::to_string(&map).unwrap(),
            serde_json::to_string(&reference).unwrap()
        );
        assert_eq!(map.get("a"), Some("one again"));
        assert_eq!(map.get("c"), Some(""));
        assert_eq!(map.get("é"), Some("x\"y"));
        assert_eq!(map.get("d"), None);
        assert_eq!(map.len(), 4);
        assert!(serde_json::from_str::<FieldMap>(r#"{"a":1}"#).is_err());
    }

    #[test]
    fn insert_replaces_and_keeps_the_order() {
        let mut map = FieldMap::from([("z", "26"), ("a", "1")]);
        map.insert("m", "13");
        map.insert("a", "one");
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "m", "z"]);
        assert_eq!(map.get("a"), Some("one"));
        // The replaced value stays in the buffer; the index points past it.
        assert!(map.text.starts_with("z26a1m13aone"), "{}", map.text);
        assert_eq!(
            map,
            FieldMap::from([("a", "one"), ("m", "13"), ("z", "26")])
        );
        assert_ne!(map, FieldMap::from([("a", "one"), ("m", "13")]));
        assert_eq!(format!("{map:?}"), r#"{"a": "one", "m": "13", "z": "26"}"#);
    }

    proptest! {
        /// Any object of strings reads, writes, compares and answers as the `BTreeMap` did.
        #[test]
        fn behaves_as_a_btreemap(fields in prop::collection::vec(("[a-e]{0,3}|\\PC{0,4}", "\\PC{0,6}"), 0..24)) {
            let json = format!(
                "{{{}}}",
                fields
                    .iter()
                    .map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap(), serde_json::to_string(v).unwrap()))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            let map: FieldMap = serde_json::from_str(&json).unwrap();
            let reference: BTreeMap<String, String> = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(serde_json::to_string(&map).unwrap(), serde_json::to_string(&reference).unwrap());
            prop_assert_eq!(map.len(), reference.len());
            for (k, v) in &reference {
                prop_assert_eq!(map.get(k), Some(v.as_str()));
            }
            let collected: FieldMap = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            prop_assert_eq!(&collected, &map);
            let mut inserted = FieldMap::new();
            for (k, v) in &fields {
                inserted.insert(k, v);
            }
            prop_assert_eq!(inserted, map);
        }
    }
}
