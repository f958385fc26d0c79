//! A fork's global memory, copied from the launch's page by page as its
//! blocks touch it. Blocks split over threads mostly touch their own part
//! of each buffer, so copying every buffer whole for every thread cost
//! more than running the blocks (page faults on fresh memory were half a
//! vector add's time); this way the forks together copy about what the
//! launch touches, and the merge looks only at pages a fork wrote.

use std::sync::Arc;

/// Bytes per page, as a shift.
pub const PAGE_BITS: u32 = 12;
/// Bytes per page.
pub const PAGE: usize = 1 << PAGE_BITS;

/// A page the fork has not touched: its bytes are still the launch's.
const UNTOUCHED: u8 = 0;
/// A page the fork read: its bytes are copied, and unchanged.
const READ: u8 = 1;
/// A page the fork wrote (or may have).
const WRITTEN: u8 = 2;

/// What a fork's buffer copies its pages from, and how far each page got.
#[derive(Clone, Debug)]
pub struct Lazy {
    /// The launch's bytes; dropped once the fork's blocks are done, so
    /// the launch can have them back.
    base: Option<Arc<Vec<u8>>>,
    state: Vec<u8>,
}

impl Lazy {
    /// A fork's view of `base`, for a buffer of as many zero bytes (best
    /// had from the allocator, as fresh pages the system zeroes only when
    /// touched: [`super::memory::zeroed`]) that it fills page by page.
    pub fn new(base: Arc<Vec<u8>>) -> Lazy {
        let pages = base.len().div_ceil(PAGE);
        Lazy {
            base: Some(base),
            state: vec![UNTOUCHED; pages],
        }
    }

    /// Makes `data[off..end]` hold the launch's bytes (or the fork's own
    /// writes), and marks its pages written if `write`. A range past the
    /// end is left to the caller's bounds check.
    #[inline]
    pub fn fetch(&mut self, data: &mut [u8], off: usize, end: usize, write: bool) {
        if off >= end || end > data.len() {
            return;
        }
        let want = if write { WRITTEN } else { READ };
        let (first, last) = (off >> PAGE_BITS, (end - 1) >> PAGE_BITS);
        if first == last && self.state[first] >= want {
            return;
        }
        self.fill(data, first, last, want);
    }

    #[cold]
    fn fill(&mut self, data: &mut [u8], first: usize, last: usize, want: u8) {
        for p in first..=last {
            if self.state[p] == UNTOUCHED {
                let base = self.base.as_ref().expect("a running fork has its base");
                let r = p * PAGE..((p + 1) * PAGE).min(data.len());
                data[r.clone()].copy_from_slice(&base[r]);
            }
            self.state[p] = self.state[p].max(want);
        }
    }

    /// The launch's bytes `[off, end)`, where the fork has written none
    /// of their pages (what it has only read is the same as the launch's).
    #[inline]
    pub fn clean(&self, off: usize, end: usize) -> Option<&[u8]> {
        let base = self.base.as_deref()?;
        if off >= end || end > base.len() {
            return None;
        }
        let (first, last) = (off >> PAGE_BITS, (end - 1) >> PAGE_BITS);
        let written = if first == last {
            self.state[first] == WRITTEN
        } else {
            self.state[first..=last].contains(&WRITTEN)
        };
        (!written).then(|| &base[off..end])
    }

    /// All the launch's bytes, for reads [`Lazy::clean`] has vouched for.
    pub fn whole(&self) -> Option<&[u8]> {
        self.base.as_deref().map(|b| &b[..])
    }

    /// Whether the fork wrote page `p`.
    pub fn wrote(&self, p: usize) -> bool {
        self.state[p] == WRITTEN
    }

    /// Lets go of the launch's bytes (the fork keeps what it copied).
    pub fn release(&mut self) {
        self.base = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_only_the_pages_touched() {
        let base: Vec<u8> = (0..3 * PAGE + 100).map(|i| (i % 251) as u8 + 1).collect();
        let mut data = vec![0u8; base.len()];
        let mut lazy = Lazy::new(Arc::new(base.clone()));
        // A read of 8 bytes straddling pages 0 and 1.
        lazy.fetch(&mut data, PAGE - 4, PAGE + 4, false);
        assert_eq!(data[PAGE - 4..PAGE + 4], base[PAGE - 4..PAGE + 4]);
        assert_eq!(data[..PAGE], base[..PAGE], "the whole page comes over");
        assert!(
            data[2 * PAGE..].iter().all(|&b| b == 0),
            "pages 2, 3 untouched"
        );
        assert!(!lazy.wrote(0) && !lazy.wrote(1));
        // A write into the last, short page.
        lazy.fetch(&mut data, 3 * PAGE + 96, 3 * PAGE + 100, true);
        assert_eq!(data[3 * PAGE..], base[3 * PAGE..]);
        assert!(lazy.wrote(3) && !lazy.wrote(2));
        // What the fork wrote stays: a later read does not copy again.
        data[3 * PAGE] = 0;
        lazy.fetch(&mut data, 3 * PAGE, 3 * PAGE + 1, false);
        assert_eq!(data[3 * PAGE], 0);
        // Past the end, or empty: nothing happens.
        lazy.fetch(&mut data, 3 * PAGE + 99, 3 * PAGE + 101, true);
        lazy.fetch(&mut data, 2 * PAGE, 2 * PAGE, true);
        assert!(!lazy.wrote(2));
        // Reads of pages not written come from the launch's bytes.
        assert_eq!(lazy.clean(10, 20), Some(&base[10..20]));
        assert_eq!(
            lazy.clean(2 * PAGE - 2, 2 * PAGE + 2),
            Some(&base[2 * PAGE - 2..2 * PAGE + 2])
        );
        assert_eq!(
            lazy.clean(3 * PAGE, 3 * PAGE + 1),
            None,
            "page 3 is written"
        );
        assert_eq!(
            lazy.clean(2 * PAGE, 3 * PAGE + 1),
            None,
            "so is part of this"
        );
        assert_eq!(
            lazy.clean(3 * PAGE + 99, 3 * PAGE + 101),
            None,
            "past the end"
        );
        lazy.release();
        assert!(lazy.wrote(3));
        assert_eq!(lazy.clean(10, 20), None, "nothing once released");
    }
}
