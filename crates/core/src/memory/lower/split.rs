//! How NVPTX instruction selection breaks one IR value's load or store
//! into the accesses PTX has, and `llvm.memcpy`/`memmove`/`memset` into
//! their pieces. Each rule below was read in LLVM's SelectionDAG
//! (`getMemcpyLoadsAndStores`, `findOptimalMemOpLowering`,
//! `expandUnalignedLoad`/`Store`, the store merging of the DAG combiner)
//! and NVPTX's `NVPTXLowerAggrCopies`, and each unit test is what
//! `llc-19 -mcpu=sm_80` and `llc-22 -mcpu=sm_80` emit for the same IR.
//!
//! * PTX loads and stores scalars of 1, 2, 4 and 8 bytes and vectors of 2
//!   or 4 elements up to 16 bytes, and never an address less aligned than
//!   the access is wide. A wider or under-aligned value is split in halves
//!   until each half is legal at its own alignment (`i64` at `align 4` is
//!   two `ld.u32`, at `align 1` eight `ld.u8`); a size that is no power of
//!   two is split into powers of two, largest first (`i48`: 4 + 2 bytes,
//!   `<3 x float>`: 8 + 4).
//! * An aggregate (struct or array) is its leaves, each at the aggregate's
//!   alignment at its offset. Where an aggregate is copied (loaded and
//!   stored again) or stored as a constant, and its leaves are all of one
//!   size without gaps, the DAG combiner merges runs of leaves into one
//!   integer of at most 8 bytes that both sides' alignments allow (`{4 x
//!   float}` at `align 16` is two `ld.u64`). Of an aggregate load whose
//!   uses only extract fields, only those fields are loaded.
//! * A `memcpy`, `memmove` or `memset` of a constant length below 128
//!   bytes is a run of pieces of the widest integer (at most 8 bytes) that
//!   the lesser of the two alignments allows, narrower pieces for the tail
//!   (15 bytes at `align 8`: 8, 4, 2, 1); each piece is a load from the
//!   source and a store to the destination. From 128 bytes on, or for a
//!   length known only at run time, the copy is a loop of 1-byte loads
//!   and stores.

/// The widest scalar PTX loads or stores in one instruction (`ld.u64`).
pub const MAX_SCALAR_BYTES: u64 = 8;
/// The widest vector (`ld.v4.u32`, `ld.v2.f64`).
pub const MAX_VECTOR_BYTES: u64 = 16;
/// A block copy or fill of at least this many bytes, or of a length known
/// only at run time, is a loop (NVPTX's `MaxAggrCopySize`).
pub const COPY_LOOP_BYTES: u64 = 128;

/// One machine access of a value: `bytes` at `offset` from its address.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Span {
    pub offset: u64,
    pub bytes: u64,
}

/// The alignment an address `offset` bytes past one aligned to `align`
/// has (LLVM's `commonAlignment`).
pub fn align_at(align: u64, offset: u64) -> u64 {
    let align = align.max(1);
    if offset == 0 {
        align
    } else {
        align.min(1 << offset.trailing_zeros())
    }
}

/// The largest power of two not above `n` (`n ≥ 1`).
fn floor_pow2(n: u64) -> u64 {
    1 << (63 - n.max(1).leading_zeros())
}

/// The shape of a value as the legaliser sees it: its store size, and for
/// a vector its element size.
#[derive(Copy, Clone, Debug)]
pub struct Shape {
    pub bytes: u64,
    /// The element size of a vector, `None` for a scalar.
    pub elem: Option<u64>,
}

/// The accesses a value of `shape` at `offset` from an address aligned
/// to `align` is loaded or stored with.
pub fn value(shape: Shape, offset: u64, align: u64, out: &mut Vec<Span>) {
    let size = shape.bytes;
    if size == 0 {
        return;
    }
    if !size.is_power_of_two() {
        let head = floor_pow2(size);
        value(
            Shape {
                bytes: head,
                ..shape
            },
            offset,
            align,
            out,
        );
        value(
            Shape {
                bytes: size - head,
                ..shape
            },
            offset + head,
            align,
            out,
        );
        return;
    }
    let widest = match shape.elem {
        Some(_) => MAX_VECTOR_BYTES,
        None => MAX_SCALAR_BYTES,
    };
    if size == 1 || (size <= align_at(align, offset) && size <= widest) {
        out.push(Span {
            offset,
            bytes: size,
        });
        return;
    }
    let half = Shape {
        bytes: size / 2,
        ..shape
    };
    value(half, offset, align, out);
    value(half, offset + size / 2, align, out);
}

/// The pieces of a block copy or fill of `len` bytes (below
/// [`COPY_LOOP_BYTES`]) whose pointers are aligned to `align` (the lesser
/// of the two for a copy).
pub fn block(len: u64, align: u64) -> Vec<Span> {
    let mut width = floor_pow2(align.clamp(1, MAX_SCALAR_BYTES));
    let (mut offset, mut left) = (0, len);
    let mut out = Vec::new();
    while left > 0 {
        while width > left {
            width /= 2;
        }
        out.push(Span {
            offset,
            bytes: width,
        });
        offset += width;
        left -= width;
    }
    out
}

/// The leaves of an aggregate copied as a whole (or stored as a
/// constant): runs of equal leaves without gaps merged into integers of
/// at most 8 bytes that every alignment in `aligns` allows at the run's
/// offset. `None` when the leaves differ in size or leave gaps (the
/// combiner then keeps them apart).
pub fn merged_leaves(leaves: &[Span], aligns: &[u64]) -> Option<Vec<Span>> {
    let size = leaves.first()?.bytes;
    let contiguous = leaves
        .iter()
        .enumerate()
        .all(|(k, l)| l.bytes == size && l.offset == leaves[0].offset + k as u64 * size);
    if !contiguous || size > MAX_SCALAR_BYTES {
        return None;
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < leaves.len() {
        let offset = leaves[at].offset;
        let fits = |n: u64| {
            let bytes = n * size;
            bytes <= MAX_SCALAR_BYTES && aligns.iter().all(|&a| align_at(a, offset) >= bytes)
        };
        let left = (leaves.len() - at) as u64;
        let n = (0..=6)
            .map(|k| 1u64 << k)
            .filter(|&n| n <= left && fits(n))
            .max()
            .unwrap_or(1);
        out.push(Span {
            offset,
            bytes: n * size,
        });
        at += n as usize;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widths(shape: Shape, align: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        value(shape, 0, align, &mut out);
        out.iter().map(|s| (s.offset, s.bytes)).collect()
    }

    const fn scalar(bytes: u64) -> Shape {
        Shape { bytes, elem: None }
    }

    const fn vector(bytes: u64, elem: u64) -> Shape {
        Shape {
            bytes,
            elem: Some(elem),
        }
    }

    #[test]
    fn under_aligned_scalars_split_in_halves() {
        // llc: `load i64, align 4` is two ld.u32; `align 1` eight ld.u8;
        // `store double, align 4` two st.u32.
        assert_eq!(widths(scalar(8), 4), vec![(0, 4), (4, 4)]);
        assert_eq!(widths(scalar(8), 1).len(), 8);
        assert_eq!(widths(scalar(8), 8), vec![(0, 8)]);
        // An i128 (no 16-byte scalar): two 8-byte halves.
        assert_eq!(widths(scalar(16), 16), vec![(0, 8), (8, 8)]);
    }

    #[test]
    fn odd_sizes_split_into_powers_of_two() {
        // i24 at align 4: ld.u16 and ld.u8; stored at align 1: 3 × st.u8.
        assert_eq!(widths(scalar(3), 4), vec![(0, 2), (2, 1)]);
        assert_eq!(widths(scalar(3), 1), vec![(0, 1), (1, 1), (2, 1)]);
        // i48 at align 8: 4 + 2; at align 2: 3 × 2.
        assert_eq!(widths(scalar(6), 8), vec![(0, 4), (4, 2)]);
        assert_eq!(widths(scalar(6), 2), vec![(0, 2), (2, 2), (4, 2)]);
        // <3 x float> at align 16: an 8-byte and a 4-byte load; at align
        // 4: three.
        assert_eq!(widths(vector(12, 4), 16), vec![(0, 8), (8, 4)]);
        assert_eq!(widths(vector(12, 4), 4).len(), 3);
    }

    #[test]
    fn vectors_are_one_access_when_aligned() {
        // <4 x float> at align 16: ld.v4; stored at align 8: two st.v2;
        // loaded at align 4: four scalars.
        assert_eq!(widths(vector(16, 4), 16), vec![(0, 16)]);
        assert_eq!(widths(vector(16, 4), 8), vec![(0, 8), (8, 8)]);
        assert_eq!(widths(vector(16, 4), 4).len(), 4);
        // <8 x float> at align 32: two ld.v4.
        assert_eq!(widths(vector(32, 4), 32), vec![(0, 16), (16, 16)]);
        // <2 x half> at align 4: one ld.u32; at align 2: two ld.u16.
        assert_eq!(widths(vector(4, 2), 4), vec![(0, 4)]);
        assert_eq!(widths(vector(4, 2), 2), vec![(0, 2), (2, 2)]);
    }

    #[test]
    fn block_copies_take_the_widest_piece_both_pointers_allow() {
        let w = |len, align| {
            block(len, align)
                .iter()
                .map(|s| s.bytes)
                .collect::<Vec<_>>()
        };
        // 12 bytes at align 4: 3 × 4; 16 at align 4: 4 × 4; at 16: 2 × 8.
        assert_eq!(w(12, 4), vec![4, 4, 4]);
        assert_eq!(w(16, 4), vec![4; 4]);
        assert_eq!(w(16, 16), vec![8, 8]);
        // 32 at align 8: 4 × 8; 64 at align 4: 16 × 4; 8 at align 1: 8 × 1.
        assert_eq!(w(32, 8), vec![8; 4]);
        assert_eq!(w(64, 4), vec![4; 16]);
        assert_eq!(w(8, 1), vec![1; 8]);
        // 15 at align 8: 8, 4, 2, 1; 40 at align 16: 5 × 8.
        assert_eq!(w(15, 8), vec![8, 4, 2, 1]);
        assert_eq!(w(40, 16), vec![8; 5]);
        assert_eq!(block(15, 8)[3].offset, 14);
    }

    #[test]
    fn copied_aggregates_merge_equal_leaves() {
        let floats: Vec<Span> = (0..4)
            .map(|k| Span {
                offset: 4 * k,
                bytes: 4,
            })
            .collect();
        let w = |aligns: &[u64]| {
            merged_leaves(&floats, aligns).map(|v| v.iter().map(|s| s.bytes).collect::<Vec<_>>())
        };
        // {4 x float} copied at align 16: two ld.u64 and st.u64; at align
        // 4: four of each; loaded at 8 and stored at 4: four.
        assert_eq!(w(&[16, 16]), Some(vec![8, 8]));
        assert_eq!(w(&[4, 4]), Some(vec![4; 4]));
        assert_eq!(w(&[8, 4]), Some(vec![4; 4]));
        // [8 x i8] at align 8: one ld.u64.
        let bytes: Vec<Span> = (0..8)
            .map(|k| Span {
                offset: k,
                bytes: 1,
            })
            .collect();
        assert_eq!(merged_leaves(&bytes, &[8, 8]).map(|v| v.len()), Some(1));
        // {[2 x float], double}: leaves of two sizes stay apart.
        let mixed = [
            Span {
                offset: 0,
                bytes: 4,
            },
            Span {
                offset: 4,
                bytes: 4,
            },
            Span {
                offset: 8,
                bytes: 8,
            },
        ];
        assert_eq!(merged_leaves(&mixed, &[8, 8]), None);
    }
}
