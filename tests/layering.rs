//! The layers guard: every `crate::` path in `src/` must follow an edge of
//! the table that ARCHITECTURE.md prints under "Layers", that table must
//! have no cycle, and no two files of one module may import each other
//! round a circle. The document is the single source: change the table
//! there, with a reason, to allow an edge.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The "may import" table: module → modules it may name.
fn allowed() -> BTreeMap<String, BTreeSet<String>> {
    let doc = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = doc
        .split("\n## Layers")
        .nth(1)
        .expect("ARCHITECTURE.md has a \"## Layers\" section");
    let mut table = BTreeMap::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let [module, may, ..] = cells[..] else {
            continue;
        };
        let name = module.trim_matches('`');
        if name == "module" || name.starts_with('-') {
            continue;
        }
        let targets = may
            .split(',')
            .map(|t| t.trim().trim_matches('`').to_string())
            .filter(|t| !t.is_empty() && t != "—")
            .collect();
        table.insert(name.to_string(), targets);
    }
    assert!(!table.is_empty(), "the Layers table is empty");
    table
}

/// `src/a/b/c.rs` → `[a, b, c]`; `src/a/mod.rs` → `[a]`; `src/a.rs` → `[a]`.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root().join("src")).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_string());
    }
    parts
}

/// The file that defines the deepest module named by a prefix of `path`.
fn file_of(path: &[String]) -> Option<PathBuf> {
    let mut dir = root().join("src");
    let mut found = None;
    for seg in path {
        let flat = dir.join(format!("{seg}.rs"));
        let nested = dir.join(seg).join("mod.rs");
        if flat.is_file() {
            found = Some(flat);
        } else if nested.is_file() {
            found = Some(nested);
        } else {
            break;
        }
        dir = dir.join(seg);
    }
    found
}

/// The source without comments, string and char literals, and anything
/// from the first `#[cfg(test)]` on (test modules import freely).
fn code_of(src: &str) -> String {
    let src = match src.find("#[cfg(test)]") {
        Some(i) => &src[..i],
        None => src,
    };
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && !b[..i]
                    .last()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let open = i + 1 + hashes;
                if b.get(open) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                i = open + 1;
                while i < b.len() && !b[i..].starts_with(&close) {
                    i += 1;
                }
                i += close.len();
                out.push_str("\"\"");
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            // A char literal ('x', '\n', '\''), not a lifetime ('a).
            b'\'' if b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\') => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("' '");
            }
            c => {
                out.push(c as char);
                i += 1;
            }
        }
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The paths, from the crate root, that `code` (in module `here`) names
/// through `crate::`, `super::` or `self::`, each as far as its leading
/// identifiers go (`crate::{a::b, c}` gives `[a, b]` and `[c]`).
fn paths_named(code: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(['c', 's']) {
        let at = &rest[i..];
        let before = code.len() - rest.len() + i;
        let boundary = before == 0 || {
            let c = code.as_bytes()[before - 1];
            !(c.is_ascii_alphanumeric() || c == b'_' || c == b':')
        };
        let mut base: Option<Vec<String>> = None;
        let mut tail = "";
        if boundary {
            if let Some(t) = at.strip_prefix("crate::") {
                base = Some(Vec::new());
                tail = t;
            } else if at.starts_with("super::") || at.starts_with("self::") {
                let mut b = here.to_vec();
                let mut t = at;
                if let Some(s) = t.strip_prefix("self::") {
                    t = s;
                }
                while let Some(s) = t.strip_prefix("super::") {
                    b.pop();
                    t = s;
                }
                base = Some(b);
                tail = t;
            }
        }
        match base {
            Some(b) => {
                collect_tree(tail, b, &mut out);
                rest = &at[1..];
            }
            None => rest = &at[1..],
        }
    }
    out
}

/// Follows `a::b::{c, d::e}` from `base`, pushing each full path.
fn collect_tree(s: &str, base: Vec<String>, out: &mut Vec<Vec<String>>) {
    let s = s.trim_start();
    if let Some(inner) = s.strip_prefix('{') {
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    collect_tree(&inner[start..i], base.clone(), out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    collect_tree(&inner[start..i], base.clone(), out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let id = ident_at(s);
    if id.is_empty() || id == "self" {
        out.push(base);
        return;
    }
    let mut path = base;
    path.push(id.to_string());
    match s[id.len()..].strip_prefix("::") {
        Some(t) => collect_tree(t, path, out),
        None => out.push(path),
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every source file with the module paths it names.
fn sources() -> Vec<(PathBuf, Vec<String>, Vec<Vec<String>>)> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let here = module_path(&f);
            let named = paths_named(&code_of(&fs::read_to_string(&f).unwrap()), &here);
            (f, here, named)
        })
        .collect()
}

fn top_modules() -> BTreeSet<String> {
    fs::read_dir(root().join("src"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name()?.to_string_lossy().into_owned();
            if p.is_dir() {
                Some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (stem != "lib" && stem != "main").then(|| stem.to_string())
            }
        })
        .collect()
}

#[test]
fn every_module_has_a_row_and_the_rows_name_modules() {
    let table = allowed();
    let tops = top_modules();
    for m in &tops {
        assert!(
            table.contains_key(m),
            "src/{m} has no row in ARCHITECTURE.md's Layers table: place it in a layer"
        );
    }
    for (m, may) in &table {
        assert!(
            tops.contains(m),
            "the Layers table names `{m}`, which is not a module of src/"
        );
        for t in may {
            assert!(
                tops.contains(t),
                "`{m}` may import `{t}`, which is not a module of src/"
            );
        }
    }
}

#[test]
fn the_table_has_no_cycle() {
    let table = allowed();
    // Depth-first search with colours: grey on the stack, black done.
    fn visit<'a>(
        m: &'a str,
        t: &'a BTreeMap<String, BTreeSet<String>>,
        grey: &mut Vec<&'a str>,
        black: &mut BTreeSet<&'a str>,
    ) {
        if black.contains(m) {
            return;
        }
        if let Some(i) = grey.iter().position(|&g| g == m) {
            panic!(
                "the Layers table allows a cycle: {} → {m}",
                grey[i..].join(" → ")
            );
        }
        grey.push(m);
        for n in t.get(m).into_iter().flatten() {
            visit(n, t, grey, black);
        }
        grey.pop();
        black.insert(m);
    }
    let mut black = BTreeSet::new();
    for m in table.keys() {
        visit(m, &table, &mut Vec::new(), &mut black);
    }
}

#[test]
fn every_import_follows_the_table() {
    let table = allowed();
    let tops = top_modules();
    let mut bad = BTreeSet::new();
    for (file, here, named) in sources() {
        let Some(from) = here.first() else { continue };
        for path in named {
            let Some(to) = path.first() else { continue };
            if to == from || !tops.contains(to) {
                continue;
            }
            if !table.get(from).is_some_and(|may| may.contains(to)) {
                let rel = file.strip_prefix(root()).unwrap().display().to_string();
                bad.insert(format!("{rel}: {from} → {to} (crate::{})", path.join("::")));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "imports that ARCHITECTURE.md's Layers table does not allow:\n{}",
        bad.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn no_files_of_one_module_import_each_other_round_a_circle() {
    // Edges between files of one top module, leaving out a file's own
    // ancestors and descendants (a `mod.rs` and the files it declares
    // share items by design).
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (file, here, named) in sources() {
        for path in named {
            if path.first() != here.first() {
                continue;
            }
            let Some(to) = file_of(&path) else { continue };
            let (a, b) = (module_path(&file), module_path(&to));
            if a.starts_with(&b) || b.starts_with(&a) {
                continue;
            }
            edges.entry(file.clone()).or_default().insert(to);
        }
    }
    let mut black: BTreeSet<PathBuf> = BTreeSet::new();
    let mut circles = Vec::new();
    fn visit(
        f: &PathBuf,
        e: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        grey: &mut Vec<PathBuf>,
        black: &mut BTreeSet<PathBuf>,
        circles: &mut Vec<String>,
    ) {
        if black.contains(f) {
            return;
        }
        if let Some(i) = grey.iter().position(|g| g == f) {
            let names: Vec<String> = grey[i..]
                .iter()
                .chain(std::iter::once(f))
                .map(|p| p.strip_prefix(root()).unwrap().display().to_string())
                .collect();
            circles.push(names.join(" → "));
            return;
        }
        grey.push(f.clone());
        for n in e.get(f).into_iter().flatten() {
            visit(n, e, grey, black, circles);
        }
        grey.pop();
        black.insert(f.clone());
    }
    for f in edges.keys() {
        visit(f, &edges, &mut Vec::new(), &mut black, &mut circles);
    }
    assert!(
        circles.is_empty(),
        "files that import each other round a circle:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_reader_sees_the_imports_it_must() {
    let here = vec!["sim".to_string(), "exec".to_string()];
    let code = code_of(
        "use crate::{ir::{Module, SiteKind}, hw};\n\
         // use crate::analysis::Site;\n\
         let s = \"crate::checks\";\n\
         use super::super::memory::Space;\n\
         fn f() { crate::graph::cfg::Cfg::new(); }\n",
    );
    let mut got = paths_named(&code, &here);
    got.sort();
    let want: Vec<Vec<String>> = [
        vec!["graph", "cfg", "Cfg", "new"],
        vec!["hw"],
        vec!["ir", "Module"],
        vec!["ir", "SiteKind"],
        vec!["memory", "Space"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(got, want);
}
