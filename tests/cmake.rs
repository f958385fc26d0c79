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
