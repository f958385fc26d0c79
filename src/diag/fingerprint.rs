//! A finding's identity across edits: the check, the kernel, the file's
//! name, the text of the source line, where on that text it is and what
//! the site is (branch, load, store, atomic), but not the line number, so a
//! finding keeps its fingerprint when code above it moves. Findings that
//! agree on all of that (a second copy of a line) are told apart by
//! counting: the nth is `HASH:n`, as GitHub counts its line hashes. SARIF's
//! `partialFingerprints` and `check --baseline` both use it.

use super::text::SourceCache;
use crate::analysis::ModuleAnalysis;
use crate::dataflow::FastMap as HashMap;
use crate::finding::Finding;
use crate::ir::{FuncId, InstId, SiteKind};

/// The key of `partialFingerprints` in SARIF (v1 had no column, kind or
/// count, so its fingerprints never match these).
pub const SARIF_KEY: &str = "warpcheck/v2";

/// FNV-1a, 64 bits: stable across runs and platforms, unlike std's hasher.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Where a finding is, as its fingerprint sees it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Spot<'a> {
    pub check: &'a str,
    pub kernel: &'a str,
    pub file: &'a str,
    /// The source line's text.
    pub line: &'a str,
    /// The 1-based column on that line; 0 when unknown.
    pub column: u32,
    /// `branch`, `load`, `store`, `atomic`, or empty (a kernel's note).
    pub site: &'a str,
}

/// The hash of a spot, before counting: blanks do not count, and the
/// column is counted from the line's first non-blank character, so
/// re-indenting keeps it.
pub fn hash(s: &Spot<'_>) -> String {
    let name = std::path::Path::new(s.file)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(s.file);
    let text: String = s.line.split_whitespace().collect::<Vec<_>>().join(" ");
    let indent = s.line.chars().take_while(|c| c.is_whitespace()).count();
    let column = (s.column as usize).saturating_sub(indent).to_string();
    format!(
        "{:016x}",
        fnv1a(&[s.check, s.kernel, name, &text, &column, s.site])
    )
}

/// The fingerprints of one module's findings, in order: each one's
/// [`hash`] and `:n`, its place among the findings of that hash.
pub fn of_all(
    a: &ModuleAnalysis<'_>,
    findings: &[Finding],
    cache: &mut SourceCache,
) -> Vec<String> {
    let sites: HashMap<(FuncId, InstId), SiteKind> = a
        .kernels
        .iter()
        .flat_map(|k| &k.sites)
        .map(|s| ((s.func, s.inst), s.kind))
        .collect();
    let mut seen: HashMap<String, usize> = HashMap::default();
    findings
        .iter()
        .map(|f| {
            let site = f
                .inst
                .and_then(|i| sites.get(&(f.func, i)))
                .map_or("", |k| k.name());
            let line = f
                .pos
                .as_ref()
                .and_then(|p| cache.line(p))
                .unwrap_or_default();
            let h = hash(&Spot {
                check: f.check,
                kernel: &f.kernel,
                file: f.pos.as_ref().map_or("", |p| p.file.as_str()),
                line: &line,
                column: f.pos.as_ref().map_or(0, |p| p.col),
                site,
            });
            let n = seen.entry(h.clone()).or_default();
            *n += 1;
            format!("{h}:{n}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spot<'a>(file: &'a str, line: &'a str, column: u32, site: &'a str) -> Spot<'a> {
        Spot {
            check: "uncoalesced-access",
            kernel: "k(int*)",
            file,
            line,
            column,
            site,
        }
    }

    #[test]
    fn moves_and_blanks_keep_it_other_text_changes_it() {
        let a = hash(&spot("src/a.cu", "  x = in[2*t];", 7, "load"));
        // Another directory, one more space of indent (the column moves
        // with it), spaces inside the line.
        assert_eq!(a, hash(&spot("/other/a.cu", "   x  = in[2*t];", 8, "load")));
        assert_ne!(a, hash(&spot("src/a.cu", "  x = in[4*t];", 7, "load")));
        // Another place on the line, or another kind of access there.
        assert_ne!(a, hash(&spot("src/a.cu", "  x = in[2*t];", 3, "load")));
        assert_ne!(a, hash(&spot("src/a.cu", "  x = in[2*t];", 7, "store")));
        let other_check = Spot {
            check: "bank-conflict",
            ..spot("src/a.cu", "  x = in[2*t];", 7, "load")
        };
        assert_ne!(a, hash(&other_check));
        assert_eq!(a.len(), 16);
    }
}
