//! The checks: one file each, holding the check's name, summary and
//! explanation (`warpcheck explain <check>`, the same text as the file's
//! docs), its figure type, which sites it measures, how it measures and
//! judges them, its ranking, and its own tests. [`notes`] holds the notes
//! a kernel gets of its own.
//!
//! Before any check runs, [`measure_all`] gives every site the figures of
//! the checks that apply to it: the divergence of a branch, the sectors of
//! a global access, the bank conflicts of a shared one. The JSON report
//! shows them for every site; the checks turn the ones worth a warning (or
//! a note) into findings.

mod addresses;
pub mod bank_conflict;
mod check;
pub mod divergent_branch;
mod figures;
pub mod fix;
pub mod group;
pub mod idioms;
pub mod notes;
pub mod siblings;
pub mod uncoalesced_access;

pub use check::{Check, CheckContext, DynCheck, Ranked, Verdict};
pub use figures::{Figure, SiteFigures, BUDGET};
pub use fix::Fix;

use crate::analysis::ModuleAnalysis;
use crate::dataflow::FastMap;
use crate::finding::{Finding, Severity};
use crate::ir::{Opcode, Position};

/// The registry: every check, in report order. A new check is its file,
/// its `mod` line above and its line here.
static CHECKS: &[&dyn DynCheck] = &[
    &divergent_branch::DivergentBranch,
    &uncoalesced_access::UncoalescedAccess,
    &bank_conflict::BankConflict,
];

/// Every check, in report order.
pub fn all() -> &'static [&'static dyn DynCheck] {
    CHECKS
}

/// The check `name` names, by its name or a retired one, with or without
/// the `warpcheck-` prefix.
pub fn find(name: &str) -> Option<&'static dyn DynCheck> {
    let name = crate::finding::bare_name(name);
    all()
        .iter()
        .copied()
        .find(|c| c.name() == name || c.retired_name() == Some(name))
}

/// Whether `--disable` can name `name`: a check (or a retired name kept
/// for one), or a kernel note that can be switched off.
pub fn is_known(name: &str) -> bool {
    find(name).is_some() || optional_notes().any(|n| n == crate::finding::bare_name(name))
}

/// The names `--disable` and the check lists can name, for "did you mean".
pub fn names() -> impl Iterator<Item = &'static str> {
    all().iter().map(|c| c.name()).chain(optional_notes())
}

/// The kernel notes that can be switched off.
fn optional_notes() -> impl Iterator<Item = &'static str> {
    notes::ALL.iter().filter(|n| !n.always).map(|n| n.kind.name)
}

/// Figures for every site of every kernel, in the order of `k.sites`.
pub fn measure_all(a: &ModuleAnalysis<'_>) -> Vec<Vec<SiteFigures>> {
    a.kernels
        .iter()
        .map(|k| {
            let mut figures: Vec<SiteFigures> = k
                .sites
                .iter()
                .map(|s| {
                    let mut fig = SiteFigures::default();
                    fig.reason = (k.exhausted.is_some() && s.thread_dependent).then_some(BUDGET);
                    for c in all() {
                        c.measure(a, k, s, &mut fig);
                    }
                    fig
                })
                .collect();
            // What accesses fetch together needs every access's figure.
            uncoalesced_access::attach_siblings(a, k, &mut figures);
            figures
        })
        .collect()
}

/// What makes two findings one: a load and a store on one column are two
/// findings; copies of one instruction (unrolled, inlined) are one.
type DedupKey = (&'static str, String, Position, Option<Opcode>);

/// The key of a finding that can have duplicates (one with a position).
fn dedup_key(a: &ModuleAnalysis<'_>, f: &Finding) -> Option<DedupKey> {
    let op = f.inst.map(|i| a.module.func(f.func).inst(i).op);
    let pos = f.pos.clone()?;
    Some((f.check, f.kernel.clone(), pos, op))
}

/// Runs every check and note not in `disabled` over every kernel.
/// Identical findings that inlining or unrolling repeat at one source
/// position are reported once. Severities are the checks' own: promoting
/// warnings to errors is the caller's policy.
pub fn run_all(
    a: &ModuleAnalysis<'_>,
    figures: &[Vec<SiteFigures>],
    disabled: &[String],
) -> Vec<Finding> {
    run_all_with(a, figures, disabled, &mut |_| {})
}

/// [`run_all`], with `adjust` run on every finding before copies at one
/// position are reduced to one: the impact stage sets each copy's
/// estimate there, so that of copies alike in severity and rank the
/// costliest stays (an unrolled loop's exit test in the loop rather than
/// its copy before it).
pub fn run_all_with(
    a: &ModuleAnalysis<'_>,
    figures: &[Vec<SiteFigures>],
    disabled: &[String],
    adjust: &mut dyn FnMut(&mut [Finding]),
) -> Vec<Finding> {
    let disabled = |name: &str| {
        disabled
            .iter()
            .any(|d| crate::finding::bare_name(d) == name)
    };
    // Kernel notes rank 0: no check's finding shares their keys.
    let mut all: Vec<Ranked> = notes::ALL
        .iter()
        .filter(|n| n.always || !disabled(n.kind.name))
        .flat_map(|n| a.kernels.iter().filter_map(|k| (n.make)(a, k)))
        .map(|f| (f, 0))
        .collect();
    for check in all_checks_on(&disabled) {
        let no_notes = check.retired_name().is_some_and(disabled);
        for (k, figs) in a.kernels.iter().zip(figures) {
            let cx = CheckContext {
                analysis: a,
                kernel: k,
                figures: figs,
            };
            let shape = k.shapes.shape_note(&k.block_dim);
            let assumed = assumed_shape(k);
            for (mut f, rank) in check.run(&cx) {
                if no_notes && f.severity == Severity::Note {
                    continue;
                }
                // A kernel analysed for several launch shapes: say which
                // one this finding (the worst at its place) is for.
                if let Some(shape) = &shape {
                    f.message = format!("{}; {shape}", f.message);
                }
                if let Some(note) = &assumed {
                    f.notes.push(note.clone());
                }
                all.push((f, rank));
            }
        }
    }
    let (mut findings, ranks): (Vec<Finding>, Vec<i64>) = all.into_iter().unzip();
    adjust(&mut findings);
    dedup(a, findings, &ranks)
}

/// What every finding of a kernel analysed at the default shape says
/// under it: that shape, why nothing gave one, and how to give it.
fn assumed_shape(k: &crate::analysis::KernelAnalysis) -> Option<String> {
    if k.block_dim.source != crate::analysis::BlockDimSource::Default {
        return None;
    }
    let why = match k.shapes.unknown_blocks().next() {
        Some(l) => format!(
            "the launch at {}:{} computes its block at run time",
            l.file, l.line
        ),
        None => "no launch of it in its file gives a constant block".to_string(),
    };
    Some(format!(
        "{} {} ({why}); give the real one with `--block-dim`, `Kernels:` in .warpcheck.yaml \
         or `__launch_bounds__`",
        crate::finding::ASSUMED_SHAPE,
        crate::analysis::shape_text(k.block_dim.dims),
    ))
}

/// The checks `disabled` leaves on, in report order.
fn all_checks_on<'a>(
    disabled: &'a dyn Fn(&str) -> bool,
) -> impl Iterator<Item = &'static dyn DynCheck> + 'a {
    all().iter().copied().filter(move |c| !disabled(c.name()))
}

/// The first finding of each key, replaced by a later copy of a worse
/// severity, then a higher rank, then a larger estimated share.
fn dedup(a: &ModuleAnalysis<'_>, findings: Vec<Finding>, ranks: &[i64]) -> Vec<Finding> {
    let share = |f: &Finding| f.impact.as_ref().and_then(|i| i.share).unwrap_or(-1.0);
    let mut out: Vec<Ranked> = Vec::with_capacity(findings.len());
    // The first finding of each key, by index in `out`: a scan of `out`
    // per finding is quadratic in a module of many kernels.
    let mut seen: FastMap<DedupKey, usize> = FastMap::default();
    for (f, &rank) in findings.into_iter().zip(ranks) {
        let key = dedup_key(a, &f);
        match key.as_ref().and_then(|k| seen.get(k)).copied() {
            None => {
                if let Some(k) = key {
                    seen.entry(k).or_insert(out.len());
                }
                out.push((f, rank))
            }
            Some(i) => {
                let (old, old_rank) = &out[i];
                let worse = (f.severity, -rank)
                    .cmp(&(old.severity, -old_rank))
                    .then(share(old).total_cmp(&share(&f)));
                if worse == std::cmp::Ordering::Less {
                    out[i] = (f, rank);
                }
            }
        }
    }
    out.into_iter().map(|(f, _)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_disable_and_explain_accept() {
        // The retired name stands for the check that replaced it.
        assert_eq!(
            find("thread-dependent-branch").map(|c| c.name()),
            Some("divergent-branch")
        );
        assert_eq!(
            find("bank-conflict").map(|c| c.name()),
            Some("bank-conflict")
        );
        assert!(find("unread-asm").is_none());
        // A kernel note can be switched off unless it must always be said.
        assert!(is_known("unread-asm") && is_known("thread-dependent-branch"));
        assert!(!is_known("analysis-budget") && !is_known("cost-bound"));
    }
}
