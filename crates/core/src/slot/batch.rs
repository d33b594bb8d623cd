//! Key → slot for many keys at once ([`Slot::for_keys`](super::Slot::for_keys)).
//!
//! On x86-64 processors with `PCLMULQDQ` (every x86-64 processor since 2010), each key's CRC is
//! computed by carry-less multiplication instead of table lookups. The CRC is the remainder of
//! the key, read as a polynomial over GF(2) with its first bit highest and multiplied by x¹⁶,
//! divided by P = x¹⁶ + x¹² + x⁵ + 1 (0x11021). The key is cut into 64-bit words from its end
//! (the first word padded with zero bytes in front, which leaves the polynomial as it is); word
//! `w` with `m` words after it contributes `w · (x^(64m+16) mod P)`, one multiplication each,
//! all of them independent. Their sum (degree < 80) is reduced by Barrett's method
//! (μ = ⌊x⁸⁰ / P⌋, two more multiplications). A key of 16 bytes or more is searched for `{`
//! sixteen bytes at a time (a hash tag is then cut as the single-key path cuts it). A hashed part
//! shorter than 16 bytes (a hash tag, mostly) or longer than [`MAX_CLMUL_LEN`] takes the
//! single-key path's tables, and so does every key elsewhere (WebAssembly, older processors).
//!
//! Checked against the single-key path on random keys, with and without hash tags, of every
//! length up to past the multiplication's limit (tests below).

#![allow(unsafe_code)]
// the processor's carry-less multiply, behind its feature check (below)
// Elsewhere (WebAssembly) only the tables are used; the multiplication's constants stay unused.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

use super::Slot;

/// Longest hashed part (bytes) the multiplication path takes; longer ones take the tables.
pub(crate) const MAX_CLMUL_LEN: usize = 256;

/// Words (8 bytes) of the longest hashed part the multiplication path takes.
const MAX_WORDS: usize = MAX_CLMUL_LEN / 8;

/// The CRC's polynomial with its x¹⁶ term.
const POLY: u64 = 0x1_1021;

/// `x^e mod P`.
const fn x_pow_mod(e: u32) -> u64 {
    let mut r: u64 = 1;
    let mut i = 0;
    while i < e {
        r <<= 1;
        if r & 0x1_0000 != 0 {
            r ^= POLY;
        }
        i += 1;
    }
    r
}

/// `⌊x⁸⁰ / P⌋ - x⁶⁴` (degree < 64), for Barrett's reduction: `⌊x⁸⁰ / P⌋` has degree 64, its
/// top term left out to fit one multiplication.
const fn mu() -> u64 {
    let mut rem: u128 = 1 << 80;
    let mut q: u128 = 0;
    let mut i = 64;
    loop {
        if rem & (1u128 << (16 + i)) != 0 {
            q |= 1 << i;
            rem ^= (POLY as u128) << i;
        }
        if i == 0 {
            break;
        }
        i -= 1;
    }
    q as u64
}

/// The factors of a 16-byte step `j` steps from the end of the data: its low word is followed
/// by `2j` words and its high word by `2j + 1`, and a word followed by `m` words contributes
/// `w · (x^(64m+16) mod P)`; the pair is `[x^(128j+16) mod P, x^(128j+80) mod P]`, one load.
const STEP_FACTORS: [[u64; 2]; MAX_WORDS / 2] = step_factors();

const fn step_factors() -> [[u64; 2]; MAX_WORDS / 2] {
    let mut p = [[0u64; 2]; MAX_WORDS / 2];
    let mut j = 0;
    while j < MAX_WORDS / 2 {
        let m = 2 * j as u32;
        p[j] = [x_pow_mod(64 * m + 16), x_pow_mod(64 * (m + 1) + 16)];
        j += 1;
    }
    p
}

/// See [`mu`].
const MU: u64 = mu();

/// Fills `out[i]` with the slot of `keys[i]`.
pub(super) fn fill(keys: &[&[u8]], out: &mut [Slot]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("pclmulqdq")
            && std::arch::is_x86_feature_detected!("ssse3")
        {
            // SAFETY: the processor has the features `clmul::fill` is compiled for (checked
            // just above).
            unsafe { clmul::fill(keys, out) };
            return;
        }
    }
    for (key, slot) in keys.iter().zip(out.iter_mut()) {
        *slot = Slot::for_key(key);
    }
}

/// The carry-less multiplication path (x86-64 with `PCLMULQDQ` and `SSSE3`).
#[cfg(target_arch = "x86_64")]
mod clmul {
    use std::arch::x86_64::{
        __m128i, _mm_clmulepi64_si128, _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_set_epi64x, _mm_shuffle_epi8,
        _mm_srli_si128, _mm_xor_si128,
    };

    use super::{MAX_CLMUL_LEN, MU, POLY, STEP_FACTORS};
    use crate::slot::{crc16_xmodem, hash_tag, Slot, SLOT_COUNT};

    /// `pshufb` masks: `REVERSE[r]` takes the first `r` bytes of a 16-byte load (r in 0..=16)
    /// into a register that, read as a little-endian `u128`, is their big-endian number: the
    /// polynomial of those bytes, zero bytes in front.
    const REVERSE: [[i8; 16]; 17] = reverse_masks();

    const fn reverse_masks() -> [[i8; 16]; 17] {
        let mut m = [[-1i8; 16]; 17];
        let mut r = 0;
        while r <= 16 {
            let mut j = 0;
            while j < r {
                m[r][j] = (r - 1 - j) as i8;
                j += 1;
            }
            r += 1;
        }
        m
    }

    /// # Safety
    ///
    /// The processor must have `PCLMULQDQ` and `SSSE3`.
    #[target_feature(enable = "pclmulqdq,ssse3")]
    pub(super) unsafe fn fill(keys: &[&[u8]], out: &mut [Slot]) {
        let brace = _mm_set1_epi8(b'{' as i8);
        for (key, slot) in keys.iter().zip(out.iter_mut()) {
            let n = key.len();
            if (16..=32).contains(&n) {
                // The common length: the first and the last 16 bytes cover the key, for the
                // `{` search and for the CRC's two steps alike.
                let (a, b) = (raw(key, 0), raw(key, n - 16));
                let braces = _mm_or_si128(_mm_cmpeq_epi8(a, brace), _mm_cmpeq_epi8(b, brace));
                if _mm_movemask_epi8(braces) == 0 {
                    let acc = if n == 16 {
                        step(_mm_set1_epi8(0), reverse(a, 16), 0)
                    } else {
                        step(
                            step(_mm_set1_epi8(0), reverse(a, n - 16), 1),
                            reverse(b, 16),
                            0,
                        )
                    };
                    *slot = Slot(reduce(acc) & (SLOT_COUNT - 1));
                    continue;
                }
            }
            // A short key is scanned word by word, a longer one sixteen bytes at a time.
            let part = if n < 16 || has_brace(key, brace) {
                hash_tag(key)
            } else {
                key
            };
            // A short part (a hash tag, mostly) takes one step of the tables, as fast as the
            // multiplication without its copy into a register.
            let crc = if (16..=MAX_CLMUL_LEN).contains(&part.len()) {
                crc16(part)
            } else {
                crc16_xmodem(part)
            };
            *slot = Slot(crc & (SLOT_COUNT - 1));
        }
    }

    /// Whether `key` (at least 16 bytes) holds a `{` (then the hash tag rule is applied the
    /// usual way).
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3")]
    unsafe fn has_brace(key: &[u8], brace: __m128i) -> bool {
        let mut seen = _mm_set1_epi8(0);
        let mut at = 0;
        while at + 16 <= key.len() {
            // SAFETY: `at + 16 <= key.len()`: the 16 bytes are inside `key`.
            let v = unsafe { _mm_loadu_si128(key.as_ptr().add(at).cast()) };
            seen = _mm_or_si128(seen, _mm_cmpeq_epi8(v, brace));
            at += 16;
        }
        if at < key.len() {
            // The last 16 bytes, overlapping the ones already seen.
            // SAFETY: `key.len() >= 16`: the 16 bytes that end the key are inside it.
            let v = unsafe { _mm_loadu_si128(key.as_ptr().add(key.len() - 16).cast()) };
            seen = _mm_or_si128(seen, _mm_cmpeq_epi8(v, brace));
        }
        _mm_movemask_epi8(seen) != 0
    }

    /// The 16 bytes of `data` from `at` (a panic if there are fewer).
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3")]
    unsafe fn raw(data: &[u8], at: usize) -> __m128i {
        let bytes = &data[at..at + 16];
        // SAFETY: `bytes` holds 16 bytes.
        unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
    }

    /// The first `r` (1..=16) bytes of `v` as the polynomial they stand for (see [`REVERSE`]).
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3")]
    unsafe fn reverse(v: __m128i, r: usize) -> __m128i {
        // SAFETY: `REVERSE[r]` holds 16 bytes (a panic for `r > 16`).
        let mask = unsafe { _mm_loadu_si128(REVERSE[r].as_ptr().cast()) };
        _mm_shuffle_epi8(v, mask)
    }

    /// `acc` plus the contribution of the 16-byte step `v`, `j` steps from the end of the data
    /// (see [`STEP_FACTORS`]).
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3")]
    unsafe fn step(acc: __m128i, v: __m128i, j: usize) -> __m128i {
        // SAFETY: `STEP_FACTORS[j]` holds 16 bytes (a panic past the table).
        let k = unsafe { _mm_loadu_si128(STEP_FACTORS[j].as_ptr().cast()) };
        let lo = _mm_clmulepi64_si128(v, k, 0x00);
        let hi = _mm_clmulepi64_si128(v, k, 0x11);
        _mm_xor_si128(acc, _mm_xor_si128(lo, hi))
    }

    /// The CRC that `acc` (< x⁸⁰) stands for. Barrett: q = ⌊acc / P⌋ = ⌊t · ⌊x⁸⁰ / P⌋ / x⁶⁴⌋ with
    /// t = ⌊acc / x¹⁶⌋, that is t + ⌊t · μ / x⁶⁴⌋; the CRC is acc - q · P.
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3")]
    unsafe fn reduce(acc: __m128i) -> u16 {
        let consts = _mm_set_epi64x(POLY as i64, MU as i64);
        let t = _mm_srli_si128(acc, 2);
        let q = _mm_xor_si128(t, _mm_srli_si128(_mm_clmulepi64_si128(t, consts, 0x00), 8));
        let r = _mm_xor_si128(acc, _mm_clmulepi64_si128(q, consts, 0x10));
        (_mm_cvtsi128_si64(r) & 0xffff) as u16
    }

    /// CRC16-XMODEM of `data` (16 to [`MAX_CLMUL_LEN`] bytes): sixteen bytes a step from the
    /// front, the first step short (its bytes zero-padded in front) so that the rest are whole,
    /// every step a load of 16 whole bytes.
    #[target_feature(enable = "pclmulqdq,ssse3")]
    unsafe fn crc16(data: &[u8]) -> u16 {
        let n = data.len();
        let steps = n.div_ceil(16);
        let mut take = n - 16 * (steps - 1);
        let mut at = 0;
        let mut acc = _mm_set1_epi8(0);
        for s in 0..steps {
            // The first step loads the first 16 bytes (`n >= 16`), each later one the 16 bytes
            // from `at`, the last of them ending the data.
            acc = step(acc, reverse(raw(data, at), take), steps - 1 - s);
            at += take;
            take = 16;
        }
        reduce(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn slots(keys: &[Vec<u8>]) -> Vec<Slot> {
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut out = vec![Slot(0); keys.len()];
        fill(&refs, &mut out);
        out
    }

    #[test]
    fn the_constants_are_the_polynomial_s() {
        assert_eq!(x_pow_mod(16), 0x1021);
        assert_eq!(x_pow_mod(15), 0x8000);
        // (x⁶⁴ + μ) · P stays within P's reach of x⁸⁰: x⁸⁰ - (x⁶⁴ + μ)·P has degree below 16.
        let mut prod: u128 = u128::from(POLY) << 64;
        for i in 0..64 {
            if MU & (1 << i) != 0 {
                prod ^= u128::from(POLY) << i;
            }
        }
        assert!(((1u128 << 80) ^ prod) < (1 << 16));
    }

    #[test]
    fn known_keyslots() {
        let keys: Vec<Vec<u8>> = [
            &b"foo"[..],
            b"{user1000}.following",
            b"{}foo",
            b"foo{",
            b"device_imp:0000123456789012",
            b"",
            b"123456789",
        ]
        .iter()
        .map(|k| k.to_vec())
        .collect();
        let got: Vec<u16> = slots(&keys).iter().map(|s| s.get()).collect();
        assert_eq!(got, [12182, 3443, 9500, 7673, 14564, 0, 0x31C3 & 0x3fff]);
    }

    #[test]
    fn every_length_up_to_past_the_limit() {
        let keys: Vec<Vec<u8>> = (0..MAX_CLMUL_LEN + 40)
            .map(|n| (0..n).map(|i| (i * 131 + n * 7 + 1) as u8 | 0x80).collect())
            .collect();
        let want: Vec<Slot> = keys.iter().map(|k| Slot::for_key(k)).collect();
        assert_eq!(slots(&keys), want);
    }

    proptest! {
        #[test]
        fn batch_equals_one_by_one(
            keys in proptest::collection::vec(
                proptest::collection::vec(
                    prop_oneof![Just(b'{'), Just(b'}'), any::<u8>()], 0..300),
                0..24),
        ) {
            let want: Vec<Slot> = keys.iter().map(|k| Slot::for_key(k)).collect();
            prop_assert_eq!(slots(&keys), want);
        }
    }
}
