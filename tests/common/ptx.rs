//! The global and shared memory requests of a module per source line, as
//! warpcheck's sites count them and as `llc`'s PTX has them, and their
//! comparison (`ptx_crosscheck.rs`, `random_kernels.rs`).
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use warpcheck::analysis::{self, Options};
use warpcheck::ir::{Module, SiteKind};
use warpcheck::memory::Space;

/// One request: `load`, `store` or `atomic`; `global`, `shared`, `local`
/// or `const` (or `generic` where the space is not one throughout); and
/// bytes per lane.
pub type Request = (&'static str, &'static str, u64);

/// Where requests are counted: the function (mangled, as PTX names it)
/// and the source file's name and line of the innermost location.
pub type Key = (String, String, u32);

/// Each source line's requests, sorted, by [`Key`].
pub type Lines = BTreeMap<Key, Vec<Request>>;

/// A line whose requests differ.
pub struct Difference {
    pub function: String,
    pub file: String,
    pub line: u32,
    pub ours: Vec<Request>,
    pub theirs: Vec<Request>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &[Request]| {
            v.iter()
                .map(|(k, s, b)| format!("{k} {s} {b}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (mut a, mut b) = (self.ours.clone(), self.theirs.clone());
        cancel(&mut a, &mut b);
        write!(
            f,
            "{} line {}:{}: warpcheck [{}], llc [{}]; only warpcheck's [{}], only llc's [{}]",
            self.function,
            self.file,
            self.line,
            show(&self.ours),
            show(&self.theirs),
            show(&a),
            show(&b)
        )
    }
}

/// The requests of each function, lines pooled.
pub fn per_function(lines: Lines) -> Lines {
    let mut out = Lines::new();
    for ((f, _, _), v) in lines {
        out.entry((f, String::new(), 0)).or_default().extend(v);
    }
    out.values_mut().for_each(|v| v.sort());
    out
}

/// Whether llc's request `b` is warpcheck's `a`: the same kind and width,
/// and the same space unless llc's is generic (it could not prove the
/// space; the hardware resolves the address and makes the same requests).
fn matches(a: &Request, b: &Request) -> bool {
    a.0 == b.0 && a.2 == b.2 && (a.1 == b.1 || b.1 == "generic")
}

/// Removes from `a` and `b` the requests that match, llc's named spaces
/// first, then its generic ones.
fn cancel(a: &mut Vec<Request>, b: &mut Vec<Request>) {
    for generic in [false, true] {
        let mut k = 0;
        while k < b.len() {
            if (b[k].1 == "generic") != generic {
                k += 1;
                continue;
            }
            match a.iter().position(|x| matches(x, &b[k])) {
                Some(i) => {
                    a.remove(i);
                    b.remove(k);
                }
                None => k += 1,
            }
        }
    }
}

/// The lines whose requests differ, in order. Requests at line 0 (code
/// the compiler places at no line) on one side may stand for those at any
/// line on the other: llc moves the line-0 mark differently than the IR
/// has it.
pub fn compare(ours: &Lines, theirs: &Lines) -> Vec<Difference> {
    let keys: BTreeSet<&Key> = ours.keys().chain(theirs.keys()).collect();
    let mut out = Vec::new();
    // Per function: its lines, then its line-0 requests against what the
    // lines leave over.
    let functions: BTreeSet<&String> = keys.iter().map(|k| &k.0).collect();
    for func in functions {
        let none: Key = (func.clone(), String::new(), 0);
        let mut zero_a = ours.get(&none).cloned().unwrap_or_default();
        let mut zero_b = theirs.get(&none).cloned().unwrap_or_default();
        cancel(&mut zero_a, &mut zero_b);
        for k in keys.iter().filter(|k| &k.0 == func && k.2 != 0) {
            let mut a = ours.get(*k).cloned().unwrap_or_default();
            let mut b = theirs.get(*k).cloned().unwrap_or_default();
            cancel(&mut a, &mut b);
            cancel(&mut a, &mut zero_b);
            cancel(&mut zero_a, &mut b);
            if !a.is_empty() || !b.is_empty() {
                out.push(difference(k, ours, theirs));
            }
        }
        if !zero_a.is_empty() || !zero_b.is_empty() {
            out.push(difference(&none, ours, theirs));
        }
    }
    out
}

fn difference(k: &Key, ours: &Lines, theirs: &Lines) -> Difference {
    Difference {
        function: k.0.clone(),
        file: k.1.clone(),
        line: k.2,
        ours: ours.get(k).cloned().unwrap_or_default(),
        theirs: theirs.get(k).cloned().unwrap_or_default(),
    }
}

fn base_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// warpcheck's requests: every memory site of every kernel, each
/// instruction's pieces once however many kernels reach it (a device
/// function's access whose space differs between kernels is `generic`,
/// as llc must leave it).
pub fn ours(m: &Module) -> (Lines, BTreeSet<String>) {
    let opts = Options {
        no_explanations: true,
        ..Options::default()
    };
    let a = analysis::analyze(m, &opts, &warpcheck::taint::ifds::IfdsTaint);
    // (func, inst, kind, offset, bytes) -> space
    // (func, inst, kind, offset, bytes) -> space
    let mut seen: BTreeMap<(u32, u32, u8, i64, u64), Option<Space>> = BTreeMap::new();
    for k in &a.kernels {
        for s in &k.sites {
            let kind = match s.kind {
                SiteKind::Load => 0,
                SiteKind::Store => 1,
                SiteKind::Atomic => 2,
                SiteKind::Branch => continue,
            };
            let key = (s.func.0, s.inst.0, kind, s.offset, s.bytes);
            let space = s.space;
            seen.entry(key)
                .and_modify(|x| {
                    if *x != space {
                        *x = Some(Space::Unknown)
                    }
                })
                .or_insert(space);
        }
    }
    let reached = a
        .kernels
        .iter()
        .flat_map(|k| k.reached.iter().map(|&f| m.func(f).name.clone()))
        .collect();
    let mut out = Lines::new();
    for ((func, inst, kind, _, bytes), space) in seen {
        let space = match space {
            Some(Space::Global) => "global",
            Some(Space::Shared) => "shared",
            Some(Space::Local) => "local",
            Some(Space::Constant) => "const",
            Some(Space::Unknown) | None => "generic",
        };
        let f = m.func(warpcheck::ir::FuncId(func));
        let (file, line) = f
            .inst(warpcheck::ir::InstId(inst))
            .loc
            .map(|l| {
                let pos = &m.loc(l).pos;
                (base_name(&m.file(pos.file).name), pos.line)
            })
            .filter(|(_, line)| *line != 0)
            .unwrap_or_default();
        let kind = ["load", "store", "atomic"][kind as usize];
        out.entry((f.name.clone(), file, line))
            .or_default()
            .push((kind, space, bytes));
    }
    out.values_mut().for_each(|v| v.sort());
    (out, reached)
}

/// The requests of llc's PTX: each `ld`, `st`, `atom` and `red` other
/// than of parameters, at the line of the last `.loc` before it, in the
/// functions named in `reached` (llc also emits device functions no
/// kernel calls, or calls only inlined).
pub fn theirs(ptx: &str, reached: &BTreeSet<String>) -> Lines {
    // `.file 1 "/path/k.cu"` (after the code that names it).
    let files: BTreeMap<u32, String> = ptx
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix(".file")?;
            let (n, name) = rest.trim().split_once(char::is_whitespace)?;
            Some((n.parse().ok()?, base_name(name.split('"').nth(1)?)))
        })
        .collect();
    let mut at = (String::new(), 0u32);
    let mut out = Lines::new();
    let mut function = String::new();
    let mut counted = false;
    for raw in ptx.lines() {
        let line = raw.trim();
        // `.visible .entry _Z1kPf(`, `.func  (.param .b32 r) _Z1fi(`.
        if (line.contains(".entry ") || line.contains(".func "))
            && (line.ends_with('(') || line.ends_with("()"))
        {
            let head = line.trim_end_matches("()").trim_end_matches('(');
            let name = head.rsplit([' ', '\t']).next().unwrap_or("");
            counted = reached.contains(name);
            function = name.to_string();
            continue;
        }
        if let Some(rest) = line.strip_prefix(".loc") {
            let mut parts = rest
                .trim()
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|p| !p.is_empty());
            let file = parts.next().and_then(|p| p.parse::<u32>().ok());
            let l = parts.next().and_then(|p| p.parse::<u32>().ok());
            if let (Some(file), Some(l)) = (file, l) {
                at = match l {
                    0 => (String::new(), 0),
                    l => (files.get(&file).cloned().unwrap_or_default(), l),
                };
            }
            continue;
        }
        // A guard `@%p1 st.global.u32 ...` runs the same instruction.
        let inst = line
            .strip_prefix('@')
            .and_then(|r| r.split_once(char::is_whitespace).map(|x| x.1.trim_start()))
            .unwrap_or(line);
        let op = inst.split_whitespace().next().unwrap_or("");
        if let Some(r) = request(op).filter(|_| counted) {
            out.entry((function.clone(), at.0.clone(), at.1))
                .or_default()
                .push(r);
        }
    }
    out.values_mut().for_each(|v| v.sort());
    out
}

/// The request a PTX opcode with its modifiers makes, if it is a global,
/// shared or generic load, store or atomic.
pub fn request(op: &str) -> Option<Request> {
    let mut parts = op.split('.');
    let kind = match parts.next()? {
        "ld" | "ldu" => "load",
        "st" => "store",
        "atom" | "red" => "atomic",
        _ => return None,
    };
    let mods: Vec<&str> = parts.collect();
    let mut space = "generic";
    let mut lanes = 1;
    for m in &mods {
        match *m {
            "global" => space = "global",
            "shared" => space = "shared",
            "local" => space = "local",
            "const" => space = "const",
            "param" => return None,
            "v2" => lanes = 2,
            "v4" => lanes = 4,
            _ => {}
        }
    }
    // The type is the last modifier: `u32`, `f16x2`, `b128`.
    let ty = mods.last()?;
    let (scalar, count) = match ty.split_once('x') {
        Some((s, n)) => (s, n.parse::<u64>().ok()?),
        None => (*ty, 1),
    };
    let bits: u64 = scalar
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .ok()?;
    Some((kind, space, lanes * count * bits / 8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes() {
        assert_eq!(request("ld.global.v4.f32"), Some(("load", "global", 16)));
        assert_eq!(request("st.shared.u8"), Some(("store", "shared", 1)));
        assert_eq!(request("ld.global.nc.v2.u64"), Some(("load", "global", 16)));
        assert_eq!(
            request("atom.shared.add.u32"),
            Some(("atomic", "shared", 4))
        );
        assert_eq!(request("red.global.add.f32"), Some(("atomic", "global", 4)));
        assert_eq!(request("ld.u32"), Some(("load", "generic", 4)));
        assert_eq!(request("ld.param.u64"), None);
        assert_eq!(request("st.local.u32"), Some(("store", "local", 4)));
        assert_eq!(request("mov.u32"), None);
    }
}
