//! The bank-conflict check's fix: padding a shared array's rows.
//!
//! A bank conflict on a shared array whose rows are a multiple of 32
//! four-byte words long has every row start in bank 0, so a warp reading
//! a column meets itself in one bank. One more element per row
//! (`tile[32][32 + 1]`) starts row r in bank r mod 32, so the 32 rows of a
//! column fall in 32 banks. Anything else (other element sizes, conflicts
//! from the index arithmetic, an array declared elsewhere) has no
//! mechanical fix: the warning's hint says what to do.

use crate::checks::fix::{line_col_offset, Fix, Replacement, SourceReader};
use crate::finding::{Finding, Severity};
use crate::ir::{GlobalId, Module, TypeKind};

/// The padding fix for a bank-conflict warning, if it is mechanical.
pub fn fix(m: &Module, f: &Finding, source: SourceReader<'_>) -> Option<Fix> {
    if f.severity == Severity::Note {
        return None;
    }
    let func = m.func(f.func);
    let address = func.inst(f.inst?).address()?;
    let g = crate::memory::rows::shared_global(m, func, address)?;
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
    let text = source(&pos.path)?;
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
}
