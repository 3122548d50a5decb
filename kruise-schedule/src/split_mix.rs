//! The one deterministic number stream of the libraries (SplitMix64): seeded instance ids for CloneSet pods,
//! the seeded chance of the SidecarSet `Partial` policy, and the simulations of the property tests. The
//! libraries take randomness as an argument; this is what tests and offline tools pass.
//!
//! ```
//! use kruise_schedule::split_mix::SplitMix64;
//!
//! let mut a = SplitMix64::new(7);
//! let mut b = SplitMix64::new(7);
//! assert_eq!(a.next_u64(), b.next_u64());
//! assert!((0.0..1.0).contains(&a.next_f64()));
//! assert!(a.below(6) < 6);
//! ```

/// SplitMix64 (Steele, Lea and Flood): 64-bit outputs from a seed, the same sequence for the same seed.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A stream starting at `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next number in `[0, 1)`, from the top 53 bits (as Go's `rand.Float64` has 53 bits of precision).
    pub fn next_f64(&mut self) -> f64 {
        // Both values are below 2^53, so the conversions are exact.
        #[allow(clippy::cast_precision_loss)]
        let value = (self.next_u64() >> 11) as f64 / (1_u64 << 53) as f64;
        value
    }

    /// The next number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_sequence() {
        // The first outputs of SplitMix64 seeded with 1234567 in the reference implementation.
        let mut stream = SplitMix64::new(1_234_567);
        let first: Vec<u64> = (0..3).map(|_| stream.next_u64()).collect();
        assert_eq!(
            first,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
    }

    #[test]
    fn fractions_stay_below_one() {
        let mut stream = SplitMix64::new(7);
        for _ in 0..10_000 {
            assert!((0.0..1.0).contains(&stream.next_f64()));
        }
        assert_eq!(SplitMix64::new(1).below(0), 0);
    }
}
