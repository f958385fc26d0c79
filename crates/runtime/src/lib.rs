//! The CUDA runtime API on the CPU, for `warpcheck run`: the program's
//! host objects link against it (through `libwarpcheck.so`), and every
//! launch runs in the simulator. The modules it builds on are re-exported
//! so that `crate::sim` and `crate::ir` read as in one crate.

pub use warpcheck_core::{hw, ir, machine};
pub use warpcheck_sim::sim;

pub mod runtime;
