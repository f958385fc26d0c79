//! The CMake module: a project's `warpcheck_all` target runs the checker
//! with the target's include directories and definitions.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// `if (threadIdx.x % STRIDE == 0)` (line 4) splits every warp of 256
/// threads; clang 22 places the branch at the `==` (column 28).
fn strided_warning() -> String {
    format!(
        "kernel.cu:4:{}: warning: branch diverges in 8 of 8 warps",
        branch_col(7, 28)
    )
}

#[test]
fn cmake_target_runs_warpcheck() {
    let build = tempfile::tempdir().unwrap();
    let src = fixture("cmake");
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("cmake");
    let configure = run(Command::new("cmake")
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(build.path())
        .arg(format!("-DCMAKE_MODULE_PATH={}", modules.display()))
        .arg(format!(
            "-DWARPCHECK_EXECUTABLE={}",
            env!("CARGO_BIN_EXE_warpcheck")
        )));
    assert!(
        configure.status.success(),
        "{}{}",
        stdout(&configure),
        stderr(&configure)
    );
    let all = build_target(build.path(), "warpcheck_all");
    assert!(all.contains(&strided_warning()), "{all}");
}

/// Configures a fixture project whose kernels clang++-19 builds as CXX
/// with `-x cuda`, with our CUDA header and `extra` definitions.
fn configure_clang_project(name: &str, build: &Path, extra: &[String]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let configure = run(Command::new("cmake")
        .arg("-S")
        .arg(fixture(name))
        .arg("-B")
        .arg(build)
        .args(extra)
        .arg(format!(
            "-DWARPCHECK_CUDA_HEADER={}",
            root.join("src/frontend/warpcheck_cuda.h").display()
        ))
        .arg(format!(
            "-DCMAKE_CXX_COMPILER={}",
            clang().replace("clang", "clang++")
        )));
    let all = format!("{}{}", stdout(&configure), stderr(&configure));
    assert!(configure.status.success(), "{all}");
}

/// Builds one target and returns everything it printed.
fn build_target(build: &Path, target: &str) -> String {
    let out = run(Command::new("cmake")
        .args(["--build"])
        .arg(build)
        .args(["--target", target]));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{all}");
    all
}

/// 256 threads, odd lanes take the branch: 8 of 8 warps split.
const ODD_WARNING: &str = "kernel.cu:4:7: warning: branch diverges in 8 of 8 warps";

#[test]
fn find_package_gives_the_plugin_target_and_the_check_target() {
    let build = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    configure_clang_project(
        "cmake_pkg",
        build.path(),
        &[
            format!("-Dwarpcheck_DIR={}", root.join("cmake").display()),
            format!("-DWARPCHECK_EXECUTABLE={}", env!("CARGO_BIN_EXE_warpcheck")),
        ],
    );
    // The object library's compile carries the plugin: the finding is a
    // warning of the build itself.
    let all = build_target(build.path(), "kernels");
    assert!(all.contains(ODD_WARNING), "{all}");
    let all = build_target(build.path(), "warpcheck_pkg");
    assert!(all.contains(ODD_WARNING), "{all}");
}

/// The README's two CMake commands for projects with no warpcheck in their
/// build files: the launcher (here CXX's, as the kernels build as CXX
/// without a toolkit; CUDA's is the same variable for nvcc) and an
/// exported database for `check -p`.
#[test]
fn the_launcher_and_an_exported_database() {
    let build = tempfile::tempdir().unwrap();
    let exe = env!("CARGO_BIN_EXE_warpcheck");
    configure_clang_project(
        "cmake_launcher",
        build.path(),
        &[
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON".into(),
            format!("-DCMAKE_CXX_COMPILER_LAUNCHER={exe};launch;--"),
        ],
    );
    // The launcher runs the real compile, then prints the finding as a
    // compiler warning.
    let all = build_target(build.path(), "kernels");
    assert!(all.contains(ODD_WARNING), "{all}");
    // The exported database, read as clang-tidy reads it.
    let out = run(Command::new(exe).args(["check", "-p"]).arg(build.path()));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(ODD_WARNING), "{}", stdout(&out));
}
