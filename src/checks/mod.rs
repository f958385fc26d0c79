//! The checks: one file each, with a stable name, a one-line summary, a
//! longer explanation (`warpcheck explain <check>`) and its own tests.

mod thread_dependent_branch;

use crate::analysis::{KernelAnalysis, ModuleAnalysis, Options};
use crate::diag::Finding;

/// What a check sees: the module's analyses and one kernel's results.
pub struct CheckContext<'a, 'm> {
    pub analysis: &'a ModuleAnalysis<'m>,
    pub kernel: &'a KernelAnalysis,
}

pub trait Check: Sync {
    /// Stable name, used in `[warpcheck-<name>]` and to disable the check.
    fn name(&self) -> &'static str;
    /// One line for `warpcheck checks`.
    fn summary(&self) -> &'static str;
    /// What it finds, why it matters and what to do.
    fn explanation(&self) -> &'static str;
    fn run(&self, cx: &CheckContext<'_, '_>) -> Vec<Finding>;
}

/// Every check, in report order.
pub fn all() -> Vec<&'static dyn Check> {
    vec![&thread_dependent_branch::ThreadDependentBranch]
}

/// Runs the enabled checks over every kernel. Identical findings that
/// inlining or unrolling repeat at one source position are reported once.
pub fn run_all(a: &ModuleAnalysis<'_>, opts: &Options) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for check in all() {
        if opts.disabled.iter().any(|d| d == check.name()) {
            continue;
        }
        for k in &a.kernels {
            let cx = CheckContext {
                analysis: a,
                kernel: k,
            };
            for f in check.run(&cx) {
                let dup = out.iter().any(|o| {
                    o.check == f.check && o.kernel == f.kernel && o.pos == f.pos && o.pos.is_some()
                });
                if !dup {
                    out.push(f);
                }
            }
        }
    }
    out
}
