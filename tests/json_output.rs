//! The JSON report's size and streaming: kernels are headers unless
//! `--sites` lists their branches and accesses, `--summary` counts the
//! sites either way, and the document written batch by batch (32 kernels
//! at a time, in the files' order) is the same whatever the threads.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

fn check(args: &[&str], files: &[&Path]) -> (Value, String) {
    let out = run(warpcheck()
        .args(["check", "--format", "json"])
        .args(args)
        .args(files));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    (serde_json::from_str(&text).expect("valid JSON"), text)
}

#[test]
fn kernels_are_headers_unless_sites_are_asked_for() {
    let file = fixture("cu/branches.cu");
    // Without --notes the JSON says what text says: no notes (odd_even's
    // cheap branch is one).
    let (quiet, _) = check(&[], &[&file]);
    let findings = quiet["findings"].as_array().unwrap();
    assert!(
        findings.iter().all(|f| f["severity"] != "note"),
        "{quiet:#}"
    );
    // With the notes, as text shows them with --notes.
    let (plain, _) = check(&["--notes"], &[&file]);
    let k = kernel(&plain, "odd_even");
    assert!(k.get("sites").is_none(), "{k:#}");
    for field in [
        "name",
        "mangled",
        "file",
        "line",
        "block_dim",
        "block_dim_source",
    ] {
        assert!(k.get(field).is_some(), "{field} in {k:#}");
    }
    // Its branch on threadIdx.x % 2 splits every warp: the finding stays.
    assert!(plain["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["check"] == "divergent-branch" && f["line"] == 3));
    let (listed, _) = check(&["--sites"], &[&file]);
    // odd_even's sites: the branch on line 3, and the load and the store of
    // a[threadIdx.x] on line 4.
    let sites = kernel(&listed, "odd_even")["sites"].as_array().unwrap();
    let kinds: Vec<(&str, u64)> = sites
        .iter()
        .map(|s| (s["kind"].as_str().unwrap(), s["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(kinds, [("branch", 3), ("load", 4), ("store", 4)]);
    // The rest of the document is the same.
    let mut stripped = listed.clone();
    for k in stripped["kernels"].as_array_mut().unwrap() {
        k.as_object_mut().unwrap().remove("sites");
    }
    assert_eq!(stripped, plain);
}

#[test]
fn the_summary_counts_sites_that_are_not_listed() {
    let file = fixture("cu/branches.cu");
    let (plain, _) = check(&["--summary"], &[&file]);
    let (listed, _) = check(&["--summary", "--sites"], &[&file]);
    assert_eq!(plain["summary"], listed["summary"]);
    // odd_even's branch (t % 2) splits every warp: class total; by_block's
    // (blockIdx.x > 3) and by_param's loop branch are uniform.
    let counts = &plain["summary"]["kernels"];
    let odd = counts
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k[1].as_str().unwrap().starts_with("odd_even("))
        .unwrap();
    assert_eq!(odd[2]["branches"]["total"], 1, "{odd}");
    assert!(plain["kernels"][0].get("sites").is_none());
}

/// `n` kernels in one file, each storing its lane's index.
fn many_kernels(dir: &Path, name: &str, n: usize) -> std::path::PathBuf {
    let text: String = (0..n)
        .map(|i| {
            format!(
                "__global__ void {name}{i}(int *a) {{ if (threadIdx.x % {m}) a[threadIdx.x] = {i}; }}\n",
                m = 2 + i % 3
            )
        })
        .collect();
    let path = dir.join(format!("{name}.cu"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_streamed_document_is_the_same_whatever_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    // 70 kernels: three batches (32, 32, 6), written while the other files
    // wait or run ahead.
    let big = many_kernels(dir.path(), "big", 70);
    let small = many_kernels(dir.path(), "small", 3);
    // The same kernels again, from another file (a file named twice is
    // analysed once).
    std::fs::create_dir(dir.path().join("again")).unwrap();
    let big_again = dir.path().join("again/big.cu");
    std::fs::copy(&big, &big_again).unwrap();
    let files = [big.as_path(), small.as_path(), big_again.as_path()];
    let (first, text) = check(&["--sites", "--summary", "-j", "1"], &files);
    for j in ["2", "16"] {
        let (_, again) = check(&["--sites", "--summary", "-j", j], &files);
        assert_eq!(again, text, "-j {j}");
    }
    // Every kernel of each file, in the files' order, each file's kernels
    // in the order they are defined.
    let names: Vec<&str> = first["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    let want: Vec<String> = [("big", 70), ("small", 3), ("big", 70)]
        .iter()
        .flat_map(|(f, n)| (0..*n).map(move |i| format!("{f}{i}(int*)")))
        .collect();
    assert_eq!(names, want);
    assert_eq!(first["summary"]["kernels"].as_array().unwrap().len(), 143);
    // Every branch splits its warps (t % 2, t % 3 or t % 4): one warning each.
    let warnings = first["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "divergent-branch" && f["severity"] == "warning")
        .count();
    assert_eq!(warnings, 143);
}
