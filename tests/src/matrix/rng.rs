//! The matrix's seeded random numbers: SplitMix64, small and the same on every platform, so that a
//! seed printed by one run draws the same cases in another.

/// A SplitMix64 generator.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        // 53 random bits, the precision of an f64.
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Log-uniform in `[lo, hi]` (both positive), rounded to an integer.
    pub fn log_uniform(&mut self, lo: u32, hi: u32) -> u32 {
        let (a, b) = (f64::from(lo).ln(), f64::from(hi).ln());
        let v = self.uniform(a, b).exp().round();
        // Clamped to the bounds, so the cast cannot overflow.
        (v.clamp(f64::from(lo), f64::from(hi))) as u32
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "empty range {lo}..={hi}");
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// One of `items`, uniformly.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        assert!(!items.is_empty(), "pick from an empty list");
        let n = u64::try_from(items.len()).expect("a short list");
        items[usize::try_from(self.next_u64() % n).expect("an index")]
    }
}

/// The seed of case `index` of a draw seeded with `seed`: every case can be run again alone.
pub fn case_seed(seed: u64, index: u64) -> u64 {
    Rng::new(seed ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_numbers_and_bounds_hold() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
            let v = a.log_uniform(50, 1000);
            b.log_uniform(50, 1000);
            assert!((50..=1000).contains(&v));
            let u = a.unit();
            b.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert_ne!(case_seed(1, 0), case_seed(1, 1));
    }
}
