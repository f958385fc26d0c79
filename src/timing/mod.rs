//! Kernel time: the machine model ([`machine`]), what each instruction
//! costs in it ([`class`]), and the static bounds on a block's and a
//! launch's cycles.
//!
//! **Invariant:** the model is plain data over `ir`; the simulator's cycle
//! mode and the static bounds read the same [`machine::Machine`] and the
//! same [`class::class_of`], so a bound is always compared with a
//! simulation of the machine it assumes.

pub mod abstract_cta;
pub mod bounds;
pub mod class;
pub mod costs;
pub mod machine;
pub mod report;

pub use class::{class_of, Access, Class};
pub use machine::{Machine, Residency, Waves};
