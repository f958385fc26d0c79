//! Helpers shared by the integration tests: run the built binary on
//! fixtures and pick sites out of its JSON.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// The `.cu` files in `dir`, sorted.
pub fn cu_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    files
}

pub fn warpcheck() -> Command {
    Command::new(env!("CARGO_BIN_EXE_warpcheck"))
}

/// `libwarpcheck.so`, built beside the binary.
pub fn plugin() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_warpcheck"));
    let p = exe.parent().unwrap().join("libwarpcheck.so");
    assert!(
        p.is_file(),
        "plugin not built at {} (run `cargo build` before `cargo test`)",
        p.display()
    );
    p
}

/// `libwarpcheck-frontend.so` (the frontend action, `-fplugin`), built
/// beside the binary.
pub fn frontend_plugin() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_warpcheck"));
    let p = exe.parent().unwrap().join("libwarpcheck-frontend.so");
    assert!(p.is_file(), "frontend action not built at {}", p.display());
    p
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run command")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON a command printed, which must have exited 0.
pub fn ok_json(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `warpcheck check --format json --sites` on a fixture and parses
/// the report, every kernel's sites listed.
pub fn check_json(rel: &str, extra: &[&str]) -> Value {
    let out = run(warpcheck()
        .args(["check", "--format", "json", "--sites"])
        .args(extra)
        .arg(fixture(rel)));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// The kernel whose demangled name starts with `name(`.
pub fn kernel<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"].as_str().unwrap().starts_with(&format!("{name}(")))
        .unwrap_or_else(|| panic!("no kernel {name} in {report:#}"))
}

/// Sites of a kernel with the given kind on a line.
pub fn sites<'a>(report: &'a Value, kernel_name: &str, kind: &str, line: u64) -> Vec<&'a Value> {
    kernel(report, kernel_name)["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == kind && s["line"] == line)
        .collect()
}

/// Asserts every site of that kind on that line has the same dependence,
/// and that there is at least one.
pub fn assert_dependent(report: &Value, kernel_name: &str, kind: &str, line: u64, expected: bool) {
    let found = sites(report, kernel_name, kind, line);
    assert!(
        !found.is_empty(),
        "no {kind} site on line {line} of {kernel_name}"
    );
    for s in found {
        assert_eq!(
            s["thread_dependent"], expected,
            "{kind} on line {line} of {kernel_name}: {s:#}"
        );
    }
}

/// The set of spaces of that kind of site on a line.
pub fn spaces(report: &Value, kernel_name: &str, kind: &str, line: u64) -> Vec<String> {
    let mut v: Vec<String> = sites(report, kernel_name, kind, line)
        .iter()
        .map(|s| s["space"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// An LLVM tool of the major this build reads (`opt-19`, `clang-22`, ...).
pub fn llvm_tool(name: &str) -> String {
    format!("{name}-{}", warpcheck::ir::major::LLVM_MAJOR)
}

/// The column clang gives a conditional branch: clang 19 the start of the
/// condition, clang 22 its comparison operator (`i < n` at the `<`; a bare
/// `t % 2` stays at its start). See ARCHITECTURE.md, "LLVM 19 and 22".
pub fn branch_col(clang19: u32, clang22: u32) -> u32 {
    if warpcheck::ir::major::LLVM_MAJOR >= 22 {
        clang22
    } else {
        clang19
    }
}

/// Whether each program runs here (`clang-22 --version`).
pub fn have_tools(tools: &[&str]) -> Result<(), String> {
    for t in tools {
        let ok = Command::new(t)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            return Err(format!(
                "{t} is not installed (bash scripts/setup.sh --llvm22)"
            ));
        }
    }
    Ok(())
}

/// Why a test of the LLVM 22 build cannot run here, if it cannot.
pub fn llvm22_build_missing(tools: &[&str]) -> Option<String> {
    if warpcheck::ir::major::LLVM_MAJOR != 22 {
        return Some(
            "this is the LLVM 19 build; run `cargo test --no-default-features --features \
             llvm22 --target-dir target/llvm22`"
                .into(),
        );
    }
    have_tools(tools).err()
}

/// Says on the terminal (past the test harness' capture) why a test did
/// nothing.
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
}

pub fn clang() -> String {
    std::env::var("WARPCHECK_CLANG").unwrap_or_else(|_| llvm_tool("clang"))
}

/// Flags that let clang compile a plain .cu without a toolkit: the
/// force-included header and the include dir of warpcheck's own
/// `cooperative_groups.h`.
pub fn no_toolkit_flags() -> Vec<String> {
    let frontend = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/frontend");
    [
        "-nocudainc",
        "-nocudalib",
        "-Xclang",
        "-target-feature",
        "-Xclang",
        "+ptx75",
        "-include",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        frontend.join("warpcheck_cuda.h").display().to_string(),
        "-isystem".into(),
        frontend.join("include").display().to_string(),
    ])
    .collect()
}

/// The toolkit root for a test's toolkit half, or `None` after saying why
/// `what` is skipped. In CI (`CI` set) a missing toolkit fails the test: a
/// half that silently never runs there proves nothing.
#[allow(dead_code)]
pub fn cuda_toolkit_or_skip(what: &str) -> Option<PathBuf> {
    match cuda_toolkit() {
        Ok(root) => Some(root),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("no CUDA 12.4 toolkit in CI, where {what} must run: {e}")
        }
        Err(e) => {
            eprintln!("skipping {what}: no CUDA 12.4 toolkit: {e}");
            None
        }
    }
}

/// The CUDA 12.4 header set of `scripts/cuda-toolkit.sh`, fetched on first
/// use; `Err` says why there is none (no network, no pip).
pub fn cuda_toolkit() -> Result<PathBuf, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/cuda-toolkit.sh");
    let out = Command::new("bash")
        .arg(script)
        .output()
        .map_err(|e| format!("cannot run cuda-toolkit.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!("cuda-toolkit.sh failed: {}", stderr(&out)));
    }
    stdout(&out)
        .lines()
        .last()
        .map(|l| PathBuf::from(l.trim()))
        .ok_or_else(|| "cuda-toolkit.sh printed no root".to_string())
}

/// Installs this build into a fresh prefix (`scripts/install.sh`).
pub fn install() -> tempfile::TempDir {
    let prefix = tempfile::tempdir().unwrap();
    let build = Path::new(env!("CARGO_BIN_EXE_warpcheck")).parent().unwrap();
    let out = run(Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install.sh"))
        .arg(prefix.path())
        .arg(build));
    assert!(out.status.success(), "{}", stderr(&out));
    prefix
}

/// A fixture project copied into a fresh directory.
pub fn project(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(fixture(&format!("projects/{name}"))).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    dir
}
