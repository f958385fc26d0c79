//! warpcheck: static performance checks for CUDA kernels on NVPTX LLVM IR.
//!
//! The pipeline runs `ir` → `graph` → `memory` → `taint` → `acf` →
//! `analysis` → `checks` → `cost` → `timing` → `diag`, with `cli` and
//! `plugin` on top; `sim` is the oracle, reading only the IR and the
//! `machine` model. The modules below the analyses live in crates of
//! their own (`warpcheck-core`, `warpcheck-sim`, `warpcheck-runtime`),
//! re-exported here at their old paths. ARCHITECTURE.md has the module
//! map, the crates and the layers table that `tests/layering.rs` enforces.

pub mod acf;
pub mod agreement;
pub mod allocator;
pub mod analysis;
pub mod budget;
pub mod checks;
pub mod cli;
pub mod compare;
pub mod config;
pub mod cost;
pub mod diag;
pub mod finding;
pub mod frontend;
pub mod glob;
pub mod pipeline;
pub mod plugin;
pub mod taint;
pub mod temp;
pub mod timing;
pub mod trace;

// The modules of the workspace's other crates, at the paths they had when
// all was one crate (`crate::ir`, `warpcheck::sim`).
pub use warpcheck_core::{dataflow, files, graph, hw, ir, machine, memory, ptx};
pub use warpcheck_runtime::runtime;
pub use warpcheck_sim::sim;

#[global_allocator]
static ALLOC: allocator::Mimalloc = allocator::Mimalloc;
