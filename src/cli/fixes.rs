//! `--export-fixes FILE`: the mechanical fixes as clang-tidy writes them
//! (YAML `Diagnostics` with `Replacements`), for `clang-apply-replacements`
//! or an editor.
//!
//! One fix is mechanical: a bank conflict on a shared array whose rows are
//! a multiple of 32 four-byte words long, where every row starts in bank 0
//! and a warp reading a column meets itself in one bank. One more element
//! per row (`tile[32][32 + 1]`) starts row r in bank r mod 32, so the 32
//! rows of a column fall in 32 banks. Anything else (other element sizes,
//! conflicts from the index arithmetic, an array declared elsewhere) has no
//! exported fix: the warning's hint says what to do.

use crate::finding::{Finding, Severity};
use crate::ir::{Const, Function, GlobalId, Module, Opcode, TypeKind, Value};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One text edit: insert or replace `length` bytes at `offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    pub file: PathBuf,
    pub offset: usize,
    pub length: usize,
    pub text: String,
}

/// A diagnostic with its fix, as clang-tidy exports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub name: String,
    pub message: String,
    pub file: PathBuf,
    /// Byte offset of the diagnostic's position in `file`.
    pub offset: usize,
    pub level: &'static str,
    pub replacements: Vec<Replacement>,
}

/// The fix of each finding that has a mechanical one, by index.
pub fn of(m: &Module, findings: &[Finding]) -> Vec<(usize, Fix)> {
    findings
        .iter()
        .enumerate()
        .filter_map(|(i, f)| Some((i, padding(m, f)?)))
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

/// The padding fix for a bank-conflict warning, if it is mechanical.
fn padding(m: &Module, f: &Finding) -> Option<Fix> {
    if f.check != "bank-conflict" || f.severity == Severity::Note {
        return None;
    }
    let func = m.func(f.func);
    let address = func.inst(f.inst?).address()?;
    let g = shared_array(m, func, address)?;
    let global = m.global(g);
    // [rows x [cols x 4-byte element]], each row a multiple of 128 bytes.
    let TypeKind::Array(row, _) = m.types.kind(global.value_ty) else {
        return None;
    };
    let TypeKind::Array(elem, cols) = m.types.kind(*row) else {
        return None;
    };
    let row_bytes = crate::hw::SHARED_BANKS * crate::hw::BANK_WIDTH_BYTES;
    if m.types.size(*elem) != crate::hw::BANK_WIDTH_BYTES || (cols * 4) % row_bytes != 0 {
        return None;
    }
    let pos = f.pos.as_ref()?;
    let text = crate::files::source_text(&pos.path)?;
    let at = inner_dimension_end(&text, &m.global_label(g), owner_line(m, g))?;
    Some(Fix {
        name: f.tag(),
        message: f.message.clone(),
        file: pos.path.clone(),
        offset: line_col_offset(&text, pos.line, pos.col)?,
        level: if f.severity == Severity::Error {
            "Error"
        } else {
            "Warning"
        },
        replacements: vec![Replacement {
            file: pos.path.clone(),
            offset: at,
            length: 0,
            text: " + 1".into(),
        }],
    })
}

/// The shared array an address points into: through GEPs and casts, as
/// instructions or constant expressions.
fn shared_array(m: &Module, func: &Function, mut v: Value) -> Option<GlobalId> {
    for _ in 0..16 {
        v = match v {
            Value::Global(g) => {
                return (m.global(g).addrspace == crate::ir::addrspace::SHARED).then_some(g)
            }
            Value::Inst(i) => {
                let inst = func.inst(i);
                match inst.op {
                    Opcode::GetElementPtr | Opcode::AddrSpaceCast | Opcode::BitCast => {
                        *inst.operands.first()?
                    }
                    _ => return None,
                }
            }
            Value::Const(c) => match m.konst(c) {
                Const::Expr { operands, .. } => *operands.first()?,
                _ => return None,
            },
            _ => return None,
        };
    }
    None
}

/// The line where the function owning a static local array is defined
/// (`f(int)::tile` is `f`'s), so that two kernels' `tile`s stay apart; 1
/// for an array at file scope.
fn owner_line(m: &Module, g: GlobalId) -> u32 {
    let demangled = &m.global(g).demangled;
    let Some(at) = demangled.rfind(")::") else {
        return 1;
    };
    let owner = &demangled[..at + 1];
    m.funcs
        .iter()
        .find(|f| f.demangled == owner)
        .and_then(|f| f.loc.as_ref())
        .map_or(1, |l| l.line.max(1))
}

/// The byte offset of the `]` closing the last dimension of `__shared__`
/// array `name`'s first declaration from line `from` on
/// (`tile[TILE][TILE]` gives the second `]`).
fn inner_dimension_end(text: &str, name: &str, from: u32) -> Option<usize> {
    let mut line_start = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if n + 1 < from as usize {
            line_start += line.len();
            continue;
        }
        if let Some(at) = line.find("__shared__") {
            let mut from = at;
            while let Some(i) = line[from..].find(name) {
                let start = from + i;
                from = start + name.len();
                let before = line[..start].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                if let Some(end) = last_bracket(&line[from..]) {
                    return Some(line_start + from + end);
                }
            }
        }
        line_start += line.len();
    }
    None
}

/// In `rest` (just after an array's name), the offset of the `]` that
/// closes its last `[…]` group; none unless there are at least two (the
/// array must have rows).
fn last_bracket(rest: &str) -> Option<usize> {
    let mut groups = 0;
    let mut last = None;
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    groups += 1;
                    last = Some(i);
                }
            }
            ' ' | '\t' if depth == 0 => {}
            _ if depth == 0 => break,
            _ => {}
        }
    }
    (groups >= 2).then_some(last?)
}

/// The byte offset of 1-based `line`, `col` (a byte column, as debug
/// info counts).
fn line_col_offset(text: &str, line: u32, col: u32) -> Option<usize> {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.checked_sub(1)? as usize)
        .map(str::len)
        .sum();
    Some(start + col.saturating_sub(1) as usize)
}

/// The fixes as clang-tidy's `--export-fixes` YAML.
pub fn yaml(main: Option<&Path>, fixes: &[Fix]) -> String {
    let q = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let path = |p: &Path| q(&p.display().to_string());
    let mut out = String::from("---\n");
    let _ = writeln!(
        out,
        "MainSourceFile:  {}",
        main.map_or_else(|| "''".to_string(), path)
    );
    if fixes.is_empty() {
        out.push_str("Diagnostics:     []\n");
    } else {
        out.push_str("Diagnostics:\n");
    }
    for f in fixes {
        let _ = writeln!(out, "  - DiagnosticName:  {}", q(&f.name));
        out.push_str("    DiagnosticMessage:\n");
        let _ = writeln!(out, "      Message:         {}", q(&f.message));
        let _ = writeln!(out, "      FilePath:        {}", path(&f.file));
        let _ = writeln!(out, "      FileOffset:      {}", f.offset);
        out.push_str("      Replacements:\n");
        for r in &f.replacements {
            let _ = writeln!(out, "        - FilePath:        {}", path(&r.file));
            let _ = writeln!(out, "          Offset:          {}", r.offset);
            let _ = writeln!(out, "          Length:          {}", r.length);
            let _ = writeln!(out, "          ReplacementText: {}", q(&r.text));
        }
        let _ = writeln!(out, "    Level:           {}", f.level);
    }
    out.push_str("...\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inner_dimension_of_the_named_shared_array() {
        let src = "float x;\n  __shared__ float tile[TILE][TILE];\n";
        // Line 2 starts at byte 9; `tile[TILE][TILE]` ends at its second `]`.
        let at = inner_dimension_end(src, "tile", 1).unwrap();
        assert_eq!(&src[at..at + 2], "];");
        assert_eq!(&src[at - 5..at], "[TILE");
        // From line 3 on, the second kernel's `tile`.
        let two = "__shared__ float tile[8][32];\nk2\n__shared__ float tile[32][64];\n";
        assert_eq!(inner_dimension_end(two, "tile", 3), Some(two.len() - 3));
        // A name inside another (`subtile`), a one-dimensional array and
        // a plain variable are not it.
        assert_eq!(
            inner_dimension_end("__shared__ float subtile[4][32];", "tile", 1),
            None
        );
        assert_eq!(
            inner_dimension_end("__shared__ float tile[1024];", "tile", 1),
            None
        );
        assert_eq!(inner_dimension_end("float tile[32][32];", "tile", 1), None);
        assert_eq!(
            inner_dimension_end("__shared__ int a[8][32], tile[32] [32 * 2];", "tile", 1),
            Some("__shared__ int a[8][32], tile[32] [32 * 2".len())
        );
    }

    #[test]
    fn offsets_count_bytes() {
        let src = "ab\ncdé\nfg\n";
        assert_eq!(line_col_offset(src, 1, 1), Some(0));
        assert_eq!(line_col_offset(src, 3, 2), Some(3 + 5 + 1));
    }

    #[test]
    fn yaml_as_clang_tidy_writes_it() {
        let fix = Fix {
            name: "warpcheck-bank-conflict".into(),
            message: "it's 32-way".into(),
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
        let y = yaml(Some(Path::new("/p/k.cu")), &[fix]);
        assert!(y.starts_with("---\nMainSourceFile:  '/p/k.cu'\nDiagnostics:\n"));
        assert!(y.contains("      Message:         'it''s 32-way'\n"));
        assert!(y.contains("          Offset:          20\n          Length:          0\n          ReplacementText: ' + 1'\n"));
        assert!(y.ends_with("    Level:           Warning\n...\n"));
        // What clang-apply-replacements reads of it, read back.
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Doc {
            diagnostics: Vec<Diagnostic>,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Diagnostic {
            diagnostic_message: Message,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Message {
            message: String,
            replacements: Vec<Offset>,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Offset {
            offset: u64,
        }
        let parsed: Doc = serde_saphyr::from_str(&y).unwrap();
        let m = &parsed.diagnostics[0].diagnostic_message;
        assert_eq!(m.message, "it's 32-way");
        assert_eq!(m.replacements[0].offset, 20);
        assert!(yaml(None, &[]).contains("Diagnostics:     []"));
    }
}
