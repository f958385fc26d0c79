//! The comparison as text and as totals by reason.

use super::{FunctionComparison, ItemKind, Tally};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Items of each kind that one reason accounts for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReasonCount {
    pub reason: String,
    pub branches: usize,
    pub accesses: usize,
    pub values: usize,
}

/// Totals over any number of compared functions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub branches: Tally,
    pub accesses: Tally,
    pub values: Tally,
    /// LLVM divergent, warpcheck uniform.
    pub llvm_only: Vec<ReasonCount>,
    /// warpcheck dependent, LLVM uniform.
    pub warpcheck_only: Vec<ReasonCount>,
    /// Functions that could not be matched with LLVM's output.
    pub skipped: usize,
}

impl Summary {
    pub fn of(functions: &[FunctionComparison]) -> Summary {
        let mut s = Summary::default();
        let mut llvm_only: BTreeMap<String, ReasonCount> = BTreeMap::new();
        let mut ours_only: BTreeMap<String, ReasonCount> = BTreeMap::new();
        for fc in functions {
            s.skipped += usize::from(fc.skipped.is_some());
            for (total, part) in [
                (&mut s.branches, fc.branches),
                (&mut s.accesses, fc.accesses),
                (&mut s.values, fc.values),
            ] {
                total.agree += part.agree;
                total.llvm_only += part.llvm_only;
                total.warpcheck_only += part.warpcheck_only;
            }
            for d in &fc.disagreements {
                let table = if d.llvm_divergent {
                    &mut llvm_only
                } else {
                    &mut ours_only
                };
                let row = table
                    .entry(d.reason.clone())
                    .or_insert_with(|| ReasonCount {
                        reason: d.reason.clone(),
                        ..ReasonCount::default()
                    });
                match d.kind {
                    ItemKind::Branch => row.branches += 1,
                    ItemKind::Access => row.accesses += 1,
                    ItemKind::Value => row.values += 1,
                }
            }
        }
        s.llvm_only = llvm_only.into_values().collect();
        s.warpcheck_only = ours_only.into_values().collect();
        s
    }

    /// Totals and the two tables of reasons.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<12} {:>8} {:>22} {:>22}",
            "", "agree", "LLVM-only divergent", "warpcheck-only dep."
        );
        for (name, t) in [
            ("branches", self.branches),
            ("accesses", self.accesses),
            ("values", self.values),
        ] {
            let _ = writeln!(
                out,
                "{name:<12} {:>8} {:>22} {:>22}",
                t.agree, t.llvm_only, t.warpcheck_only
            );
        }
        for (title, rows) in [
            ("LLVM divergent, warpcheck uniform", &self.llvm_only),
            ("warpcheck dependent, LLVM uniform", &self.warpcheck_only),
        ] {
            let _ = writeln!(out, "\n{title}, by reason:");
            if rows.is_empty() {
                let _ = writeln!(out, "  (none)");
                continue;
            }
            let width = rows
                .iter()
                .map(|r| r.reason.chars().count())
                .max()
                .unwrap_or(0);
            let _ = writeln!(
                out,
                "  {:<width$} {:>8} {:>8} {:>8}",
                "reason", "branches", "accesses", "values"
            );
            for r in rows {
                let _ = writeln!(
                    out,
                    "  {:<width$} {:>8} {:>8} {:>8}",
                    r.reason, r.branches, r.accesses, r.values
                );
            }
        }
        if self.skipped > 0 {
            let _ = writeln!(
                out,
                "\n{} function(s) could not be matched with LLVM's output",
                self.skipped
            );
        }
        out
    }
}

/// Per function, the branches, accesses and values the analyses disagree
/// on (functions where they agree are summarised in one line).
pub fn render_text(file: &str, functions: &[FunctionComparison]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "uniformity: {file}");
    for fc in functions {
        let _ = write!(out, "  {} in kernel {}: ", fc.function, fc.kernel);
        if let Some(why) = &fc.skipped {
            let _ = writeln!(out, "not compared ({why})");
            continue;
        }
        if fc.disagreements.is_empty() {
            let _ = writeln!(out, "agree");
            continue;
        }
        let _ = writeln!(out, "{} disagreement(s)", fc.disagreements.len());
        for d in &fc.disagreements {
            let (llvm, ours) = (
                if d.llvm_divergent {
                    "divergent"
                } else {
                    "uniform"
                },
                if d.warpcheck_dependent {
                    "dependent"
                } else {
                    "uniform"
                },
            );
            let _ = writeln!(
                out,
                "    line {:>4} {:<6} {:<24} LLVM {llvm}, warpcheck {ours}: {}",
                d.line, d.what, d.value, d.reason
            );
        }
    }
    out
}
