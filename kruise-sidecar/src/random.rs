//! Randomness as an argument: the `Partial` injection policy draws a number in `[0, 1)` (upstream:
//! `rand.Float64()`); the caller decides where it comes from.

/// A source of uniformly distributed numbers in `[0, 1)`.
pub trait Chance {
    /// The next number in `[0, 1)`.
    fn next_f64(&mut self) -> f64;
}

/// A small deterministic generator (SplitMix64) for tests and offline tools; controllers may pass any
/// [`Chance`].
#[derive(Clone, Debug)]
pub struct SeededChance {
    state: u64,
}

impl SeededChance {
    /// A generator starting from `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }
}

impl Chance for SeededChance {
    fn next_f64(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // 53 random bits, as Go's Float64 uses.
        #[allow(clippy::cast_precision_loss)]
        let value = (z >> 11) as f64 / (1_u64 << 53) as f64;
        value
    }
}

/// Always the same number (for tests and for "always the specific revision" / "always the latest").
#[derive(Clone, Copy, Debug)]
pub struct FixedChance(pub f64);

impl Chance for FixedChance {
    fn next_f64(&mut self) -> f64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_numbers_are_in_range_and_repeatable() {
        let mut a = SeededChance::new(7);
        let mut b = SeededChance::new(7);
        for _ in 0..1000 {
            let x = a.next_f64();
            assert!((0.0..1.0).contains(&x));
            assert!((x - b.next_f64()).abs() < f64::EPSILON);
        }
    }
}
