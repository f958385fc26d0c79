//! `--export-fixes FILE`: the checks' mechanical fixes (each check's own,
//! [`crate::checks::Check::fix`]) written as clang-tidy writes them (YAML
//! `Diagnostics` with `Replacements`), for `clang-apply-replacements` or an
//! editor.

use crate::checks::fix::{Fix, Replacement};
use crate::finding::Finding;
use crate::ir::Module;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The fix of each finding that has a mechanical one, by index.
pub fn of(m: &Module, findings: &[Finding]) -> Vec<(usize, Fix)> {
    let source = |p: &Path| crate::files::source_text(p);
    findings
        .iter()
        .enumerate()
        .filter_map(|(i, f)| Some((i, crate::checks::find(f.check)?.fix(m, f, &source)?)))
        .collect()
}

/// `fixes` with each edit once: several conflicts on one array share its
/// padding, and clang-apply-replacements refuses an insertion made twice.
pub fn dedup(fixes: Vec<Fix>) -> Vec<Fix> {
    let mut out: Vec<Fix> = Vec::new();
    for fix in fixes {
        if !out.iter().any(|x| x.replacements == fix.replacements) {
            out.push(fix);
        }
    }
    out
}

/// clang-tidy's document: its keys, in its order.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Document<'a> {
    main_source_file: PathBuf,
    diagnostics: Vec<Diagnostic<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Diagnostic<'a> {
    diagnostic_name: &'a str,
    diagnostic_message: Message<'a>,
    level: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Message<'a> {
    message: &'a str,
    file_path: &'a Path,
    file_offset: usize,
    replacements: &'a [Replacement],
}

/// The fixes as clang-tidy's `--export-fixes` YAML (one document, with
/// `MainSourceFile` empty when several files were checked).
pub fn yaml(main: Option<&Path>, fixes: &[Fix]) -> Result<String, String> {
    let doc = Document {
        main_source_file: main.map(Path::to_path_buf).unwrap_or_default(),
        diagnostics: fixes
            .iter()
            .map(|f| Diagnostic {
                diagnostic_name: &f.name,
                diagnostic_message: Message {
                    message: &f.message,
                    file_path: &f.file,
                    file_offset: f.offset,
                    replacements: &f.replacements,
                },
                level: f.level,
            })
            .collect(),
    };
    let body = serde_saphyr::to_string(&doc).map_err(|e| e.to_string())?;
    Ok(format!("---\n{body}...\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_as_clang_apply_replacements_reads_it() {
        let fix = Fix {
            name: "warpcheck-bank-conflict".into(),
            message: "it's 32-way: 'quoted' # not a comment".into(),
            file: "/p/k.cu".into(),
            offset: 40,
            level: "Warning",
            replacements: vec![Replacement {
                file: "/p/k.cu".into(),
                offset: 20,
                length: 0,
                text: " + 1".into(),
            }],
        };
        let y = yaml(Some(Path::new("/p/k.cu")), &[fix]).unwrap();
        assert!(y.starts_with("---\n") && y.ends_with("\n...\n"), "{y}");
        // What clang-apply-replacements reads of it, read back: every key
        // clang-tidy writes, with the text's leading space kept.
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Doc {
            main_source_file: String,
            diagnostics: Vec<Diagnostic>,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Diagnostic {
            diagnostic_name: String,
            diagnostic_message: Message,
            level: String,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Message {
            message: String,
            file_path: String,
            file_offset: u64,
            replacements: Vec<Edit>,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Edit {
            file_path: String,
            offset: u64,
            length: u64,
            replacement_text: String,
        }
        let parsed: Doc = serde_saphyr::from_str(&y).unwrap();
        assert_eq!(parsed.main_source_file, "/p/k.cu");
        let d = &parsed.diagnostics[0];
        assert_eq!(d.diagnostic_name, "warpcheck-bank-conflict");
        assert_eq!(d.level, "Warning");
        let m = &d.diagnostic_message;
        assert_eq!(m.message, "it's 32-way: 'quoted' # not a comment");
        assert_eq!((m.file_path.as_str(), m.file_offset), ("/p/k.cu", 40));
        let r = &m.replacements[0];
        assert_eq!(
            (r.file_path.as_str(), r.offset, r.length),
            ("/p/k.cu", 20, 0)
        );
        assert_eq!(r.replacement_text, " + 1");
        let none: Doc = serde_saphyr::from_str(&yaml(None, &[]).unwrap()).unwrap();
        assert!(none.main_source_file.is_empty() && none.diagnostics.is_empty());
    }
}
