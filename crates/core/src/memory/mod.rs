//! Which memory each access touches.
//!
//! Clang at -O2 addresses everything through generic `ptr`s, so the address
//! space of an access must be recovered by tracing its pointer back to where
//! it came from: a kernel parameter (global), an `addrspace(3)` global
//! (shared), an `alloca` (local) or an `addrspace(4)` global (constant).
//! Device-function parameters take the join of what their call sites pass,
//! per kernel, so the answer is specific to the kernel that reaches them.
//! Inline asm is read with the PTX reader (`asm`): its loads and stores
//! are accesses, and `cvta` says where the pointers it makes point.
//! `escape` says which values may hold a shared-memory address, and
//! `phases` which points of a kernel two threads may be at between
//! the same two barriers, so that a write may race with a read.
//! `lower` is what the NVPTX backend makes of each access: adjacent
//! scalar loads and stores merged into one vector access (`lower::vector`),
//! struct copies, fills and over-wide values split into pieces
//! (`lower::split`); sites, checks, the cost stage and the simulator all
//! count its requests.

mod access;
pub mod asm;
pub mod escape;
pub mod fields;
pub mod lower;
mod origin;
pub mod phases;
pub mod rows;
mod space;

pub use access::{access_of, Access, AccessKind};
pub use origin::{Origin, Pointer, Root, Space, Spaces};
