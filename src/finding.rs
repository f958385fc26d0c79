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
}

impl Finding {
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
