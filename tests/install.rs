//! An installed copy without a CUDA toolkit: `scripts/install.sh` puts the
//! plugin, the CMake package, the Make snippet and the headers a clang
//! build needs under a prefix, and the README's CMake and Make recipes get
//! their warnings from that prefix alone (the projects are copied out of
//! the tree, and name nothing in it).

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// Installs this build into a fresh prefix.
fn install() -> tempfile::TempDir {
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
fn project(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(fixture(&format!("projects/{name}"))).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    dir
}

/// `t % 2` on the rank (line 7) splits each of the 8 warps of 256 threads;
/// the kernel reaches it through warpcheck's `cooperative_groups.h`.
fn assert_warns(all: &str) {
    assert!(all.contains("kernel.cu:7:"), "{all}");
    assert!(
        all.contains("warning: branch diverges in 8 of 8 warps"),
        "{all}"
    );
}

fn clangxx() -> String {
    clang().replace("clang", "clang++")
}

#[test]
fn the_headers_are_installed() {
    let prefix = install();
    let share = prefix.path().join("share/warpcheck");
    for h in [
        "warpcheck_cuda.h",
        "include/cooperative_groups.h",
        "include/cooperative_groups/reduce.h",
    ] {
        assert!(share.join(h).is_file(), "{h}");
    }
}

#[test]
fn the_cmake_recipe_with_the_installed_copy() {
    let prefix = install();
    let src = project("installed_cmake");
    let build = src.path().join("build");
    // README: cmake -S . -B build -DCMAKE_CXX_COMPILER=clang++-19
    //         -DCMAKE_PREFIX_PATH=/opt/warpcheck
    let out = run(Command::new("cmake")
        .current_dir(src.path())
        .args(["-S", ".", "-B", "build"])
        .arg(format!("-DCMAKE_CXX_COMPILER={}", clangxx()))
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.path().display())));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{all}");
    // The build warns through the installed plugin.
    let out = run(Command::new("cmake")
        .arg("--build")
        .arg(&build)
        .arg("--verbose"));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{all}");
    assert_warns(&all);
    let installed = prefix.path().canonicalize().unwrap();
    assert!(
        all.contains(&format!(
            "-fpass-plugin={}/lib/libwarpcheck-llvm",
            installed.display()
        )) || all.contains(&format!(
            "-fpass-plugin={}/lib/libwarpcheck-llvm",
            prefix.path().display()
        )),
        "{all}"
    );
    assert!(!all.contains(env!("CARGO_MANIFEST_DIR")), "{all}");
    // And the check target runs the installed CLI.
    let out = run(Command::new("cmake")
        .arg("--build")
        .arg(&build)
        .args(["--target", "warpcheck_kernels"]));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{all}");
    assert_warns(&all);
}

#[test]
fn the_make_recipe_with_the_installed_copy() {
    let prefix = install();
    let src = project("installed_make");
    // README: make WARPCHECK_PREFIX=/opt/warpcheck CLANG=clang++-19
    let vars = [
        format!("WARPCHECK_PREFIX={}", prefix.path().display()),
        format!("CLANG={}", clangxx()),
    ];
    let out = run(Command::new("make").current_dir(src.path()).args(&vars));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{all}");
    assert_warns(&all);
    assert!(!all.contains(env!("CARGO_MANIFEST_DIR")), "{all}");
    let out = run(Command::new("make")
        .current_dir(src.path())
        .args(&vars)
        .arg("warpcheck"));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{all}");
    assert_warns(&all);
}
