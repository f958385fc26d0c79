//! The CMake module: a project's `warpcheck_all` target runs the checker
//! with the target's include directories and definitions.

mod common;
use common::*;
use std::process::Command;

#[test]
fn cmake_target_runs_warpcheck() {
    let build = tempfile::tempdir().unwrap();
    let src = fixture("cmake");
    let modules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cmake");
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
    let out = run(Command::new("cmake")
        .args(["--build"])
        .arg(build.path())
        .args(["--target", "warpcheck_all"]));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("kernel.cu:4:7: warning: branch diverges in 8 of 8 warps"),
        "{all}"
    );
}

#[test]
fn find_package_gives_the_plugin_target_and_the_check_target() {
    let build = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let configure = run(Command::new("cmake")
        .arg("-S")
        .arg(fixture("cmake_pkg"))
        .arg("-B")
        .arg(build.path())
        .arg(format!("-Dwarpcheck_DIR={}", root.join("cmake").display()))
        .arg(format!(
            "-DWARPCHECK_EXECUTABLE={}",
            env!("CARGO_BIN_EXE_warpcheck")
        ))
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
    // The object library's compile carries the plugin: the finding is a
    // warning of the build itself.
    let out = run(Command::new("cmake")
        .args(["--build"])
        .arg(build.path())
        .args(["--target", "kernels"]));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("kernel.cu:4:7: warning: branch diverges in 8 of 8 warps"),
        "{all}"
    );
    let out = run(Command::new("cmake")
        .args(["--build"])
        .arg(build.path())
        .args(["--target", "warpcheck_pkg"]));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("kernel.cu:4:7: warning: branch diverges"),
        "{all}"
    );
}
