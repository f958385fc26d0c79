//! `thread-dependent-branch`: a conditional branch whose condition may
//! differ between the lanes of a warp, so the warp may diverge.

use super::{Check, CheckContext};
use crate::analysis::SiteKind;
use crate::diag::{Finding, Position, Severity};

pub struct ThreadDependentBranch;

impl Check for ThreadDependentBranch {
    fn name(&self) -> &'static str {
        "thread-dependent-branch"
    }

    fn summary(&self) -> &'static str {
        "a branch condition depends on the thread, so warps may diverge"
    }

    fn explanation(&self) -> &'static str {
        "When the lanes of a warp disagree on a branch, the warp runs both paths one \
         after the other with part of its lanes masked off. The branch is reported when \
         its condition is computed from threadIdx, the lane id, an atomic's result or \
         memory written with such values. Branches on blockIdx, blockDim, gridDim or \
         kernel arguments are uniform and are not reported. Use --explain to see the \
         chain from the source to the condition."
    }

    fn run(&self, cx: &CheckContext<'_, '_>) -> Vec<Finding> {
        let m = cx.analysis.module;
        let kernel = m.func(cx.kernel.kernel).demangled.clone();
        cx.kernel
            .sites
            .iter()
            .filter(|s| s.kind == SiteKind::Branch && s.thread_dependent)
            .map(|s| {
                let source = s
                    .why
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "the thread".into());
                Finding {
                    check: self.name(),
                    severity: Severity::Warning,
                    func: s.func,
                    inst: Some(s.inst),
                    pos: s.pos.as_ref().map(|p| Position::resolve(m, p)),
                    kernel: kernel.clone(),
                    function: m.func(s.func).demangled.clone(),
                    message: format!(
                        "branch condition depends on {source}; threads of a warp may diverge here"
                    ),
                    notes: vec![format!("dependence: {}", s.why.join(" → "))],
                }
            })
            .collect()
    }
}
