//! A fixed-size bit set, for block sets, liveness and program points:
//! `fixedbitset`'s, with the two answers the fixpoints need (whether an
//! insert or a union added anything).

use fixedbitset::FixedBitSet;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bits(FixedBitSet);

impl Bits {
    pub fn new(len: usize) -> Self {
        Bits(FixedBitSet::with_capacity(len))
    }

    /// Adds `i` (below the size); whether it was new.
    pub fn insert(&mut self, i: usize) -> bool {
        !self.0.put(i)
    }

    /// Whether `i` is a member (never, past the size).
    pub fn contains(&self, i: usize) -> bool {
        self.0.contains(i)
    }

    /// Adds every member of `other` (of the same size); whether any was new.
    pub fn union_with(&mut self, other: &Bits) -> bool {
        let changed = !other.0.is_subset(&self.0);
        self.0.union_with(&other.0);
        changed
    }

    /// The members in order; a step per member, not per bit.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.ones()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_union_iterate() {
        let mut a = Bits::new(130);
        assert!(a.insert(3) && a.insert(129) && !a.insert(3));
        let mut b = Bits::new(130);
        b.insert(64);
        assert!(a.union_with(&b) && !a.union_with(&b));
        assert_eq!(a.iter().collect::<Vec<_>>(), [3, 64, 129]);
        assert!(a.contains(64) && !a.contains(65) && !a.contains(500));
    }
}
