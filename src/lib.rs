//! warpcheck: static performance checks for CUDA kernels on NVPTX LLVM IR.
//!
//! The pipeline runs `ir` → `graph` → `taint` → `checks` → `diag`; see
//! ARCHITECTURE.md for the module map.

pub mod ir;
