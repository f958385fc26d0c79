//! Findings and how they are shown: clang-style text, JSON, and (through the
//! plugin) LLVM diagnostics.

pub mod baseline;
pub mod fingerprint;
pub mod fold;
pub mod html;
pub mod json;
pub mod sarif;
pub mod summary;
pub mod suppress;
pub mod text;

/// What warpcheck reports besides the checks' findings: `(name, summary,
/// explanation)`, for SARIF's rules and NOLINT's known names.
pub fn other_kinds() -> [(&'static str, &'static str, &'static str); 3] {
    [
        (
            crate::checks::ANALYSIS_BUDGET,
            "a kernel's analysis stopped on a budget; its sites are unknown",
            "warpcheck bounds each kernel's analysis in time and size so that no build waits on \
             it. A kernel that runs out gets this note and no other findings; raise the budget \
             with `check --budget` or the plugin's `budget-*` settings.",
        ),
        (
            crate::checks::UNREAD_ASM,
            "a kernel runs inline asm the PTX reader cannot read",
            "Results of such asm are taken as thread-dependent and its memory effects as \
             unknown; the note names the first instruction that could not be read.",
        ),
        (
            crate::cost::report::COST_BOUND,
            "a kernel's per-warp cost bounds (check --bounds)",
            "Upper bounds per warp on sectors, bank conflicts, divergent branches and steps, \
             as polynomials in the kernel's parameters (RaCuda's analysis, solved as an LP).",
        ),
    ]
}
