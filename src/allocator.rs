//! Rust's allocator: mimalloc, called so that alignment costs nothing.
//!
//! The analysis allocates many small, short-lived vectors (lanes, terms,
//! path edges); mimalloc serves them much faster than the system
//! allocator, which matters most inside clang, where we add to every
//! device compile. It replaces only Rust's allocator, never clang's.
//!
//! The `mimalloc` crate sends every request through `mi_malloc_aligned`,
//! whose fast path covers only blocks of at most 1 KiB; larger ones of a
//! size that is not a power of two are over-allocated and aligned by
//! hand (about 6% of the analysis on the templated reduction). Every block
//! of `mi_malloc` of at least 16 bytes is already 16-byte aligned on
//! 64-bit targets (`MI_MAX_ALIGN_SIZE`, the alignment of `max_align_t`),
//! which is all our types ask for, so those go straight to `mi_malloc`.

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

pub struct Mimalloc;

// The guarantee below is mimalloc's on 64-bit targets.
const _: () = assert!(std::mem::size_of::<usize>() == 8);

/// What `mi_malloc` guarantees: blocks of at least 16 bytes are 16-byte
/// aligned, smaller ones 8-byte aligned (a pointer's size).
fn plain(layout: &Layout) -> bool {
    layout.align() <= 8 || (layout.align() <= 16 && layout.size() >= 16)
}

// SAFETY: each function forwards to mimalloc, whose blocks satisfy the
// layout: by `plain`, or by asking for the alignment explicitly.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(&layout) {
            mi::mi_malloc(layout.size()).cast()
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(&layout) {
            mi::mi_zalloc(layout.size()).cast()
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi::mi_free(ptr.cast::<c_void>());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = Layout::from_size_align_unchecked(new_size, layout.align());
        if plain(&new) {
            mi::mi_realloc(ptr.cast(), new_size).cast()
        } else {
            mi::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
        }
    }
}

extern "C" {
    /// mimalloc's own: frees what its heaps hold empty (declared here, as
    /// the `-sys` crate declares it only with a feature we do not need).
    fn mi_collect(force: bool);
}

/// Hands the memory both heaps hold free back to the system: mimalloc's
/// (Rust's) and the C heap (LLVM's). Asked when the process is over its
/// memory budget, before the budget refuses the next kernel: a kernel that
/// was just stopped and dropped has freed what it held.
pub fn release_free() {
    // SAFETY: both only return free memory to the system.
    unsafe {
        mi_collect(true);
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_meet_their_alignment() {
        // Sizes around mimalloc's bins and its 1 KiB fast-path limit, at
        // the alignments of u8, u64 and i128, grown and shrunk.
        for align in [1, 8, 16, 32] {
            for size in [1, 8, 15, 16, 24, 40, 1000, 1040, 1100, 5000, 70_000] {
                let l = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let p = Mimalloc.alloc(l);
                    assert_eq!(p as usize % align, 0, "alloc {size} {align}");
                    let q = Mimalloc.realloc(p, l, size * 3 + 8);
                    assert_eq!(q as usize % align, 0, "realloc {size} {align}");
                    Mimalloc.dealloc(q, Layout::from_size_align(size * 3 + 8, align).unwrap());
                    let z = Mimalloc.alloc_zeroed(l);
                    assert_eq!(z as usize % align, 0, "zalloc {size} {align}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    Mimalloc.dealloc(z, l);
                }
            }
        }
    }
}
