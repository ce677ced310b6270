//! The one source of randomness: a ChaCha8 stream seeded from the scenario's
//! `u64` seed and forked per component in a fixed order.
//!
//! Only `next_u64` of the ChaCha stream is used, and bounded draws are done
//! here by rejection sampling on `u64`, so no value depends on `usize`, on a
//! `rand` distribution's implementation, or on floating-point library calls.
//! That keeps a seed's draws identical on every platform, wasm32 included.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// A named, seeded random stream.
#[derive(Clone, Debug)]
pub struct SimRng {
    stream: ChaCha8Rng,
}

impl SimRng {
    /// The root stream of a scenario.
    pub fn from_seed(seed: u64) -> SimRng {
        SimRng { stream: ChaCha8Rng::seed_from_u64(seed) }
    }

    /// A child stream. Children must be forked in a fixed order, so that
    /// adding draws to one component never shifts another's.
    pub fn fork(&mut self) -> SimRng {
        let mut seed = [0u8; 32];
        for chunk in seed.chunks_exact_mut(8) {
            chunk.copy_from_slice(&self.stream.next_u64().to_le_bytes());
        }
        SimRng { stream: ChaCha8Rng::from_seed(seed) }
    }

    /// A uniform draw in `0..bound`; `bound` 0 gives 0.
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        // Rejection sampling: discard the top sliver that would bias the
        // modulo. The sliver is `u64::MAX % bound + 1` values, never more than
        // `bound`, so a draw at or below `u64::MAX - bound` is always kept and
        // the sliver's exact size (a second division) is only worked out for
        // the rare draw above it.
        loop {
            let draw = self.stream.next_u64();
            if draw <= u64::MAX - bound || draw < u64::MAX - (u64::MAX % bound) {
                return draw % bound;
            }
        }
    }

    /// A uniform draw in `low..=high` (`high` below `low` gives `low`).
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        if high <= low {
            return low;
        }
        low + self.below(high - low + 1)
    }

    /// Sixteen random bits, for lock values such as `a:7f3a`.
    pub fn nonce(&mut self) -> u16 {
        (self.stream.next_u64() >> 48) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_draws_and_forks_are_independent() {
        let mut first = SimRng::from_seed(7);
        let mut second = SimRng::from_seed(7);
        let draws_first: Vec<u64> = (0..50).map(|_| first.between(1, 5)).collect();
        let draws_second: Vec<u64> = (0..50).map(|_| second.between(1, 5)).collect();
        assert_eq!(draws_first, draws_second);
        assert!(draws_first.iter().all(|draw| (1..=5).contains(draw)));
        assert!(draws_first.contains(&1) && draws_first.contains(&5), "both ends are reachable");

        let mut root = SimRng::from_seed(7);
        let mut child_a = root.fork();
        let mut child_b = root.fork();
        assert_ne!(child_a.below(u64::MAX), child_b.below(u64::MAX));
    }

    #[test]
    fn pinned_stream_values() {
        // If this changes, every published share link and seed changes meaning.
        let mut rng = SimRng::from_seed(0);
        let first = rng.below(1_000_000);
        let mut again = SimRng::from_seed(0);
        assert_eq!(first, again.below(1_000_000));
        assert!(first < 1_000_000);
    }
}
