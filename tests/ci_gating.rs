//! What a team gating CI on warpcheck relies on: severity from the
//! configuration shown in every output, check names in either spelling,
//! fingerprints that tell apart findings of one line text.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// `t % 2` splits every warp (odd and even lanes take different sides):
/// one divergent-branch warning at line 3.
const SPLIT: &str = "__global__ void scale(float *out) {\n\
    \x20 int t = threadIdx.x;\n\
    \x20 if (t % 2) out[t] = 1.0f;\n\
    }\n";

/// `SPLIT` in `dir/k.cu` under a config that makes divergent branches errors.
fn erroring_project(dir: &Path) -> std::path::PathBuf {
    std::fs::write(dir.join("k.cu"), SPLIT).unwrap();
    std::fs::write(
        dir.join(".warpcheck.yaml"),
        "WarningsAsErrors: 'warpcheck-divergent-branch'\n",
    )
    .unwrap();
    dir.join("k.cu")
}

#[test]
fn configured_errors_are_printed_without_notes() {
    let dir = tempfile::tempdir().unwrap();
    let file = erroring_project(dir.path());
    let out = run(warpcheck().arg("check").arg(&file));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("k.cu:3:")
            && text.contains(": error: ")
            && text.contains("[warpcheck-divergent-branch]"),
        "{text}"
    );
    // Counted as clang counts them.
    assert!(
        stderr(&out).contains("1 error generated."),
        "{}",
        stderr(&out)
    );
}

#[test]
fn configured_errors_are_sarif_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = erroring_project(dir.path());
    let out = run(warpcheck().args(["check", "--format", "sarif"]).arg(&file));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc["runs"][0]["results"].as_array().unwrap();
    let levels: Vec<_> = results
        .iter()
        .filter(|r| r["ruleId"] == "warpcheck-divergent-branch")
        .map(|r| r["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["error"]);
}

#[test]
fn configured_errors_are_plugin_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = erroring_project(dir.path());
    let out = run(Command::new(clang())
        .args([
            "-x",
            "cuda",
            "--cuda-gpu-arch=sm_80",
            "-O2",
            "-gline-tables-only",
        ])
        .args(no_toolkit_flags())
        .arg(format!("-fpass-plugin={}", plugin().display()))
        .args(["--cuda-device-only", "-S", "-o", "/dev/null"])
        .arg(&file));
    let err = stderr(&out);
    assert!(
        err.contains("k.cu:3:")
            && err.contains("error: ")
            && err.contains("[warpcheck-divergent-branch]"),
        "{err}"
    );
    assert!(!out.status.success(), "an error fails the compile: {err}");
}

#[test]
fn configured_errors_are_errors_on_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let file = erroring_project(dir.path());
    let page = dir.path().join("r.html");
    let out = run(warpcheck()
        .args(["report", "--no-simulate", "-o"])
        .arg(&page)
        .arg(&file));
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&out)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<td>1 errors</td>") || html.contains("<td>1 error</td>"),
        "{html}"
    );
    assert!(
        html.contains("<span class=\"error\">error</span>"),
        "the finding is marked an error"
    );
}
