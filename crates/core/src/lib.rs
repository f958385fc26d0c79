//! warpcheck's core: what the analyses and the simulator both read. The
//! IR (`ir`, the one reader of LLVM), the PTX reader for inline asm
//! (`ptx`), the graphs (`graph`), address spaces and the requests each
//! access makes (`memory`), the machine model (`machine`, `hw`), the
//! dataflow solver (`dataflow`) and the guarded file reader (`files`).
//! ARCHITECTURE.md's Layers table holds the order among them.

pub mod dataflow;
pub mod files;
pub mod graph;
pub mod hw;
pub mod ir;
pub mod machine;
pub mod memory;
pub mod ptx;
