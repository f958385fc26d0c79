//! Generic interprocedural dataflow.
//!
//! [`ifds`] is the Reps–Horwitz–Sagiv tabulation algorithm for IFDS
//! problems (interprocedural, finite, distributive, subset): reachability
//! over the "exploded supergraph" of (node, fact) pairs along valid paths
//! only, with procedure summaries. An analysis supplies a [`Supergraph`]
//! and the four kinds of flow functions of an [`IfdsProblem`]; the solver
//! knows nothing about warpcheck's IR, so later analyses can reuse it with
//! facts of their own. The thread-dependence analysis in
//! `taint::ifds` is the first user. [`Bits`] is the dense set both the
//! taint analysis and the barrier phases of `memory` index by node.

mod bits;
mod fast_hash;
pub mod ifds;

#[cfg(test)]
mod tests;

pub use bits::Bits;
pub use fast_hash::{FastMap, FastSet};
pub use ifds::{IfdsProblem, Solution, Solver, SolverStats, Supergraph};
