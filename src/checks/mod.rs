//! The checks: one file each, with a stable name, a one-line summary, a
//! longer explanation (`warpcheck explain <check>`, the same text as the
//! file's docs) and its own tests.
//!
//! Before any check runs, [`measure_all`] gives every site its figures:
//! the divergence of a branch, the sectors of a global access, the bank
//! conflicts of a shared one. The JSON report shows them for every site;
//! the checks turn the ones worth a warning (or a note) into findings.

mod addresses;
pub mod bank_conflict;
pub mod divergent_branch;
pub mod uncoalesced_access;

use crate::analysis::{KernelAnalysis, ModuleAnalysis};
use crate::dataflow::FastMap;
use crate::finding::{Finding, Severity};
use crate::ir::Opcode;
use crate::ir::Position;
use crate::ir::SiteKind;
use crate::memory::Space;
use bank_conflict::Conflict;
use divergent_branch::Divergence;
use serde::Serialize;
use uncoalesced_access::Sectors;

/// The name the single thread-dependence warning had; disabling it still
/// silences the divergence notes that replaced it.
pub const THREAD_DEPENDENT_BRANCH: &str = "thread-dependent-branch";

/// What warpcheck predicts for one site.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SiteFigures {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence: Option<Divergence>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sectors: Option<Sectors>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<Conflict>,
    /// Why the figures are unknown, when it is not the code: `budget`
    /// when the kernel's analysis stopped on one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

/// [`SiteFigures::reason`] of a kernel over budget.
pub const BUDGET: &str = "budget";

/// The name of the note a kernel over budget gets.
pub const ANALYSIS_BUDGET: &str = "analysis-budget";

/// Figures for every site of every kernel, in the order of `k.sites`.
pub fn measure_all(a: &ModuleAnalysis<'_>) -> Vec<Vec<SiteFigures>> {
    a.kernels.iter().map(|k| measure_kernel(a, k)).collect()
}

fn measure_kernel(a: &ModuleAnalysis<'_>, k: &KernelAnalysis) -> Vec<SiteFigures> {
    let m = a.module;
    k.sites
        .iter()
        .map(|s| {
            let mut fig = SiteFigures {
                reason: (k.exhausted.is_some() && s.thread_dependent).then_some(BUDGET),
                ..SiteFigures::default()
            };
            match (s.kind, s.space) {
                (SiteKind::Branch, _) => {
                    fig.divergence = Some(divergent_branch::measure(m, k, s));
                }
                (_, Some(Space::Global)) if s.thread_dependent => {
                    fig.sectors = Some(uncoalesced_access::measure(m, k, s));
                }
                (_, Some(Space::Shared)) if s.thread_dependent => {
                    fig.conflict = Some(bank_conflict::measure(m, k, s));
                }
                _ => {}
            }
            fig
        })
        .collect()
}

/// What a check sees: the module's analyses, one kernel's results and
/// that kernel's site figures.
pub struct CheckContext<'a, 'm> {
    pub analysis: &'a ModuleAnalysis<'m>,
    pub kernel: &'a KernelAnalysis,
    pub figures: &'a [SiteFigures],
}

/// What a check says of one site.
pub struct Verdict {
    pub severity: Severity,
    pub message: String,
    /// Shown with warnings, as a `hint:` note.
    pub hint: Option<&'static str>,
    /// The figures, for the finding's JSON `data`.
    pub data: Option<serde_json::Value>,
}

pub trait Check: Sync {
    /// Stable name, used in `[warpcheck-<name>]` and to disable the check.
    fn name(&self) -> &'static str;
    /// One line for `warpcheck checks`.
    fn summary(&self) -> &'static str;
    /// What it finds, why it matters and what to do.
    fn explanation(&self) -> &'static str;
    /// The verdict on one thread-dependent site with its figures, if the
    /// check has one.
    fn judge(&self, s: &crate::analysis::Site, fig: &SiteFigures) -> Option<Verdict>;

    /// Findings for every thread-dependent site the check judges.
    fn run(&self, cx: &CheckContext<'_, '_>) -> Vec<Finding> {
        let m = cx.analysis.module;
        let kernel = &m.func(cx.kernel.kernel).demangled;
        cx.kernel
            .sites
            .iter()
            .zip(cx.figures)
            // A kernel over budget gets one note, not one per site.
            .filter(|(s, fig)| s.thread_dependent && fig.reason.is_none())
            .filter_map(|(s, fig)| {
                let v = self.judge(s, fig)?;
                let mut notes = Vec::new();
                if let (Severity::Warning, Some(h)) = (v.severity, v.hint) {
                    notes.push(format!("hint: {h}"));
                }
                notes.extend(explanation_notes(cx, s));
                Some(Finding {
                    check: self.name(),
                    severity: v.severity,
                    func: s.func,
                    inst: Some(s.inst),
                    pos: s.pos.as_ref().map(|p| crate::ir::Position::resolve(m, p)),
                    kernel: kernel.clone(),
                    function: m.func(s.func).demangled.clone(),
                    message: v.message,
                    notes,
                    data: v.data,
                })
            })
            .collect()
    }
}

/// Every check, in report order.
pub fn all() -> Vec<&'static dyn Check> {
    vec![
        &divergent_branch::DivergentBranch,
        &uncoalesced_access::UncoalescedAccess,
        &bank_conflict::BankConflict,
    ]
}

/// The `--explain` notes of a finding at site `s`: the dependence chain
/// and the site's value per lane as its ACF.
pub(crate) fn explanation_notes(
    cx: &CheckContext<'_, '_>,
    s: &crate::analysis::Site,
) -> Vec<String> {
    // Explanations left out (text without --explain, the plugin).
    if s.why.is_empty() {
        return Vec::new();
    }
    let mut notes = vec![format!("dependence: {}", s.why.join(" → "))];
    if let Some(acf) = cx.kernel.acf.render(cx.analysis.module, s.func, s.value) {
        notes.push(format!("per lane: {acf}"));
    }
    notes
}

/// How bad a finding's figures are, to keep the worst of the findings
/// that unrolled or inlined copies make at one position.
/// What makes two findings one: a load and a store on one column are two
/// findings; copies of one instruction (unrolled, inlined) are one.
type DedupKey = (&'static str, String, Position, Option<Opcode>);

/// The key of a finding that can have duplicates (one with a position).
fn dedup_key(a: &ModuleAnalysis<'_>, f: &Finding) -> Option<DedupKey> {
    let op = f.inst.map(|i| a.module.func(f.func).inst(i).op);
    let pos = f.pos.clone()?;
    Some((f.check, f.kernel.clone(), pos, op))
}

fn weight(f: &Finding) -> i64 {
    let d = f.data.as_ref();
    let num = |k: &str| d.and_then(|d| d[k].as_i64()).unwrap_or(0);
    match f.check {
        "divergent-branch" => num("split_min") * 1000 + num("split_max"),
        "uncoalesced-access" => num("full_max") - num("ideal"),
        _ => num("full_max"),
    }
}

/// The one note of a kernel whose analysis stopped on a budget.
fn budget_note(a: &ModuleAnalysis<'_>, k: &KernelAnalysis) -> Option<Finding> {
    let e = k.exhausted?;
    let m = a.module;
    let func = m.func(k.kernel);
    let unknown = k.sites.iter().filter(|s| s.thread_dependent).count();
    Some(Finding {
        check: ANALYSIS_BUDGET,
        severity: Severity::Note,
        func: k.kernel,
        inst: None,
        pos: func
            .loc
            .as_ref()
            .map(|p| crate::ir::Position::resolve(m, p)),
        kernel: func.demangled.clone(),
        function: func.demangled.clone(),
        message: format!(
            "analysis of this kernel stopped on its {e}: its {unknown} thread-dependent sites are unknown"
        ),
        notes: vec![format!(
            "hint: raise it with --budget {0}=..., or budget-{0} in the plugin's configuration (0 lifts it)",
            e.name()
        )],
        data: None,
    })
}

/// The name of the note a kernel gets when it runs inline asm the PTX
/// reader cannot read.
pub const UNREAD_ASM: &str = "unread-asm";

/// One note per kernel that runs inline asm the PTX reader cannot read,
/// at the first such call, naming what it could not read: the analysis
/// takes those calls' results as thread-dependent and their memory
/// effects as unknown.
fn unread_asm_note(a: &ModuleAnalysis<'_>, k: &KernelAnalysis) -> Option<Finding> {
    let m = a.module;
    let mut unread = k.reached.iter().flat_map(|&f| {
        let func = m.func(f);
        func.inst_ids().filter_map(move |i| {
            let e = crate::ptx::Body::of(m.called_asm(func.inst(i))?).err()?;
            Some((f, i, e))
        })
    });
    let (f, i, e) = unread.next()?;
    let more = unread.count();
    let func = m.func(f);
    let others = match more {
        0 => String::new(),
        n => format!(" ({n} more asm calls of this kernel cannot be read either)"),
    };
    let at = match e.line {
        0 => String::new(),
        line => format!("asm line {line}: "),
    };
    Some(Finding {
        check: UNREAD_ASM,
        severity: Severity::Note,
        func: f,
        inst: Some(i),
        pos: m
            .inst_pos(func, i)
            .map(|p| crate::ir::Position::resolve(m, &p)),
        kernel: m.func(k.kernel).demangled.clone(),
        function: func.demangled.clone(),
        message: format!(
            "cannot read this inline asm ({at}{}): its results are taken as thread-dependent and its memory effects as unknown{others}",
            e.message
        ),
        notes: Vec::new(),
        data: None,
    })
}

/// Whether `name` names a check (or the retired name kept for it, or a
/// note of its own).
pub fn is_known(name: &str) -> bool {
    name == THREAD_DEPENDENT_BRANCH || name == UNREAD_ASM || all().iter().any(|c| c.name() == name)
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
    let disabled = |name: &str| disabled.iter().any(|d| d == name);
    let mut out: Vec<Finding> = a.kernels.iter().filter_map(|k| budget_note(a, k)).collect();
    if !disabled(UNREAD_ASM) {
        out.extend(a.kernels.iter().filter_map(|k| unread_asm_note(a, k)));
    }
    // The first finding of each key, by index in `out`: a scan of `out`
    // per finding is quadratic in a module of many kernels.
    let mut seen: FastMap<DedupKey, usize> = FastMap::default();
    for (i, f) in out.iter().enumerate() {
        if let Some(k) = dedup_key(a, f) {
            seen.entry(k).or_insert(i);
        }
    }
    for check in all() {
        if disabled(check.name()) {
            continue;
        }
        for (k, figs) in a.kernels.iter().zip(figures) {
            let cx = CheckContext {
                analysis: a,
                kernel: k,
                figures: figs,
            };
            for f in check.run(&cx) {
                let retired = f.check == divergent_branch::DivergentBranch.name()
                    && f.severity == Severity::Note
                    && disabled(THREAD_DEPENDENT_BRANCH);
                if retired {
                    continue;
                }
                let key = dedup_key(a, &f);
                match key.as_ref().and_then(|k| seen.get(k)).copied() {
                    None => {
                        if let Some(k) = key {
                            seen.entry(k).or_insert(out.len());
                        }
                        out.push(f)
                    }
                    Some(i) if (f.severity, -weight(&f)) < (out[i].severity, -weight(&out[i])) => {
                        out[i] = f
                    }
                    Some(_) => {}
                }
            }
        }
    }
    out
}
