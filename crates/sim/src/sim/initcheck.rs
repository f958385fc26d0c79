//! Reads of device memory that nothing wrote, found as compute-sanitizer's
//! initcheck finds them.
//!
//! An allocation (`cudaMalloc`) starts with every byte unwritten; a host
//! copy into it, a `cudaMemset`, a kernel's store, atomic or copy writes
//! bytes, one bit per byte. A kernel's load or atomic that touches an
//! unwritten byte is reported. Module variables and `simulate`'s buffers
//! start written (they have values), and so does an allocation once all
//! its bytes are: it drops its bitmap (`memory::written`), so a program
//! that fills its buffers before it launches pays nothing per access.

use std::collections::HashSet;

/// Which bytes of a buffer were never written: a bit per byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unwritten {
    bits: Vec<u64>,
    /// Bytes still unwritten.
    left: u64,
}

impl Unwritten {
    /// Every one of `len` bytes unwritten; `None` for an empty buffer.
    pub fn all(len: u64) -> Option<Unwritten> {
        let words = usize::try_from(len.div_ceil(64)).ok()?;
        if len == 0 {
            return None;
        }
        let mut bits = Vec::new();
        bits.try_reserve_exact(words).ok()?;
        bits.resize(words, u64::MAX);
        if !len.is_multiple_of(64) {
            bits[words - 1] = (1u64 << (len % 64)) - 1;
        }
        Some(Unwritten { bits, left: len })
    }

    /// The first unwritten byte of `[offset, offset + len)`.
    pub fn first(&self, offset: u64, len: u64) -> Option<u64> {
        let mut at = offset;
        let end = offset.saturating_add(len);
        while at < end {
            let word = (at / 64) as usize;
            let bit = at % 64;
            let span = (64 - bit).min(end - at);
            let w = self.bits.get(word).copied().unwrap_or(0) >> bit & span_mask(span);
            if w != 0 {
                return Some(at + u64::from(w.trailing_zeros()));
            }
            at += span;
        }
        None
    }

    /// Marks `[offset, offset + len)` written; whether every byte now is.
    pub fn write(&mut self, offset: u64, len: u64) -> bool {
        let mut at = offset;
        let end = offset.saturating_add(len);
        while at < end && self.left > 0 {
            let word = (at / 64) as usize;
            let bit = at % 64;
            let span = (64 - bit).min(end - at);
            let Some(w) = self.bits.get_mut(word) else {
                break;
            };
            let clear = span_mask(span) << bit;
            self.left -= u64::from((*w & clear).count_ones());
            *w &= !clear;
            at += span;
        }
        self.left == 0
    }

    /// Every one of `len` bytes written: the bitmap a buffer needs to take
    /// unwritten bytes from a copy.
    pub fn none(len: u64) -> Option<Unwritten> {
        let mut u = Unwritten::all(len)?;
        u.write(0, len);
        Some(u)
    }

    /// `[to, to + len)` takes the state of the source's bytes: byte `k`
    /// is unwritten when `unwritten(k)` says so.
    pub fn copy(&mut self, to: u64, len: u64, unwritten: impl Fn(u64) -> bool) {
        for k in 0..len {
            let (word, bit) = (((to + k) / 64) as usize, (to + k) % 64);
            let Some(w) = self.bits.get_mut(word) else {
                return;
            };
            let was = *w >> bit & 1 == 1;
            let now = unwritten(k);
            if now && !was {
                *w |= 1 << bit;
                self.left += 1;
            } else if !now && was {
                *w &= !(1 << bit);
                self.left -= 1;
            }
        }
    }

    /// Keeps unwritten only the bytes `other` has unwritten too: what
    /// two copies of a buffer, written in different places, leave
    /// unwritten together. Whether every byte now is written.
    pub fn keep_common(&mut self, other: &Unwritten) -> bool {
        self.left = 0;
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a &= b;
            self.left += u64::from(a.count_ones());
        }
        self.left == 0
    }

    pub fn is_empty(&self) -> bool {
        self.left == 0
    }
}

/// The low `n` (1..=64) bits.
fn span_mask(n: u64) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// A read of unwritten bytes, as the simulator saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRead {
    /// An index into the program's access plans (`code::Requests`).
    pub access: u32,
    /// Linear in the block.
    pub thread: u32,
    pub block: [u32; 3],
    pub address: u64,
    pub bytes: u32,
    /// The first unwritten byte's offset in its buffer.
    pub first: u64,
    pub atomic: bool,
}

/// Unwritten reads found in a launch, once per access.
#[derive(Default, Debug)]
pub struct Log {
    seen: HashSet<u32>,
    pub found: Vec<RawRead>,
}

impl Log {
    pub fn add(&mut self, read: RawRead) {
        if self.seen.insert(read.access) {
            self.found.push(read);
        }
    }

    /// Adds the reads another log found after this one's.
    pub fn absorb(&mut self, other: Log) {
        for r in other.found {
            self.add(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_written_apart_leave_unwritten_what_neither_wrote() {
        let mut a = Unwritten::all(130).unwrap();
        let mut b = a.clone();
        a.write(0, 70);
        b.write(60, 30);
        assert!(!a.keep_common(&b));
        // Bytes 0..90 were written by one copy or the other.
        assert_eq!(a.first(0, 130), Some(90));
        assert_eq!(a.left, 40);
        b.write(90, 40);
        assert!(a.keep_common(&b));
    }

    #[test]
    fn tracks_bytes_across_words() {
        let mut u = Unwritten::all(200).unwrap();
        assert_eq!(u.first(0, 200), Some(0));
        assert!(!u.write(0, 100));
        assert_eq!(u.first(0, 100), None);
        assert_eq!(u.first(96, 8), Some(100));
        assert_eq!(u.first(199, 1), Some(199));
        // Past the end counts as written: bounds are checked elsewhere.
        assert_eq!(u.first(200, 8), None);
        assert!(!u.write(101, 99));
        assert_eq!(u.first(0, 200), Some(100));
        assert!(u.write(100, 1));
        assert!(u.is_empty());
        assert_eq!(Unwritten::all(0), None);
    }

    #[test]
    fn a_copy_carries_what_was_unwritten() {
        let mut src = Unwritten::all(16).unwrap();
        src.write(0, 8);
        let mut dst = Unwritten::none(32).unwrap();
        assert!(dst.is_empty());
        dst.copy(4, 8, |k| src.first(4 + k, 1).is_some());
        // Bytes 4..8 came written, 8..12 unwritten.
        assert_eq!(dst.first(0, 32), Some(8));
        assert_eq!(dst.first(12, 20), None);
        assert_eq!(dst.left, 4);
        dst.copy(8, 4, |_| false);
        assert!(dst.is_empty());
    }
}
