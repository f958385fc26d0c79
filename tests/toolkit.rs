//! The CUDA-toolkit path: a real CUDA 12.4 header set (from NVIDIA's PyPI
//! wheels, cached by scripts/cuda-toolkit.sh) gives the same sites as
//! warpcheck's embedded header.

mod common;
use common::*;
use std::path::PathBuf;

/// The cached toolkit root, fetched on first use.
fn toolkit_root() -> PathBuf {
    cuda_toolkit().unwrap_or_else(|e| panic!("{e}"))
}

fn summary(r: &serde_json::Value) -> Vec<(String, u64, String, bool)> {
    let mut v: Vec<_> = r["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["sites"].as_array().unwrap().iter())
        .map(|s| {
            (
                s["kind"].as_str().unwrap().to_string(),
                s["line"].as_u64().unwrap(),
                s["space"].as_str().unwrap_or("").to_string(),
                s["thread_dependent"].as_bool().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn toolkit_and_embedded_header_agree() {
    let root = toolkit_root();
    for fixture_name in ["cu/with_host.cu", "cu/atomics.cu", "cu/spaces.cu"] {
        let with_tk = check_json(fixture_name, &["--cuda-path", root.to_str().unwrap()]);
        // An empty CUDA_PATH keeps discovery from finding a toolkit.
        let out = run(warpcheck()
            .env_remove("CUDA_PATH")
            .env_remove("CUDA_HOME")
            .args(["check", "--format", "json", "--sites"])
            .arg(fixture(fixture_name)));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let embedded: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary(&with_tk), summary(&embedded), "{fixture_name}");
    }
    let r = check_json("cu/with_host.cu", &["--cuda-path", root.to_str().unwrap()]);
    assert_dependent(&r, "scale", "branch", 7, true);
    assert_eq!(spaces(&r, "scale", "load", 8), ["global"]);
}

#[test]
fn bad_cuda_path_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(warpcheck()
        .args(["check", "--cuda-path"])
        .arg(dir.path())
        .arg(fixture("cu/with_host.cu")));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a CUDA toolkit"),
        "{}",
        stderr(&out)
    );
}
