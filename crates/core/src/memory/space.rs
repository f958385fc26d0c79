//! The address spaces warpcheck reports, in a file of their own: the
//! pointer origins and the escape analysis both name them.

use crate::ir::addrspace;

/// An address space as warpcheck reports it.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Space {
    Global,
    Shared,
    Local,
    Constant,
    Unknown,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Constant => "constant",
            Space::Unknown => "unknown",
        }
    }

    /// The space an explicit NVPTX address space number denotes, if any.
    pub fn from_addrspace(n: u32) -> Option<Space> {
        match n {
            addrspace::GLOBAL => Some(Space::Global),
            addrspace::SHARED => Some(Space::Shared),
            addrspace::CONSTANT => Some(Space::Constant),
            addrspace::LOCAL => Some(Space::Local),
            _ => None,
        }
    }
}
