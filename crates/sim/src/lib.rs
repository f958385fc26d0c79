//! warpcheck's simulator: kernels run exactly on the CPU, the oracle for
//! the analyses. It reads the IR and the machine model of
//! `warpcheck-core`, never an analysis; the core's modules are re-exported
//! here so that `crate::ir` and the other paths read as in one crate.

pub use warpcheck_core::{dataflow, graph, hw, ir, machine, memory, ptx};

pub mod sim;
