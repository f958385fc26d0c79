//! The one analysis both front doors run once a module is loaded: `check`
//! (and `report`, `launch`, `build`) in the CLI and the pass plugin inside
//! clang and opt. Each batch of kernels is measured, checked, costed on the
//! time model, grouped by cause, settled against `MinImpact`, filtered by
//! NOLINT and, when asked for, bounded; a file's findings are then put
//! worst first and the repeats at one place folded into one warning. The
//! front doors differ only in where the module, the launches and the
//! configuration come from and in how a finding is shown, so the same
//! source gives the same warnings either way.

use crate::analysis::{self, ModuleAnalysis};
use crate::checks::SiteFigures;
use crate::config::Selection;
use crate::diag::fold::{self, Fold, Place};
use crate::finding::{Finding, Severity};
use crate::machine::Machine;

/// What a run reports and costs, besides the analysis options.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    /// Which findings are reported (checks, `MinImpact`, NOLINT, errors).
    pub selection: &'a Selection,
    /// The time model the impact estimates and time bounds use.
    pub machine: &'a Machine,
    /// The cost bounds' options, when bounds are asked for.
    pub bounds: Option<&'a crate::cost::Options>,
    /// The limits the bounds run within.
    pub budget: &'a crate::budget::Budget,
}

/// One batch of kernels, checked.
pub struct Batch {
    /// Each kernel's site figures, in the batch's kernel order.
    pub figures: Vec<Vec<SiteFigures>>,
    /// The findings reported, NOLINT applied, with the bound notes last.
    pub findings: Vec<Finding>,
    /// Each kernel's cost bounds, when asked for.
    pub kernel_bounds: Vec<crate::cost::KernelBounds>,
    /// Warnings and errors a NOLINT comment silenced.
    pub suppressed: usize,
    /// Problems with NOLINT comments (a misspelt check name), as lines.
    pub problems: Vec<String>,
}

/// Checks one batch: figures, findings with their impact, grouped and
/// settled, NOLINT, then the bound notes when `run.bounds` asks for them.
pub fn batch(a: &ModuleAnalysis<'_>, run: &Run<'_>) -> Batch {
    let figures = crate::checks::measure_all(a);
    let findings = findings_with_impact(a, &figures, run.selection, run.machine);
    let serious = |fs: &[Finding]| fs.iter().filter(|f| f.severity != Severity::Note).count();
    let before = serious(&findings);
    let (mut findings, problems) =
        crate::diag::suppress::filter(findings, run.selection.bare_nolint);
    let suppressed = before - serious(&findings);
    let budget = run.budget;
    let kernel_bounds = match run.bounds {
        Some(copts) => crate::cost::bound_module(a, &figures, copts, budget),
        None => Vec::new(),
    };
    for (k, kb) in a.kernels.iter().zip(&kernel_bounds) {
        findings.push(crate::cost::report::note(a.module, k, kb));
    }
    if run.bounds.is_some() {
        findings.extend(crate::timing::report::module_notes(
            a,
            &figures,
            run.machine,
            budget,
        ));
    }
    Batch {
        figures,
        findings,
        kernel_bounds,
        suppressed,
        problems,
    }
}

/// The findings `selection` selects, each with its impact estimate on
/// `machine`, accesses of one cause grouped, and the warnings under the
/// `MinImpact` threshold made notes.
pub fn findings_with_impact(
    a: &ModuleAnalysis<'_>,
    figures: &[Vec<SiteFigures>],
    selection: &Selection,
    machine: &Machine,
) -> Vec<Finding> {
    let min_impact = selection
        .min_impact
        .unwrap_or(crate::timing::impact::DEFAULT_MIN_IMPACT);
    selection.findings_with(
        a,
        figures,
        |fs| crate::timing::impact::annotate(a, figures, machine, fs),
        |fs| {
            *fs = crate::checks::group::group(a, std::mem::take(fs));
            crate::timing::impact::settle(fs, min_impact);
        },
    )
}

/// The order to show a file's findings in: worst first
/// ([`crate::diag::order::by_impact`]).
pub fn report_order(findings: &[Finding]) -> Vec<usize> {
    crate::diag::order::by_impact(findings)
}

/// Which findings in report order are shown and which an earlier warning
/// at the same place already says (`places`: where each is shown).
pub fn folds(findings: &[Finding], places: &[Place]) -> Vec<Fold> {
    fold::fold(findings, places)
}

/// Runs `each` on every batch of `m`'s kernels, analysed with `opts`:
/// [`analysis::in_batches`] with the thread-dependence analysis both front
/// doors use. Returns the number of kernels.
pub fn in_batches<'m>(
    m: &'m crate::ir::Module,
    opts: &analysis::Options,
    each: impl FnMut(&ModuleAnalysis<'m>),
) -> usize {
    analysis::in_batches(m, opts, &crate::taint::ifds::IfdsTaint, each)
}

/// The environment variable `warpcheck build` sets to a file where each
/// compile it wraps (through `launch` or the plugin) appends a line per
/// translation unit: its warnings, a tab, its file.
pub const BUILD_LOG: &str = "WARPCHECK_BUILD_LOG";

/// Appends `units` (warnings, file) to the build log, when `build` asked
/// for one. One write per line: appends from parallel compiles do not mix.
pub fn log_for_build(units: &[(usize, &std::path::Path)]) {
    use std::io::Write;
    let Some(log) = std::env::var_os(BUILD_LOG) else {
        return;
    };
    let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log)
    else {
        return;
    };
    for (n, file) in units {
        let _ = f.write_all(format!("{n}\t{}\n", file.display()).as_bytes());
    }
}
