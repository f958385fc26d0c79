//! `analysis-budget`: the one note of a kernel whose analysis stopped on a
//! budget, in place of its sites' findings.

use super::KernelNote;
use crate::analysis::{KernelAnalysis, ModuleAnalysis};
use crate::finding::{Finding, Kind, Severity};
use crate::ir::Position;

pub const ANALYSIS_BUDGET: KernelNote = KernelNote {
    kind: Kind {
        name: "analysis-budget",
        summary: "a kernel's analysis stopped on a budget; its sites are unknown",
        explanation: "warpcheck bounds each kernel's analysis in time and size so that no build \
             waits on it. A kernel that runs out gets this note and no other findings; raise the \
             budget with `check --budget` or the plugin's `budget-*` settings.",
    },
    always: true,
    make: note,
};

fn note(a: &ModuleAnalysis<'_>, k: &KernelAnalysis) -> Option<Finding> {
    let e = k.exhausted?;
    let m = a.module;
    let func = m.func(k.kernel);
    let unknown = k.sites.iter().filter(|s| s.thread_dependent).count();
    Some(Finding {
        check: ANALYSIS_BUDGET.kind.name,
        severity: Severity::Note,
        func: k.kernel,
        inst: None,
        pos: func.loc.as_ref().map(|p| Position::resolve(m, p)),
        kernel: func.demangled.clone(),
        function: func.demangled.clone(),
        // Left out before it started (the module's memory): no sites at
        // all. One the memory budget stopped midway has its sites.
        message: match e.name() {
            "memory" if k.sites.is_empty() => format!(
                "this kernel was not analysed: the process had reached the {e} before it started"
            ),
            _ => format!(
                "analysis of this kernel stopped on its {e}: its {unknown} thread-dependent sites are unknown"
            ),
        },
        notes: vec![format!(
            "hint: raise it with --budget {0}=..., or budget-{0} in the plugin's configuration (0 lifts it)",
            e.name()
        )],
        data: None,
        impact: None,
    })
}
