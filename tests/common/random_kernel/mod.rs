//! Random structured kernels for `random_kernels.rs`: the program tree
//! (`ast`), proptest strategies for it (`strategy`), the generator's own
//! coarse uniformity that places barriers and warp primitives only where
//! they are legal (`uniformity`), and the lowering to our IR through
//! `ir::builder` (`lower`), and a minimiser for failing programs
//! (`minimize`).
#![allow(dead_code)]

pub mod ast;
pub mod lower;
pub mod minimize;
pub mod strategy;
pub mod uniformity;
