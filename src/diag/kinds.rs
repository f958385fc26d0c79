//! Every kind of finding warpcheck reports, for SARIF's rules and NOLINT's
//! known names. Each kind is declared beside the code that reports it;
//! this list only gathers them, here above the stages that declare them.

use crate::finding::Kind;

/// The checks, in report order, then the notes: a kernel's own, then the
/// cost and time bounds'.
pub fn all() -> Vec<Kind> {
    let checks = crate::checks::all().iter().map(|c| c.kind());
    let kernel_notes = crate::checks::notes::ALL.iter().map(|n| n.kind);
    checks
        .chain(kernel_notes)
        .chain([crate::cost::report::COST_BOUND])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_once_checks_first() {
        let names: Vec<&str> = all().iter().map(|k| k.name).collect();
        assert_eq!(
            names,
            [
                "divergent-branch",
                "uncoalesced-access",
                "bank-conflict",
                "analysis-budget",
                "unread-asm",
                "guessed-shape",
                "cost-bound"
            ]
        );
        assert!(all()
            .iter()
            .all(|k| !k.summary.is_empty() && !k.explanation.is_empty()));
    }
}
