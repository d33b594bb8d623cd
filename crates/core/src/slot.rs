//! Key → slot mapping: CRC16-XMODEM over the key (or its `{hash tag}`), modulo 16384.
//!
//! Known answers, from `redis-cli cluster keyslot` on Redis 7.0.15:
//!
//! ```text
//! 127.0.0.1:7000> CLUSTER KEYSLOT foo          -> 12182
//! 127.0.0.1:7000> CLUSTER KEYSLOT {user1000}.following -> 3443
//! 127.0.0.1:7000> CLUSTER KEYSLOT {}foo        -> 9500   (empty tag: whole key hashed)
//! 127.0.0.1:7000> CLUSTER KEYSLOT foo{         -> 7673   (no closing brace: whole key hashed)
//! 127.0.0.1:7000> CLUSTER KEYSLOT device_imp:0000123456789012 -> 14564
//! ```

mod batch;

use std::fmt;

use serde::{Deserialize, Serialize};

/// Number of hash slots in a Redis / Valkey cluster.
pub const SLOT_COUNT: u16 = 16384;

/// A hash slot. Invariant: the value is below [`SLOT_COUNT`]; built only by [`Slot::new`] and
/// [`Slot::for_key`] (and checked on deserialisation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u16", into = "u16")]
pub struct Slot(u16);

impl Slot {
    /// The slot numbered `n`, if `n < 16384`.
    pub fn new(n: u16) -> Option<Slot> {
        (n < SLOT_COUNT).then_some(Slot(n))
    }

    /// The slot a key belongs to, with Redis' hash tag rule: if the key contains `{`, and a `}`
    /// follows it with at least one byte between them, only the bytes between the first `{` and the
    /// first `}` after it are hashed; otherwise the whole key is.
    pub fn for_key(key: &[u8]) -> Slot {
        Slot(crc16_xmodem(hash_tag(key)) & (SLOT_COUNT - 1))
    }

    /// The slots of many keys at once: `out[i]` becomes `Slot::for_key(keys[i])`. Faster per key
    /// than one call each where the processor multiplies without carries (x86-64 with
    /// `PCLMULQDQ`; see `slot/batch.rs`), the same elsewhere.
    ///
    /// # Panics
    ///
    /// If `keys` and `out` differ in length.
    pub fn for_keys(keys: &[&[u8]], out: &mut [Slot]) {
        assert_eq!(keys.len(), out.len(), "one slot per key");
        batch::fill(keys, out);
    }

    /// The slot number, `0..16384`.
    pub fn get(self) -> u16 {
        self.0
    }
}

impl From<Slot> for u16 {
    fn from(s: Slot) -> u16 {
        s.0
    }
}

impl TryFrom<u16> for Slot {
    type Error = SlotOutOfRange;
    fn try_from(n: u16) -> Result<Slot, SlotOutOfRange> {
        Slot::new(n).ok_or(SlotOutOfRange(u64::from(n)))
    }
}

impl TryFrom<i64> for Slot {
    type Error = SlotOutOfRange;
    fn try_from(n: i64) -> Result<Slot, SlotOutOfRange> {
        u16::try_from(n)
            .ok()
            .and_then(Slot::new)
            .ok_or(SlotOutOfRange(n.unsigned_abs()))
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A number that is not a valid slot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("slot {0} is out of range 0..16384")]
pub struct SlotOutOfRange(pub u64);

/// An inclusive range of slots, as Redis writes them (`0-8191`). Invariant: `start <= end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "(u16, u16)", into = "(u16, u16)")]
pub struct SlotRange {
    start: Slot,
    end: Slot,
}

impl SlotRange {
    /// The range `start..=end`, if `start <= end`.
    pub fn new(start: Slot, end: Slot) -> Option<SlotRange> {
        (start <= end).then_some(SlotRange { start, end })
    }

    /// The single-slot range `s..=s`.
    pub fn single(s: Slot) -> SlotRange {
        SlotRange { start: s, end: s }
    }

    /// First slot of the range.
    pub fn start(self) -> Slot {
        self.start
    }

    /// Last slot of the range (inclusive).
    pub fn end(self) -> Slot {
        self.end
    }

    /// Number of slots in the range (at least 1).
    pub fn len(self) -> usize {
        usize::from(self.end.0 - self.start.0) + 1
    }

    /// Always false: a range holds at least one slot. Present for clippy's `len_without_is_empty`.
    pub fn is_empty(self) -> bool {
        false
    }

    /// Whether `s` lies in the range.
    pub fn contains(self, s: Slot) -> bool {
        self.start <= s && s <= self.end
    }

    /// The slots of the range, in order.
    pub fn slots(self) -> impl Iterator<Item = Slot> {
        (self.start.0..=self.end.0).map(Slot)
    }

    /// Merges sorted-or-not slots into the fewest inclusive ranges, in ascending order.
    pub fn coalesce(slots: impl IntoIterator<Item = Slot>) -> Vec<SlotRange> {
        let mut v: Vec<Slot> = slots.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        let mut out: Vec<SlotRange> = Vec::new();
        for s in v {
            match out.last_mut() {
                Some(r) if r.end.0 + 1 == s.0 => r.end = s,
                _ => out.push(SlotRange::single(s)),
            }
        }
        out
    }
}

impl TryFrom<(u16, u16)> for SlotRange {
    type Error = SlotOutOfRange;
    fn try_from((a, b): (u16, u16)) -> Result<SlotRange, SlotOutOfRange> {
        let start = Slot::try_from(a)?;
        let end = Slot::try_from(b)?;
        SlotRange::new(start, end).ok_or(SlotOutOfRange(u64::from(a)))
    }
}

impl From<SlotRange> for (u16, u16) {
    fn from(r: SlotRange) -> (u16, u16) {
        (r.start.0, r.end.0)
    }
}

impl fmt::Display for SlotRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

/// The part of `key` that is hashed: the content of the first `{…}` if non-empty, else the whole key.
pub fn hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = find_byte(key, b'{') {
        let rest = &key[open + 1..];
        if let Some(close) = find_byte(rest, b'}') {
            if close > 0 {
                return &rest[..close];
            }
        }
    }
    key
}

/// The index of the first `needle` in `hay`, eight bytes at a time: XOR with the needle turns
/// matching bytes into zero bytes, and `(w - 0x01…01) & !w & 0x80…80` marks zero bytes (the lowest
/// mark is always exact; borrows can only add marks above a true zero).
fn find_byte(hay: &[u8], needle: u8) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let pattern = LO * u64::from(needle);
    let mut chunks = hay.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word) ^ pattern;
        let marks = w.wrapping_sub(LO) & !w & HI;
        if marks != 0 {
            let byte = usize::try_from(marks.trailing_zeros() / 8).unwrap_or(0);
            return Some(base + byte);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == needle)
        .map(|p| base + p)
}

/// Slicing-by-16 tables for CRC16-XMODEM (poly 0x1021, init 0, no reflection).
/// `TABLES[k][b]` is the CRC of byte `b` followed by `k` zero bytes.
const TABLES: [[u16; 256]; 16] = build_tables();

const fn build_tables() -> [[u16; 256]; 16] {
    let mut t = [[0u16; 256]; 16];
    let mut b = 0;
    while b < 256 {
        let mut crc = (b as u16) << 8;
        let mut i = 0;
        while i < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            i += 1;
        }
        t[0][b] = crc;
        b += 1;
    }
    let mut k = 1;
    while k < 16 {
        let mut b = 0;
        while b < 256 {
            let prev = t[k - 1][b];
            t[k][b] = (prev << 8) ^ t[0][(prev >> 8) as usize];
            b += 1;
        }
        k += 1;
    }
    t
}

/// CRC16-XMODEM (the CRC Redis Cluster uses for key slots) of `data`.
///
/// Slicing-by-16. The CRC is linear (no initial value, no final XOR): the table value of `a ^ b` is
/// the XOR of the values of `a` and of `b`. Long data is taken 32 bytes a turn: each 16-byte
/// block's own CRC is computed apart from the running CRC, which enters through two lookups, so the
/// processor overlaps the lookups of both blocks. Short data (keys) takes at most one 16-byte step
/// and one step for the last 0-15 bytes.
pub fn crc16_xmodem(data: &[u8]) -> u16 {
    // The CRC of the block alone: byte `i` looked up in the table of `15 - i` following zeros.
    let block16 = |c: &[u8; 16]| {
        TABLES[15][usize::from(c[0])]
            ^ TABLES[14][usize::from(c[1])]
            ^ TABLES[13][usize::from(c[2])]
            ^ TABLES[12][usize::from(c[3])]
            ^ TABLES[11][usize::from(c[4])]
            ^ TABLES[10][usize::from(c[5])]
            ^ TABLES[9][usize::from(c[6])]
            ^ TABLES[8][usize::from(c[7])]
            ^ TABLES[7][usize::from(c[8])]
            ^ TABLES[6][usize::from(c[9])]
            ^ TABLES[5][usize::from(c[10])]
            ^ TABLES[4][usize::from(c[11])]
            ^ TABLES[3][usize::from(c[12])]
            ^ TABLES[2][usize::from(c[13])]
            ^ TABLES[1][usize::from(c[14])]
            ^ TABLES[0][usize::from(c[15])]
    };
    // The CRC of `crc` followed by 16 zero bytes.
    let advance16 = |crc: u16| {
        let [hi, lo] = crc.to_be_bytes();
        TABLES[15][usize::from(hi)] ^ TABLES[14][usize::from(lo)]
    };

    let mut crc: u16 = 0;
    let mut pairs = data.chunks_exact(32);
    for pair in &mut pairs {
        let (first, second) = pair.split_at(16);
        let first = block16(first.try_into().expect("16 bytes"));
        let second = block16(second.try_into().expect("16 bytes"));
        crc = advance16(advance16(crc) ^ first) ^ second;
    }
    let mut rest = pairs.remainder();
    if let Some((block, tail)) = rest.split_first_chunk::<16>() {
        let [hi, lo] = crc.to_be_bytes();
        let mut block = *block;
        block[0] ^= hi;
        block[1] ^= lo;
        crc = block16(&block);
        rest = tail;
    }
    // The last `n < 16` bytes in one step, the running CRC folded into the first two: byte `i`
    // looked up in the table of `n - 1 - i` following zeros.
    let [hi, lo] = crc.to_be_bytes();
    match *rest {
        [] => crc,
        [b] => (u16::from(lo) << 8) ^ TABLES[0][usize::from(hi ^ b)],
        [b0, b1, ..] => {
            let n = rest.len();
            let mut acc = TABLES[n - 1][usize::from(hi ^ b0)] ^ TABLES[n - 2][usize::from(lo ^ b1)];
            for (i, &b) in rest.iter().enumerate().skip(2) {
                acc ^= TABLES[n - 1 - i][usize::from(b)];
            }
            acc
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bitwise(data: &[u8]) -> u16 {
        let mut crc: u16 = 0;
        for &b in data {
            crc ^= u16::from(b) << 8;
            for _ in 0..8 {
                crc = if crc & 0x8000 != 0 {
                    (crc << 1) ^ 0x1021
                } else {
                    crc << 1
                };
            }
        }
        crc
    }

    #[test]
    fn crc_check_value_matches_xmodem() {
        // The catalogue check value of CRC-16/XMODEM.
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
    }

    #[test]
    fn known_keyslots_from_cluster_keyslot() {
        assert_eq!(Slot::for_key(b"foo").get(), 12182);
        assert_eq!(Slot::for_key(b"{user1000}.following").get(), 3443);
        assert_eq!(Slot::for_key(b"{user1000}.followers").get(), 3443);
        assert_eq!(Slot::for_key(b"{}foo").get(), 9500);
        assert_eq!(Slot::for_key(b"foo{").get(), 7673);
        assert_eq!(Slot::for_key(b"device_imp:0000123456789012").get(), 14564);
        assert_eq!(Slot::for_key(b"").get(), 0);
    }

    #[test]
    fn hash_tag_rules() {
        assert_eq!(hash_tag(b"{a}b"), b"a");
        assert_eq!(hash_tag(b"x{a}{b}"), b"a");
        assert_eq!(hash_tag(b"{}a"), b"{}a");
        assert_eq!(hash_tag(b"{a"), b"{a");
        assert_eq!(hash_tag(b"a}{b}"), b"b");
        assert_eq!(hash_tag(b"{{a}}"), b"{a");
        assert_eq!(hash_tag(b"{}{a}"), b"{}{a}");
    }

    #[test]
    fn coalesce_merges_adjacent() {
        let s = |n| Slot::new(n).unwrap();
        let r = SlotRange::coalesce([s(5), s(1), s(2), s(3), s(7), s(6), s(10)]);
        let shown: Vec<String> = r.iter().map(|r| r.to_string()).collect();
        assert_eq!(shown, ["1-3", "5-7", "10"]);
    }

    #[test]
    fn range_rejects_bad_input() {
        assert!(SlotRange::try_from((5u16, 4u16)).is_err());
        assert!(SlotRange::try_from((0u16, 16384u16)).is_err());
        assert_eq!(SlotRange::try_from((0u16, 16383u16)).unwrap().len(), 16384);
        assert!(Slot::try_from(-1i64).is_err());
    }

    proptest! {
        #[test]
        fn sliced_crc_equals_bitwise(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(crc16_xmodem(&data), bitwise(&data));
        }

        #[test]
        fn word_search_finds_the_first_byte(
            hay in proptest::collection::vec(prop_oneof![Just(b'{'), Just(b'}'), any::<u8>()], 0..80),
            needle in prop_oneof![Just(b'{'), Just(b'}'), any::<u8>()],
        ) {
            prop_assert_eq!(find_byte(&hay, needle), hay.iter().position(|&b| b == needle));
        }

        #[test]
        fn slot_is_in_range(key in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert!(Slot::for_key(&key).get() < SLOT_COUNT);
        }
    }
}
