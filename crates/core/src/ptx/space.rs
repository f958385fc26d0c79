//! `cvta`: how addresses of one state space map into the generic space.
//!
//! PTX places each of the shared, local, constant and parameter spaces in
//! a window of generic addresses; a global address is its own generic
//! address. Where the windows lie is the machine's choice, so it is a
//! parameter here: the simulator passes its own pointer tags.

use super::inst::{Op, Space, Ty};

/// The generic base address of each windowed space. Windows are
/// `1 << 56` bytes long.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Windows {
    pub shared: u64,
    pub local: u64,
    pub constant: u64,
    pub param: u64,
}

const WINDOW: u64 = 1 << 56;

impl Default for Windows {
    /// Each window's top byte is its NVPTX address-space number (shared
    /// 3, constant 4, local 5; parameters 0x65, LLVM's number for
    /// entry parameters), as in the simulator's pointers.
    fn default() -> Self {
        Windows {
            shared: 3 * WINDOW,
            local: 5 * WINDOW,
            constant: 4 * WINDOW,
            param: 0x65 * WINDOW,
        }
    }
}

impl Windows {
    /// The window's base; `None` for the global and generic spaces, which
    /// are not windows.
    pub fn base(&self, space: Space) -> Option<u64> {
        match space {
            Space::Shared | Space::SharedCluster => Some(self.shared),
            Space::Local => Some(self.local),
            Space::Const => Some(self.constant),
            Space::Param => Some(self.param),
            Space::Global | Space::Generic => None,
        }
    }

    /// `cvta.SPACE`: a `space` address as a generic one.
    pub fn to_generic(&self, space: Space, addr: u64) -> u64 {
        addr.wrapping_add(self.base(space).unwrap_or(0))
    }

    /// `cvta.to.SPACE`: a generic address as a `space` address.
    pub fn from_generic(&self, space: Space, generic: u64) -> u64 {
        generic.wrapping_sub(self.base(space).unwrap_or(0))
    }

    /// The space whose window holds a generic address (global outside
    /// every window).
    pub fn space_of(&self, generic: u64) -> Space {
        [Space::Shared, Space::Local, Space::Const, Space::Param]
            .into_iter()
            .find(|&s| {
                self.base(s)
                    .is_some_and(|b| generic.wrapping_sub(b) < WINDOW)
            })
            .unwrap_or(Space::Global)
    }

    /// Evaluates a `cvta` instruction on its source value (`None` for any
    /// other instruction). `.u32` forms keep the low 32 bits.
    pub fn cvta(&self, op: &Op, value: u64) -> Option<u64> {
        let Op::Cvta {
            to_generic,
            space,
            ty,
            ..
        } = op
        else {
            return None;
        };
        let r = if *to_generic {
            self.to_generic(*space, value)
        } else {
            self.from_generic(*space, value)
        };
        Some(if *ty == Ty::U32 { r & 0xffff_ffff } else { r })
    }
}
