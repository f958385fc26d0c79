//! Parity between clang 19 and clang 22: every fixture and example, compiled
//! by each and read by the LLVM 22 build (which reads both), gives the same
//! JSON sites and findings, except where the two compilers really emit
//! different code. Those exceptions are listed below with the reason found
//! in the IR, and the test fails on any other difference and on any listed
//! one that no longer occurs (ARCHITECTURE.md, "LLVM 19 and 22").
//!
//! Skipped, with the reason printed, outside the LLVM 22 build or without
//! both clangs.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// `s[t + S]` in `halve<S>`: clang 19 computes the index as `t | S` (`or
/// disjoint`, true only because t < S), clang 22 as a byte offset from
/// `&s[t]`. The ACF reads an `or` as an add only where the low bits of one
/// side are known zero (`(6*t) | 1` is read as `6*t + 1`, and there the two
/// compilers agree), so only clang 22's sites gain `stride`/`dim` and the
/// message its "lanes are N bytes apart".
const STRIDE: &str = "index `or disjoint` (clang 19) vs byte offset (clang 22)";
/// `if (a && b)`: clang 22 places both branches at the `&&`, so their two
/// findings share a position and only the stronger is kept.
const AND: &str = "both branches of `&&` at one position (clang 22)";
/// The loops are unrolled or rotated differently, so accesses and
/// branches move between lines or disappear.
const LOOPS: &str = "loop unrolled or rotated differently";

/// A halving loop that clang 19 rotates: the bank-conflict rows of its
/// accesses are keyed by the phi before the shift (`s.032.in` = 256, 128,
/// ..), clang 22's by the counter itself (`s` = 128, 64, ..). The classes
/// and degrees agree; only the label and the row values differ.
const ROTATED: &str = "per-iteration rows keyed by a rotated loop's phi (clang 19)";

/// (file, kernel, line, why): where clang 19 and clang 22 differ.
const INTENDED: &[(&str, &str, u64, &str)] = &[
    ("cost_addsub.cu", "addSub0", 5, LOOPS),
    ("cost_addsub.cu", "addSub0", 7, LOOPS),
    ("divergence.cu", "branches", 28, LOOPS),
    // clang 19 peels the first iteration (a second `acc > limit` branch
    // and a guard at line 34); clang 22 does not.
    ("sim_divergence.cu", "nested", 37, LOOPS),
    ("sim_divergence.cu", "nested", 40, LOOPS),
    // `assert(v[t] >= 0)`: clang 22 places the load at `v[t]` (column
    // 10), clang 19 at the `assert` (column 3).
    (
        "sim_errors.cu",
        "asserts",
        32,
        "load column inside assert()",
    ),
    (
        "taint_abort.cu",
        "assert_guard",
        60,
        "load column inside assert()",
    ),
    // `n <= 1 ? 1 : n * factorial(n - 1)`, inlined into `calls`: clang 22
    // keeps one more branch of the unrolled recursion.
    ("sim_ops.cu", "calls", 94, LOOPS),
    // `s[t + S]`: clang 19 forms `t | S` (`or disjoint`), clang 22 a
    // byte offset on `s + t`; the sectors agree, the stride is read only
    // from the latter.
    ("templated_steps.cu", "void halve<16>", 6, STRIDE),
    ("templated_steps.cu", "void halve<64>", 6, STRIDE),
    ("templated_steps.cu", "void halve<8>", 6, STRIDE),
    ("cg_reduce.cu", "reduce2", 63, ROTATED),
    ("cg_reduce.cu", "reduce3", 63, ROTATED),
    ("cg_subset.cu", "block_sum", 29, ROTATED),
    ("cost_reduce.cu", "reduce2", 46, ROTATED),
    ("cost_reduce.cu", "reduce3", 64, ROTATED),
    ("reduction.cu", "reduce_shared", 14, ROTATED),
    ("acf_loops.cu", "sequential", 60, ROTATED),
    // Clang 22 keeps two copies of these branches and unswitches
    // `break_half`'s loop on `t & 1` (see tests/acf_loops.rs).
    ("acf_loops.cu", "odd_in_loop", 15, LOOPS),
    ("acf_loops.cu", "break_half", 24, LOOPS),
    // `s = blockDim.x / (2 * d)` in RaCuda's refactored reductions: clang
    // 19 divides, and the sweep evaluates `s` for each `d`; clang 22 shifts
    // right by the trailing zeros of `2 * d` (`cttz`), which the ACF does
    // not evaluate, so the branch stays unknown.
    ("cost_racuda.cu", "reduce2a", 62, LOOPS),
    ("cost_racuda.cu", "reduce3a", 79, LOOPS),
    // `As[ty][k] * Bs[k][tx]`: clang 19 places the first load at `As`
    // (column 11), clang 22 at its subscript (column 18).
    (
        "cost_racuda.cu",
        "matMulBad",
        24,
        "load column of a 2-D subscript",
    ),
    ("sim_transpose.cu", "transpose_padded", 11, AND),
    ("sim_transpose.cu", "transpose_padded", 17, AND),
    ("sim_transpose.cu", "transpose_unpadded", 27, AND),
    ("sim_transpose.cu", "transpose_unpadded", 33, AND),
];

fn check(clang: &str, file: &Path, extra: &[&str]) -> Value {
    // Every warning kept: the impact estimate follows each clang's
    // instruction counts, so a finding near the threshold could be a note
    // under one and a warning under the other.
    let out = run(warpcheck()
        .args([
            "check",
            "--format",
            "json",
            "--sites",
            "--min-impact",
            "0",
            "--clang",
            clang,
        ])
        .args(extra)
        .arg(file));
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{clang} {}: {}",
        file.display(),
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

fn base(name: &str) -> &str {
    name.split('(').next().unwrap_or(name)
}

/// (kernel, line) → what is reported there, as comparable text. Branch
/// columns are left out: clang 22 places a branch at its condition's
/// operator (see `branch_columns_follow_each_clang`).
fn view(r: &Value) -> BTreeSet<(String, u64, String)> {
    let mut v = BTreeSet::new();
    let mut seen = std::collections::BTreeMap::new();
    for k in r["kernels"].as_array().unwrap() {
        let kernel = base(k["name"].as_str().unwrap()).to_string();
        for s in k["sites"].as_array().unwrap() {
            let mut s = s.clone();
            let o = s.as_object_mut().unwrap();
            for volatile in ["why", "acf", "file"] {
                o.remove(volatile);
            }
            if o["kind"] == "branch" {
                o.remove("column");
            }
            let line = o["line"].as_u64().unwrap();
            let text = Value::Object(o.clone()).to_string();
            // A multiset: the n-th equal site is its own entry.
            let n = seen.entry((kernel.clone(), text.clone())).or_insert(0);
            *n += 1;
            v.insert((kernel.clone(), line, format!("site#{n} {text}")));
        }
    }
    for f in r["findings"].as_array().unwrap() {
        let col = if f["check"] == "divergent-branch" {
            Value::Null
        } else {
            f["column"].clone()
        };
        let text = format!(
            "finding {} {} {} {}",
            f["check"],
            f["severity"],
            col,
            without_share(f["message"].as_str().unwrap_or(""))
        );
        let kernel = base(f["kernel"].as_str().unwrap()).to_string();
        v.insert((kernel, f["line"].as_u64().unwrap(), text));
    }
    v
}

/// `message` without its impact estimate (" (~40% of the kernel's
/// time)"), which follows each clang's instruction counts.
fn without_share(message: &str) -> &str {
    match message.rfind(" (~") {
        Some(i) if message.ends_with("of the kernel's time)") => &message[..i],
        _ => message,
    }
}

fn files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = cu_files(&root.join("tests/fixtures/cu"));
    v.extend(cu_files(&root.join("examples")));
    v
}

/// Where clang 19's and clang 22's reports of `file` differ.
fn differences(file: &Path) -> Vec<(String, String, u64)> {
    let a = view(&check("clang-19", file, &[]));
    let b = view(&check("clang-22", file, &[]));
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let lines: BTreeSet<(String, u64)> = a
        .symmetric_difference(&b)
        .map(|(k, line, _)| (k.clone(), *line))
        .collect();
    lines
        .into_iter()
        .map(|(k, line)| (name.clone(), k, line))
        .collect()
}

#[test]
fn every_fixture_agrees_but_for_the_listed_differences() {
    if let Some(why) = llvm22_build_missing(&["clang-19", "clang-22"]) {
        return skip("every_fixture_agrees_but_for_the_listed_differences", &why);
    }
    let files = files();
    // Two threads: the machine has two cores.
    let (left, right) = files.split_at(files.len() / 2);
    let found: BTreeSet<(String, String, u64)> = std::thread::scope(|s| {
        let h = s.spawn(|| left.iter().flat_map(|f| differences(f)).collect::<Vec<_>>());
        let mut all: Vec<_> = right.iter().flat_map(|f| differences(f)).collect();
        all.extend(h.join().unwrap());
        all.into_iter().collect()
    });
    let intended: BTreeSet<(String, String, u64)> = INTENDED
        .iter()
        .map(|(f, k, l, _)| (f.to_string(), k.to_string(), *l))
        .collect();
    let unexplained: Vec<_> = found.difference(&intended).collect();
    let stale: Vec<_> = intended.difference(&found).collect();
    assert!(
        unexplained.is_empty() && stale.is_empty(),
        "differences not explained: {unexplained:#?}\nexplained but gone: {stale:#?}"
    );
}

#[test]
fn branch_columns_follow_each_clang() {
    if let Some(why) = llvm22_build_missing(&["clang-19", "clang-22"]) {
        return skip("branch_columns_follow_each_clang", &why);
    }
    // `  if (i < n) c[i] = a[i] + b[i];` (line 11): the condition starts at
    // column 7 (`i`), its operator `<` is at column 9.
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/vector_add.cu");
    for (clang, col) in [("clang-19", 7), ("clang-22", 9)] {
        let r = check(clang, &file, &[]);
        let cols: Vec<u64> = r["kernels"][0]["sites"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["kind"] == "branch" && s["line"] == 11)
            .map(|s| s["column"].as_u64().unwrap())
            .collect();
        assert_eq!(cols, [col], "{clang}");
    }
}

#[test]
fn ldg_of_a_vector_is_one_access_under_both_clangs() {
    if let Some(why) = llvm22_build_missing(&["clang-19", "clang-22"]) {
        return skip("ldg_of_a_vector_is_one_access_under_both_clangs", &why);
    }
    // `__ldg(&vin[t])` of a float4 (line 87): one 16-byte load from clang
    // 19. LLVM 22 reads `llvm.nvvm.ldg` as a plain invariant load, which
    // clang 22's optimiser splits into four 4-byte loads (align 16, 4, 8,
    // 4); the backend merges them again (memory/lower/vector.rs), so both are
    // one 16-byte access.
    let file = fixture("cu/sim_ops.cu");
    for (clang, bytes) in [("clang-19", vec![16]), ("clang-22", vec![16])] {
        let r = check(clang, &file, &[]);
        let got: Vec<u64> = kernel(&r, "vectors")["sites"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["kind"] == "load" && s["line"] == 87)
            .map(|s| s["bytes"].as_u64().unwrap())
            .collect();
        assert_eq!(got, bytes, "{clang}");
    }
}

#[test]
fn both_clangs_shapes_of_the_cost_fixtures_get_the_same_bounds() {
    if let Some(why) = llvm22_build_missing(&["clang-19", "clang-22"]) {
        return skip(
            "both_clangs_shapes_of_the_cost_fixtures_get_the_same_bounds",
            &why,
        );
    }
    // Clang 22 enters an unrolled loop's remainder under
    // `llvm.assume(i % 4 != 0)` (triangular), starts a halving counter at
    // `blockDim.x >> 1` (reduce2, reduce3) and guards addSub3's unrolled
    // loop by `(h − 1) >> 1 ≠ 0` instead of `h ≥ 3`. The same facts bound
    // them: row i of the triangle reads i values, 4 sectors each (2·n²
    // leading, tests/cost_bounds.rs); the others as under clang 19.
    let cases = [
        ("cu/cost_triangular.cu", "triangular", "32"),
        ("cu/cost_reduce.cu", "reduce2", "256"),
        ("cu/cost_reduce.cu", "reduce3", "64"),
        ("cu/cost_addsub.cu", "addSub3", "64"),
    ];
    for (rel, name, block) in cases {
        let file = fixture(rel);
        let args = ["--bounds", "--block-dim", block];
        let (b19, b22) = (
            check("clang-19", &file, &args),
            check("clang-22", &file, &args),
        );
        // Sectors are the memory traffic, the same code either way; steps
        // count instructions, which the two clangs emit differently.
        let bound = |r: &Value, m: &str| kernel(r, name)["bounds"]["per_warp"][m]["bound"].clone();
        for r in [&b19, &b22] {
            let steps = bound(r, "steps");
            assert!(
                steps.is_string() && steps != "no bound",
                "{name} steps: {steps}"
            );
        }
        let (x, y) = (bound(&b19, "sectors"), bound(&b22, "sectors"));
        assert!(x.is_string() && x != "no bound", "{name} sectors: {x}");
        assert_eq!(x, y, "{name} sectors: clang 19 {x}, clang 22 {y}");
    }
    let tri = check(
        "clang-22",
        &fixture("cu/cost_triangular.cu"),
        &["--bounds", "--block-dim", "32"],
    );
    let b = &kernel(&tri, "triangular")["bounds"]["per_warp"]["sectors"]["bound"];
    // The leading-degree-first polynomial, first in a `min(…)`.
    let b = b.as_str().unwrap();
    assert!(
        b.trim_start_matches("min(")
            .starts_with("2·max(0, n)·max(0, n)"),
        "{b}"
    );
}
