//! A fixed-size bit set, for block sets, liveness and program points.

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bits {
    words: Vec<u64>,
}

impl Bits {
    pub fn new(len: usize) -> Self {
        Bits {
            words: vec![0; len.div_ceil(64)],
        }
    }

    pub fn insert(&mut self, i: usize) -> bool {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        let fresh = self.words[w] & b == 0;
        self.words[w] |= b;
        fresh
    }

    pub fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Adds every member of `other` (of the same size); whether any was new.
    pub fn union_with(&mut self, other: &Bits) -> bool {
        let mut changed = false;
        for (w, o) in self.words.iter_mut().zip(&other.words) {
            let next = *w | o;
            changed |= next != *w;
            *w = next;
        }
        changed
    }

    /// The members in order; a step per member, not per bit.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut rest = w;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let b = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    wi * 64 + b
                })
            })
        })
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
