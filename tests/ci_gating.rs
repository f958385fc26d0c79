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

/// `SPLIT` plus a load two floats apart: one divergent-branch warning
/// (line 3) and one uncoalesced-access warning (line 4: 32 lanes × 8 bytes
/// apart touch 8 sectors where 4 would do).
const TWO_CHECKS: &str = "__global__ void scale(float *out, const float *in) {\n\
    \x20 int t = threadIdx.x;\n\
    \x20 if (t % 2) out[t] = 1.0f;\n\
    \x20 out[t + 64] = in[2 * t];\n\
    }\n";

/// The checks of the text findings `check` prints for `file` with `args`
/// (with `--min-impact=0`: the fixtures' one-store branches and single
/// loads are cheap notes by default, and gating is what is tested).
fn checks_reported(file: &Path, args: &[&str]) -> (Option<i32>, Vec<String>, String) {
    let out = run(warpcheck()
        .args(["check", "--min-impact=0"])
        .args(args)
        .arg(file));
    let mut names: Vec<String> = stdout(&out)
        .lines()
        .filter_map(|l| l.rsplit_once(" [warpcheck-"))
        .map(|(head, tail)| {
            let sev = if head.contains(": error: ") {
                "E "
            } else {
                "W "
            };
            format!("{sev}{}", tail.trim_end_matches(']'))
        })
        .collect();
    names.sort();
    (out.status.code(), names, stderr(&out))
}

#[test]
fn check_names_with_or_without_the_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.cu");
    std::fs::write(&file, TWO_CHECKS).unwrap();
    let (code, all, _) = checks_reported(&file, &[]);
    assert_eq!(code, Some(0));
    assert_eq!(all, ["W divergent-branch", "W uncoalesced-access"]);
    for name in ["divergent-branch", "warpcheck-divergent-branch"] {
        let (code, names, err) = checks_reported(&file, &["--disable", name]);
        assert_eq!(
            (code, names),
            (Some(0), vec!["W uncoalesced-access".to_string()]),
            "{err}"
        );
        let out = run(warpcheck().args(["explain", name]));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stdout(&out).starts_with("warpcheck-divergent-branch: "));
    }
    // A misspelt name is refused with the nearest one.
    let (code, _, err) = checks_reported(&file, &["--disable", "warpcheck-divergnt-branch"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("did you mean 'warpcheck-divergent-branch'?"),
        "{err}"
    );
    let out = run(warpcheck().args(["explain", "bank-conflicts"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("did you mean 'warpcheck-bank-conflict'?"));
    // NOLINT without the prefix.
    std::fs::write(
        &file,
        TWO_CHECKS.replace("1.0f;\n", "1.0f; // NOLINT(divergent-branch)\n"),
    )
    .unwrap();
    let (_, names, err) = checks_reported(&file, &[]);
    assert_eq!(names, ["W uncoalesced-access"], "{err}");
    // Said as clang-tidy says it.
    assert!(err.contains("1 warning generated."), "{err}");
    assert!(err.contains("Suppressed 1 warning (1 NOLINT)."), "{err}");
}

#[test]
fn checks_and_warnings_as_errors_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.cu");
    std::fs::write(&file, TWO_CHECKS).unwrap();
    // Only the access check, and its warnings errors: exit 1 without --werror.
    let (code, names, err) = checks_reported(
        &file,
        &[
            "--checks=-*,uncoalesced-*",
            "--warnings-as-errors=warpcheck-uncoalesced-access",
        ],
    );
    assert_eq!(
        (code, names),
        (Some(1), vec!["E uncoalesced-access".to_string()]),
        "{err}"
    );
    // The command line goes over the configuration: the file turns the
    // branch check off and makes the access check an error; --checks turns
    // the branch check back on.
    std::fs::write(
        dir.path().join(".warpcheck.yaml"),
        "Checks: '*,-divergent-branch'\nWarningsAsErrors: 'uncoalesced-access'\n",
    )
    .unwrap();
    let (code, names, err) = checks_reported(&file, &[]);
    assert_eq!(
        (code, names),
        (Some(1), vec!["E uncoalesced-access".to_string()]),
        "{err}"
    );
    let (code, names, err) = checks_reported(
        &file,
        &["--checks=divergent-branch", "--warnings-as-errors=-*"],
    );
    assert_eq!(
        (code, names),
        (
            Some(0),
            vec![
                "W divergent-branch".to_string(),
                "W uncoalesced-access".to_string()
            ]
        ),
        "{err}"
    );
    // Unknown names are usage errors.
    let (code, _, err) = checks_reported(&file, &["--checks=-*,bank-conflit"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains(
            "--checks: no check named 'bank-conflit' (did you mean 'warpcheck-bank-conflict'?)"
        ),
        "{err}"
    );
}

#[test]
fn a_config_file_for_every_file_and_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.cu");
    std::fs::write(&file, TWO_CHECKS).unwrap();
    // Not named .warpcheck.yaml and not above the file: only --config-file finds it.
    let other = tempfile::tempdir().unwrap();
    let config = other.path().join("ci.yaml");
    std::fs::write(&config, "Checks: '-*,divergent-branch'\n").unwrap();
    let arg = format!("--config-file={}", config.display());
    let (code, names, err) = checks_reported(&file, &[&arg]);
    assert_eq!(
        (code, names),
        (Some(0), vec!["W divergent-branch".to_string()]),
        "{err}"
    );
    assert!(err.contains("1 warning generated."), "{err}");
    let (_, names, err) = checks_reported(&file, &[&arg, "--quiet"]);
    assert_eq!(names, ["W divergent-branch"]);
    assert!(err.is_empty(), "{err}");
    // A bad file is a usage error naming it.
    std::fs::write(&config, "Checks: '-*,divergnt-branch'\n").unwrap();
    let (code, _, err) = checks_reported(&file, &[&arg]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("ci.yaml:1:1: Checks: no check named 'divergnt-branch'"),
        "{err}"
    );
    let (code, _, err) = checks_reported(&file, &["--config-file=/no/such.yaml"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--config-file: /no/such.yaml: cannot read"),
        "{err}"
    );
}

/// The warnings `check --baseline OLD` prints for `file`, as `line:col kind`.
fn new_findings(file: &Path, baseline: &Path) -> Vec<String> {
    let out = run(warpcheck()
        .args(["check", "--min-impact=0", "--baseline"])
        .arg(baseline)
        .arg(file));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .filter(|l| l.contains(": warning: "))
        .map(|l| {
            let (at, rest) = l.split_once(": warning: ").unwrap();
            // The path as clang recorded it may be relative (to a common
            // directory); the file's name ends it either way.
            let name = format!("{}:", file.file_name().unwrap().to_string_lossy());
            let at = at.rsplit_once(&name).map_or(at, |(_, a)| a);
            format!("{at} {}", rest.rsplit_once(" [").unwrap().1)
        })
        .collect()
}

#[test]
fn a_copy_of_a_line_is_one_new_finding() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.cu");
    // `t % 2` splits every warp: one divergent-branch warning per `if`.
    // The barrier keeps the optimiser from merging the two tests.
    let body = |copies: usize| {
        let branch = "  if (t % 2) out[t] += 1.0f;\n  __syncthreads();\n";
        format!(
            "__global__ void k(float *out) {{\n  int t = threadIdx.x;\n{}}}\n",
            branch.repeat(copies)
        )
    };
    std::fs::write(&src, body(1)).unwrap();
    // `--min-impact=0` (here and in `new_findings`): a one-store branch is
    // a cheap note by default.
    let old = run(warpcheck()
        .args(["check", "--min-impact=0", "--format", "json"])
        .arg(&src));
    let report: serde_json::Value = serde_json::from_slice(&old.stdout).unwrap();
    // Besides notes (the half-warp accesses under the branch).
    let warnings = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "warning")
        .count();
    assert_eq!(warnings, 1, "{report:#}");
    let baseline = dir.path().join("old.json");
    std::fs::write(&baseline, &old.stdout).unwrap();
    // Two copies: the second `if` (line 5) is new, the first stays quiet.
    std::fs::write(&src, body(2)).unwrap();
    // Column 7 under both clangs (as build_integration's ODD_WARNING).
    let col = 7;
    assert_eq!(
        new_findings(&src, &baseline),
        [format!("5:{col} warpcheck-divergent-branch]")]
    );
    // Three copies against the SARIF of two: only the third is new.
    let sarif = run(warpcheck()
        .args(["check", "--min-impact=0", "--format", "sarif"])
        .arg(&src));
    std::fs::write(&baseline, &sarif.stdout).unwrap();
    std::fs::write(&src, body(3)).unwrap();
    assert_eq!(
        new_findings(&src, &baseline),
        [format!("7:{col} warpcheck-divergent-branch]")]
    );
}

#[test]
fn two_findings_on_one_line_have_two_fingerprints() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.cu");
    // Two loads two and four floats apart (8 and 16 sectors per request
    // where 4 would do), at columns 12 and 22 of one line: two
    // uncoalesced-access warnings (with one stride they would have one
    // cause, and be one grouped warning).
    std::fs::write(
        &src,
        "__global__ void k(float *out, const float *a, const float *b) {\n\
         \x20 int t = threadIdx.x;\n\
         \x20 out[t] = a[2 * t] + b[4 * t];\n\
         }\n",
    )
    .unwrap();
    let out = run(warpcheck()
        .args(["check", "--min-impact=0", "--format", "json"])
        .arg(&src));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let prints: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "uncoalesced-access")
        .map(|f| f["fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(prints.len(), 2, "{report:#}");
    assert_ne!(prints[0], prints[1]);
    // Each is the first of its kind: different places on the line.
    assert!(prints.iter().all(|p| p.ends_with(":1")), "{prints:?}");
}

#[test]
fn the_launcher_is_quiet_when_the_plugin_reports() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.cu");
    std::fs::write(&src, SPLIT).unwrap();
    let compile = |plugin: bool| {
        let mut cmd = vec![
            clang().replace("clang", "clang++"),
            "-x".into(),
            "cuda".into(),
            "--cuda-device-only".into(),
            "-S".into(),
            "--cuda-gpu-arch=sm_80".into(),
            "-O2".into(),
            "-gline-tables-only".into(),
        ];
        cmd.extend(no_toolkit_flags());
        if plugin {
            cmd.push(format!("-fpass-plugin={}", plugin_path()));
        }
        cmd.extend(["k.cu".into(), "-o".into(), "k.ptx".into()]);
        run(warpcheck()
            .current_dir(dir.path())
            .args(["launch", "--"])
            .args(cmd))
    };
    let count = |o: &std::process::Output| stderr(o).matches("branch diverges").count();
    // Without the plugin the launcher reports; with it, the compile does,
    // and the launcher says nothing more.
    let alone = compile(false);
    assert_eq!(alone.status.code(), Some(0), "{}", stderr(&alone));
    assert_eq!(count(&alone), 1, "{}", stderr(&alone));
    let both = compile(true);
    assert_eq!(both.status.code(), Some(0), "{}", stderr(&both));
    assert_eq!(count(&both), 1, "{}", stderr(&both));
    assert!(
        stderr(&both).contains("[-Wpass-failed]"),
        "{}",
        stderr(&both)
    );
}

fn plugin_path() -> String {
    plugin().display().to_string()
}
