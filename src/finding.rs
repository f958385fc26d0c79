//! What warpcheck reports: a [`Finding`] with its [`Severity`]. The checks,
//! the cost and time notes make them and `diag` shows them, so the type
//! sits low, beside `ir`, and depends on nothing else.

use crate::ir::{FuncId, InstId, Position};

/// Worst first (the order dedupe keeps by); the numbers are what the
/// plugin's C++ half expects.
#[derive(Copy, Clone, PartialEq, Eq, Debug, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A warning the configuration's `WarningsAsErrors` names.
    Error = 2,
    Warning = 0,
    Note = 1,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Error => "error",
        }
    }
}

/// One thing warpcheck reports.
#[derive(Clone, PartialEq, Debug)]
pub struct Finding {
    /// Stable check name, e.g. `divergent-branch`.
    pub check: &'static str,
    pub severity: Severity,
    pub func: FuncId,
    pub inst: Option<InstId>,
    pub pos: Option<Position>,
    /// Demangled kernel and function names.
    pub kernel: String,
    pub function: String,
    pub message: String,
    /// Extra lines shown with `--explain` (the dependence chain).
    pub notes: Vec<String>,
    /// The check's figures, for the JSON `data` object.
    pub data: Option<serde_json::Value>,
    /// What the finding costs, as estimated from the time model; `None`
    /// until the impact stage (`timing::impact`) has run.
    pub impact: Option<Impact>,
}

/// A finding's estimated cost: cycles of a block in the time model, and
/// that as a share of the kernel's estimated cycles. Unknown (`None`) for
/// findings with no site of their own or whose kernel the model cannot
/// cost, with the reason.
#[derive(Clone, PartialEq, Debug, Default, serde::Serialize)]
pub struct Impact {
    pub cycles: Option<f64>,
    /// From 0 to 1.
    pub share: Option<f64>,
    /// The estimate's inputs, by name (`executions`, `splitting_warps`,
    /// `side_issues`, `excess_sectors`, `kernel_cycles`, ...).
    pub inputs: std::collections::BTreeMap<&'static str, f64>,
    /// Why there is no estimate, or why the finding was made a note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Impact {
    /// The inputs that findings made one (a struct copy's pieces, accesses
    /// of one cause) add up; the others are the first's.
    pub const SUMMED: [&'static str; 3] = ["excess_sectors", "excess_wavefronts", "extra_requests"];

    /// No estimate, for `reason`.
    pub fn unknown(reason: impl Into<String>) -> Impact {
        Impact {
            reason: Some(reason.into()),
            ..Impact::default()
        }
    }
}

/// How a note under a warning starts when the kernel's block shape was
/// assumed, not known: said with every warning, as hints are.
pub const ASSUMED_SHAPE: &str = "block shape assumed:";

impl Finding {
    /// The notes shown under the warning wherever it is shown (a compiler
    /// note each): its hints and an assumed block shape. The others (the
    /// dependence chain) need `--explain`.
    pub fn shown_notes(&self) -> impl Iterator<Item = &String> {
        self.notes
            .iter()
            .filter(|n| n.starts_with("hint:") || n.starts_with(ASSUMED_SHAPE))
    }

    /// The flag-style name shown in brackets: `warpcheck-<check>`.
    pub fn tag(&self) -> String {
        tag(self.check)
    }
}

/// A kind of finding, a check's or a note's: what `warpcheck checks` and
/// `explain`, SARIF's rules and NOLINT's known names read. Each is declared
/// once, beside the code that reports it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Kind {
    /// Stable name, used in `[warpcheck-<name>]`, `--disable` and NOLINT.
    pub name: &'static str,
    /// One line for `warpcheck checks`.
    pub summary: &'static str,
    /// What it finds, why it matters and what to do.
    pub explanation: &'static str,
}

impl Kind {
    /// The flag-style name: `warpcheck-<name>`.
    pub fn tag(&self) -> String {
        tag(self.name)
    }
}

fn tag(name: &str) -> String {
    format!("warpcheck-{name}")
}

/// A check's name as users write it, with or without the `warpcheck-`
/// prefix that warnings show, without it: every place a check is named
/// accepts both spellings.
pub fn bare_name(name: &str) -> &str {
    name.strip_prefix("warpcheck-").unwrap_or(name)
}

/// " (did you mean 'warpcheck-X'?)" for the known name nearest a misspelt
/// one, by edit distance over the bare names; empty when none is near
/// (more than a third of the name's letters, and at least 2, apart).
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let name = bare_name(name);
    let limit = (name.chars().count() / 3).max(2);
    known
        .into_iter()
        .map(|k| (strsim::levenshtein(name, bare_name(k)), bare_name(k)))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| format!(" (did you mean '{}'?)", tag(k)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_both_spellings() {
        assert_eq!(bare_name("warpcheck-bank-conflict"), "bank-conflict");
        assert_eq!(bare_name("bank-conflict"), "bank-conflict");
    }

    #[test]
    fn suggestions_only_when_near() {
        let known = ["divergent-branch", "bank-conflict", "uncoalesced-access"];
        assert_eq!(
            did_you_mean("warpcheck-divergnt-branch", known),
            " (did you mean 'warpcheck-divergent-branch'?)"
        );
        // Two letters swapped are two substitutions.
        assert_eq!(
            did_you_mean("bnak-conflict", known),
            " (did you mean 'warpcheck-bank-conflict'?)"
        );
        assert_eq!(did_you_mean("coalescing", known), "");
    }
}
