//! One compiler warning for findings that say the same thing at the same
//! place. The plugin's warnings land where clang can place them: at the
//! finding's line, or, without debug info, at the declaration of the
//! function that holds it. Every instantiation of a template, and every
//! unrolled or inlined copy of a line, would otherwise repeat the warning
//! there: 810 identical lines for a file of 120 instantiations, which
//! nobody reads and clang takes time to print. The first of each group
//! stays, with how many it stands for; the rest become remarks only
//! (`-Rpass-analysis=warpcheck` still lists every one).

use crate::finding::{Finding, Severity};
use crate::ir::{template_of, Position};
use std::collections::HashMap;

/// Where clang will show a finding.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Place {
    /// A source line and column (from debug info).
    Line(Position),
    /// No line: the declaration of the function, which every instantiation
    /// of one template shares.
    Decl(String),
}

impl Place {
    /// The place of a finding whose line the host knows (`line`), or else
    /// of its function.
    pub fn of(f: &Finding, line: Option<Position>) -> Place {
        match line {
            Some(p) => Place::Line(p),
            None => Place::Decl(template_of(&f.function)),
        }
    }
}

/// What becomes of each finding, in order.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Fold {
    /// Shown, with this appended to its message (empty when it stands
    /// alone).
    Show(String),
    /// Said already by an earlier finding's warning.
    Folded,
}

/// Groups warnings and errors by place, check, severity and message;
/// notes are never folded (the plugin shows them as remarks only).
pub fn fold(findings: &[Finding], places: &[Place]) -> Vec<Fold> {
    type Key<'a> = (&'a Place, &'static str, Severity, &'a str);
    let mut first: HashMap<Key, usize> = HashMap::new();
    // Per group leader: how many findings and which kernels.
    let mut groups: HashMap<usize, (usize, Vec<&str>)> = HashMap::new();
    let mut out = Vec::with_capacity(findings.len());
    for (i, (f, place)) in findings.iter().zip(places).enumerate() {
        if f.severity == Severity::Note {
            out.push(Fold::Show(String::new()));
            continue;
        }
        let lead = *first
            .entry((
                place,
                f.check,
                f.severity,
                crate::timing::impact::without_share(&f.message),
            ))
            .or_insert(i);
        let g = groups.entry(lead).or_default();
        g.0 += 1;
        if !g.1.contains(&f.kernel.as_str()) {
            g.1.push(&f.kernel);
        }
        out.push(if lead == i {
            Fold::Show(String::new())
        } else {
            Fold::Folded
        });
    }
    for (lead, (count, kernels)) in groups {
        if count > 1 {
            out[lead] = Fold::Show(suffix(
                count,
                &kernels,
                matches!(places[lead], Place::Decl(_)),
            ));
        }
    }
    out
}

/// Kernels named in a folded warning, at most.
const NAMED_KERNELS: usize = 4;

/// ` (and 2 more like it in 3 kernels: halve<8>, halve<16>, halve<64>)`,
/// the kernels named up to [`NAMED_KERNELS`] and counted beyond.
fn suffix(count: usize, kernels: &[&str], lineless: bool) -> String {
    let mut s = format!(" (and {} more like it", count - 1);
    if kernels.len() > 1 {
        s += &format!(" in {} kernels", kernels.len());
        if kernels.len() <= NAMED_KERNELS {
            let names: Vec<String> = kernels.iter().map(|k| instantiation(k)).collect();
            s += &format!(": {}", names.join(", "));
        }
    }
    if lineless {
        s += "; compile with -gline-tables-only to see their lines";
    }
    s.push(')');
    s
}

/// A kernel's name with its template arguments, without its return type
/// and parameters: `void halve<8>(float*)` gives `halve<8>`.
fn instantiation(demangled: &str) -> String {
    let mut depth = 0i32;
    let mut start = 0;
    let mut end = demangled.len();
    for (i, c) in demangled.bytes().enumerate() {
        match c {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b' ' if depth == 0 => start = i + 1,
            b'(' if depth == 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    demangled[start.min(end)..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::FuncId;

    fn finding(kernel: &str, function: &str, message: &str, severity: Severity) -> Finding {
        Finding {
            check: "divergent-branch",
            severity,
            func: FuncId::new(0),
            inst: None,
            pos: None,
            kernel: kernel.into(),
            function: function.into(),
            message: message.into(),
            notes: Vec::new(),
            data: None,
            impact: None,
        }
    }

    fn line(l: u32) -> Place {
        Place::Line(Position {
            file: "a.cu".into(),
            path: "a.cu".into(),
            line: l,
            col: 9,
        })
    }

    #[test]
    fn instantiations_without_lines_share_one_warning() {
        // Three sites in reduce<64> and two in reduce<128>, all "1 of 8":
        // clang would place all five at the template's declaration.
        let w = Severity::Warning;
        let a = "void reduce<64>(float*)";
        let b = "void reduce<128>(float*)";
        let fs = [
            finding(a, a, "1 of 8", w),
            finding(a, a, "1 of 8", w),
            finding(b, b, "1 of 8", w),
            finding(a, a, "2 of 8", w),
            finding(b, b, "1 of 8", w),
            finding(a, a, "1 of 8", w),
        ];
        let places: Vec<Place> = fs.iter().map(|f| Place::of(f, None)).collect();
        let out = fold(&fs, &places);
        let lead = " (and 4 more like it in 2 kernels: reduce<64>, reduce<128>; compile with \
                    -gline-tables-only to see their lines)";
        assert_eq!(out[0], Fold::Show(lead.into()));
        assert_eq!(out[3], Fold::Show(String::new()));
        for i in [1, 2, 4, 5] {
            assert_eq!(out[i], Fold::Folded, "{i}");
        }
    }

    #[test]
    fn shares_do_not_keep_instantiations_apart() {
        let w = Severity::Warning;
        let a = "void halve<8>(float*)";
        let b = "void halve<16>(float*)";
        let fs = [
            finding(a, a, "1 of 8 (~2.5% of the kernel's time)", w),
            finding(b, b, "1 of 8 (~1.7% of the kernel's time)", w),
        ];
        let places = vec![line(6), line(6)];
        let out = fold(&fs, &places);
        let lead = " (and 1 more like it in 2 kernels: halve<8>, halve<16>)";
        assert_eq!(out, [Fold::Show(lead.into()), Fold::Folded]);
        assert_eq!(
            instantiation("void ns::k<int, 2>(float*, S<3>)"),
            "ns::k<int, 2>"
        );
    }

    #[test]
    fn lines_checks_and_severities_keep_findings_apart() {
        let k = "k(float*)";
        let mut err = finding(k, k, "m", Severity::Error);
        err.check = "divergent-branch";
        let mut other = finding(k, k, "m", Severity::Warning);
        other.check = "uncoalesced-access";
        let fs = [
            finding(k, k, "m", Severity::Warning),
            finding(k, k, "m", Severity::Warning),
            finding(k, k, "m", Severity::Warning),
            err,
            other,
            finding(k, k, "m", Severity::Note),
            finding(k, k, "m", Severity::Note),
        ];
        let places = [
            line(3),
            line(4),
            line(3),
            line(3),
            line(3),
            line(3),
            line(3),
        ];
        let out = fold(&fs, &places);
        // Lines 3 and 3 fold, in one kernel: no kernel count, no hint.
        assert_eq!(out[0], Fold::Show(" (and 1 more like it)".into()));
        assert_eq!(out[2], Fold::Folded);
        for i in [1, 3, 4, 5, 6] {
            assert_eq!(out[i], Fold::Show(String::new()), "{i}");
        }
    }
}
