//! Compiles the C++ plugin shim (passes/*.cpp) against LLVM 19's headers.

use std::path::PathBuf;
use std::process::Command;

fn llvm_config() -> PathBuf {
    let prefix = std::env::var("LLVM_SYS_191_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-19".into());
    PathBuf::from(prefix).join("bin/llvm-config")
}

fn main() {
    println!("cargo:rerun-if-env-changed=LLVM_SYS_191_PREFIX");
    let config = llvm_config();
    let out = Command::new(&config)
        .arg("--cxxflags")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e}; install llvm-19-dev (scripts/setup.sh)",
                config.display()
            )
        });
    let flags = String::from_utf8_lossy(&out.stdout).into_owned();

    let mut build = cc::Build::new();
    build.cpp(true).warnings(false).flag("-fno-rtti").pic(true);
    for flag in flags.split_whitespace() {
        // Keep our own optimisation and warning choices.
        if !(flag.starts_with("-O") || flag.starts_with("-W") || flag == "-g") {
            build.flag(flag);
        }
    }
    let mut sources: Vec<PathBuf> = std::fs::read_dir("passes")
        .expect("passes/ directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    sources.sort();
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
        build.file(s);
    }
    build.compile("warpcheck_shim");
}
