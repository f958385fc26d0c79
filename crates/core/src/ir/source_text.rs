//! Names the IR lost, read back from the source text. Clang discards value
//! names in its own builds, and line tables (`-gline-tables-only`, what a
//! build with warpcheck's plugin uses) keep no variable records, so a
//! kernel's parameters would be `arg3` and a loop counter "the counter".
//! What the debug info still has is enough to find them in the source: a
//! function's declaration line (its `DISubprogram`), whose parameter list
//! gives the parameters' names in order, and the line and column of a
//! counter's update (`s *= 2` in `for (unsigned s = 1; …; s *= 2)`), where
//! the variable stands next to the operator. A name is taken only where
//! the text leaves no doubt: as many parameters in the source as in the
//! IR, an identifier at the update. Names the IR or the debug info already
//! has are kept.

use super::{FileId, Function, Module, Opcode, TypeKind, Value};
use std::collections::HashMap;

/// Lines after a declaration's line searched for its parameter list.
const DECL_LINES: usize = 24;

/// Fills unnamed parameters and loop counters of `m`'s defined functions
/// from their source files, when those can be read.
pub fn fill_names(m: &mut Module) {
    let mut files: HashMap<FileId, Option<Vec<String>>> = HashMap::new();
    let mut found = Vec::new();
    for (fi, f) in m.funcs.iter().enumerate() {
        if !f.is_declaration {
            found.push((fi, names_of(m, f, &mut files)));
        }
    }
    for (fi, (params, counters)) in found {
        let f = &mut m.funcs[fi];
        if let Some(names) = params {
            for (p, n) in f.params.iter_mut().zip(names) {
                if p.name.is_none() {
                    p.name = n;
                }
            }
        }
        f.source_names.extend(counters);
    }
}

/// The lines of `file`, read once.
fn lines_of<'c>(
    m: &Module,
    file: FileId,
    files: &'c mut HashMap<FileId, Option<Vec<String>>>,
) -> Option<&'c Vec<String>> {
    files
        .entry(file)
        .or_insert_with(|| read_lines(&m.file(file).path()))
        .as_ref()
}

/// What the source says of `f`: its parameters' names (when the IR lacks
/// some and the source list matches the IR's), and its unnamed counters'.
#[allow(clippy::type_complexity)]
fn names_of(
    m: &Module,
    f: &Function,
    files: &mut HashMap<FileId, Option<Vec<String>>>,
) -> (Option<Vec<Option<String>>>, Vec<(super::InstId, String)>) {
    let params = if f.params.iter().any(|p| p.name.is_none()) {
        f.loc
            .clone()
            .and_then(|pos| {
                let lines = lines_of(m, pos.file, files)?;
                parameter_names(lines, pos.line as usize, &f.short_name())
            })
            .filter(|names| names.len() == f.params.len())
    } else {
        None
    };
    let mut counters = Vec::new();
    for (phi, spots) in unnamed_counters(m, f) {
        let name = spots.iter().find_map(|&(at, spot)| {
            let pos = m.loc(f.inst(at).loc?).pos.clone();
            let lines = lines_of(m, pos.file, files)?;
            let line = lines.get((pos.line as usize).checked_sub(1)?)?;
            let col = pos.col as usize;
            match spot {
                Spot::Update => updated_variable(line, col),
                Spot::Test => tested_variable(line, col),
            }
        });
        if let Some(name) = name {
            counters.push((phi, name));
        }
    }
    (params, counters)
}

/// A source file's lines, if it is a regular file of a readable size
/// ([`crate::files::source_text`]).
fn read_lines(path: &std::path::Path) -> Option<Vec<String>> {
    let text = crate::files::source_text(path)?;
    Some(text.lines().map(String::from).collect())
}

/// Where an unnamed counter's variable may be read off the source.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Spot {
    /// Its update (`s *= 2`): the variable stands by the operator.
    Update,
    /// A comparison of it (`s < n`): the variable starts the expression
    /// (clang 19's column) or stands before the operator (clang 22's).
    Test,
}

/// Integer phis without a name that an update of themselves feeds (a
/// counter `s = s * 2`), with the instructions whose positions may name
/// them: the update, then the comparisons of the counter or its update
/// (clang may have merged the update with an equal expression of another
/// line, `2 * s`, and placed it there).
fn unnamed_counters(m: &Module, f: &Function) -> Vec<(super::InstId, Vec<(super::InstId, Spot)>)> {
    let mut out = Vec::new();
    for i in f.inst_ids() {
        let inst = f.inst(i);
        if inst.op != Opcode::Phi
            || f.source_names.contains_key(&i)
            || inst.name.as_deref().is_some_and(is_identifier_name)
            || !matches!(m.types.kind(inst.ty), TypeKind::Int(_))
        {
            continue;
        }
        let update = inst.operands.iter().find_map(|&v| match v {
            Value::Inst(u) => {
                let ui = f.inst(u);
                let step = matches!(
                    ui.op,
                    Opcode::Add
                        | Opcode::Sub
                        | Opcode::Mul
                        | Opcode::Shl
                        | Opcode::LShr
                        | Opcode::AShr
                        | Opcode::UDiv
                        | Opcode::SDiv
                        | Opcode::Or
                );
                (step && ui.operands.contains(&Value::Inst(i))).then_some(u)
            }
            _ => None,
        });
        let Some(u) = update else {
            continue;
        };
        let mut spots = vec![(u, Spot::Update)];
        let tested = [Value::Inst(i), Value::Inst(u)];
        spots.extend(
            f.inst_ids()
                .filter(|&c| {
                    let ci = f.inst(c);
                    ci.op == Opcode::ICmp && ci.operands.iter().any(|o| tested.contains(o))
                })
                .map(|c| (c, Spot::Test)),
        );
        out.push((i, spots));
    }
    out
}

/// Whether an IR value name reads as a source variable (`k`, `k.027`).
fn is_identifier_name(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or("");
    base.bytes().next().is_some_and(|b| !b.is_ascii_digit())
        && base.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The variable an update at (1-based) column `col` of `line` assigns:
/// the identifier just before the operator there (`s *= 2`, `i++`), or
/// just after a prefix `++`/`--`.
fn updated_variable(line: &str, col: usize) -> Option<String> {
    let bytes = line.as_bytes();
    let at = col.checked_sub(1)?;
    if at > bytes.len() {
        return None;
    }
    // Backwards over spaces, then over an identifier.
    let mut end = at;
    while end > 0 && bytes[end - 1] == b' ' {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && is_ident_byte(bytes[start - 1]) {
        start -= 1;
    }
    let before = &line[start..end];
    let rest = &line[at..];
    let op_follows = [
        "++", "--", "+=", "-=", "*=", "/=", "<<=", ">>=", "|=", "=", "+", "-",
    ]
    .iter()
    .any(|op| rest.trim_start().starts_with(op));
    if !before.is_empty() && op_follows && identifier(before) {
        return Some(before.to_string());
    }
    // `++i`: the identifier after the operator.
    let after = rest
        .strip_prefix("++")
        .or_else(|| rest.strip_prefix("--"))?;
    let after = after.trim_start();
    let len = after.bytes().take_while(|&b| is_ident_byte(b)).count();
    let name = &after[..len];
    identifier(name).then(|| name.to_string())
}

/// The variable a comparison at (1-based) column `col` of `line` tests:
/// the identifier that starts there, or the one that ends just before the
/// operator there.
fn tested_variable(line: &str, col: usize) -> Option<String> {
    let at = col.checked_sub(1)?;
    let rest = line.get(at..)?;
    let len = rest.bytes().take_while(|&b| is_ident_byte(b)).count();
    let starts = at == 0 || !is_ident_byte(line.as_bytes()[at - 1]);
    if len > 0 && starts && identifier(&rest[..len]) {
        return Some(rest[..len].to_string());
    }
    let before = line[..at].trim_end();
    let start = before.len()
        - before
            .bytes()
            .rev()
            .take_while(|&b| is_ident_byte(b))
            .count();
    let name = &before[start..];
    let op = rest.trim_start();
    (identifier(name) && ["<", ">", "!=", "=="].iter().any(|o| op.starts_with(o)))
        .then(|| name.to_string())
}

/// A C identifier that is not a keyword a statement may start with.
fn identifier(s: &str) -> bool {
    s.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && s.bytes().all(is_ident_byte)
        && !matches!(s, "return" | "if" | "for" | "while" | "else" | "do")
}

/// The names of the parameters of the function `name` declared at
/// (1-based) `line`, in order, `None` for an unnamed one; `None` if the
/// list cannot be found.
fn parameter_names(lines: &[String], line: usize, name: &str) -> Option<Vec<Option<String>>> {
    let first = line.checked_sub(1)?;
    let text: String = lines
        .get(first..(first + DECL_LINES).min(lines.len()))?
        .iter()
        .map(|l| strip_line_comment(l))
        .collect::<Vec<_>>()
        .join("\n");
    let text = strip_block_comments(&text);
    let open = find_call(&text, name)?;
    let list = balanced(&text[open..])?;
    let params = split_top_level(list);
    if params.len() == 1 && matches!(params[0].trim(), "" | "void") {
        return Some(Vec::new());
    }
    Some(params.iter().map(|p| parameter_name(p)).collect())
}

/// `text` with each `/* … */` replaced by a space.
fn strip_block_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("/*") {
        out.push_str(&rest[..open]);
        out.push(' ');
        rest = match rest[open + 2..].find("*/") {
            Some(close) => &rest[open + 2 + close + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

fn strip_line_comment(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

/// The byte offset of the `(` after `name` (and its template arguments)
/// where `name` stands as a whole word.
fn find_call(text: &str, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(off) = text[from..].find(name) {
        let start = from + off;
        let end = start + name.len();
        from = end;
        let whole = (start == 0 || !is_ident_byte(bytes[start - 1]))
            && bytes.get(end).is_none_or(|&b| !is_ident_byte(b));
        if !whole {
            continue;
        }
        let mut at = end;
        while bytes.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
            at += 1;
        }
        if bytes.get(at) == Some(&b'<') {
            at += balanced_span(&text[at..], b'<', b'>')?;
            while bytes.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
                at += 1;
            }
        }
        if bytes.get(at) == Some(&b'(') {
            return Some(at);
        }
    }
    None
}

/// The length of the bracketed span that opens at `text[0]`.
fn balanced_span(text: &str, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if b == open {
            depth += 1;
        } else if b == close {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i + 1);
            }
        }
    }
    None
}

/// The text inside the parentheses that open at `text[0]`.
fn balanced(text: &str) -> Option<&str> {
    let len = balanced_span(text, b'(', b')')?;
    Some(&text[1..len - 1])
}

/// `list` split at the commas outside any bracket.
fn split_top_level(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, b) in list.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' | b'>' => depth -= 1,
            b',' if depth == 0 => {
                out.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&list[start..]);
    out
}

/// A parameter declaration's name: the last identifier before any default
/// value or array bound, when it follows a type.
fn parameter_name(decl: &str) -> Option<String> {
    let decl = decl.split('=').next().unwrap_or(decl);
    let decl = decl.split('[').next().unwrap_or(decl).trim_end();
    let bytes = decl.as_bytes();
    let mut start = bytes.len();
    while start > 0 && is_ident_byte(bytes[start - 1]) {
        start -= 1;
    }
    let name = &decl[start..];
    let before = decl[..start].trim_end();
    // A type alone (`int`, `float *`) has nothing before its last word, or
    // ends in a keyword that is part of a type.
    let typed = !before.is_empty()
        && !before.ends_with("::")
        && !matches!(
            name,
            "int"
                | "float"
                | "double"
                | "char"
                | "long"
                | "short"
                | "unsigned"
                | "signed"
                | "bool"
                | "void"
                | "const"
                | "volatile"
        );
    (identifier(name) && typed).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(String::from).collect()
    }

    #[test]
    fn parameters_of_a_declaration_in_order() {
        let src = lines(
            "// k\n__global__ void row_sums(const float *m, float *out,\n    int rows, int cols /* n */) {\n",
        );
        assert_eq!(
            parameter_names(&src, 2, "row_sums").unwrap(),
            ["m", "out", "rows", "cols"].map(|s| Some(s.to_string()))
        );
        // Unnamed, defaulted, arrays, templates and `void`.
        let src = lines(
            "template <int N> __device__ float f<N>(int, float a = 1.0f, int b[4], S<int, 2> s) {",
        );
        assert_eq!(
            parameter_names(&src, 1, "f").unwrap(),
            [None, Some("a".into()), Some("b".into()), Some("s".into())]
        );
        let src = lines("__global__ void k(void) {}");
        assert_eq!(
            parameter_names(&src, 1, "k").unwrap(),
            Vec::<Option<String>>::new()
        );
        // `tile` is not a call of `t`.
        let src = lines("void tile(int x); __global__ void t(int y) {}");
        assert_eq!(parameter_names(&src, 1, "t").unwrap(), [Some("y".into())]);
        assert!(parameter_names(&src, 1, "missing").is_none());
    }

    #[test]
    fn the_variable_an_update_assigns() {
        let l = "  for (unsigned s = 1; s < blockDim.x; s *= 2) {";
        let col = l.find("*=").unwrap() + 1;
        assert_eq!(updated_variable(l, col).as_deref(), Some("s"));
        let l = "for (int j = 0; j < n; ++j)";
        let col = l.find("++").unwrap() + 1;
        assert_eq!(updated_variable(l, col).as_deref(), Some("j"));
        let l = "    i += blockDim.x * gridDim.x;";
        let col = l.find("+=").unwrap() + 1;
        assert_eq!(updated_variable(l, col).as_deref(), Some("i"));
        // At the update's own column of `k++`.
        let l = "while (k < n) k++;";
        let col = l.find("++").unwrap() + 1;
        assert_eq!(updated_variable(l, col).as_deref(), Some("k"));
        // Nothing assigned there.
        assert_eq!(updated_variable("  return x * 2;", 12), None);
        // The loop's test, at its start (clang 19) or its operator (22).
        let l = "  for (unsigned s = 1; s < blockDim.x; s *= 2) {";
        let start = l.find("s <").unwrap() + 1;
        assert_eq!(tested_variable(l, start).as_deref(), Some("s"));
        assert_eq!(tested_variable(l, start + 2).as_deref(), Some("s"));
        assert_eq!(tested_variable("  if (2 * s)", 7), None);
    }
}
