//! warpcheck: static performance checks for CUDA kernels on NVPTX LLVM IR.
//!
//! The pipeline runs `ir` → `graph` → `taint` → `checks` → `diag`; see
//! ARCHITECTURE.md for the module map.

pub mod acf;
pub mod analysis;
pub mod budget;
pub mod checks;
pub mod cli;
pub mod compare;
pub mod config;
pub mod cost;
pub mod dataflow;
pub mod diag;
pub mod frontend;
pub mod graph;
pub mod hw;
pub mod ir;
pub mod memory;
pub mod plugin;
pub mod ptx;
pub mod sim;
pub mod taint;
pub mod timing;
pub mod trace;

/// The analysis allocates many small, short-lived vectors (lanes, terms,
/// path edges); mimalloc serves them much faster than the system
/// allocator, which matters most inside clang, where we add to every
/// device compile. It replaces only Rust's allocator, never clang's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
