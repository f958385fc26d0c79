//! An installed copy without a CUDA toolkit: `scripts/install.sh` puts the
//! plugin, the CMake package, the Make snippet and the headers a clang
//! build needs under a prefix, and the README's CMake and Make recipes get
//! their warnings from that prefix alone (the projects are copied out of
//! the tree, and name nothing in it).

mod common;
use common::*;
use std::process::Command;

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
        // The toolkit's names a real file includes.
        "include/cuda_runtime.h",
        "include/cuda.h",
        "include/device_launch_parameters.h",
        "include/cuda_runtime_api.h",
        "include/vector_types.h",
        "include/math_constants.h",
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
