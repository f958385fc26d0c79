//! The access model against the compiler that makes what the GPU runs:
//! every `.cu` fixture and example is compiled as `check` compiles it,
//! the same IR is handed to `llc` (this build's LLVM, `-mcpu=sm_80`), and
//! per source line the PTX's loads, stores and atomics (count, width and
//! space: `ld.global.v4.f32` is one 16-byte global load; a generic `ld`,
//! where llc could not prove the space, stands for any) must be
//! warpcheck's sites of that line. The simulator cannot be this
//! oracle: it counts the requests `memory::lower` says, as the checks do.
//!
//! Lines are the innermost debug location of each side (PTX `.loc`, the
//! IR instruction's own), so an access inlined from a header is keyed by
//! the header's line on both. A difference fails the test unless
//! [`EXCEPTIONS`] lists the line with the reason; a listed line that no
//! longer differs fails it too, so the list stays short and true.
//! `ir/lowering.ll` adds the lowering's corner cases (long and run-time
//! length copies, aggregates, odd and under-aligned values), compared
//! kernel by kernel. `random_kernels.rs` holds the random kernels to the
//! same comparison.

#[path = "common/sim.rs"]
mod helpers;
#[path = "common/ll.rs"]
mod ll;
#[path = "common/ptx.rs"]
mod ptx;
#[path = "common/random_kernel/mod.rs"]
mod random_kernel;

use helpers::common::{llvm_tool, skip};
use ptx::{compare, ours, theirs, Lines};
use std::path::Path;
use std::process::Command;
use warpcheck::frontend::{self, CompileOptions, IrSource};
use warpcheck::ir::major::LLVM_MAJOR;

/// Where warpcheck's requests differ from llc's, and why: `(LLVM major,
/// file, line or kernel, why)`, the file as the fixture's name, a kernel
/// for a file without debug lines.
const EXCEPTIONS: &[(u32, &str, &str, &str)] = &[
    (
        19,
        "lowering.ll",
        "c8",
        "llc-19 loads an `<8 x i8>` as two 4-byte halves (no legal 8-byte byte vector); \
         llc-22 and warpcheck as one 8-byte access. Clang makes byte vectors only of \
         hand-written vector types",
    ),
    (
        19,
        "lowering.ll",
        "mmbig",
        "a memmove of 128 bytes or more is two byte loops, forward and backward, of which \
         one runs: warpcheck counts the one that runs",
    ),
    (
        22,
        "lowering.ll",
        "mmbig",
        "a memmove of 128 bytes or more is two byte loops, forward and backward, of which \
         one runs: warpcheck counts the one that runs",
    ),
    (
        22,
        "lowering.ll",
        "i128",
        "llc-22 loads a 16-aligned `i128` as one `ld.v2.u64`, llc-19 and warpcheck as two \
         8-byte loads",
    ),
    (
        22,
        "sim_ops.cu",
        // The copy is placed in warpcheck's own header, at this line.
        "117",
        "llc-19 copies into a local variable in 8-byte stores (it may align the variable as \
         it likes), as warpcheck does; llc-22 keeps the source's 1-byte pieces: local memory \
         only",
    ),
];

/// Whether this build's `llc` runs here; says why `test` is skipped if not.
fn have_llc(test: &str) -> bool {
    let there = Command::new(llvm_tool("llc"))
        .arg("--version")
        .output()
        .is_ok();
    if !there {
        skip(test, &format!("no {}", llvm_tool("llc")));
    }
    there
}

/// The PTX `llc` makes of `ir` (bitcode or a `.ll` file).
fn llc(ir: &Path, dir: &Path) -> Result<String, String> {
    let out = dir.join("out.ptx");
    let o = Command::new(llvm_tool("llc"))
        .args(["-mcpu=sm_80", "-o"])
        .arg(&out)
        .arg(ir)
        .output()
        .map_err(|e| format!("cannot run llc: {e}"))?;
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    std::fs::read_to_string(&out).map_err(|e| e.to_string())
}

#[test]
fn every_fixture_and_example_makes_the_requests_llc_emits() {
    if !have_llc("every_fixture_and_example_makes_the_requests_llc_emits") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = helpers::cu_files(&root.join("tests/fixtures/cu"));
    files.extend(helpers::cu_files(&root.join("examples")));
    // The lowering's corner cases, kernel by kernel (no debug lines).
    files.push(root.join("tests/fixtures/ir/lowering.ll"));
    let dir = tempfile::tempdir().unwrap();
    let (mut lines, mut accesses) = (0, 0);
    let mut differences = Vec::new();
    let mut excused = Vec::new();
    for f in &files {
        let (m, ir) = frontend::load_with_ir(f, &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let bc = dir.path().join("in.bc");
        match ir {
            IrSource::Bitcode(b) => std::fs::write(&bc, b).unwrap(),
            IrSource::File(p) => {
                std::fs::copy(p, &bc).unwrap();
            }
        }
        let text = llc(&bc, dir.path()).unwrap_or_else(|e| panic!("{}: llc: {e}", f.display()));
        let (a, reached) = ours(&m);
        let b: Lines = theirs(&text, &reached);
        lines += b.len();
        accesses += b.values().map(Vec::len).sum::<usize>();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        for d in compare(&a, &b) {
            let at = match d.line {
                0 => d.function.clone(),
                l => l.to_string(),
            };
            let listed = EXCEPTIONS.iter().position(|&(major, file, where_, _)| {
                major == LLVM_MAJOR && name == file && at == where_
            });
            match listed {
                Some(e) => excused.push(e),
                None => differences.push(format!("{name}: {d}")),
            }
        }
    }
    eprintln!(
        "ptx cross-check: {} files, {lines} lines with {accesses} global or shared accesses in llc's PTX",
        files.len()
    );
    let stale: Vec<String> = EXCEPTIONS
        .iter()
        .enumerate()
        .filter(|(k, e)| e.0 == LLVM_MAJOR && !excused.contains(k))
        .map(|(_, (_, file, at, why))| format!("{file} {at} ({why})"))
        .collect();
    assert!(
        stale.is_empty(),
        "listed exceptions that no longer differ:\n{}",
        stale.join("\n")
    );
    assert!(lines > 300 && accesses > 600, "{lines} lines, {accesses}");
    assert!(
        differences.is_empty(),
        "{} lines differ from llc's PTX:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// Random kernels checked: about a minute in a debug build.
const RANDOM_CASES: u32 = 100;
const RANDOM_SEED: u64 = 0x5eed_0002;

/// Random kernels (of [`RANDOM_SEED`]) where llc's selection DAG combines
/// more than the rules of `memory::lower` say: `(LLVM majors, case, why)`.
/// Each is a request llc makes narrower, drops or joins; none arises in
/// the fixtures and examples.
const RANDOM_EXCEPTIONS: &[(&[u32], u32, &str)] = &[
    (
        &[19, 22],
        0,
        "`(x & 7) == 0` of a loaded word: the combiner tests the low byte alone",
    ),
    (
        &[19, 22],
        11,
        "a store that the next store to the same address overwrites: dropped",
    ),
    (
        &[22],
        27,
        "one global word loaded six times with shared stores between (an unrolled loop): \
         the combiner loads it once and drops the repeated stores of one value to one place",
    ),
    (
        &[19, 22],
        33,
        "a value stored back where it was loaded from (once through a generic pointer, \
         once through a shared one): the combiner drops the load and the store",
    ),
    (
        &[19, 22],
        45,
        "two 4-byte stores the IR vectoriser leaves apart, which the combiner's store \
         merging joins into one 8-byte store",
    ),
    (
        &[19, 22],
        50,
        "a loaded word of which only low bits reach the stores through additions: \
         narrowed by demanded bits",
    ),
    (
        &[19, 22],
        66,
        "`trunc (load i64)` compared with a constant: the combiner keeps the 8-byte load",
    ),
    (
        &[19, 22],
        75,
        "an atomic block llc duplicates into its two predecessors (tail duplication): \
         one request per execution, two instructions",
    ),
];

#[test]
fn random_kernels_make_the_requests_llc_emits() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    use random_kernel::lower::lower;
    use random_kernel::strategy::{program, Knobs};
    if !have_llc("random_kernels_make_the_requests_llc_emits") {
        return;
    }
    let cases = std::env::var("WARPCHECK_PTX_RANDOM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RANDOM_CASES);
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&RANDOM_SEED.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    );
    let strategy = program(Knobs {
        header_loops: true,
        unsigned_ops: true,
        wide_loops: true,
    });
    let dir = tempfile::tempdir().unwrap();
    let (mut accesses, mut differences, mut stale) = (0, Vec::new(), Vec::new());
    for case in 0..cases {
        let p = strategy.new_tree(&mut runner).unwrap().current();
        let built = dir.path().join("built.ll");
        std::fs::write(&built, ll::write(&lower(&p))).unwrap();
        // As clang would hand it to the backend: optimised at -O2 (no
        // constant branches, dead values or unmerged copies left).
        let ll = dir.path().join("random.ll");
        let o = Command::new(llvm_tool("opt"))
            .args(["-O2", "-S", "-o"])
            .arg(&ll)
            .arg(&built)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "case {case}: opt: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let m = warpcheck::ir::llvm::load_file(&ll).unwrap();
        if let Ok(keep) = std::env::var("WARPCHECK_PTX_KEEP") {
            let _ = std::fs::copy(&ll, format!("{keep}/case{case}.ll"));
        }
        let text = llc(&ll, dir.path()).unwrap_or_else(|e| panic!("case {case}: llc: {e}"));
        let (a, reached) = ours(&m);
        let b = theirs(&text, &reached);
        accesses += b.values().map(Vec::len).sum::<usize>();
        // Per function: every instruction of a random kernel has a line of
        // its own, and llc gives a node the combiner makes of several (a
        // narrowed load, a merged vector access) the line of one of them.
        let (a, b) = (ptx::per_function(a), ptx::per_function(b));
        let listed = RANDOM_EXCEPTIONS
            .iter()
            .any(|&(majors, c, _)| majors.contains(&LLVM_MAJOR) && c == case);
        match (compare(&a, &b), listed) {
            (d, true) if d.is_empty() => stale.push(case),
            (_, true) => {}
            (d, false) => differences.extend(d.iter().map(|d| format!("case {case}: {d}\n{p}"))),
        }
    }
    assert!(
        stale.is_empty(),
        "listed random kernels that no longer differ: {stale:?}"
    );
    eprintln!("ptx cross-check: {cases} random kernels, {accesses} accesses in llc's PTX");
    assert!(accesses > 20 * cases as usize, "{accesses} accesses");
    assert!(
        differences.is_empty(),
        "{} lines differ from llc's PTX:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
