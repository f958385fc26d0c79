//! warpcheck: static performance checks for CUDA kernels on NVPTX LLVM IR.
//!
//! The pipeline runs `ir` → `graph` → `taint` → `checks` → `diag`; see
//! ARCHITECTURE.md for the module map.

pub mod ir;
pub mod graph;
pub mod memory;
pub mod analysis;
pub mod taint;
pub mod checks;
pub mod diag;
pub mod frontend;
pub mod cli;
pub mod plugin;
