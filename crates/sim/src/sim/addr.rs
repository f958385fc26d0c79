//! One 64-bit pointer encoding for every address space.
//!
//! clang casts shared arrays to generic pointers and passes generic pointers
//! to device functions, so a generic address must say where it points. The
//! top byte holds the space (the NVPTX address-space number), the next 20
//! bits the object (a global buffer or module variable), the low 36 bits the
//! byte offset. Casting between spaces is then the identity, pointer
//! arithmetic just works on the offset, and a lookup is a shift and a mask.
//!
//! Shared memory is one window per block and local memory one window per
//! thread, so their addresses carry only an offset: the executing block or
//! lane picks the window, as on the hardware.

use crate::hw;
use crate::ir::addrspace;

pub const SPACE_SHIFT: u32 = 56;
pub const OBJECT_SHIFT: u32 = 36;
pub const OFFSET_MASK: u64 = (1 << OBJECT_SHIFT) - 1;
const OBJECT_MASK: u64 = (1 << (SPACE_SHIFT - OBJECT_SHIFT)) - 1;

/// Most objects a launch can have.
pub const MAX_OBJECTS: usize = OBJECT_MASK as usize + 1;

// Every object starts at a multiple of 2^36, so buffers are at least as
// aligned as cudaMalloc's.
const _: () = assert!((1u64 << OBJECT_SHIFT).is_multiple_of(hw::MALLOC_ALIGN));

/// Tags: the NVPTX address-space numbers, plus one for function addresses.
pub const GLOBAL: u8 = addrspace::GLOBAL as u8;
pub const SHARED: u8 = addrspace::SHARED as u8;
pub const CONSTANT: u8 = addrspace::CONSTANT as u8;
pub const LOCAL: u8 = addrspace::LOCAL as u8;
pub const FUNCTION: u8 = 0x0f;

pub fn encode(tag: u8, object: u32, offset: u64) -> u64 {
    (u64::from(tag) << SPACE_SHIFT) | ((u64::from(object) & OBJECT_MASK) << OBJECT_SHIFT) | offset
}

pub fn tag(addr: u64) -> u8 {
    (addr >> SPACE_SHIFT) as u8
}

pub fn object(addr: u64) -> u32 {
    ((addr >> OBJECT_SHIFT) & OBJECT_MASK) as u32
}

pub fn offset(addr: u64) -> u64 {
    addr & OFFSET_MASK
}

/// An offset in the top half of the range is a small negative one that
/// borrowed from the object bits: `(object it belongs to, bytes before it)`.
pub fn underflow(addr: u64) -> Option<(u32, u64)> {
    let off = offset(addr);
    (off > OFFSET_MASK / 2).then(|| (object(addr).wrapping_add(1), (OFFSET_MASK + 1) - off))
}

/// The tag `inttoptr` gives an untagged integer cast to a pointer of
/// `space`, or 0 to leave it alone.
pub fn tag_for_space(space: u32) -> u8 {
    match space {
        addrspace::SHARED => SHARED,
        addrspace::LOCAL => LOCAL,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_keeps_offsets_apart() {
        let a = encode(GLOBAL, 7, 1000);
        assert_eq!((tag(a), object(a), offset(a)), (GLOBAL, 7, 1000));
        // Four bytes before object 7's start borrow into object 6.
        let before = a - 1004;
        assert_eq!(object(before), 6);
        assert_eq!(underflow(before), Some((7, 4)));
        assert_eq!(underflow(a), None);
        assert_eq!(encode(SHARED, 0, 12) & OFFSET_MASK, 12);
    }
}
