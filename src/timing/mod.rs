//! Kernel time: the static bounds on a block's and a launch's cycles on
//! the machine model of [`crate::machine`].
//!
//! **Invariant:** the bounds read the same [`crate::machine::Machine`] and the same
//! [`crate::machine::class_of`] as the simulator's cycle mode, so a bound
//! is always compared with a simulation of the machine it assumes.

pub mod abstract_cta;
pub mod bounds;
pub mod costs;
pub mod guard;
pub mod impact;
pub mod report;
pub mod roofline;

/// Iterations taken for a loop whose trip bound is unknown or needs a
/// parameter that was not given: the same for every loop, so that shares
/// inside one such loop stay right (across loops they are a guess, and
/// said to be one). The impact estimate and the time bound's worst path
/// ("where the time goes") both take it.
pub const NOMINAL_TRIPS: f64 = 100.0;
