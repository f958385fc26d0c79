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
/// The fork's buffer itself is made on the first page it needs (many
/// buffers of a launch are only read).
#[derive(Clone, Debug)]
pub struct Lazy {
    /// The launch's bytes; dropped once the fork's blocks are done, so
    /// the launch can have them back.
    base: Option<Arc<Vec<u8>>>,
    len: usize,
    state: Vec<u8>,
}

impl Lazy {
    /// A fork's view of `base`, for a buffer that starts empty.
    pub fn new(base: Arc<Vec<u8>>) -> Lazy {
        let len = base.len();
        Lazy {
            base: Some(base),
            len,
            state: vec![UNTOUCHED; len.div_ceil(PAGE)],
        }
    }

    /// Makes `data[off..end]` hold the launch's bytes (or the fork's own
    /// writes), and marks its pages written if `write`. A range past the
    /// end is left to the caller's bounds check, and so is a buffer the
    /// process could not have (it stays empty: the fork faults, and its
    /// blocks run in order instead).
    #[inline]
    pub fn fetch(&mut self, data: &mut Vec<u8>, off: usize, end: usize, write: bool) {
        if off >= end || end > self.len {
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
    fn fill(&mut self, data: &mut Vec<u8>, first: usize, last: usize, want: u8) {
        if data.len() != self.len {
            match zeroed(self.len as u64) {
                Some(fresh) => *data = fresh,
                None => return,
            }
        }
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

/// `bytes` zero bytes, or `None` where this process cannot have them
/// (a limit on its memory, or more than the machine has): a buffer the
/// user sized is an error naming the size, never an abort. (Here rather
/// than in `memory`, which re-exports it, as forks make their buffers
/// with it.)
pub fn zeroed(bytes: u64) -> Option<Vec<u8>> {
    let n = usize::try_from(bytes).ok()?;
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).ok()?;
    // Zeroed by the allocator: a large buffer is then fresh pages the
    // system zeroes as they are first touched, not a pass of writes over
    // memory the kernel may never use.
    // SAFETY: `layout` has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` comes from the global allocator with the layout of `n`
    // bytes, all of them initialised (zero).
    Some(unsafe { Vec::from_raw_parts(p, n, n) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_only_the_pages_touched() {
        let base: Vec<u8> = (0..3 * PAGE + 100).map(|i| (i % 251) as u8 + 1).collect();
        let mut data = Vec::new();
        let mut lazy = Lazy::new(Arc::new(base.clone()));
        // Nothing is made for a read that comes from the launch's bytes.
        assert_eq!(lazy.clean(0, 4), Some(&base[..4]));
        assert!(data.is_empty());
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
