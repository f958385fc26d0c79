//! The pass plugin's Rust half: the entry point opt and clang look up, and
//! the analysis run on a module they lend us: the one `check` runs
//! ([`pipeline`]), with the launch shapes of the file's host code
//! ([`launches`]), impact estimates, `MinImpact`, grouping, ordering and
//! hints (as notes under each warning).
//!
//! Configuration cannot come from `-mllvm` (clang does not pass it to
//! plugins), so it comes from the environment: `WARPCHECK_BLOCK_DIM`,
//! `WARPCHECK_DISABLE` (comma-separated check names), `WARPCHECK_MIN_IMPACT`
//! (a percentage, as `check --min-impact`), `WARPCHECK_BUDGET`
//! (`time=2,ifds-facts=N,acf-exprs=N`), or a file named by
//! `WARPCHECK_CONFIG` with `block-dim = X,Y,Z`, `disable = a,b`,
//! `min-impact = 2` and `budget-time = 2` (and `budget-ifds-facts`,
//! `budget-acf-exprs`, `budget-lp-rows`, `budget-memory` in MB) lines, or a
//! `.warpcheck.yaml` (named by `WARPCHECK_CONFIG`, else the one nearest the
//! source file). Cost bounds (a note per kernel) only with
//! `WARPCHECK_BOUNDS=1` or `bounds = on`.
//! `WARPCHECK_JOBS=N` (or `jobs = N`) analyses a module's kernels on N
//! threads (default 1), for a single compile that waits on a large file.
//! `WARPCHECK_LOG=debug` prints the stages' spans to stderr.
//!
//! The default budget is [`crate::budget::Budget::PLUGIN`]: a build must
//! never wait on us. A kernel over budget gets one warning and the compile
//! goes on. The kernels are analysed in batches as `check` does them
//! ([`crate::analysis::in_batches`]), so memory follows the batch, not the
//! module, and a kernel that would start past the memory budget is left out
//! with that warning.

mod launches;
mod settings;

pub use settings::{bounds_requested, options_from_env};

use crate::config::Config;
use crate::diag::fold::{Fold, Place};
use crate::finding::{Finding, Severity};
use crate::ir;
use crate::ir::major::PassPluginLibraryInfo;
use crate::pipeline;
use inkwell::llvm_sys::prelude::{LLVMModuleRef, LLVMValueRef};
use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

extern "C" {
    fn warpcheck_register_callbacks(pb: *mut c_void);
    fn warpcheck_emit(
        func: LLVMValueRef,
        inst: LLVMValueRef,
        inlined_hops: u32,
        severity: c_int,
        check: *const c_char,
        message: *const c_char,
        suffix: *const c_char,
        notes: *const *const c_char,
        note_count: u32,
    );
    fn warpcheck_emit_module_warning(module: LLVMModuleRef, message: *const c_char);
}

/// The C++ half's severity for a finding an earlier warning stands for: a
/// remark only.
const REMARK_ONLY: c_int = 3;

/// The symbol opt and clang look up in the plugin.
#[no_mangle]
pub extern "C" fn llvmGetPassPluginInfo() -> PassPluginLibraryInfo {
    PassPluginLibraryInfo::new(
        c"warpcheck",
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast(),
        warpcheck_register_callbacks,
    )
}

fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).unwrap_or_default()
}

/// Called by the shim for every nvptx module. A panic here becomes one
/// warning; the compile goes on.
///
/// # Safety
/// `module` must be a valid module owned by the caller for this call.
#[no_mangle]
pub unsafe extern "C" fn warpcheck_analyze_module(module: LLVMModuleRef) {
    let outcome = catch_unwind(AssertUnwindSafe(|| match crate::trace::subscriber(false) {
        Some(s) => tracing::subscriber::with_default(s, || analyze(module)),
        None => analyze(module),
    }));
    let message = match outcome {
        Ok(Ok(())) => return,
        Ok(Err(e)) => format!("warpcheck: {e}"),
        Err(_) => {
            "warpcheck: internal error; this module was not analysed. Please report it.".to_string()
        }
    };
    let text = cstring(&message);
    warpcheck_emit_module_warning(module, text.as_ptr());
}

unsafe fn analyze(module: LLVMModuleRef) -> Result<(), String> {
    let (mut opts, mut sel) = options_from_env()?;
    // We copy what we need; the module stays the host's and is never changed.
    let (mut m, origins) = tracing::info_span!("load").in_scope(|| ir::llvm::from_raw(module));
    // Clang discards value names and line tables keep no variables: the
    // names come back from the source text.
    ir::source_text::fill_names(&mut m);
    let m = m;
    // One report per source file and process: the device compiles of other
    // GPU architectures say the same.
    if !launches::first_of_its_source(&m) {
        return Ok(());
    }
    let source = std::path::Path::new(&m.source_file);
    // A YAML WARPCHECK_CONFIG was read above; else the `.warpcheck.yaml`
    // nearest the module's source file.
    // A bad one is said once and left out: the module is still analysed,
    // with the settings from the environment, so no warning of it is lost.
    let mut machine = crate::machine::Machine::default();
    let config = match settings::yaml_config_path() {
        Some(path) => Some(path),
        None => Config::find_for(source),
    };
    if let Some(path) = config {
        match Config::read(&path) {
            Ok(c) => {
                if !settings::yaml_config_in_env() {
                    c.apply(&mut opts, &mut sel);
                }
                machine = c.machine().unwrap_or_default();
            }
            Err(e) => {
                let text = cstring(&format!(
                    "warpcheck: {e}; this configuration is ignored for this module"
                ));
                warpcheck_emit_module_warning(module, text.as_ptr());
            }
        }
    }
    // The shapes the host code launches the kernels with, as `check` reads
    // them beside its own device compile.
    opts.launches = launches::host_launches(&m, &opts);
    // Cost bounds only when asked for: a build never waits on an LP.
    let copts = crate::cost::Options {
        attribution: false,
        ..crate::cost::Options::default()
    };
    let run = pipeline::Run {
        selection: &sel,
        machine: &machine,
        bounds: bounds_requested()?.then_some(&copts),
        budget: &opts.budget,
    };
    // The kernels in batches, as `check` has them: only the findings are
    // kept from one batch to the next (ordering and folding need them all).
    let mut findings = Vec::new();
    let mut problems = Vec::new();
    pipeline::in_batches(&m, &opts, |a| {
        let batch = tracing::info_span!("checks").in_scope(|| pipeline::batch(a, &run));
        findings.extend(batch.findings);
        for p in batch.problems {
            if !problems.contains(&p) {
                problems.push(p);
            }
        }
    });
    for p in problems {
        let text = cstring(&format!("warpcheck: {}", p.replacen(" warning:", "", 1)));
        warpcheck_emit_module_warning(module, text.as_ptr());
    }
    let order = pipeline::report_order(&findings);
    let findings = crate::diag::order::permute(findings, &order);
    // The LLVM instruction each finding is reported at, the inlined-at hops
    // to the user's line, and that line.
    let (anchors, places): (Vec<_>, Vec<Place>) = findings
        .iter()
        .map(|f| {
            let func = m.func(f.func);
            let anchor = f.inst.and_then(|i| m.pos_anchor(func, i));
            let loc = anchor.and_then(|i| func.inst(i).loc);
            let (line, hops) = loc.map_or((None, 0), |l| {
                let (pos, hops) = m.user_pos(l);
                (Some(crate::ir::Position::resolve(&m, &pos)), hops)
            });
            ((anchor, hops), Place::of(f, line))
        })
        .unzip();
    let folds = pipeline::folds(&findings, &places);
    let mut warnings = 0;
    for ((f, (anchor, hops)), folded) in findings.iter().zip(anchors).zip(folds) {
        if folded != Fold::Folded && shown_severity(f) != Severity::Note {
            warnings += 1;
        }
        let inst = anchor
            .map(|i| origins.insts[f.func.index()][i.index()] as LLVMValueRef)
            .unwrap_or(std::ptr::null_mut());
        emit(
            f,
            origins.funcs[f.func.index()] as LLVMValueRef,
            inst,
            hops,
            folded,
        );
    }
    // Under `warpcheck build`, this compile's warnings count in its summary.
    if let Ok(file) = std::path::absolute(source) {
        pipeline::log_for_build(&[(warnings, &file)]);
    }
    Ok(())
}

/// The severity a finding is shown with in a build, where a kernel left
/// unanalysed is worth a warning.
fn shown_severity(f: &Finding) -> Severity {
    if f.check == crate::checks::notes::ANALYSIS_BUDGET.kind.name {
        Severity::Warning
    } else {
        f.severity
    }
}

/// Hands one finding to the C++ half: a warning (or error) with its hints
/// as notes under it, and an analysis remark; a folded finding is the
/// remark only.
unsafe fn emit(f: &Finding, func: LLVMValueRef, inst: LLVMValueRef, hops: u32, folded: Fold) {
    let check = cstring(f.check);
    let message = cstring(&f.message);
    let severity = shown_severity(f);
    let (severity, suffix, notes) = match folded {
        Fold::Show(suffix) => {
            // What `check` prints under a warning: its hints and an
            // assumed block shape.
            let notes: Vec<CString> = f.shown_notes().map(|n| cstring(n)).collect();
            (severity as c_int, suffix, notes)
        }
        Fold::Folded => (REMARK_ONLY, String::new(), Vec::new()),
    };
    let suffix = cstring(&suffix);
    let note_ptrs: Vec<*const c_char> = notes.iter().map(|n| n.as_ptr()).collect();
    warpcheck_emit(
        func,
        inst,
        hops,
        severity,
        check.as_ptr(),
        message.as_ptr(),
        suffix.as_ptr(),
        note_ptrs.as_ptr(),
        note_ptrs.len() as u32,
    );
}
