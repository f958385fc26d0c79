//! Bad input gets a clear message naming the file (and line when LLVM gave
//! one) and exit code 2; it never panics and never loses other results.

mod common;
use common::*;

fn check(args: &[&str]) -> std::process::Output {
    run(warpcheck().arg("check").args(args))
}

#[test]
fn malformed_ir_names_file_and_line() {
    let f = fixture("ir/malformed.ll");
    let out = check(&[f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("malformed.ll:6:"), "{err}");
    assert!(err.contains("undefined_value"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn invalid_ir_is_rejected_by_the_verifier() {
    let f = fixture("ir/invalid.ll");
    let out = check(&[f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("invalid LLVM IR"), "{}", stderr(&out));
}

#[test]
fn host_module_is_an_input_error() {
    let f = fixture("ir/host.ll");
    let out = check(&[f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a CUDA device module"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn module_without_kernels_is_fine() {
    let f = fixture("ir/no_kernels.ll");
    let out = check(&["--format", "json", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("no kernels"), "{}", stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["kernels"].as_array().unwrap().len(), 0);
}

#[test]
fn one_bad_file_keeps_the_others() {
    let bad = fixture("ir/malformed.ll");
    let good = fixture("cu/branches.cu");
    let out = check(&[
        "--format",
        "json",
        bad.to_str().unwrap(),
        good.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["kernels"].as_array().unwrap().len(), 4);
}

#[test]
fn missing_file_and_unknown_kind() {
    let out = check(&["/nonexistent/k.cu"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/k.cu: no such file"));
    let txt = fixture("ir/../../common/mod.rs");
    let out = check(&[txt.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown input kind"));
}

#[test]
fn missing_clang_is_reported() {
    let f = fixture("cu/branches.cu");
    let out = run(warpcheck()
        .env("WARPCHECK_CLANG", "/nonexistent/clang-19")
        .args(["check", f.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot run /nonexistent/clang-19"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn compile_errors_pass_clang_through() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("broken.cu");
    std::fs::write(
        &f,
        "__global__ void k(float *a) {\n  a[0] = undeclared;\n}\n",
    )
    .unwrap();
    let out = check(&[f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("broken.cu:2:10: error: use of undeclared identifier"),
        "{err}"
    );
}

#[test]
fn usage_errors() {
    let f = fixture("cu/branches.cu");
    let out = check(&["--block-dim", "0,1", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let out = check(&["--disable", "no-such-check", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(warpcheck().arg("frobnicate"));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn werror_turns_warnings_into_exit_1() {
    let f = fixture("cu/branches.cu");
    assert_eq!(check(&[f.to_str().unwrap()]).status.code(), Some(0));
    assert_eq!(
        check(&["--werror", f.to_str().unwrap()]).status.code(),
        Some(1)
    );
    let quiet = fixture("cu/launch_bounds.cu");
    assert_eq!(
        check(&["--werror", quiet.to_str().unwrap()]).status.code(),
        Some(0)
    );
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "WARPCHECK_FAULT is read by debug builds only"
)]
fn internal_errors_exit_3_and_keep_going() {
    // Two files: the same file named twice is analysed once.
    let f = fixture("cu/branches.cu");
    let g = fixture("cu/launch_bounds.cu");
    let out = run(warpcheck().env("WARPCHECK_FAULT", "panic").args([
        "check",
        f.to_str().unwrap(),
        g.to_str().unwrap(),
    ]));
    assert_eq!(out.status.code(), Some(3));
    // Both files are attempted: one internal-error line each.
    assert_eq!(
        stderr(&out)
            .matches("internal error while analysing")
            .count(),
        2
    );
}
