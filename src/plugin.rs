//! The pass plugin's Rust half: the entry point opt and clang look up, and
//! the analysis run on a module they lend us.
//!
//! Configuration cannot come from `-mllvm` (clang does not pass it to
//! plugins), so it comes from the environment: `WARPCHECK_BLOCK_DIM`,
//! `WARPCHECK_DISABLE` (comma-separated check names), `WARPCHECK_BUDGET`
//! (`time=2,ifds-facts=N,acf-exprs=N`), or a file named by
//! `WARPCHECK_CONFIG` with `block-dim = X,Y,Z`, `disable = a,b` and
//! `budget-time = 2` (and `budget-ifds-facts`, `budget-acf-exprs`,
//! `budget-lp-rows`, `budget-memory` in MB) lines. Cost bounds (a note per kernel) only with
//! `WARPCHECK_BOUNDS=1` or `bounds = on`.
//! `WARPCHECK_JOBS=N` (or `jobs = N`) analyses a module's kernels on N
//! threads (default 1), for a single compile that waits on a large file.
//! `WARPCHECK_LOG=debug` prints the stages' spans to stderr.
//!
//! The default budget is [`Budget::PLUGIN`]: a build must never wait on
//! us. A kernel over budget gets one warning and the compile goes on. The
//! kernels are analysed in batches as `check` does them
//! ([`analysis::in_batches`]), so memory follows the batch, not the module,
//! and a kernel that would start past the memory budget is left out with
//! that warning.

use crate::analysis::{self, BlockDim, BlockDimSource, Options};
use crate::budget::Budget;
use crate::config::{Config, Selection};
use crate::diag::fold::{self, Fold, Place};
use crate::finding::Severity;
use crate::ir;
use crate::ir::major::PassPluginLibraryInfo;
use crate::taint::ifds::IfdsTaint;
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
    let (m, origins) = tracing::info_span!("load").in_scope(|| ir::llvm::from_raw(module));
    // A YAML WARPCHECK_CONFIG was read above; else the `.warpcheck.yaml`
    // nearest the module's source file.
    // A bad one is said once and left out: the module is still analysed,
    // with the settings from the environment, so no warning of it is lost.
    if !yaml_config_in_env() {
        if let Some(path) = Config::find_for(std::path::Path::new(&m.source_file)) {
            match Config::read(&path) {
                Ok(c) => c.apply(&mut opts, &mut sel),
                Err(e) => {
                    let text = cstring(&format!(
                        "warpcheck: {e}; this configuration is ignored for this module"
                    ));
                    warpcheck_emit_module_warning(module, text.as_ptr());
                }
            }
        }
    }
    // Cost bounds only when asked for: a build never waits on an LP.
    let bounds = bounds_requested()?;
    let machine = bounds.then(|| Config::machine_near(std::path::Path::new(&m.source_file)));
    // The kernels in batches, as `check` has them: only the findings are
    // kept from one batch to the next (folding and NOLINT need them all).
    let mut findings = Vec::new();
    analysis::in_batches(&m, &opts, &IfdsTaint, |a| {
        let _span = tracing::info_span!("checks").entered();
        let figures = crate::checks::measure_all(a);
        findings.extend(sel.findings(a, &figures));
        if let Some(machine) = &machine {
            let copts = crate::cost::Options {
                attribution: false,
                ..crate::cost::Options::default()
            };
            let kbs = crate::cost::bound_module(a, &figures, &copts, &opts.budget);
            for (k, kb) in a.kernels.iter().zip(&kbs) {
                findings.push(crate::cost::report::note(&m, k, kb));
            }
            let notes = crate::timing::report::module_notes(a, &figures, machine, &opts.budget);
            findings.extend(notes);
        }
    });
    let (findings, problems) = crate::diag::suppress::filter(findings, sel.bare_nolint);
    for p in problems {
        let text = cstring(&format!("warpcheck: {}", p.replacen(" warning:", "", 1)));
        warpcheck_emit_module_warning(module, text.as_ptr());
    }
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
    let folds = fold::fold(&findings, &places);
    for ((f, (anchor, hops)), folded) in findings.iter().zip(anchors).zip(folds) {
        let inst = anchor
            .map(|i| origins.insts[f.func.index()][i.index()] as LLVMValueRef)
            .unwrap_or(std::ptr::null_mut());
        let check = cstring(f.check);
        let message = cstring(&f.message);
        // In a build, a kernel left unanalysed is worth a warning.
        let severity = if f.check == crate::checks::notes::ANALYSIS_BUDGET.kind.name {
            Severity::Warning
        } else {
            f.severity
        };
        let (severity, suffix) = match folded {
            Fold::Show(suffix) => (severity as c_int, suffix),
            Fold::Folded => (REMARK_ONLY, String::new()),
        };
        let suffix = cstring(&suffix);
        warpcheck_emit(
            origins.funcs[f.func.index()] as LLVMValueRef,
            inst,
            hops,
            severity,
            check.as_ptr(),
            message.as_ptr(),
            suffix.as_ptr(),
        );
    }
    Ok(())
}

/// `on`/`off` (also `1`/`0`, `true`/`false`, `yes`/`no`).
fn on_off(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" => Ok(true),
        "off" | "0" | "false" | "no" | "" => Ok(false),
        other => Err(format!("bounds: expected on or off, got '{other}'")),
    }
}

/// Whether the build asked for cost bounds: `WARPCHECK_BOUNDS=1`, or
/// `bounds = on` in a `key = value` `WARPCHECK_CONFIG` file.
pub fn bounds_requested() -> Result<bool, String> {
    if let Ok(v) = std::env::var("WARPCHECK_BOUNDS") {
        return on_off(&v).map_err(|e| format!("WARPCHECK_BOUNDS: {e}"));
    }
    let Ok(path) = std::env::var("WARPCHECK_CONFIG") else {
        return Ok(false);
    };
    if yaml_config_in_env() {
        return Ok(false);
    }
    let text = env_config_text(&path)?;
    let mut on = false;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some((k, v)) = line.split_once('=') {
            if k.trim() == "bounds" {
                on = on_off(v)?;
            }
        }
    }
    Ok(on)
}

/// The text of a `key = value` `WARPCHECK_CONFIG` file: a regular file
/// within the configuration's size limit (a FIFO would block the compile).
fn env_config_text(path: &str) -> Result<String, String> {
    crate::files::read_text(
        std::path::Path::new(path),
        "configuration",
        crate::config::MAX_BYTES,
    )
    .map_err(|e| format!("WARPCHECK_CONFIG={e}"))
}

/// Whether `WARPCHECK_CONFIG` names a `.warpcheck.yaml`-style file
/// (`.yaml`/`.yml`) rather than the `key = value` form.
fn yaml_config_in_env() -> bool {
    std::env::var("WARPCHECK_CONFIG").is_ok_and(|p| p.ends_with(".yaml") || p.ends_with(".yml"))
}

/// Reads the plugin's options and what it reports from the environment or
/// a config file.
pub fn options_from_env() -> Result<(Options, Selection), String> {
    let mut sel = Selection::default();
    let mut opts = Options {
        // Diagnostics carry the message only.
        no_explanations: true,
        budget: Budget::plugin(),
        // One thread: measured on the templated reduction, two threads
        // took 12 ms off the compile's wall time but added 30 ms of CPU
        // (fresh thread heaps), a bad trade in a `make -j` build.
        jobs: 1,
        ..Options::default()
    };
    let mut apply = |key: &str, value: &str, source| -> Result<(), String> {
        match key {
            "block-dim" | "block_dim" => opts.block_dim = Some(BlockDim::parse(value, source)?),
            // Read by `bounds_requested`.
            "bounds" => {
                on_off(value)?;
            }
            "disable" => sel.disabled.extend(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            ),
            "jobs" => {
                opts.jobs = value
                    .parse()
                    .map_err(|_| format!("jobs: expected a thread count, got '{value}'"))?
            }
            "budget" => {
                for kv in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let (k, v) = kv
                        .split_once('=')
                        .ok_or_else(|| format!("budget: expected KEY=VALUE, got '{kv}'"))?;
                    opts.budget.set(k.trim(), v)?;
                }
            }
            other => match other.strip_prefix("budget-") {
                Some(k) => opts.budget.set(k, value)?,
                None => return Err(format!("unknown configuration key '{other}'")),
            },
        }
        Ok(())
    };
    let yaml = match std::env::var("WARPCHECK_CONFIG") {
        Ok(path) if yaml_config_in_env() => Some(Config::read(std::path::Path::new(&path))?),
        _ => None,
    };
    if let (Ok(path), None) = (std::env::var("WARPCHECK_CONFIG"), &yaml) {
        let text = env_config_text(&path)?;
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| format!("{path}:{}: expected 'key = value'", n + 1))?;
            apply(k.trim(), v.trim(), BlockDimSource::Config)
                .map_err(|e| format!("{path}:{}: {e}", n + 1))?;
        }
    }
    if let Ok(v) = std::env::var("WARPCHECK_BLOCK_DIM") {
        apply("block-dim", &v, BlockDimSource::Config)
            .map_err(|e| format!("WARPCHECK_BLOCK_DIM: {e}"))?;
    }
    if let Ok(v) = std::env::var("WARPCHECK_DISABLE") {
        apply("disable", &v, BlockDimSource::Config)?;
    }
    if let Ok(v) = std::env::var("WARPCHECK_JOBS") {
        apply("jobs", &v, BlockDimSource::Config).map_err(|e| format!("WARPCHECK_JOBS: {e}"))?;
    }
    if let Ok(v) = std::env::var("WARPCHECK_BUDGET") {
        apply("budget", &v, BlockDimSource::Config)
            .map_err(|e| format!("WARPCHECK_BUDGET: {e}"))?;
    }
    if let Some(c) = yaml {
        c.apply(&mut opts, &mut sel);
    }
    Ok((opts, sel))
}
