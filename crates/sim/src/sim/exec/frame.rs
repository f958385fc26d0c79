//! A call frame: what one activation of a function holds for its lanes.
//! Its own file so that the warp and the spin watch, which compares
//! frames, both read it without reading each other.

use super::control::Entry;
use super::lanes::LANES;
use crate::sim::code::Slot;

/// One activation of a function for a group of lanes.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Frame {
    pub func: u32,
    pub regs: Vec<u64>,
    pub stack: Vec<Entry>,
    /// Lanes that have executed `ret`.
    pub returned: u32,
    /// Where the caller wants the result: slot and words.
    pub call: Option<(Slot, u32)>,
    pub call_mask: u32,
    /// The caller's local stack pointers, restored on return.
    pub saved_sp: [u32; LANES],
}
