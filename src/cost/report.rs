//! Bounds as the reports show them: the JSON `bounds` object of a kernel
//! (a contract, like the rest of the JSON: fields are added, never
//! renamed) and the note at the kernel's line that text output and the
//! plugin's remarks carry.

use super::bound::{Bound, Names, TermJson};
use super::{KernelBounds, MetricBound, Share};
use crate::analysis::KernelAnalysis;
use crate::finding::{Finding, Kind, Severity};
use crate::ir::Module;
use crate::ir::Position;
use serde::Serialize;
use std::collections::BTreeMap;

/// The note of a kernel's bounds, which the time notes share.
pub const COST_BOUND: Kind = Kind {
    name: "cost-bound",
    summary: "a kernel's per-warp cost bounds (check --bounds)",
    explanation: "Upper bounds per warp on sectors, bank conflicts, divergent branches and \
         steps, as polynomials in the kernel's parameters (RaCuda's analysis, solved as an LP).",
};

#[derive(Serialize, Debug, Clone)]
pub struct ShareJson {
    pub file: String,
    pub line: u32,
    pub bound: String,
    pub terms: Vec<TermJson>,
}

#[derive(Serialize, Debug, Clone)]
pub struct MetricJson {
    /// The per-warp bound for people (`no bound` when there is none).
    pub bound: String,
    /// The machine form: monomials with `[num, den]` coefficients over
    /// factors a script can evaluate; absent when there is no bound. When
    /// the bound is the least of several polynomials, the first of them
    /// (a bound on its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terms: Option<Vec<TermJson>>,
    /// When the bound is the least of several polynomials: each in the
    /// machine form of `terms` (the first is `terms`); the bound is their
    /// minimum. Absent for one polynomial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pieces: Option<Vec<Vec<TermJson>>>,
    /// Why there is no bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The part of the bound each loop carries, by its header's line.
    pub loops: Vec<ShareJson>,
    /// The part each source line costs.
    pub lines: Vec<ShareJson>,
}

#[derive(Serialize, Debug, Clone)]
pub struct BoundsJson {
    /// Per metric (`sectors`, `conflicts`, `divwarps`, `steps`).
    pub per_warp: BTreeMap<&'static str, MetricJson>,
    /// A launch costs at most the per-warp bound times this times the
    /// number of blocks.
    pub warps_per_block: u32,
    pub lp_variables: usize,
    pub lp_rows: usize,
    pub seconds: f64,
}

fn file_name(m: &Module, s: &Share) -> String {
    s.file
        .map(|f| m.file(f).path().display().to_string())
        .unwrap_or_default()
}

fn shares(m: &Module, names: &Names, list: &[Share]) -> Vec<ShareJson> {
    list.iter()
        .map(|s| ShareJson {
            file: file_name(m, s),
            line: s.line,
            bound: names.render(&s.bound),
            terms: names.machine(&s.bound),
        })
        .collect()
}

fn metric_json(m: &Module, names: &Names, mb: &MetricBound) -> MetricJson {
    let (bound, terms, reason) = match &mb.bound {
        Ok(b) => (names.render_bound(b), Some(names.machine(b.first())), None),
        Err(e) => ("no bound".to_string(), None, Some(e.clone())),
    };
    let pieces = mb
        .bound
        .as_ref()
        .ok()
        .filter(|b| b.pieces().len() > 1)
        .map(|b| b.pieces().iter().map(|p| names.machine(p)).collect());
    MetricJson {
        bound,
        terms,
        pieces,
        reason,
        loops: shares(m, names, &mb.loops),
        lines: shares(m, names, &mb.lines),
    }
}

pub fn json(m: &Module, kb: &KernelBounds) -> BoundsJson {
    BoundsJson {
        per_warp: kb
            .metrics
            .iter()
            .map(|mb| (mb.metric.name(), metric_json(m, &kb.names, mb)))
            .collect(),
        warps_per_block: kb.warps_per_block,
        lp_variables: kb.lp_vars,
        lp_rows: kb.lp_rows,
        seconds: kb.seconds,
    }
}

fn text(names: &Names, b: &Result<Bound, String>) -> String {
    match b {
        Ok(b) => names.render_bound(b),
        Err(_) => "no bound".into(),
    }
}

/// The note at the kernel's line: each metric's bound, and which loop
/// carries the most of the first bounded metric.
pub fn note(m: &Module, k: &KernelAnalysis, kb: &KernelBounds) -> Finding {
    let parts: Vec<String> = kb
        .metrics
        .iter()
        .map(|mb| format!("{} ≤ {}", mb.metric.name(), text(&kb.names, &mb.bound)))
        .collect();
    let mut notes = Vec::new();
    for mb in &kb.metrics {
        if let Err(e) = &mb.bound {
            notes.push(format!("no {} bound: {e}", mb.metric.name()));
        }
        for s in &mb.loops {
            notes.push(format!(
                "{} in the loop at line {}: {}",
                mb.metric.name(),
                s.line,
                kb.names.render(&s.bound)
            ));
        }
    }
    kernel_note(m, k, format!("cost per warp: {}", parts.join("; ")), notes)
}

/// A `cost-bound` note at the kernel's line.
pub fn kernel_note(m: &Module, k: &KernelAnalysis, message: String, notes: Vec<String>) -> Finding {
    let func = m.func(k.kernel);
    Finding {
        check: COST_BOUND.name,
        severity: Severity::Note,
        func: k.kernel,
        inst: None,
        pos: func.loc.as_ref().map(|p| Position::resolve(m, p)),
        kernel: func.demangled.clone(),
        function: func.demangled.clone(),
        message,
        notes,
        data: None,
        impact: None,
    }
}
