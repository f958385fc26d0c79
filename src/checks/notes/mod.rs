//! The notes a kernel gets of its own, besides the checks' findings: one
//! file each, with its kind and how it is made, registered in [`ALL`].

pub mod analysis_budget;
pub mod guessed_shape;
pub mod unread_asm;

pub use analysis_budget::ANALYSIS_BUDGET;
pub use guessed_shape::GUESSED_SHAPE;
pub use unread_asm::UNREAD_ASM;

use crate::analysis::{KernelAnalysis, ModuleAnalysis};
use crate::finding::{Finding, Kind};

/// A note of a kernel's own.
pub struct KernelNote {
    pub kind: Kind,
    /// Said whatever `--disable` names (a kernel left unanalysed).
    pub always: bool,
    /// The kernel's note, if it has one.
    pub make: fn(&ModuleAnalysis<'_>, &KernelAnalysis) -> Option<Finding>,
}

/// Every kernel note, in report order (before the checks' findings).
pub static ALL: &[&KernelNote] = &[&ANALYSIS_BUDGET, &UNREAD_ASM, &GUESSED_SHAPE];
