//! Compiles the C++ plugin shim (passes/*.cpp) against the headers of the
//! LLVM major the cargo features pick (`llvm19`, the default, or `llvm22`),
//! and refuses any other LLVM before a line of ours is compiled.

use std::path::PathBuf;
use std::process::Command;

/// Supported majors: (cargo feature, major, llvm-sys prefix variable).
const SUPPORTED: &[(&str, u32, &str)] = &[
    ("llvm19", 19, "LLVM_SYS_191_PREFIX"),
    ("llvm22", 22, "LLVM_SYS_221_PREFIX"),
];

fn supported_list() -> String {
    SUPPORTED
        .iter()
        .map(|(feature, major, _)| format!("LLVM {major} (feature `{feature}`)"))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Stops the build with a message that says what would work.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}; warpcheck supports {}", supported_list());
    std::process::exit(1);
}

/// The one (major, prefix variable) the features select.
fn selected() -> (u32, &'static str) {
    let on: Vec<_> = SUPPORTED
        .iter()
        .filter(|(feature, _, _)| {
            std::env::var_os(format!("CARGO_FEATURE_{}", feature.to_uppercase())).is_some()
        })
        .collect();
    match on.as_slice() {
        [(_, major, var)] => (*major, var),
        [] => fail("no LLVM major selected (enable one of the features)"),
        _ => {
            fail("more than one LLVM major selected (use --no-default-features --features llvm22)")
        }
    }
}

fn main() {
    for (_, _, var) in SUPPORTED {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let (major, var) = selected();
    // clang loads the plugin into every device compile: resolve its
    // symbols (and the LP solver's) on first use, not all at load time,
    // which Rust's default `-z now` would do (~30 ms per compile).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,lazy");
    let prefix = std::env::var(var).unwrap_or_else(|_| format!("/usr/lib/llvm-{major}"));
    let config = PathBuf::from(&prefix).join("bin/llvm-config");
    let query = |arg: &str| -> String {
        let out = Command::new(&config).arg(arg).output().unwrap_or_else(|e| {
            fail(&format!(
                "cannot run {}: {e}; install llvm-{major}-dev (scripts/setup.sh) or set {var}",
                config.display()
            ))
        });
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let version = query("--version");
    let found: Option<u32> = version.split('.').next().and_then(|m| m.parse().ok());
    if found != Some(major) {
        fail(&format!(
            "{} is LLVM {version}, but this build is for LLVM {major} ({var})",
            config.display()
        ));
    }

    let mut build = cc::Build::new();
    build.cpp(true).warnings(false).flag("-fno-rtti").pic(true);
    for flag in query("--cxxflags").split_whitespace() {
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

    // The frontend action that reads launches from the AST (-fplugin)
    // needs clang's libraries, which must never be loaded into opt (both
    // define some of the same command-line options): it is a library of its
    // own, `libwarpcheck-frontend.so`, put beside the binary and the pass
    // plugin as cargo puts those.
    let frontend = PathBuf::from("passes/frontend/launches.cpp");
    println!("cargo:rerun-if-changed={}", frontend.display());
    let mut fe = cc::Build::new();
    fe.cpp(true)
        .warnings(false)
        .flag("-fno-rtti")
        .pic(true)
        .cargo_metadata(false);
    for flag in query("--cxxflags").split_whitespace() {
        if !(flag.starts_with("-O") || flag.starts_with("-W") || flag == "-g") {
            fe.flag(flag);
        }
    }
    let objects = fe.file(&frontend).compile_intermediates();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let lib = out.join("libwarpcheck-frontend.so");
    let libdir = query("--libdir");
    let status = fe
        .get_compiler()
        .to_command()
        .arg("-shared")
        .arg("-o")
        .arg(&lib)
        .args(&objects)
        .arg(format!("-L{libdir}"))
        .arg(format!("-Wl,-rpath,{libdir}"))
        .args(["-lclang-cpp", "-lLLVM"])
        .status()
        .unwrap_or_else(|e| fail(&format!("cannot link {}: {e}", lib.display())));
    if !status.success() {
        fail(&format!(
            "linking {} failed; install libclang-{major}-dev and libclang-cpp{major}-dev \
             (scripts/setup.sh)",
            lib.display()
        ));
    }
    // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out.
    if let Some(profile) = out.ancestors().nth(3) {
        let _ = std::fs::copy(&lib, profile.join("libwarpcheck-frontend.so"));
    }
}
