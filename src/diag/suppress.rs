//! `NOLINT` comments, with clang-tidy's forms and rules:
//!
//! * `// NOLINT(warpcheck-divergent-branch)` silences the named checks on
//!   its line, `// NOLINTNEXTLINE(...)` on the next one;
//! * `// NOLINTBEGIN(...)` … `// NOLINTEND(...)` on every line between,
//!   the two naming the same checks; an unmatched one is reported;
//! * names are comma-separated globs (`warpcheck-*`), the prefix optional
//!   (`NOLINT(bank-conflict)`); names of other tools' checks are left
//!   alone, and a `warpcheck-` name that matches none of ours, or a name
//!   one typo from ours, is reported with a "did you mean" (a typo would
//!   otherwise silence nothing);
//! * a bare `NOLINT` (no list) silences nothing unless the configuration
//!   asks for clang-tidy's meaning (every check).

use crate::dataflow::FastMap as HashMap;
use crate::finding::{bare_name, did_you_mean, Finding};
use crate::glob::glob;
use std::path::PathBuf;

/// The comment forms.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Form {
    Line,
    NextLine,
    Begin,
    End,
}

/// One comment: its form, line, and check list (`None` when bare).
#[derive(Clone, Debug, PartialEq)]
struct Comment {
    form: Form,
    line: u32,
    checks: Option<Vec<String>>,
}

/// What one file's comments silence.
#[derive(Default, Debug)]
struct FileRules {
    /// Per line, the globs that apply (`*` for a bare comment honoured).
    lines: HashMap<u32, Vec<String>>,
    /// Problems to report: unmatched pairs, unknown names.
    problems: Vec<String>,
}

/// Finds the comments on each line of `text` (1-based lines).
fn comments(text: &str) -> Vec<Comment> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("NOLINT") {
            let after = &rest[at + "NOLINT".len()..];
            let (form, after) = [
                ("NEXTLINE", Form::NextLine),
                ("BEGIN", Form::Begin),
                ("END", Form::End),
            ]
            .into_iter()
            .find_map(|(w, f)| after.strip_prefix(w).map(|a| (f, a)))
            .unwrap_or((Form::Line, after));
            let checks = after.strip_prefix('(').and_then(|a| {
                a.find(')').map(|close| {
                    a[..close]
                        .split(',')
                        .map(|c| c.trim().to_string())
                        .filter(|c| !c.is_empty())
                        .collect()
                })
            });
            out.push(Comment {
                form,
                line: n as u32 + 1,
                checks,
            });
            rest = after;
        }
    }
    out
}

impl FileRules {
    fn new(file: &str, text: &str, bare: bool, known: &[String]) -> FileRules {
        let mut r = FileRules::default();
        let mut open: Vec<&Comment> = Vec::new();
        let all = comments(text);
        for c in &all {
            let globs = match &c.checks {
                Some(list) => {
                    for g in list.iter().filter(|g| !g.contains('*')) {
                        if known.iter().any(|k| bare_name(k) == bare_name(g)) {
                            continue;
                        }
                        // Ours by its prefix, or by being one typo from ours.
                        let hint = did_you_mean(g, known.iter().map(String::as_str));
                        if g.starts_with("warpcheck-") || !hint.is_empty() {
                            r.problems.push(format!(
                                "{file}:{}: warning: NOLINT names an unknown check '{g}'{hint} (see `warpcheck checks`)",
                                c.line
                            ));
                        }
                    }
                    list.clone()
                }
                None if bare => vec!["*".to_string()],
                None => Vec::new(),
            };
            match c.form {
                Form::Line => r.add(c.line, &globs),
                Form::NextLine => r.add(c.line + 1, &globs),
                Form::Begin => open.push(c),
                Form::End => match open.iter().rposition(|b| b.checks == c.checks) {
                    Some(i) => {
                        let b = open.remove(i);
                        let globs = match &b.checks {
                            Some(l) => l.clone(),
                            None if bare => vec!["*".to_string()],
                            None => Vec::new(),
                        };
                        for line in b.line..=c.line {
                            r.add(line, &globs);
                        }
                    }
                    None => r.problems.push(format!(
                        "{file}:{}: warning: unmatched NOLINTEND without a NOLINTBEGIN naming the same checks",
                        c.line
                    )),
                },
            }
        }
        for b in open {
            r.problems.push(format!(
                "{file}:{}: warning: unmatched NOLINTBEGIN without a NOLINTEND naming the same checks",
                b.line
            ));
        }
        r
    }

    fn add(&mut self, line: u32, globs: &[String]) {
        if !globs.is_empty() {
            self.lines.entry(line).or_default().extend_from_slice(globs);
        }
    }

    fn silences(&self, line: u32, tag: &str) -> bool {
        self.lines
            .get(&line)
            .is_some_and(|gs| gs.iter().any(|g| glob(g, tag) || glob(g, bare_name(tag))))
    }
}

/// Drops the findings a `NOLINT` comment silences. Returns what is left
/// and the comments' problems (each once, as `file:line: warning: …`).
/// `bare`: a `NOLINT` without a list silences every check.
pub fn filter(findings: Vec<Finding>, bare: bool) -> (Vec<Finding>, Vec<String>) {
    let known: Vec<String> = super::kinds::all().iter().map(|k| k.tag()).collect();
    let mut files: HashMap<PathBuf, FileRules> = HashMap::default();
    let mut problems = Vec::new();
    for pos in findings.iter().filter_map(|f| f.pos.as_ref()) {
        if !files.contains_key(&pos.path) {
            let text = crate::files::source_text(&pos.path).unwrap_or_default();
            let r = FileRules::new(&pos.file, &text, bare, &known);
            problems.extend(r.problems.iter().cloned());
            files.insert(pos.path.clone(), r);
        }
    }
    let kept = findings
        .into_iter()
        .filter(|f| {
            f.pos.as_ref().is_none_or(|pos| {
                !files
                    .get(&pos.path)
                    .is_some_and(|r| r.silences(pos.line, &f.tag()))
            })
        })
        .collect();
    (kept, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<String> {
        ["warpcheck-divergent-branch", "warpcheck-bank-conflict"]
            .map(String::from)
            .to_vec()
    }

    fn rules(text: &str, bare: bool) -> FileRules {
        FileRules::new("k.cu", text, bare, &known())
    }

    #[test]
    fn the_forms_and_their_lines() {
        let r = rules(
            "a // NOLINT(warpcheck-divergent-branch)\n\
             // NOLINTNEXTLINE(warpcheck-*)\n\
             b\n\
             // NOLINTBEGIN(warpcheck-bank-conflict)\n\
             c\n\
             // NOLINTEND(warpcheck-bank-conflict)\n\
             d\n",
            false,
        );
        let d = "warpcheck-divergent-branch";
        let bank = "warpcheck-bank-conflict";
        assert!(r.silences(1, d) && !r.silences(1, bank));
        assert!(!r.silences(2, d) && r.silences(3, d) && r.silences(3, bank));
        assert!((4..=6).all(|l| r.silences(l, bank) && !r.silences(l, d)));
        assert!(!r.silences(7, bank));
        assert!(r.problems.is_empty(), "{:?}", r.problems);
    }

    #[test]
    fn names_without_the_prefix() {
        let r = rules(
            "a // NOLINT(divergent-branch)\n\
             b // NOLINT(bank-*)\n\
             c // NOLINT(bank-conflcit, readability-magic-numbers)\n",
            false,
        );
        let d = "warpcheck-divergent-branch";
        let bank = "warpcheck-bank-conflict";
        assert!(r.silences(1, d) && !r.silences(1, bank));
        assert!(r.silences(2, bank) && !r.silences(2, d));
        // The misspelt name is said; clang-tidy's own is left alone.
        assert_eq!(
            r.problems,
            [
                "k.cu:3: warning: NOLINT names an unknown check 'bank-conflcit' \
              (did you mean 'warpcheck-bank-conflict'?) (see `warpcheck checks`)"
            ]
        );
    }

    #[test]
    fn bare_comments_need_the_configuration() {
        let text = "a // NOLINT\n// NOLINTNEXTLINE\nb\n";
        let tag = "warpcheck-divergent-branch";
        let off = rules(text, false);
        assert!(!off.silences(1, tag) && !off.silences(3, tag));
        let on = rules(text, true);
        assert!(on.silences(1, tag) && on.silences(3, tag));
    }

    #[test]
    fn unmatched_pairs_and_unknown_names_are_reported() {
        let r = rules(
            "// NOLINTBEGIN(warpcheck-divergent-branch)\n\
             x\n\
             // NOLINTEND(warpcheck-bank-conflict)\n\
             y // NOLINT(warpcheck-divergnt-branch, bugprone-foo)\n",
            false,
        );
        assert_eq!(r.problems.len(), 3, "{:?}", r.problems);
        assert!(r.problems[0].starts_with("k.cu:3: warning: unmatched NOLINTEND"));
        assert!(r.problems[1].contains(
            "k.cu:4: warning: NOLINT names an unknown check 'warpcheck-divergnt-branch' \
             (did you mean 'warpcheck-divergent-branch'?)"
        ));
        assert!(r.problems[2].starts_with("k.cu:1: warning: unmatched NOLINTBEGIN"));
        // The unmatched BEGIN silences nothing.
        assert!(!r.silences(2, "warpcheck-divergent-branch"));
    }
}
