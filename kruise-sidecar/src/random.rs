//! Randomness as an argument: the `Partial` injection policy draws a number in `[0, 1)` (upstream:
//! `rand.Float64()`); the caller decides where it comes from.

use kruise_schedule::split_mix::SplitMix64;

/// A source of uniformly distributed numbers in `[0, 1)`.
pub trait Chance {
    /// The next number in `[0, 1)`.
    fn next_f64(&mut self) -> f64;
}

/// A small deterministic generator (a seeded [`SplitMix64`] stream) for tests and offline tools; controllers
/// may pass any [`Chance`].
#[derive(Clone, Debug)]
pub struct SeededChance {
    stream: SplitMix64,
}

impl SeededChance {
    /// A generator starting from `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self {
            stream: SplitMix64::new(seed),
        }
    }
}

impl Chance for SeededChance {
    fn next_f64(&mut self) -> f64 {
        self.stream.next_f64()
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
