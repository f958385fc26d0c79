//! SARIF for code scanning, and `--baseline` for CI gating.

mod common;
use common::*;
use serde_json::Value;

fn check(args: &[&str], file: &std::path::Path) -> std::process::Output {
    run(warpcheck().arg("check").args(args).arg(file))
}

/// Escapes the bare `]` of every `language` pattern; returns how many.
fn escape_language_patterns(v: &mut Value) -> usize {
    const BARE: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    match v {
        Value::Object(m) => {
            let mut n = 0;
            if let Some(p) = m.get_mut("pattern").filter(|p| *p == BARE) {
                *p = BARE.replace("}]?", "}\\]?").into();
                n += 1;
            }
            n + m.values_mut().map(escape_language_patterns).sum::<usize>()
        }
        Value::Array(a) => a.iter_mut().map(escape_language_patterns).sum(),
        _ => 0,
    }
}

#[test]
fn sarif_validates_against_the_schema() {
    // `--min-impact=0`: the one-store branches stay warnings (cheap notes
    // by default), so that the results hold both levels.
    let out = check(
        &["--format", "sarif", "--min-impact=0"],
        &fixture("cu/nolint.cu"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut schema: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("sarif/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    // The published schema's `language` pattern has a bare `]`, a literal
    // in most regex dialects but an error in ECMA-262's, which the
    // validator checks schemas with: escape it (same meaning).
    assert_eq!(escape_language_patterns(&mut schema), 2);
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let run = &log["runs"][0];
    // A rule per check, with the ids the findings use.
    let ids: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"warpcheck-divergent-branch"), "{ids:?}");
    // nolint.cu leaves three branches reported, on lines 12, 13 and 14,
    // each splitting both warps of 64 threads.
    let results = run["results"].as_array().unwrap();
    let lines: Vec<u64> = results
        .iter()
        .filter(|r| r["level"] == "warning")
        .map(|r| {
            r["locations"][0]["physicalLocation"]["region"]["startLine"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(lines, [12, 13, 14]);
    for r in results {
        // Every result carries its impact estimate.
        assert!(r["properties"]["impact"].is_object(), "{r:#}");
        let rule = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(ids[rule], r["ruleId"].as_str().unwrap());
        // 16 hex digits, then the occurrence: each line's finding is
        // the first of its kind.
        let print = r["partialFingerprints"]["warpcheck/v2"].as_str().unwrap();
        let (hash, n) = print.split_once(':').unwrap();
        assert_eq!((hash.len(), n), (16, "1"), "{print}");
    }
}

#[test]
fn a_baseline_keeps_old_findings_quiet_even_when_they_move() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.cu");
    let v1 = "__global__ void __launch_bounds__(64) k(int *out) {\n\
              \x20 int t = threadIdx.x;\n\
              \x20 if (t % 2) out[0] = 1;\n\
              }\n";
    std::fs::write(&src, v1).unwrap();
    let old = check(&["--format", "json"], &src);
    let baseline = dir.path().join("old.json");
    std::fs::write(&baseline, &old.stdout).unwrap();
    // v2 moves the old branch down two lines and adds a new one.
    let v2 = "// a comment\n// another\n\
              __global__ void __launch_bounds__(64) k(int *out) {\n\
              \x20 int t = threadIdx.x;\n\
              \x20 if (t % 2) out[0] = 1;\n\
              \x20 if (t % 4 == 1) out[1] = 1;\n\
              }\n";
    std::fs::write(&src, v2).unwrap();
    let b = baseline.to_str().unwrap();
    let out = check(&["--werror", "--baseline", b], &src);
    let text = stdout(&out);
    // Column 7, or the `==` (13) for clang 22.
    let at = format!("k.cu:6:{}: warning: branch diverges", branch_col(7, 13));
    assert!(text.contains(&at), "{text}");
    assert!(!text.contains("k.cu:5:"), "{text}");
    // Only the new finding fails the gate.
    assert_eq!(out.status.code(), Some(1));
    // A SARIF log works as a baseline too.
    let sarif = check(&["--format", "sarif"], &src);
    std::fs::write(&baseline, &sarif.stdout).unwrap();
    let out = check(&["--werror", "--baseline", b], &src);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn a_bad_baseline_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("old.json");
    std::fs::write(&b, "[1, 2]").unwrap();
    let out = check(
        &["--baseline", b.to_str().unwrap()],
        &fixture("cu/nolint.cu"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("neither a warpcheck JSON report"),
        "{}",
        stderr(&out)
    );
}

/// `run --format sarif`: the out-of-bounds write of `fill` (thread 1000,
/// `c[i] = 1.0f` on line 9, column 10) is one result of rule
/// `warpcheck-run-memory-error`, and the log passes the schema.
#[test]
fn run_sarif_has_each_fault_at_its_line() {
    plugin();
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("run.sarif");
    let out = run(warpcheck()
        .args(["run", "--format", "sarif", "-o"])
        .arg(&out_file)
        .arg(fixture("run/out_of_bounds.cu")));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    let mut schema: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("sarif/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    escape_language_patterns(&mut schema);
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{log:#}");
    let r = &results[0];
    assert_eq!(r["ruleId"], "warpcheck-run-memory-error");
    assert_eq!(r["properties"]["thread"], serde_json::json!([232, 0, 0]));
    assert_eq!(r["properties"]["block"], serde_json::json!([3, 0, 0]));
    let region = &r["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 9);
    assert_eq!(region["startColumn"], 10);
}
