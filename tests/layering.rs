//! The layers guard: every `crate::` path in the workspace's crates (`src/`
//! and `crates/*/src/`) must follow an edge of the table that
//! ARCHITECTURE.md prints under "Layers", that table must have no cycle,
//! and no two files of one module may import each other round a circle.
//! The crates follow the same table: a crate may depend on another only
//! where a module of the one may import a module of the other. The
//! document is the single source: change the table there, with a reason,
//! to allow an edge.
//!
//! It also holds "one of each thing, spelled once": an intrinsic's name is
//! spelled only by `ir::intrinsics` (and the loader's table of LLVM 22's
//! spellings), and a check's or note's name only by the file that declares
//! it.
//!
//! Whole files are read; only `#[cfg(test)]` items (and the files of test
//! modules they declare) are left out, since tests import and spell freely.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

/// A crate of the workspace: its package name, its folder (relative to
/// the root) and the workspace crates its Cargo.toml depends on (normal,
/// build and dev dependencies alike).
struct Crate {
    name: String,
    dir: PathBuf,
    deps: BTreeSet<String>,
}

impl Crate {
    fn src(&self) -> PathBuf {
        root().join(&self.dir).join("src")
    }

    /// The top modules whose files are in its `src/`.
    fn modules(&self) -> BTreeSet<String> {
        fs::read_dir(self.src())
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
}

/// The quoted strings of a TOML value (`["a", "b"]` → `[a, b]`).
fn quoted(value: &str) -> Vec<String> {
    value
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// A Cargo.toml's package name and the keys of its dependency tables
/// (`[dependencies]` and the like, and `[dependencies.NAME]` headers).
fn manifest(dir: &Path) -> (String, BTreeSet<String>) {
    parse_manifest(&fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap())
}

/// [`manifest`] of a Cargo.toml's text.
fn parse_manifest(text: &str) -> (String, BTreeSet<String>) {
    let (mut section, mut name, mut deps) = (String::new(), None, BTreeSet::new());
    for line in text.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            section = header.trim_end_matches(']').to_string();
            let table = section.rsplit('.').nth(1).unwrap_or("");
            if table.ends_with("dependencies") && !section.starts_with("workspace") {
                deps.insert(section.rsplit('.').next().unwrap().to_string());
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if section == "package" && key == "name" {
            name = quoted(value).pop();
        } else if section.ends_with("dependencies") && !section.starts_with("workspace") {
            deps.insert(key.split('.').next().unwrap().trim().to_string());
        }
    }
    (name.expect("a [package] name"), deps)
}

/// The root package and the members its `[workspace]` lists, each with
/// the workspace crates it depends on (read once).
fn crates() -> &'static [Crate] {
    static CRATES: OnceLock<Vec<Crate>> = OnceLock::new();
    CRATES.get_or_init(read_crates)
}

fn read_crates() -> Vec<Crate> {
    let text = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let mut section = "";
    let mut members = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[workspace]" && line.starts_with("members") {
            members = quoted(line);
        }
    }
    let dirs: Vec<PathBuf> = std::iter::once(PathBuf::new())
        .chain(members.iter().map(PathBuf::from))
        .collect();
    let read: Vec<(PathBuf, String, BTreeSet<String>)> = dirs
        .into_iter()
        .map(|d| {
            let (name, deps) = manifest(&d);
            (d, name, deps)
        })
        .collect();
    let names: BTreeSet<String> = read.iter().map(|(_, n, _)| n.clone()).collect();
    read.into_iter()
        .map(|(dir, name, deps)| Crate {
            name,
            dir,
            deps: deps.intersection(&names).cloned().collect(),
        })
        .collect()
}

/// Every crate's `src/`.
fn src_roots() -> Vec<PathBuf> {
    crates().iter().map(Crate::src).collect()
}

/// `src/a/b/c.rs` → `[a, b, c]`; `src/a/mod.rs` → `[a]`; `src/a.rs` → `[a]`
/// (in any crate's `src/`).
fn module_path(file: &Path) -> Vec<String> {
    let rel = src_roots()
        .iter()
        .find_map(|src| file.strip_prefix(src).ok())
        .unwrap_or_else(|| panic!("{} is in no crate's src/", file.display()));
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
    src_roots().iter().find_map(|src| file_in(src, path))
}

/// [`file_of`] within one crate's `src/`.
fn file_in(src: &Path, path: &[String]) -> Option<PathBuf> {
    let mut dir = src.to_path_buf();
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

/// A source file as the guard reads it: its code without comments, with
/// each string literal as `""`, and `#[cfg(test)]` items left out; the
/// string literals of that code; and the test modules the left-out items
/// declare in files of their own (`#[cfg(test)] mod tests;`).
struct Code {
    text: String,
    literals: Vec<String>,
    test_modules: Vec<String>,
}

/// Reads `src` (see [`Code`]).
fn code_of(src: &str) -> Code {
    let (marked, all_literals) = strip(src);
    let (text, test_modules) = without_test_items(&marked);
    // Placeholders are `"N"`: the literals that survived are the ones
    // still named in the text.
    let mut literals = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find('"') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let end = after.find('"').expect("placeholders are closed");
        let n: usize = after[..end].parse().expect("a placeholder's number");
        literals.push(all_literals[n].clone());
        out.push_str("\"\"");
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Code {
        text: out,
        literals,
        test_modules,
    }
}

/// The source without comments, each string literal replaced by `"N"` (its
/// index in the list returned beside), each char literal by `' '`.
fn strip(src: &str) -> (String, Vec<String>) {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut literals = Vec::new();
    let mut literal = |out: &mut String, text: &[u8]| {
        out.push_str(&format!("\"{}\"", literals.len()));
        literals.push(String::from_utf8_lossy(text).into_owned());
    };
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
            b'r' | b'b'
                if matches!(b.get(i + 1), Some(b'"' | b'#' | b'r'))
                    && !b[..i]
                        .last()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') =>
            {
                // r"…", r#"…"#, b"…", br"…": a raw or byte string.
                let mut j = i + 1;
                if b[i] == b'b' && b.get(j) == Some(&b'r') {
                    j += 1;
                }
                let raw = b[i] == b'r' || b[j - 1] == b'r';
                let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
                let open = j + hashes;
                if b.get(open) != Some(&b'"') || (!raw && hashes > 0) {
                    out.push(b[i] as char);
                    i += 1;
                    continue;
                }
                if !raw {
                    // b"…": an ordinary string after its prefix.
                    i = open;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let start = open + 1;
                i = start;
                while i < b.len() && !b[i..].starts_with(&close) {
                    i += 1;
                }
                literal(&mut out, &b[start..i.min(b.len())]);
                i += close.len();
            }
            b'"' => {
                i += 1;
                let start = i;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                literal(&mut out, &b[start..i.min(b.len())]);
                i += 1;
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
            _ => {
                // Whole characters: a multi-byte one is copied as it is.
                let len = src[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&src[i..i + len]);
                i += len;
            }
        }
    }
    (out, literals)
}

/// `code` (comments and literals stripped) without its `#[cfg(test)]`
/// items, and the names of the modules those items declare without a body.
fn without_test_items(code: &str) -> (String, Vec<String>) {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut modules = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(ATTR) {
        out.push_str(&rest[..at]);
        let item = &rest[at + ATTR.len()..];
        let end = item_end(item);
        let words: Vec<&str> = item[..end]
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if item[..end].trim_end().ends_with(';') {
            if let Some(i) = words.iter().position(|&w| w == "mod") {
                modules.push(words[i + 1].to_string());
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, modules)
}

/// Where the item that starts `s` ends: after its other attributes, at
/// its `;` (`mod tests;`, `use …;`) or at the `}` closing its first block.
fn item_end(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    let mut depth = 0usize;
    let mut bracket = 0usize;
    while i < b.len() {
        match b[i] {
            b'[' => bracket += 1,
            b']' => bracket = bracket.saturating_sub(1),
            b';' if depth == 0 && bracket == 0 => return i + 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The paths, from the crate root, that `code` (in module `here`) names
/// through `crate::`, `super::` or `self::`, or through a workspace crate's
/// name (`warpcheck_sim::sim::x` is `sim::x`: the crates re-export the
/// modules below them at their own paths), each as far as its leading
/// identifiers go (`crate::{a::b, c}` gives `[a, b]` and `[c]`).
fn paths_named(code: &str, here: &[String]) -> Vec<Vec<String>> {
    let crate_paths: Vec<String> = crates()
        .iter()
        .map(|c| format!("{}::", c.name.replace('-', "_")))
        .collect();
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(['c', 's', 'w']) {
        let at = &rest[i..];
        let before = code.len() - rest.len() + i;
        let boundary = before == 0 || {
            let c = code.as_bytes()[before - 1];
            !(c.is_ascii_alphanumeric() || c == b'_' || c == b':')
        };
        let mut base: Option<Vec<String>> = None;
        let mut tail = "";
        if boundary {
            let by_name = crate_paths.iter().find_map(|p| at.strip_prefix(p.as_str()));
            if let Some(t) = at.strip_prefix("crate::").or(by_name) {
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

/// A source file of the crate's own code (not a test module's file).
struct Source {
    file: PathBuf,
    /// Its module path (`[sim, exec]`).
    here: Vec<String>,
    code: Code,
}

impl Source {
    fn rel(&self) -> String {
        self.file
            .strip_prefix(root())
            .unwrap()
            .display()
            .to_string()
    }
}

/// Every source file but those of test modules, read.
fn read_sources() -> Vec<Source> {
    let mut files = Vec::new();
    for src in src_roots() {
        rust_files(&src, &mut files);
    }
    files.sort();
    let all: Vec<Source> = files
        .into_iter()
        .map(|file| Source {
            here: module_path(&file),
            code: code_of(&fs::read_to_string(&file).unwrap()),
            file,
        })
        .collect();
    // A module declared `#[cfg(test)] mod x;` and everything under it.
    let tests: Vec<Vec<String>> = all
        .iter()
        .flat_map(|s| {
            s.code.test_modules.iter().map(|m| {
                let mut p = s.here.clone();
                p.push(m.clone());
                p
            })
        })
        .collect();
    all.into_iter()
        .filter(|s| !tests.iter().any(|t| s.here.starts_with(t)))
        .collect()
}

/// Every source file with the module paths it names.
fn sources() -> Vec<(PathBuf, Vec<String>, Vec<Vec<String>>)> {
    read_sources()
        .into_iter()
        .map(|s| {
            let named = paths_named(&s.code.text, &s.here);
            (s.file, s.here, named)
        })
        .collect()
}

/// The top modules of every crate.
fn top_modules() -> BTreeSet<String> {
    crates().iter().flat_map(Crate::modules).collect()
}

#[test]
fn every_module_has_a_row_and_the_rows_name_modules() {
    let table = allowed();
    let tops = top_modules();
    for m in &tops {
        assert!(
            table.contains_key(m),
            "module {m} has no row in ARCHITECTURE.md's Layers table: place it in a layer"
        );
    }
    for (m, may) in &table {
        assert!(
            tops.contains(m),
            "the Layers table names `{m}`, which is no crate's module"
        );
        for t in may {
            assert!(
                tops.contains(t),
                "`{m}` may import `{t}`, which is no crate's module"
            );
        }
    }
}

/// A cycle of `graph`, as `a → b → a`, if it has one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<String> {
    // Depth-first search with colours: grey on the stack, black done.
    fn visit<'a>(
        m: &'a str,
        t: &'a BTreeMap<String, BTreeSet<String>>,
        grey: &mut Vec<&'a str>,
        black: &mut BTreeSet<&'a str>,
    ) -> Option<String> {
        if black.contains(m) {
            return None;
        }
        if let Some(i) = grey.iter().position(|&g| g == m) {
            return Some(format!("{} → {m}", grey[i..].join(" → ")));
        }
        grey.push(m);
        for n in t.get(m).into_iter().flatten() {
            if let Some(found) = visit(n, t, grey, black) {
                return Some(found);
            }
        }
        grey.pop();
        black.insert(m);
        None
    }
    let mut black = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut black))
}

#[test]
fn the_table_has_no_cycle() {
    if let Some(found) = cycle(&allowed()) {
        panic!("the Layers table allows a cycle: {found}");
    }
}

/// Each top module's crate; no module is in two.
fn crate_of_module() -> BTreeMap<String, String> {
    let mut of = BTreeMap::new();
    for c in crates() {
        for m in c.modules() {
            if let Some(other) = of.insert(m.clone(), c.name.clone()) {
                panic!("module {m} is in two crates, {other} and {}", c.name);
            }
        }
    }
    of
}

/// The crate edges the Layers table allows: one crate may depend on
/// another when some module of the one may import some module of the other.
fn allowed_crate_edges() -> BTreeMap<String, BTreeSet<String>> {
    let of = crate_of_module();
    let mut edges: BTreeMap<String, BTreeSet<String>> = crates()
        .iter()
        .map(|c| (c.name.clone(), BTreeSet::new()))
        .collect();
    for (m, may) in allowed() {
        let Some(from) = of.get(&m) else { continue };
        for t in may {
            match of.get(&t) {
                Some(to) if to != from => {
                    edges.get_mut(from).unwrap().insert(to.clone());
                }
                _ => {}
            }
        }
    }
    edges
}

#[test]
fn crate_dependencies_follow_the_table() {
    let edges = allowed_crate_edges();
    // Cargo refuses a cycle of crates; the table must not allow one either
    // (a module allowed to import upwards across a crate boundary).
    if let Some(found) = cycle(&edges) {
        panic!(
            "the Layers table lets the crates depend on each other round a circle: {found} \
             (move the modules, or drop the edge)"
        );
    }
    let mut bad = Vec::new();
    for c in crates() {
        for d in &c.deps {
            if !edges[&c.name].contains(d) {
                bad.push(format!("{}/Cargo.toml: {} → {d}", c.dir.display(), c.name));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "crate dependencies that no edge of ARCHITECTURE.md's Layers table allows (no module \
         of the one may import a module of the other):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_crate_reader_sees_the_dependencies() {
    let (name, deps) = parse_manifest(
        "[package]\nname = \"a\"\n\
         [workspace.dependencies]\nw = \"1\"\n\
         [dependencies]\nb = { path = \"../b\" }\nc.workspace = true\n\
         [dependencies.d]\npath = \"../d\"\n\
         [target.'cfg(unix)'.dependencies]\ne = \"1\"\n\
         [dev-dependencies]\nf = \"1\"\n\
         [profile.dev.package.g]\nopt-level = 1\n",
    );
    assert_eq!(name, "a");
    assert_eq!(deps, ["b", "c", "d", "e", "f"].map(String::from).into());
    // The workspace as it is: four crates, the core below everything.
    let all = crates();
    assert!(
        all.len() >= 4,
        "{:?}",
        all.iter().map(|c| &c.name).collect::<Vec<_>>()
    );
    let core = all.iter().find(|c| c.name == "warpcheck-core").unwrap();
    assert!(core.deps.is_empty(), "{:?}", core.deps);
    assert!(core.modules().contains("ir"));
    let sim = all.iter().find(|c| c.name == "warpcheck-sim").unwrap();
    assert_eq!(sim.deps, ["warpcheck-core".to_string()].into());
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
    let code = &code_of(
        "use crate::{ir::{Module, SiteKind}, hw};\n\
         // use crate::analysis::Site;\n\
         let s = \"crate::checks\";\n\
         use super::super::memory::Space;\n\
         fn f() { crate::graph::cfg::Cfg::new(); }\n\
         use warpcheck_core::machine::Machine;\n\
         let t = not_warpcheck_core::dataflow::X;\n",
    );
    let mut got = paths_named(&code.text, &here);
    got.sort();
    let want: Vec<Vec<String>> = [
        vec!["graph", "cfg", "Cfg", "new"],
        vec!["hw"],
        vec!["ir", "Module"],
        vec!["ir", "SiteKind"],
        vec!["machine", "Machine"],
        vec!["memory", "Space"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(got, want);
}

#[test]
fn the_reader_skips_test_items_only() {
    // An upward import after a test module is still seen; the test
    // module's own imports and literals, and the file of a test module
    // declared without a body, are not.
    let code = code_of(
        "use crate::ir::Module;\n\
         #[cfg(test)]\n\
         mod tests {\n\
             use crate::cli::Args;\n\
             fn f() { let c = '{'; let s = \"}\"; g(\"llvm.trap\"); }\n\
         }\n\
         #[cfg(test)]\n\
         #[path = \"x.rs\"]\n\
         mod helpers;\n\
         use crate::cli::Settings;\n\
         const N: &str = r#\"llvm.nvvm.barrier0\"#;\n",
    );
    let here = vec!["graph".to_string()];
    let mut got = paths_named(&code.text, &here);
    got.sort();
    let want: Vec<Vec<String>> = [vec!["cli", "Settings"], vec!["ir", "Module"]]
        .iter()
        .map(|p| p.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(got, want);
    assert_eq!(code.literals, ["llvm.nvvm.barrier0"]);
    assert_eq!(code.test_modules, ["helpers"]);
}

/// The files that own intrinsic names: the classifier, and the loader's
/// table of what LLVM 22 spells differently (it maps those names to LLVM
/// 19's, which the classifier reads).
const INTRINSIC_OWNERS: [&str; 2] = [
    "crates/core/src/ir/intrinsics.rs",
    "crates/core/src/ir/upgrade.rs",
];

/// Whether a string literal names an intrinsic, or starts one's name: what
/// the classifier would take for one (anything in the `llvm.` or libdevice
/// families, the runtime calls it knows, the functions that never return).
fn names_an_intrinsic(literal: &str) -> bool {
    use warpcheck::ir::intrinsics::{never_returns, Intrinsic};
    Intrinsic::from_name(literal).is_some() || never_returns(literal)
}

/// Literals of `sources` that `spells` flags, outside `owners`.
fn spelled_outside(
    sources: &[Source],
    owners: &[&str],
    spells: impl Fn(&str) -> bool,
) -> Vec<String> {
    sources
        .iter()
        .filter(|s| !owners.contains(&s.rel().as_str()))
        .flat_map(|s| {
            s.code
                .literals
                .iter()
                .filter(|l| spells(l))
                .map(move |l| format!("{}: \"{l}\"", s.rel()))
        })
        .collect()
}

#[test]
fn intrinsic_names_are_spelled_only_by_their_owner() {
    let bad = spelled_outside(&read_sources(), &INTRINSIC_OWNERS, names_an_intrinsic);
    assert!(
        bad.is_empty(),
        "intrinsic names spelled outside {INTRINSIC_OWNERS:?} (classify there, match on \
         `Intrinsic` here):\n{}",
        bad.join("\n")
    );
}

/// Every name a finding can carry (a check's, a retired one, a note's),
/// bare.
fn finding_names() -> BTreeSet<&'static str> {
    let checks = warpcheck::checks::all().iter();
    warpcheck::diag::kinds::all()
        .into_iter()
        .map(|k| k.name)
        .chain(checks.filter_map(|c| c.retired_name()))
        .collect()
}

/// The names among `literals` that a finding can carry, with or without
/// the `warpcheck-` prefix.
fn names_in<'a>(literals: &'a [String], names: &BTreeSet<&str>) -> Vec<&'a str> {
    literals
        .iter()
        .map(|l| l.strip_prefix("warpcheck-").unwrap_or(l))
        .filter(|l| names.contains(l))
        .collect()
}

#[test]
fn check_names_are_spelled_only_where_they_are_declared() {
    let names = finding_names();
    let mut spelled: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let sources = read_sources();
    for s in &sources {
        for n in names_in(&s.code.literals, &names) {
            spelled.entry(n).or_default().insert(s.rel());
        }
    }
    let bad: Vec<String> = spelled
        .iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(n, files)| {
            format!(
                "\"{n}\": {}",
                files.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "check or note names spelled in more than the file that declares them (ask the \
         registry, `checks::find`, or the check's own `Check` items instead):\n{}",
        bad.join("\n")
    );
    // Every name is declared somewhere the guard reads.
    for n in &names {
        assert!(
            spelled.contains_key(n),
            "\"{n}\" is spelled nowhere in src/"
        );
    }
}

#[test]
fn the_name_guards_see_what_they_must() {
    // An intrinsic's name, its prefix, a libdevice function and the
    // runtime's calls are names; a message that mentions one is not.
    for name in [
        "llvm.usub.sat.",
        "llvm.nvvm.barrier",
        "llvm.nvvm.read.ptx.sreg.{reg}",
        "__nv_expf",
        "__warpcheck_grid_sync",
        "vprintf",
        "abort",
    ] {
        assert!(names_an_intrinsic(name), "{name}");
    }
    for text in [
        "math intrinsic call (llvm.smin, llvm.fma, ...)",
        "nvvm.annotations",
        "x",
    ] {
        assert!(!names_an_intrinsic(text), "{text}");
    }
    let code = code_of(
        "const G: [&str; 1] = [\"bank-conflict\"];\n\
         fn f(c: &str) -> bool { c == \"warpcheck-divergent-branch\" }\n\
         fn g() -> String { \"no bank-conflict here\".into() }\n",
    );
    let names = finding_names();
    assert_eq!(
        names_in(&code.literals, &names),
        ["bank-conflict", "divergent-branch"]
    );
}

/// The source paths (`src/…`, `crates/…`) ARCHITECTURE.md names in its
/// sentence on who knows LLVM ("Only `crates/core/src/ir/llvm.rs`, … know
/// about LLVM"); a folder (`src/plugin/`) stands for the files in it.
fn documented_llvm_files() -> Vec<String> {
    let doc = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = doc
        .find("Only `")
        .expect("ARCHITECTURE.md says who knows LLVM");
    let sentence = &doc[start..start + doc[start..].find("know about LLVM").unwrap()];
    sentence
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|p| p.starts_with("src/") || p.starts_with("crates/"))
        .map(str::to_string)
        .collect()
}

#[test]
fn only_the_files_architecture_names_know_llvm() {
    let named = documented_llvm_files();
    assert!(named.len() >= 3, "{named:?}");
    let covers = |rel: &str| {
        named
            .iter()
            .any(|p| rel == p || (p.ends_with('/') && rel.starts_with(p.as_str())))
    };
    let knowing: Vec<String> = read_sources()
        .iter()
        .filter(|s| s.code.text.contains("inkwell") || s.code.text.contains("llvm_sys"))
        .map(Source::rel)
        .collect();
    let unnamed: Vec<&String> = knowing.iter().filter(|r| !covers(r)).collect();
    assert!(
        unnamed.is_empty(),
        "these files use inkwell or llvm-sys but ARCHITECTURE.md does not name them: {unnamed:?}"
    );
    let idle: Vec<&String> = named
        .iter()
        .filter(|p| !knowing.iter().any(|k| k == *p || k.starts_with(p.as_str())))
        .collect();
    assert!(
        idle.is_empty(),
        "ARCHITECTURE.md names these as knowing LLVM, but they do not: {idle:?}"
    );
}
