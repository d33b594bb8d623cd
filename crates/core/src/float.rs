//! Integers as floating-point numbers: the one conversion of a count or a length of time (`u64`)
//! to `f64` that rates, shares and means of the core are computed with.

/// `n` as the nearest `f64`.
///
/// Exact up to 2^53 (9,007,199,254,740,992); above, rounded to the nearest representable value,
/// ties to even, exactly as Rust's `n as f64` (so `u64::MAX` becomes 2^64). Never panics and never
/// saturates. Built from the two 32-bit halves, each converted exactly by `f64::from`, and one
/// addition, which rounds once: no lossy `as` cast.
pub fn from_u64(n: u64) -> f64 {
    let high = u32::try_from(n >> 32).unwrap_or(u32::MAX);
    let low = u32::try_from(n & 0xFFFF_FFFF).unwrap_or(u32::MAX);
    f64::from(high) * 4_294_967_296.0 + f64::from(low)
}

/// `part ÷ whole` of two counts, 0 when `whole` is 0 (a share of nothing is none).
pub fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        from_u64(part) / from_u64(whole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: Rust's `as`, which rounds to nearest, ties to even.
    #[allow(clippy::cast_precision_loss)]
    fn cast(n: u64) -> f64 {
        n as f64
    }

    #[test]
    fn a_ratio_of_nothing_is_zero() {
        assert_eq!(ratio(3, 0), 0.0);
        assert_eq!(ratio(1, 4), 0.25);
        assert_eq!(ratio(u64::MAX, u64::MAX), 1.0);
    }

    #[test]
    fn exact_below_2_pow_53_rounded_to_nearest_above() {
        let p53: u64 = 1 << 53;
        for n in [
            0,
            1,
            1000,
            u64::from(u32::MAX),
            1 << 32,
            (1 << 32) + 1,
            p53 - 1,
            p53,
        ] {
            assert_eq!(from_u64(n), cast(n), "{n}");
            assert_eq!(from_u64(n).to_string(), n.to_string(), "{n} is exact");
        }
        // Above 2^53 only even numbers are representable: an odd one rounds to the even neighbour
        // whose half (the next bit) is even.
        assert_eq!(from_u64(p53 + 1), 9_007_199_254_740_992.0);
        assert_eq!(from_u64(p53 + 3), 9_007_199_254_740_996.0);
        assert_eq!(from_u64(u64::MAX), 18_446_744_073_709_551_616.0);
        for n in [p53 + 1, p53 + 2, p53 + 3, u64::MAX - 1, u64::MAX] {
            assert_eq!(from_u64(n), cast(n), "{n}");
        }
    }

    #[test]
    fn the_conversion_info_used() {
        // Moved from info.rs's `derived_usec_per_call_matches_the_servers_figure`, whose private
        // `u64_to_f64` this module's function is.
        assert_eq!(from_u64(u64::MAX), 18_446_744_073_709_551_615.0);
        assert_eq!(from_u64(123_456_789), 123_456_789.0);
    }

    proptest! {
        #[test]
        fn equals_the_as_cast(n in any::<u64>()) {
            prop_assert_eq!(from_u64(n), cast(n));
        }

        #[test]
        fn equals_the_as_cast_near_2_pow_53(n in (1u64 << 52)..(1u64 << 55)) {
            prop_assert_eq!(from_u64(n), cast(n));
        }
    }
}
