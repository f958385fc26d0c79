//! A small, fast hash for the solver's tables.
//!
//! The tabulation algorithm spends most of its time inserting small integer
//! tuples into hash sets; std's SipHash is built to resist adversarial keys,
//! which these are not. This is a multiply–rotate word hash: each word is
//! mixed into the state with one xor and one multiplication by an odd
//! constant (the high bits, which the table uses, get the best mixing).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Word-at-a-time hasher for integer keys.
#[derive(Default, Clone, Copy)]
pub struct WordHasher(u64);

/// An odd constant with well-spread bits (2^64 / golden ratio).
const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl WordHasher {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(MIX);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.mix(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.mix(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;
pub type FastSet<K> = HashSet<K, BuildHasherDefault<WordHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_small_tuples_hash_apart() {
        let mut seen = FastSet::default();
        for a in 0u32..64 {
            for b in 0u32..64 {
                assert!(seen.insert((a, b, a ^ b)));
            }
        }
        assert_eq!(seen.len(), 64 * 64);
        assert!(seen.contains(&(3, 5, 6)));
        assert!(!seen.contains(&(3, 5, 7)));
    }
}
