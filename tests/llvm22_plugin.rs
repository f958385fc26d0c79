//! The plugin per LLVM major: clang-22 and opt-22 load the LLVM 22 plugin
//! and warn at the right lines (in the LLVM 22 build); plugins install side
//! by side, named for their major; and the Make snippet and the CMake
//! package stop with warpcheck's reason when the compiler's major has no
//! plugin. Tests that need what is not here say why and do nothing.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use warpcheck::ir::major::LLVM_MAJOR;

/// `print-plugin-path --clang clang-22`, as the README runs it.
fn plugin_for(clang: &str) -> String {
    let out = run(warpcheck().args(["print-plugin-path", "--clang", clang]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out).trim().to_string()
}

/// branches.cu: line 3 (`threadIdx.x % 2`, column 7) and line 20 (`lane ==
/// 0`, at its `==`, column 12, under clang 22) split every warp of 256;
/// the second sends one lane per warp one way, which the check names as a
/// leader-lane guard. Both are cheap next to the kernel's loads, so the
/// runs set `WARPCHECK_MIN_IMPACT=0` to see them as warnings.
const EXPECTED: [&str; 2] = [
    "branches.cu:3:7: warning: branch diverges in 8 of 8 warps",
    "branches.cu:20:12: warning: leader-lane guard: one lane per warp runs this side for its warp (8 of 8 warps split)",
];

#[test]
fn clang22_loads_the_llvm22_plugin_and_warns_at_the_lines() {
    if let Some(why) = llvm22_build_missing(&["clang-22"]) {
        return skip(
            "clang22_loads_the_llvm22_plugin_and_warns_at_the_lines",
            &why,
        );
    }
    let plugin = plugin_for("clang-22");
    let out = run(Command::new("clang-22")
        .env("WARPCHECK_MIN_IMPACT", "0")
        .args(["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80"])
        .args(["-O2", "-gline-tables-only"])
        .args(no_toolkit_flags())
        .arg(format!("-fpass-plugin={plugin}"))
        .args(["-S", "-o", "/dev/null"])
        .arg(fixture("cu/branches.cu")));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    for at in EXPECTED {
        assert!(err.contains(at), "missing {at} in:\n{err}");
    }
}

#[test]
fn opt22_loads_the_llvm22_plugin_and_warns_at_the_lines() {
    if let Some(why) = llvm22_build_missing(&["clang-22", "opt-22"]) {
        return skip("opt22_loads_the_llvm22_plugin_and_warns_at_the_lines", &why);
    }
    let dir = tempfile::tempdir().unwrap();
    let ll = dir.path().join("k.ll");
    let out = run(Command::new("clang-22")
        .args(["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80"])
        .args(["-O2", "-gline-tables-only"])
        .args(no_toolkit_flags())
        .args(["-emit-llvm", "-S", "-o"])
        .arg(&ll)
        .arg(fixture("cu/branches.cu")));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(Command::new("opt-22")
        .env("WARPCHECK_MIN_IMPACT", "0")
        .arg(format!("-load-pass-plugin={}", plugin_for("clang-22")))
        .args(["-passes=warpcheck", "-disable-output"])
        .arg(&ll));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // opt says `warning: <file>:<line>:<col>: <message>`.
    for at in EXPECTED {
        let at = at.replace("warning: ", "");
        assert!(err.contains(&at), "missing {at} in:\n{err}");
    }
}

/// The supported major this build is not for.
fn other_major() -> u32 {
    if LLVM_MAJOR == 19 {
        22
    } else {
        19
    }
}

#[test]
fn an_install_names_the_plugin_for_its_major() {
    let prefix = install();
    let named = prefix
        .path()
        .join(format!("lib/libwarpcheck-llvm{LLVM_MAJOR}.so"));
    assert!(named.is_file());
    let bin = prefix.path().join("bin/warpcheck");
    let out = run(Command::new(&bin).arg("print-plugin-path"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        PathBuf::from(stdout(&out).trim()),
        named.canonicalize().unwrap()
    );
    // Asked for a clang of the other major, with only this build's plugin
    // installed: exit 2, naming the major it looked for.
    let other = format!("clang-{}", other_major());
    if let Err(why) = have_tools(&[&other]) {
        return skip(
            "an_install_names_the_plugin_for_its_major (other major)",
            &why,
        );
    }
    let out = run(Command::new(&bin).args(["print-plugin-path", "--clang", &other]));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("no warpcheck plugin for LLVM {}", other_major())),
        "{err}"
    );
}

#[test]
fn make_stops_when_the_clang_has_no_plugin() {
    let other = format!("clang++-{}", other_major());
    if let Err(why) = have_tools(&[&other]) {
        return skip("make_stops_when_the_clang_has_no_plugin", &why);
    }
    let prefix = install();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("projects/clang_make");
    for f in ["Makefile", "kernel.cu"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run(Command::new("make").current_dir(dir.path()).args([
        format!(
            "WARPCHECK_MK={}",
            prefix.path().join("share/warpcheck/warpcheck.mk").display()
        ),
        format!(
            "CUDA_HEADER={}",
            root.join("src/frontend/warpcheck_cuda.h").display()
        ),
        format!("CLANG={other}"),
    ]));
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!("no warpcheck plugin for LLVM {}", other_major())),
        "{err}"
    );
}

#[test]
fn cmake_stops_when_the_compiler_has_no_plugin() {
    let other = format!("clang++-{}", other_major());
    if let Err(why) = have_tools(&[&other, "cmake"]) {
        return skip("cmake_stops_when_the_compiler_has_no_plugin", &why);
    }
    let prefix = install();
    let build = tempfile::tempdir().unwrap();
    let out = run(Command::new("cmake")
        .arg("-S")
        .arg(fixture("cmake_pkg"))
        .arg("-B")
        .arg(build.path())
        .arg(format!(
            "-Dwarpcheck_DIR={}",
            prefix.path().join("lib/cmake/warpcheck").display()
        ))
        .arg(format!("-DCMAKE_CXX_COMPILER={other}")));
    // CMake wraps the message: compare with the whitespace folded.
    let all = format!("{}{}", stdout(&out), stderr(&out));
    let folded = all.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!out.status.success(), "{all}");
    assert!(
        folded.contains("warpcheck: no pass plugin for")
            && folded.contains(&format!("no warpcheck plugin for LLVM {}", other_major())),
        "{all}"
    );
}
