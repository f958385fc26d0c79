//! A finding's identity across edits: the check, the kernel, the file's
//! name and the text of the source line, not the line number, so a finding
//! keeps its fingerprint when code above it moves. SARIF's
//! `partialFingerprints` and `check --baseline` both use it.

use super::text::SourceCache;
use crate::finding::Finding;

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

/// The fingerprint of a finding of `check` in `kernel` at a line of
/// `file` whose text is `line` (blanks do not count).
pub fn of(check: &str, kernel: &str, file: &str, line: &str) -> String {
    let name = std::path::Path::new(file)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(file);
    let text: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{:016x}", fnv1a(&[check, kernel, name, &text]))
}

/// [`of`] for a finding, reading its line through `cache`.
pub fn of_finding(f: &Finding, cache: &mut SourceCache) -> String {
    let (file, text) = match &f.pos {
        Some(p) => (p.file.as_str(), cache.line(p).unwrap_or_default()),
        None => ("", String::new()),
    };
    of(f.check, &f.kernel, file, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_and_blanks_keep_it_other_text_changes_it() {
        let a = of(
            "divergent-branch",
            "k(int*)",
            "src/a.cu",
            "  if (t % 2) x();",
        );
        assert_eq!(
            a,
            of(
                "divergent-branch",
                "k(int*)",
                "/other/a.cu",
                "if (t % 2)   x();"
            )
        );
        assert_ne!(
            a,
            of("divergent-branch", "k(int*)", "src/a.cu", "if (t % 4) x();")
        );
        assert_ne!(
            a,
            of("bank-conflict", "k(int*)", "src/a.cu", "if (t % 2) x();")
        );
        assert_eq!(a.len(), 16);
    }
}
