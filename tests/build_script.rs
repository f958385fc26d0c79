//! The build refuses an LLVM it does not support before compiling a line
//! of ours, naming the majors it supports (README, "Supported clang
//! versions"). Runs the compiled build script itself, as cargo would, with
//! the feature and prefix variables cargo would pass it and a stand-in
//! `llvm-config` for the LLVM major under test.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SUPPORTED: &str =
    "warpcheck supports LLVM 19 (feature `llvm19`) and LLVM 22 (feature `llvm22`)";

/// This build's compiled build script (the newest, should cargo have kept
/// an older one beside it).
fn build_script() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_warpcheck"));
    let dir = exe.parent().unwrap().join("build");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("warpcheck-")
        })
        .map(|p| p.join("build-script-build"))
        .filter(|p| p.is_file())
        .collect();
    scripts.sort_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap());
    scripts.pop().expect("the build script in target/*/build")
}

/// A prefix whose `bin/llvm-config` says it is LLVM `version`.
fn fake_llvm(root: &Path, version: &str) -> PathBuf {
    let bin = root.join(version).join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let config = bin.join("llvm-config");
    std::fs::write(&config, format!("#!/bin/sh\necho {version}\n")).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o755)).unwrap();
    root.join(version)
}

/// Runs the build script with only the given cargo variables set.
fn configure(vars: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(build_script());
    for (key, _) in std::env::vars() {
        if key.starts_with("CARGO_FEATURE_") || key.starts_with("LLVM_SYS_") {
            cmd.env_remove(key);
        }
    }
    for (key, value) in vars {
        cmd.env(key, value);
    }
    cmd.env("OUT_DIR", std::env::temp_dir());
    cmd.output().unwrap()
}

fn refused(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(stderr.contains(SUPPORTED), "stderr: {stderr}");
    stderr
}

#[test]
fn an_unsupported_llvm_major_stops_the_build_naming_the_supported_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let yes = Path::new("1");
    for (feature, var, wanted) in [
        ("CARGO_FEATURE_LLVM19", "LLVM_SYS_191_PREFIX", 19),
        ("CARGO_FEATURE_LLVM22", "LLVM_SYS_221_PREFIX", 22),
    ] {
        for version in ["18.1.8", "20.1.2"] {
            let prefix = fake_llvm(tmp.path(), version);
            let stderr = refused(&configure(&[(feature, yes), (var, &prefix)]));
            assert!(
                stderr.contains(&format!(
                    "is LLVM {version}, but this build is for LLVM {wanted}"
                )),
                "stderr: {stderr}"
            );
        }
    }
}

#[test]
fn the_features_pick_exactly_one_major() {
    let yes = Path::new("1");
    let none = refused(&configure(&[]));
    assert!(none.contains("no LLVM major selected"), "{none}");
    let both = refused(&configure(&[
        ("CARGO_FEATURE_LLVM19", yes),
        ("CARGO_FEATURE_LLVM22", yes),
    ]));
    assert!(both.contains("more than one LLVM major selected"), "{both}");
}

#[test]
fn a_missing_llvm_config_says_what_to_install() {
    let tmp = tempfile::tempdir().unwrap();
    let out = configure(&[
        ("CARGO_FEATURE_LLVM22", Path::new("1")),
        ("LLVM_SYS_221_PREFIX", tmp.path()),
    ]);
    let stderr = refused(&out);
    assert!(stderr.contains("install llvm-22-dev"), "{stderr}");
}
